/* test_mock_ledger.c - CUnit suite for gateway-mock/ledger against the
 * stack's MariaDB (IDEMPAY_DB_* as ./stack exports them; the database is
 * IDEMPAY_MOCK_DB or idempay_mock). Fails when MariaDB cannot be reached
 * (cu_service_missing). Uses fresh out_trade_nos and never resets, so a running mock's
 * ledger is left alone apart from the test orders. */
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
#include "txid.h"

static ledger *L;
static char run_tag[16];

/* A fresh out_trade_no: "CU" + run tag (12) + name (18): <= 32 characters. */
static const char *otn(const char *name, char buf[33])
{
    snprintf(buf, 33, "CU%.12s%.18s", run_tag, name);
    return buf;
}

static int count_charges(const char *order)
{
    json_t *a = ledger_charges_json(L, order);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int n = (int)json_array_size(a);
    json_decref(a);
    return n;
}

static void test_dedupe_first_charge_wins(void)
{
    char o[33];
    ledger_attempt_result r1, r2, r3;
    otn("first", o);
    CU_ASSERT_EQUAL_FATAL(ledger_attempt(L, o, 1230, "NATIVE", NULL, true, true, &r1), 0);
    CU_ASSERT_EQUAL(r1.outcome, LEDGER_CHARGED);
    CU_ASSERT_TRUE(txid_transaction_valid(r1.transaction_id));
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 1230, "NATIVE", NULL, true, true, &r2), 0);
    CU_ASSERT_EQUAL(r2.outcome, LEDGER_ORDERPAID);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 999, "NATIVE", NULL, true, true, &r3), 0);
    CU_ASSERT_EQUAL(r3.outcome, LEDGER_MISMATCH);
    CU_ASSERT_EQUAL(count_charges(o), 1);

    ledger_order q;
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_TRUE(q.found);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "SUCCESS");
    CU_ASSERT_STRING_EQUAL(q.transaction_id, r1.transaction_id);
    CU_ASSERT_EQUAL(q.total_fee, 1230);
    CU_ASSERT_EQUAL(strlen(q.time_end), 14);
    CU_ASSERT_STRING_EQUAL(q.trade_type, "NATIVE");
    CU_ASSERT_EQUAL(ledger_query(L, NULL, r1.transaction_id, &q), 0);
    CU_ASSERT_STRING_EQUAL(q.out_trade_no, o);
}

static void test_decline_then_charge(void)
{
    char o[33];
    ledger_attempt_result r;
    ledger_order q;
    otn("decline", o);
    CU_ASSERT_EQUAL_FATAL(ledger_attempt(L, o, 500, "JSAPI", NULL, false, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_DECLINED);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_TRUE(q.found);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "PAYERROR");
    CU_ASSERT_EQUAL(q.transaction_id[0], '\0');
    /* Declined again, then charged: dedupe only remembers charges. */
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 500, "JSAPI", NULL, false, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_DECLINED);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 500, "JSAPI", NULL, true, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_CHARGED);
    /* A decline after the charge is ORDERPAID. */
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 500, "JSAPI", NULL, false, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_ORDERPAID);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "SUCCESS");
}

static void test_unpaid_and_unknown(void)
{
    char o[33];
    ledger_order q;
    otn("unpaid", o);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_FALSE(q.found);
    CU_ASSERT_EQUAL(ledger_note_unpaid(L, o, 100), 0);
    CU_ASSERT_EQUAL(ledger_note_unpaid(L, o, 100), 0);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_TRUE(q.found);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "NOTPAY");
    CU_ASSERT_EQUAL(ledger_query(L, NULL, "4200000000000000000000000000", &q), 0);
    CU_ASSERT_FALSE(q.found);
}

static void test_trusting_charges_every_time(void)
{
    char o[33];
    ledger_attempt_result a, b, c;
    otn("nodedupe", o);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 100, "APP", NULL, true, false, &a), 0);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 100, "APP", NULL, true, false, &b), 0);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 200, "APP", NULL, true, false, &c), 0);
    CU_ASSERT_EQUAL(a.outcome, LEDGER_CHARGED);
    CU_ASSERT_EQUAL(b.outcome, LEDGER_CHARGED);
    CU_ASSERT_EQUAL(c.outcome, LEDGER_CHARGED);
    CU_ASSERT_STRING_NOT_EQUAL(a.transaction_id, b.transaction_id);
    CU_ASSERT_EQUAL(count_charges(o), 3);
    /* After the first is refunded, orderquery reports the second. */
    ledger_refund_result rr;
    char rno[40];
    snprintf(rno, sizeof(rno), "R%s", o);
    CU_ASSERT_EQUAL(ledger_refund(L, a.transaction_id, NULL, rno, 100, 100, &rr), 0);
    CU_ASSERT_EQUAL(rr.outcome, REFUND_DONE);
    ledger_order q;
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_STRING_EQUAL(q.transaction_id, b.transaction_id);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "SUCCESS");
}

