/* test_mock_refund_store.c - CUnit suite for gateway-mock/refund_store
 * against the stack's MariaDB (IDEMPAY_DB_*; database IDEMPAY_MOCK_DB or
 * idempay_mock). Fails when MariaDB cannot be reached (cu_service_missing). Uses
 * fresh charges and never resets. A running mock ends due refunds too, so
 * the tests judge the end state, and that no refund is reported ended twice
 * by the settlements they run. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "refund_store.h"
#include "txid.h"

static ledger *L;
static refund_store *S;
static char run_tag[16];

/* A fresh charge of fee fen: its out_trade_no into otn, transaction_id into txid. */
static void charge(const char *name, long long fee, char otn[33], char txid[TXID_BUF])
{
    ledger_attempt_result r;
    snprintf(otn, 33, "CR%.12s%.18s", run_tag, name);
    CU_ASSERT_EQUAL_FATAL(ledger_attempt(L, otn, fee, "NATIVE", NULL, true, true, &r), 0);
    CU_ASSERT_EQUAL_FATAL(r.outcome, LEDGER_CHARGED);
    snprintf(txid, TXID_BUF, "%s", r.transaction_id);
}

static refund_accept_outcome accept(const char *txid, const char *orn, long long total,
                                    long long fee, long long delay_ms, const char *outcome,
                                    const char *refuse, refund_record *rec)
{
    char full[65];
    refund_accept_outcome o = REFUND_ACCEPTED;
    snprintf(full, sizeof(full), "%s%s", orn, run_tag);
    refund_request q = { txid, NULL, full, total, fee, NULL, delay_ms, outcome, refuse, 2 };
    CU_ASSERT_EQUAL(refund_store_accept(S, &q, &o, rec), 0);
    return o;
}

/* Ended refunds reported by settle, by out_refund_no (a refund twice = a bug). */
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static char seen[256][65];
static int nseen, twice;

static void on_ended(void *arg, const refund_record *r)
{
    (void)arg;
    pthread_mutex_lock(&seen_mu);
    for (int i = 0; i < nseen; i++)
        if (strcmp(seen[i], r->out_refund_no) == 0)
            twice++;
    if (nseen < 256)
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", r->out_refund_no);
    pthread_mutex_unlock(&seen_mu);
}

