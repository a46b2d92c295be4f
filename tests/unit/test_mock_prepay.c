/* test_mock_prepay.c - CUnit suite for gateway-mock/prepay (the flows'
 * orders in mock_prepay) and flows_resolve (a due USERPAYING micropay
 * resolved through the ledger), against the stack's MariaDB (IDEMPAY_DB_*;
 * the database is IDEMPAY_MOCK_DB or idempay_mock, with
 * sql/009_mock_flows.sql applied). Fails without MariaDB (cu_service_missing). Uses
 * fresh out_trade_nos and never resets. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flows.h"
#include "ledger.h"
#include "prepay.h"

static ledger *L;
static char run_tag[16];

static const char *otn(const char *name, char buf[33])
{
    snprintf(buf, 33, "PP%.12s%.18s", run_tag, name);
    return buf;
}

static void row_for(prepay_row *r, const char *o, bool micropay)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->out_trade_no, sizeof(r->out_trade_no), "%s", o);
    r->micropay = micropay;
    if (!micropay) {
        snprintf(r->prepay_id, sizeof(r->prepay_id), "wx%s", o);
        snprintf(r->code_token, sizeof(r->code_token), "t%s", o);
    }
    snprintf(r->trade_type, sizeof(r->trade_type), micropay ? "MICROPAY" : "NATIVE");
    r->total_fee = 321;
    snprintf(r->fingerprint, sizeof(r->fingerprint), "0123456789abcdef0123456789abcdef");
    snprintf(r->notify_url, sizeof(r->notify_url), "http://127.0.0.1:9/notify");
    r->created_ms = mock_clock_now_ms();
    r->expire_ms = r->created_ms + 300000;
    r->prepay_until_ms = r->expire_ms;
    snprintf(r->state, sizeof(r->state), "NOTPAY");
}

static void test_insert_and_find(void)
{
    char o[33];
    prepay_row r, got;
    bool inserted = false;
    row_for(&r, otn("find", o), false);
    CU_ASSERT_EQUAL_FATAL(prepay_insert(&r, &inserted), 0);
    CU_ASSERT_TRUE(inserted);
    CU_ASSERT_EQUAL(prepay_insert(&r, &inserted), 0);
    CU_ASSERT_FALSE(inserted); /* one order per out_trade_no */
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_OTN, o, &got), 0);
    CU_ASSERT_TRUE(got.found);
    CU_ASSERT_STRING_EQUAL(got.prepay_id, r.prepay_id);
    CU_ASSERT_STRING_EQUAL(got.fingerprint, r.fingerprint);
    CU_ASSERT_EQUAL(got.total_fee, 321);
    CU_ASSERT_EQUAL(got.expire_ms, r.expire_ms);
    CU_ASSERT_FALSE(got.micropay);
    CU_ASSERT_STRING_EQUAL(got.openid, "");
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_ID, r.prepay_id, &got), 0);
    CU_ASSERT_STRING_EQUAL(got.out_trade_no, o);
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_TOKEN, r.code_token, &got), 0);
    CU_ASSERT_STRING_EQUAL(got.out_trade_no, o);
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_TOKEN, "nosuchtoken", &got), 0);
    CU_ASSERT_FALSE(got.found);
}

static void test_states(void)
{
    char o[33];
    prepay_row r, got;
    bool inserted = false, moved = false;
    row_for(&r, otn("states", o), true);
    CU_ASSERT_EQUAL_FATAL(prepay_insert(&r, &inserted), 0);
    CU_ASSERT_EQUAL(prepay_cas_state(o, "USERPAYING", "PAID", &moved), 0);
    CU_ASSERT_FALSE(moved);
    CU_ASSERT_EQUAL(prepay_set_userpaying(o, 12345, true), 0);
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_OTN, o, &got), 0);
    CU_ASSERT_STRING_EQUAL(got.state, "USERPAYING");
    CU_ASSERT_EQUAL(got.resolve_ms, 12345);
    CU_ASSERT_TRUE(got.resolve_pay);
    CU_ASSERT_EQUAL(prepay_cas_state(o, "USERPAYING", "REVOKED", &moved), 0);
    CU_ASSERT_TRUE(moved);
    CU_ASSERT_EQUAL(prepay_set_answered(o, 777), 0);
    CU_ASSERT_EQUAL(prepay_set_paying(o, 888), 0);
    CU_ASSERT_EQUAL(prepay_set_race(o, "4200000000000000000000000001"), 0);
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_OTN, o, &got), 0);
    CU_ASSERT_STRING_EQUAL(got.state, "REVOKED");
    CU_ASSERT_EQUAL(got.answered_ms, 777);
    CU_ASSERT_EQUAL(got.paying_until_ms, 888);
    CU_ASSERT_STRING_EQUAL(got.race_txid, "4200000000000000000000000001");
}