static void test_refunds(void)
{
    char o[33], rno[40], rno2[40];
    ledger_attempt_result a;
    ledger_refund_result r, again;
    otn("refund", o);
    snprintf(rno, sizeof(rno), "R1%s", o);
    snprintf(rno2, sizeof(rno2), "R2%s", o);
    CU_ASSERT_EQUAL_FATAL(ledger_attempt(L, o, 1000, "NATIVE", NULL, true, true, &a), 0);

    CU_ASSERT_EQUAL(ledger_refund(L, a.transaction_id, NULL, rno, 999, 10, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_FEE_MISMATCH);
    CU_ASSERT_EQUAL(ledger_refund(L, NULL, o, rno, 1000, 600, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_DONE);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, a.transaction_id);
    CU_ASSERT_EQUAL(strlen(r.refund_id), 28);
    CU_ASSERT_EQUAL(ledger_refund(L, a.transaction_id, NULL, rno, 1000, 600, &again), 0);
    CU_ASSERT_EQUAL(again.outcome, REFUND_REPEAT);
    CU_ASSERT_STRING_EQUAL(again.refund_id, r.refund_id);
    CU_ASSERT_EQUAL(ledger_refund(L, a.transaction_id, NULL, rno2, 1000, 401, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_TOO_MUCH);
    CU_ASSERT_EQUAL(ledger_refund(L, a.transaction_id, NULL, rno2, 1000, 400, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_DONE);
    CU_ASSERT_EQUAL(ledger_refund(L, "4200000000000000000000000001", NULL, rno, 1000, 1, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_CONFLICT);
    char none[33], rno3[40];
    snprintf(rno3, sizeof(rno3), "R3%s", o);
    CU_ASSERT_EQUAL(ledger_refund(L, NULL, otn("norefund", none), rno3, 10, 10, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, REFUND_NO_CHARGE);

    json_t *list = ledger_charges_json(L, o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    json_t *c = json_array_get(list, 0);
    CU_ASSERT_TRUE(json_is_true(json_object_get(c, "refunded")));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(c, "refund_count")), 2);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(c, "refunded_fee")), 1000);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(c, "total_fee")), 1000);
    CU_ASSERT_TRUE(json_is_string(json_object_get(c, "charged_at")));
    json_decref(list);
    ledger_order q;
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "REFUND");
}

#define RACERS 16
static char race_otn[33];
static int race_outcome[RACERS];
static int race_rc[RACERS];
static pthread_barrier_t race_barrier;

static void *racer(void *arg)
{
    int i = *(int *)arg;
    ledger_attempt_result r;
    mysql_thread_init();
    ledger *l = ledger_new();
    /* Connect before the barrier so the attempts really overlap. */
    long long dummy;
    ledger_counter_get(l, &dummy);
    pthread_barrier_wait(&race_barrier);
    race_rc[i] = ledger_attempt(l, race_otn, 777, "NATIVE", NULL, i % 4 != 3, true, &r);
    race_outcome[i] = (int)r.outcome;
    ledger_free(l);
    mysql_thread_end();
    return NULL;
}

static void test_concurrent_duplicates_one_charge(void)
{
    pthread_t t[RACERS];
    int idx[RACERS];
    otn("race", race_otn);
    pthread_barrier_init(&race_barrier, NULL, RACERS);
    for (int i = 0; i < RACERS; i++) {
        idx[i] = i;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, racer, &idx[i]), 0);
    }
    int charged = 0;
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(race_rc[i], 0);
        charged += race_outcome[i] == LEDGER_CHARGED;
    }
    pthread_barrier_destroy(&race_barrier);
    CU_ASSERT_EQUAL(charged, 1);
    CU_ASSERT_EQUAL(count_charges(race_otn), 1);
}

/* ---- closes ------------------------------------------------------------ */

