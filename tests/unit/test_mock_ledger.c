/* test_mock_ledger.c - CUnit suite for gateway-mock/ledger against the
 * stack's MariaDB (IDEMPAY_DB_* as ./stack exports them; the database is
 * IDEMPAY_MOCK_DB or idempay_mock). Skipped (exit 77) when MariaDB cannot be
 * reached. Uses fresh out_trade_nos and never resets, so a running mock's
 * ledger is left alone apart from the test orders. */
#include <CUnit/Basic.h>
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
    snprintf(run_tag, sizeof(run_tag), "%ld%d", (long)(time(NULL) % 100000000), (int)(getpid() % 10000));
    txid_init_random();
    L = ledger_new();
    long long probe;
    if (L == NULL || ledger_counter_get(L, &probe) != 0) {
        fprintf(stderr, "test_mock_ledger: MariaDB unavailable (%s): skipped\n",
                L != NULL ? ledger_error(L) : "out of memory");
        ledger_free(L);
        mysql_library_end();
        return 77;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("mock_ledger", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "dedupe: first charge wins, repeat ORDERPAID, other fee MISMATCH",
                    test_dedupe_first_charge_wins) == NULL ||
        CU_add_test(s, "decline recorded, later charge allowed", test_decline_then_charge) == NULL ||
        CU_add_test(s, "NOTPAY and unknown orders", test_unpaid_and_unknown) == NULL ||
        CU_add_test(s, "dedupe off charges every time", test_trusting_charges_every_time) == NULL ||
        CU_add_test(s, "refunds: once per out_refund_no, limits", test_refunds) == NULL ||
        CU_add_test(s, "16 concurrent connections, one charge",
                    test_concurrent_duplicates_one_charge) == NULL ||
        CU_add_test(s, "counter and persisted config", test_counter_and_config) == NULL) {
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