/* A USERPAYING micropay whose time came: charged once however often it is
 * resolved; one to be declined: PAYERROR; one closed meanwhile: CLOSED. */
static void test_resolve(void)
{
    char paid[33], unpaid[33], closed[33];
    prepay_row r, got;
    bool inserted = false;
    ledger_close_outcome co;
    const char *names[] = { otn("rpaid", paid), otn("runpaid", unpaid), otn("rclosed", closed) };
    for (int i = 0; i < 3; i++) {
        row_for(&r, names[i], true);
        CU_ASSERT_EQUAL_FATAL(prepay_insert(&r, &inserted), 0);
        CU_ASSERT_EQUAL(ledger_note_unpaid(L, names[i], 321), 0);
        CU_ASSERT_EQUAL(prepay_set_userpaying(names[i], mock_clock_now_ms() - 1, i != 1), 0);
    }
    CU_ASSERT_EQUAL(ledger_close(L, closed, &co), 0);
    CU_ASSERT_EQUAL(co, CLOSE_DONE);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(flows_resolve(L, names[i]), 0);
        CU_ASSERT_EQUAL(flows_resolve(L, names[i]), 0); /* again: nothing more */
    }
    static const char *const want[] = { "PAID", "PAYERROR", "CLOSED" };
    static const char *const trade[] = { "SUCCESS", "PAYERROR", "CLOSED" };
    for (int i = 0; i < 3; i++) {
        ledger_order q;
        CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_OTN, names[i], &got), 0);
        CU_ASSERT_STRING_EQUAL(got.state, want[i]);
        CU_ASSERT_EQUAL(ledger_query(L, names[i], NULL, &q), 0);
        CU_ASSERT_STRING_EQUAL(q.trade_state, trade[i]);
        json_t *a = ledger_charges_json(L, names[i]);
        CU_ASSERT_EQUAL(json_array_size(a), i == 0 ? 1u : 0u);
        json_decref(a);
    }
}

static void test_not_due_yet(void)
{
    char o[33];
    prepay_row r, got;
    bool inserted = false;
    row_for(&r, otn("later", o), true);
    CU_ASSERT_EQUAL_FATAL(prepay_insert(&r, &inserted), 0);
    CU_ASSERT_EQUAL(prepay_set_userpaying(o, mock_clock_now_ms() + 60000, true), 0);
    CU_ASSERT_EQUAL(flows_resolve(L, o), 0);
    CU_ASSERT_EQUAL(prepay_get(PREPAY_BY_OTN, o, &got), 0);
    CU_ASSERT_STRING_EQUAL(got.state, "USERPAYING");
    char due[64][33];
    int n = -1;
    CU_ASSERT_EQUAL(prepay_due(mock_clock_now_ms() + 61000, due, 64, &n), 0);
    bool listed = false;
    for (int i = 0; i < n; i++)
        listed = listed || strcmp(due[i], o) == 0;
    CU_ASSERT_TRUE(listed || n == 64);
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
    prepay_row none;
    if (L == NULL || ledger_counter_get(L, &probe) != 0 ||
        prepay_get(PREPAY_BY_OTN, "PPprobe", &none) != 0) {
        char why[600];
        snprintf(why, sizeof(why), "%s %s", L != NULL ? ledger_error(L) : "out of memory",
                 prepay_error());
        ledger_free(L);
        prepay_thread_end();
        mysql_library_end();
        return cu_service_missing("test_mock_prepay", "MariaDB", why);
    }
    static const cu_test tests[] = {
        { "a prepay is inserted once and found by out_trade_no, prepay_id or code token",
          test_insert_and_find },
        { "prepay states move by compare-and-set, also in a race", test_states },
        { "a due USERPAYING resolves paid once, declined or closed", test_resolve },
        { "a USERPAYING not yet due stays USERPAYING", test_not_due_yet },
    };
    int rc = CU_SUITE_RUN("mock_prepay", NULL, NULL, tests);
    ledger_free(L);
    prepay_thread_end();
    mysql_library_end();
    return rc;
}