static void test_close_unseen_then_everything_closed(void)
{
    char o[33];
    ledger_close_outcome c;
    ledger_attempt_result r;
    ledger_order q;
    otn("closeunseen", o);
    CU_ASSERT_EQUAL_FATAL(ledger_close(L, o, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_DONE);
    CU_ASSERT_EQUAL(ledger_close(L, o, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_ALREADY);
    /* Dedupe on or off, charge or decline: ORDERCLOSED, nothing recorded. */
    for (int dedupe = 0; dedupe < 2; dedupe++) {
        for (int charge = 0; charge < 2; charge++) {
            CU_ASSERT_EQUAL(ledger_attempt(L, o, 100, "NATIVE", NULL, charge, dedupe, &r), 0);
            CU_ASSERT_EQUAL(r.outcome, LEDGER_ORDERCLOSED);
        }
    }
    CU_ASSERT_EQUAL(count_charges(o), 0);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_TRUE(q.found);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "CLOSED");
    CU_ASSERT_EQUAL(q.transaction_id[0], '\0');
    /* SYSTEMERROR after a close changes nothing either. */
    CU_ASSERT_EQUAL(ledger_note_unpaid(L, o, 100), 0);
    CU_ASSERT_EQUAL(ledger_query(L, o, NULL, &q), 0);
    CU_ASSERT_STRING_EQUAL(q.trade_state, "CLOSED");

    json_t *a = ledger_closed_json(L, o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(json_array_size(a), 1);
    json_t *e = json_array_get(a, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "out_trade_no")), o);
    const char *at = json_string_value(json_object_get(e, "closed_at"));
    CU_ASSERT_TRUE(at != NULL && strlen(at) == 27 && at[26] == 'Z');
    json_decref(a);
}

static void test_close_after_decline_or_unpaid(void)
{
    char o[33], u[33];
    ledger_close_outcome c;
    ledger_attempt_result r;
    otn("closedecl", o);
    otn("closeunpaid", u);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 300, "NATIVE", NULL, false, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_DECLINED);
    CU_ASSERT_EQUAL(ledger_close(L, o, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_DONE);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 300, "NATIVE", NULL, true, true, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_ORDERCLOSED);
    CU_ASSERT_EQUAL(ledger_note_unpaid(L, u, 300), 0);
    CU_ASSERT_EQUAL(ledger_close(L, u, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_DONE);
    CU_ASSERT_EQUAL(ledger_attempt(L, u, 300, "NATIVE", NULL, true, false, &r), 0);
    CU_ASSERT_EQUAL(r.outcome, LEDGER_ORDERCLOSED);
    CU_ASSERT_EQUAL(count_charges(o) + count_charges(u), 0);
}

static void test_close_of_charged_is_paid(void)
{
    char o[33], t[33];
    ledger_close_outcome c;
    ledger_attempt_result r;
    ledger_refund_result rf;
    otn("closepaid", o);
    otn("closepaidoff", t);
    CU_ASSERT_EQUAL(ledger_attempt(L, o, 400, "NATIVE", NULL, true, true, &r), 0);
    CU_ASSERT_EQUAL(ledger_close(L, o, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_PAID);
    /* Refunded or not, and charged with dedupe off: still ORDERPAID. */
    char orn[33];
    CU_ASSERT_EQUAL(ledger_refund(L, r.transaction_id, NULL, otn("closepaidrefund", orn), 400, 400,
                                  &rf),
                    0);
    CU_ASSERT_EQUAL(ledger_close(L, o, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_PAID);
    CU_ASSERT_EQUAL(ledger_attempt(L, t, 400, "NATIVE", NULL, true, false, &r), 0);
    CU_ASSERT_EQUAL(ledger_close(L, t, &c), 0);
    CU_ASSERT_EQUAL(c, CLOSE_PAID);
    json_t *a = ledger_closed_json(L, o);
    CU_ASSERT_EQUAL(json_array_size(a), 0);
    json_decref(a);
}

/* A close racing with charges of one out_trade_no, each on its own
 * connection: the close wins (no charge at all) or loses to a charge
 * (ORDERPAID), never both; with dedupe off every charge either precedes the
 * close or is refused. */
#define CLOSE_RACERS 12
static char close_race_otn[33];
static bool close_race_dedupe;
static int close_race_outcome[CLOSE_RACERS];

static void *close_racer(void *arg)
{
    int i = *(int *)arg;
    long long dummy;
    mysql_thread_init();
    ledger *l = ledger_new();
    ledger_counter_get(l, &dummy);
    pthread_barrier_wait(&race_barrier);
    if (i == CLOSE_RACERS / 2) {
        ledger_close_outcome c = CLOSE_ALREADY;
        CU_ASSERT_EQUAL(ledger_close(l, close_race_otn, &c), 0);
        close_race_outcome[i] = 100 + (int)c;
    } else {
        ledger_attempt_result r;
        r.outcome = LEDGER_MISMATCH;
        CU_ASSERT_EQUAL(ledger_attempt(l, close_race_otn, 555, "NATIVE", NULL, true,
                                       close_race_dedupe, &r),
                        0);
        close_race_outcome[i] = (int)r.outcome;
    }
    ledger_free(l);
    mysql_thread_end();
    return NULL;
}

static void close_race(bool dedupe, const char *name)
{
    pthread_t t[CLOSE_RACERS];
    int idx[CLOSE_RACERS];
    otn(name, close_race_otn);
    close_race_dedupe = dedupe;
    pthread_barrier_init(&race_barrier, NULL, CLOSE_RACERS);
    for (int i = 0; i < CLOSE_RACERS; i++) {
        idx[i] = i;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, close_racer, &idx[i]), 0);
    }
    int charged = 0, closed = 0, refused = 0;
    for (int i = 0; i < CLOSE_RACERS; i++) {
        pthread_join(t[i], NULL);
        charged += close_race_outcome[i] == LEDGER_CHARGED;
        refused += close_race_outcome[i] == LEDGER_ORDERCLOSED;
        closed += close_race_outcome[i] == 100 + CLOSE_DONE;
    }
    pthread_barrier_destroy(&race_barrier);
    CU_ASSERT_EQUAL(count_charges(close_race_otn), charged);
    if (closed) {
        CU_ASSERT_EQUAL(charged, 0);
        CU_ASSERT_EQUAL(refused, CLOSE_RACERS - 1);
    } else {
        CU_ASSERT_EQUAL(close_race_outcome[CLOSE_RACERS / 2], 100 + CLOSE_PAID);
        CU_ASSERT_TRUE(charged >= 1);
        if (dedupe)
            CU_ASSERT_EQUAL(charged, 1);
    }
}

