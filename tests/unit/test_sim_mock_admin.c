/* test_sim_mock_admin.c - CUnit suite for the simulator's reading of the mock
 * gateway's ledger: only this run's charges are kept, each mapped to its
 * schedule order; refunded flags, fees as numbers or strings; bad bodies. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "mock_admin.h"
#include "rng.h"
#include "schedule.h"

static sim_schedule S;

static int setup(void)
{
    rng_t r;
    rng_seed(&r, 9);
    sched_init(&S, 9);
    if (sched_begin_phase(&S, SC_DOUBLE_CLICK, "p", "{}", 0, 0) < 0)
        return -1;
    sched_add_order(&S, &r, SC_DOUBLE_CLICK, 1, 100, AMT_FIXED2, 0);
    sched_add_order(&S, &r, SC_DOUBLE_CLICK, 2, 200, AMT_FIXED2, 0);
    return 0;
}

static int teardown(void)
{
    sched_free(&S);
    return 0;
}

static void test_filter_and_map(void)
{
    char no0[64], no1[64], body[2048], err[256];
    sched_order_no(&S, "pA", 0, no0, sizeof(no0));
    sched_order_no(&S, "pA", 1, no1, sizeof(no1));
    snprintf(body, sizeof(body),
             "{\"charges\":["
             "{\"transaction_id\":\"T1\",\"out_trade_no\":\"%s\",\"total_fee\":100,\"refunded\":false,\"charged_at\":\"2026-01-01\"},"
             "{\"transaction_id\":\"T2\",\"out_trade_no\":\"%s\",\"total_fee\":\"200\",\"refunded\":true,\"charged_at\":1.5},"
             "{\"transaction_id\":\"T3\",\"out_trade_no\":\"otherrun123456\",\"total_fee\":5,\"refunded\":false},"
             "{\"transaction_id\":\"T4\",\"out_trade_no\":\"pAzz00000abcde\",\"total_fee\":7,\"refunded\":false}"
             "],\"notifications_sent\":42}",
             no0, no1);
    sim_charge *c = NULL;
    size_t n = 0;
    long long notes = 0;
    CU_ASSERT_EQUAL_FATAL(mock_admin_parse_ledger(body, strlen(body), &S, "pA", &c, &n, &notes,
                                                  err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3); /* T3 belongs to another run */
    CU_ASSERT_EQUAL(notes, 42);
    CU_ASSERT_STRING_EQUAL(c[0].transaction_id, "T1");
    CU_ASSERT_EQUAL(c[0].order, 0);
    CU_ASSERT_EQUAL(c[0].total_fee, 100);
    CU_ASSERT_FALSE(c[0].refunded);
    CU_ASSERT_STRING_EQUAL(c[0].charged_at, "2026-01-01");
    CU_ASSERT_EQUAL(c[1].order, 1);
    CU_ASSERT_EQUAL(c[1].total_fee, 200);
    CU_ASSERT_TRUE(c[1].refunded);
    CU_ASSERT_STRING_EQUAL(c[1].charged_at, "1.500");
    /* Our prefix but not an order we made: kept, unmapped. */
    CU_ASSERT_STRING_EQUAL(c[2].transaction_id, "T4");
    CU_ASSERT_EQUAL(c[2].order, -1);
    free(c);
}

static void test_empty_and_bad(void)
{
    char err[256];
    sim_charge *c = NULL;
    size_t n = 5;
    long long notes = 0;
    const char *empty = "{\"charges\":[]}";
    CU_ASSERT_EQUAL(mock_admin_parse_ledger(empty, strlen(empty), &S, "pA", &c, &n, &notes, err,
                                            sizeof(err)), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(notes, -1);
    CU_ASSERT_PTR_NOT_NULL(c);
    free(c);
    const char *bad[] = {"", "[]", "{\"charges\":{}}", "{\"charges\":[", "nope"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c = (sim_charge *)1;
        CU_ASSERT_EQUAL(mock_admin_parse_ledger(bad[i], strlen(bad[i]), &S, "pA", &c, &n, &notes,
                                                err, sizeof(err)), -1);
        CU_ASSERT_PTR_NULL(c);
        CU_ASSERT(strlen(err) > 0);
    }
}

int main(void)
{
    static const cu_test tests[] = {
        { "filter and map", test_filter_and_map },
        { "empty and bad bodies", test_empty_and_bad },
    };
    return CU_SUITE_RUN("sim_mock_admin", setup, teardown, tests);
}