/* The status of refund orn (with the run tag) once nothing is due. */
static void settled_status(const char *orn, char status[16])
{
    char full[65];
    refund_record r[1];
    int n = 0;
    snprintf(full, sizeof(full), "%s%s", orn, run_tag);
    CU_ASSERT(refund_store_settle(S, 200, on_ended, NULL) >= 0);
    CU_ASSERT_EQUAL(refund_store_find(S, REFUND_BY_OUT_REFUND_NO, full, r, 1, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    snprintf(status, 16, "%s", r[0].status);
}

static void test_accept_and_limits(void)
{
    char otn[33], txid[TXID_BUF], other_otn[33], other_txid[TXID_BUF];
    refund_record rec, again;
    charge("limits", 1000, otn, txid);
    charge("other", 50, other_otn, other_txid);

    CU_ASSERT_EQUAL(accept(txid, "A", 1000, 600, 3600000, "SUCCESS", NULL, &rec), REFUND_ACCEPTED);
    CU_ASSERT_STRING_EQUAL(rec.status, "PROCESSING");
    CU_ASSERT_EQUAL(strlen(rec.refund_id), TXID_LEN);
    CU_ASSERT_EQUAL(accept(txid, "A", 1000, 600, 3600000, "SUCCESS", "NOTENOUGH", &again),
                    REFUND_AGAIN);
    CU_ASSERT_STRING_EQUAL(again.refund_id, rec.refund_id);
    CU_ASSERT_EQUAL(accept(txid, "B", 1000, 401, 0, "SUCCESS", NULL, &again), REFUND_OVER);
    CU_ASSERT_EQUAL(accept(txid, "B", 999, 1, 0, "SUCCESS", NULL, &again), REFUND_TOTAL_MISMATCH);
    CU_ASSERT_EQUAL(accept(txid, "B", 1000, 1, 0, "SUCCESS", "NOTENOUGH", &again), REFUND_REFUSED);
    CU_ASSERT_EQUAL(accept(other_txid, "A", 50, 1, 0, "SUCCESS", NULL, &again),
                    REFUND_OTHER_CHARGE);
    CU_ASSERT_EQUAL(accept("4200000000000000000000000000", "C", 50, 1, 0, "SUCCESS", NULL, &again),
                    REFUND_UNKNOWN_CHARGE);
    CU_ASSERT_EQUAL(accept(txid, "D", 1000, 400, 3600000, "SUCCESS", NULL, &again),
                    REFUND_ACCEPTED);

    /* PROCESSING refunds are not refunded yet. */
    ledger_order o;
    CU_ASSERT_EQUAL(ledger_query(L, otn, NULL, &o), 0);
    CU_ASSERT_EQUAL(o.refunded_fee, 0);
    CU_ASSERT_EQUAL(o.refund_count, 0);
    json_t *rows = refund_store_json(S, otn);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    CU_ASSERT_EQUAL(json_array_size(rows), 2);
    json_decref(rows);
}

static void test_ends(void)
{
    char otn[33], txid[TXID_BUF], st[16];
    refund_record rec;
    charge("ends", 900, otn, txid);

    CU_ASSERT_EQUAL(accept(txid, "S", 900, 300, 0, "SUCCESS", NULL, &rec), REFUND_ACCEPTED);
    settled_status("S", st);
    CU_ASSERT_STRING_EQUAL(st, "SUCCESS");
    ledger_order o;
    CU_ASSERT_EQUAL(ledger_query(L, otn, NULL, &o), 0);
    CU_ASSERT_EQUAL(o.refunded_fee, 300);
    CU_ASSERT_EQUAL(o.refund_count, 1);

    /* REFUNDCLOSE gives its 600 back; CHANGE keeps them. */
    CU_ASSERT_EQUAL(accept(txid, "C", 900, 600, 0, "REFUNDCLOSE", NULL, &rec), REFUND_ACCEPTED);
    settled_status("C", st);
    CU_ASSERT_STRING_EQUAL(st, "REFUNDCLOSE");
    CU_ASSERT_EQUAL(accept(txid, "X", 900, 600, 0, "CHANGE", NULL, &rec), REFUND_ACCEPTED);
    settled_status("X", st);
    CU_ASSERT_STRING_EQUAL(st, "CHANGE");
    CU_ASSERT_EQUAL(accept(txid, "Y", 900, 1, 0, "SUCCESS", NULL, &rec), REFUND_OVER);
    CU_ASSERT_EQUAL(ledger_query(L, otn, NULL, &o), 0);
    CU_ASSERT_EQUAL(o.refunded_fee, 300);

    refund_record list[8];
    int n = 0;
    CU_ASSERT_EQUAL(refund_store_find(S, REFUND_BY_TRANSACTION_ID, txid, list, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(refund_store_find(S, REFUND_BY_OUT_TRADE_NO, otn, list, 2, &n), 0);
    CU_ASSERT_EQUAL(n, 2); /* at most cap */
    CU_ASSERT_EQUAL(refund_store_find(S, REFUND_BY_REFUND_ID, list[0].refund_id, list, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_NOT_EQUAL(list[0].ended_at, "");
    CU_ASSERT_EQUAL(refund_store_find(S, REFUND_BY_REFUND_ID, "nope", list, 8, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
}

static void *settle_thread(void *arg)
{
    (void)arg;
    mysql_thread_init();
    refund_store *s = refund_store_new();
    for (int i = 0; i < 20; i++)
        refund_store_settle(s, 200, on_ended, NULL);
    refund_store_free(s);
    mysql_thread_end();
    return NULL;
}

static void test_concurrent_settlements_end_once(void)
{
    char otn[33], txid[TXID_BUF], orn[16];
    refund_record rec;
    pthread_t t[4];
    charge("race", 1600, otn, txid);
    for (int i = 0; i < 16; i++) {
        snprintf(orn, sizeof(orn), "Q%02d", i);
        CU_ASSERT_EQUAL(accept(txid, orn, 1600, 100, 0, "SUCCESS", NULL, &rec), REFUND_ACCEPTED);
    }
    twice = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, settle_thread, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(twice, 0);
    ledger_order o;
    CU_ASSERT(refund_store_settle(S, 200, on_ended, NULL) >= 0);
    CU_ASSERT_EQUAL(ledger_query(L, otn, NULL, &o), 0);
    CU_ASSERT_EQUAL(o.refunded_fee, 1600);
    CU_ASSERT_EQUAL(o.refund_count, 16);
    CU_ASSERT_EQUAL(accept(txid, "Q99", 1600, 1, 0, "SUCCESS", NULL, &rec), REFUND_OVER);
}

int main(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    snprintf(run_tag, sizeof(run_tag), "%ld%d", (long)(time(NULL) % 100000000),
             (int)(getpid() % 10000));
    txid_init_random();
    L = ledger_new();
    S = refund_store_new();
    long long probe;
    if (L == NULL || S == NULL || ledger_counter_get(L, &probe) != 0) {
        int rc = cu_service_missing("test_mock_refund_store", "MariaDB",
                                    L != NULL ? ledger_error(L) : "out of memory");
        ledger_free(L);
        refund_store_free(S);
        mysql_library_end();
        return rc;
    }
    static const cu_test tests[] = {
        { "a refund is accepted within limits, a repeat answered the same, others refused",
          test_accept_and_limits },
        { "SUCCESS counts, REFUNDCLOSE gives back, CHANGE keeps, and refunds are found",
          test_ends },
        { "concurrent settlements end each refund once", test_concurrent_settlements_end_once },
    };
    int rc = CU_SUITE_RUN("mock_refund_store", NULL, NULL, tests);
    refund_store_free(S);
    ledger_free(L);
    mysql_library_end();
    return rc;
}