static void test_close_races_charges(void)
{
    for (int round = 0; round < 4; round++) {
        char name[24];
        snprintf(name, sizeof(name), "crace%d", round);
        close_race(round % 2 == 0, name);
    }
}

/* ---- the statement -------------------------------------------------------- */

typedef struct {
    int restarts;
    int charges, refunds;
    long long fees, refunded;
    char last_time[20];
    bool ordered;
    int stop_after; /* > 0: stop the listing after this many rows of ours */
} bill_seen;

static void bill_restart_cb(void *arg)
{
    bill_seen *b = arg;
    int stop = b->stop_after;
    memset(b, 0, sizeof(*b));
    b->stop_after = stop;
    b->ordered = true;
    b->restarts = 1;
}

static int bill_row_cb(void *arg, const ledger_bill_record *r)
{
    bill_seen *b = arg;
    if (strcmp(r->time, b->last_time) < 0)
        b->ordered = false;
    snprintf(b->last_time, sizeof(b->last_time), "%s", r->time);
    if (strncmp(r->out_trade_no, "CU", 2) != 0 || strstr(r->out_trade_no, run_tag) == NULL)
        return 0; /* another test's rows */
    if (r->refund) {
        b->refunds++;
        b->refunded += r->refund_fee;
    } else {
        b->charges++;
        b->fees += r->total_fee;
        CU_ASSERT_EQUAL(strlen(r->time), 19);
        CU_ASSERT_TRUE(txid_transaction_valid(r->transaction_id));
    }
    return b->stop_after > 0 && b->charges + b->refunds >= b->stop_after;
}

static void test_bill_lists_charges_and_refunds(void)
{
    char o[33];
    ledger_attempt_result r;
    ledger_refund_result rf;
    bill_seen seen;
    time_t now = time(NULL);
    otn("bill", o);
    CU_ASSERT_EQUAL_FATAL(ledger_attempt(L, o, 1230, "JSAPI", "oPayer_1", true, true, &r), 0);
    char orn[33];
    CU_ASSERT_EQUAL(ledger_refund(L, r.transaction_id, NULL, otn("billrefund", orn), 1230, 230,
                                  &rf),
                    0);
    CU_ASSERT_EQUAL(rf.outcome, REFUND_DONE);

    memset(&seen, 0, sizeof(seen));
    CU_ASSERT_EQUAL(ledger_bill(L, now - 60, now + 60, true, true, bill_restart_cb, bill_row_cb,
                                &seen),
                    0);
    CU_ASSERT_EQUAL(seen.restarts, 1);
    CU_ASSERT_TRUE(seen.ordered);
    CU_ASSERT_TRUE(seen.charges >= 1);
    CU_ASSERT_TRUE(seen.refunds >= 1);
    CU_ASSERT_TRUE(seen.refunded >= 230);

    memset(&seen, 0, sizeof(seen));
    CU_ASSERT_EQUAL(ledger_bill(L, now - 60, now + 60, false, true, bill_restart_cb, bill_row_cb,
                                &seen),
                    0);
    CU_ASSERT_EQUAL(seen.charges, 0);
    CU_ASSERT_TRUE(seen.refunds >= 1);
    memset(&seen, 0, sizeof(seen));
    CU_ASSERT_EQUAL(ledger_bill(L, now - 60, now + 60, true, false, bill_restart_cb, bill_row_cb,
                                &seen),
                    0);
    CU_ASSERT_EQUAL(seen.refunds, 0);
    /* A range before the charge lists none of ours; a row that asks stops it. */
    memset(&seen, 0, sizeof(seen));
    CU_ASSERT_EQUAL(ledger_bill(L, now - 7200, now - 3600, true, true, bill_restart_cb, bill_row_cb,
                                &seen),
                    0);
    CU_ASSERT_EQUAL(seen.charges + seen.refunds, 0);
    memset(&seen, 0, sizeof(seen));
    seen.stop_after = 1;
    CU_ASSERT_EQUAL(ledger_bill(L, now - 60, now + 60, true, true, bill_restart_cb, bill_row_cb,
                                &seen),
                    1);
    /* The connection is usable after a listing stopped half-way. */
    CU_ASSERT_EQUAL(count_charges(o), 1);
}

static void test_counter_and_config(void)
{
    long long before = 0, after = 0;
    CU_ASSERT_EQUAL(ledger_counter_get(L, &before), 0);
    CU_ASSERT_EQUAL(ledger_counter_add(L, 3), 0);
    CU_ASSERT_EQUAL(ledger_counter_get(L, &after), 0);
    CU_ASSERT_TRUE(after >= before + 3);

    char *orig = NULL, *back = NULL;
    int rc = ledger_config_load(L, &orig);
    CU_ASSERT_TRUE(rc == 0 || rc == 1);
    CU_ASSERT_EQUAL(ledger_config_save(L, "{\"latency_ms\":0,\"seed\":5}"), 0);
    CU_ASSERT_EQUAL(ledger_config_load(L, &back), 0);
    CU_ASSERT_PTR_NOT_NULL(back);
    if (back != NULL)
        CU_ASSERT_STRING_EQUAL(back, "{\"latency_ms\":0,\"seed\":5}");
    /* Put back what a running mock stored. */
    CU_ASSERT_EQUAL(ledger_config_save(L, orig != NULL ? orig : "{}"), 0);
    free(orig);
    free(back);
}

int main(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    snprintf(run_tag, sizeof(run_tag), "%ld%d", (long)(time(NULL) % 100000000),
             (int)(getpid() % 10000));
    txid_init_random();
    L = ledger_new();
    long long probe;
    if (L == NULL || ledger_counter_get(L, &probe) != 0) {
        int rc = cu_service_missing("test_mock_ledger", "MariaDB",
                                    L != NULL ? ledger_error(L) : "out of memory");
        ledger_free(L);
        mysql_library_end();
        return rc;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("mock_ledger", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "the first charge wins, a repeat is ORDERPAID, another fee MISMATCH",
                    test_dedupe_first_charge_wins) == NULL ||
        CU_add_test(s, "a decline is recorded and a later charge allowed",
                    test_decline_then_charge) == NULL ||
        CU_add_test(s, "an unpaid order is NOTPAY and an unknown one reported unknown",
                    test_unpaid_and_unknown) == NULL ||
        CU_add_test(s, "with dedupe off every attempt charges", test_trusting_charges_every_time) ==
            NULL ||
        CU_add_test(s, "a refund is made once per out_refund_no, within its limits",
                    test_refunds) == NULL ||
        CU_add_test(s, "16 concurrent connections make one charge",
                    test_concurrent_duplicates_one_charge) == NULL ||
        CU_add_test(s, "a close holds unseen and twice, then every attempt is ORDERCLOSED",
                    test_close_unseen_then_everything_closed) == NULL ||
        CU_add_test(s, "an order closes after a decline or SYSTEMERROR",
                    test_close_after_decline_or_unpaid) == NULL ||
        CU_add_test(s, "a close of a charged order is ORDERPAID", test_close_of_charged_is_paid) ==
            NULL ||
        CU_add_test(s, "a close racing charges never lets both win", test_close_races_charges) ==
            NULL ||
        CU_add_test(s, "the statement lists charges and refunds by time",
                    test_bill_lists_charges_and_refunds) == NULL ||
        CU_add_test(s, "the counter and the config persist", test_counter_and_config) == NULL) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned int failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    ledger_free(L);
    mysql_library_end();
    return failures == 0 ? 0 : 1;
}
