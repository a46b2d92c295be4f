/* test_sim_mock_admin.c - CUnit suite for the simulator's reading of the mock
 * gateway's ledger: only this run's charges are kept, each mapped to its
 * schedule order; refunded flags, fees as numbers or strings; bad bodies. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "gateway_calls.h"
#include "mock_admin.h"
#include "refund_obs.h"
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
    snprintf(
        body, sizeof(body),
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
    CU_ASSERT_EQUAL_FATAL(mock_admin_parse_ledger(body, strlen(body), &S, "pA", &c, &n, &notes, err,
                                                  sizeof(err)),
                          0);
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
                                            sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(notes, -1);
    CU_ASSERT_PTR_NOT_NULL(c);
    free(c);
    const char *bad[] = { "", "[]", "{\"charges\":{}}", "{\"charges\":[", "nope" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c = (sim_charge *)1;
        CU_ASSERT_EQUAL(mock_admin_parse_ledger(bad[i], strlen(bad[i]), &S, "pA", &c, &n, &notes,
                                                err, sizeof(err)),
                        -1);
        CU_ASSERT_PTR_NULL(c);
        CU_ASSERT(strlen(err) > 0);
    }
}

/* Optional knobs an older mock does not know are cut; others pass. */
static void test_config_filter(void)
{
    char out[1024], dropped[256];
    const char *cfg = "{\"latency_ms\":5,\"closeorder_enabled\":true,\"notify_enabled\":false,"
                      "\"endpoints\":{\"orderquery\":{\"latency_ms\":1,\"error_rate\":0.1},"
                      "\"downloadbill\":{\"latency_ms\":2}},\"bogus\":1}";
    const char *old = "{\"latency_ms\":0,\"notify_enabled\":true}";
    CU_ASSERT_EQUAL(mock_admin_filter(cfg, old, out, sizeof(out), dropped, sizeof(dropped)), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "endpoints"));
    CU_ASSERT_PTR_NULL(strstr(out, "closeorder_enabled"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"notify_enabled\":false"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"bogus\":1")); /* not optional: the mock judges it */
    CU_ASSERT_PTR_NOT_NULL(strstr(dropped, "endpoints"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dropped, "closeorder_enabled"));
    /* A newer mock with some endpoints and knobs. */
    const char *newer = "{\"closeorder_enabled\":true,\"notify_enabled\":true,"
                        "\"endpoints\":{\"orderquery\":{\"latency_ms\":0}}}";
    CU_ASSERT_EQUAL(mock_admin_filter(cfg, newer, out, sizeof(out), dropped, sizeof(dropped)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"orderquery\":{\"latency_ms\":1}"));
    CU_ASSERT_PTR_NULL(strstr(out, "downloadbill"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dropped, "downloadbill"));
    CU_ASSERT_PTR_NOT_NULL(strstr(dropped, "error_rate"));
    /* NULL known keeps everything; garbage is refused. */
    CU_ASSERT_EQUAL(mock_admin_filter(cfg, NULL, out, sizeof(out), dropped, sizeof(dropped)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "downloadbill"));
    CU_ASSERT_STRING_EQUAL(dropped, "");
    CU_ASSERT_EQUAL(mock_admin_filter("[1]", NULL, out, sizeof(out), dropped, sizeof(dropped)), -1);
    CU_ASSERT_EQUAL(mock_admin_filter(cfg, NULL, out, 10, dropped, sizeof(dropped)), -1);
}

static void test_ledger_time(void)
{
    CU_ASSERT_EQUAL(mock_admin_time_us("1970-01-01T00:00:01.000002Z"), 1000002);
    CU_ASSERT_EQUAL(mock_admin_time_us("2024-02-29T23:30:00.123456Z"), 1709249400123456LL);
    CU_ASSERT_EQUAL(mock_admin_time_us("2024-02-29T23:30:00Z"), 1709249400000000LL);
    CU_ASSERT_EQUAL(mock_admin_time_us("2024-02-29T23:30:00.5Z"), 1709249400500000LL);
    CU_ASSERT_EQUAL(mock_admin_time_us("2024-02-29 23:30:00"), INT64_MIN);
    CU_ASSERT_EQUAL(mock_admin_time_us("1709249400.123"), INT64_MIN);
    CU_ASSERT_EQUAL(mock_admin_time_us(""), INT64_MIN);
    CU_ASSERT_EQUAL(mock_admin_time_us(NULL), INT64_MIN);
}

static void test_journal(void)
{
    char *text = NULL;
    const char *body =
        "{\"requests\":[{\"time\":\"1970-01-01T00:00:13.000000Z\",\"endpoint\":\"closeorder\","
        "\"fault\":\"none\",\"reply\":\"xml\",\"return_code\":\"SUCCESS\",\"result_code\":\"SUCCESS\","
        "\"latency_ms\":9},{\"time\":\"1970-01-01T00:00:11.500000Z\",\"endpoint\":\"unifiedorder\","
        "\"fault\":null,\"reply\":\"xml\",\"return_code\":\"SUCCESS\",\"result_code\":\"FAIL\","
        "\"err_code\":\"ORDERCLOSED\",\"latency_ms\":15000}],\"notifications\":["
        "{\"time\":\"1970-01-01T00:00:12.000000Z\",\"transaction_id\":\"T1\",\"copy\":1,"
        "\"attempt\":1,\"http_status\":200,\"acknowledged\":true}]}";
    CU_ASSERT_EQUAL_FATAL(mock_admin_format_journal(body, strlen(body), 10000000, &text), 0);
    char *uo = strstr(text, "+1.500 s unifiedorder"),
         *nt = strstr(text, "+2.000 s notification of T1");
    char *cl = strstr(text, "+3.000 s closeorder");
    CU_ASSERT(uo != NULL && nt != NULL && cl != NULL && uo < nt && nt < cl);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "fault=none reply=xml SUCCESS/FAIL ORDERCLOSED (15000 ms)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "HTTP 200 acknowledged"));
    free(text);
    CU_ASSERT_EQUAL(mock_admin_format_journal("[]", 2, 0, &text), -1);
}

/* The journal's payment calls and fences of this run (gateway_calls). */
static void test_gateway_calls(void)
{
    char no0[64], body[2048], err[256];
    sim_gwcall *v = NULL;
    size_t n = 0;
    sched_order_no(&S, "pA", 0, no0, sizeof(no0));
    snprintf(body, sizeof(body),
             "{\"requests\":["
             "{\"time\":\"1970-01-01T00:00:11.500000Z\",\"endpoint\":\"micropay\","
             "\"out_trade_no\":\"%s\",\"latency_ms\":2600},"
             "{\"time\":\"1970-01-01T00:00:13.000000Z\",\"endpoint\":\"reverse\","
             "\"out_trade_no\":\"%s\",\"latency_ms\":4},"
             "{\"time\":\"1970-01-01T00:00:13.000000Z\",\"endpoint\":\"orderquery\","
             "\"out_trade_no\":\"%s\",\"latency_ms\":4},"
             "{\"time\":\"1970-01-01T00:00:13.000000Z\",\"endpoint\":\"closeorder\","
             "\"out_trade_no\":\"otherRun0001\",\"latency_ms\":4},"
             "{\"time\":\"not a time\",\"endpoint\":\"closeorder\","
             "\"out_trade_no\":\"%s\",\"latency_ms\":4}],\"notifications\":[]}",
             no0, no0, no0, no0);
    CU_ASSERT_EQUAL_FATAL(gateway_calls_parse(body, strlen(body), &S, "pA", 10000000, &v, &n, err,
                                              sizeof(err)),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 2); /* not: orderquery, another run's, an unreadable time */
    CU_ASSERT_EQUAL(v[0].fence, GWCALL_PAY);
    CU_ASSERT_EQUAL(v[0].order, 0);
    CU_ASSERT_EQUAL(v[0].at_us, 1500000);
    CU_ASSERT_EQUAL(v[0].latency_us, 2600000);
    CU_ASSERT_EQUAL(v[1].fence, GWCALL_FENCE);
    CU_ASSERT_STRING_EQUAL(v[1].endpoint, "reverse");
    free(v);
    CU_ASSERT_EQUAL(gateway_calls_parse("[]", 2, &S, "pA", 0, &v, &n, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(gateway_calls_kind("v3_native"), GWCALL_PAY);
    CU_ASSERT_EQUAL(gateway_calls_kind("v3_close"), GWCALL_FENCE);
    CU_ASSERT_EQUAL(gateway_calls_kind("payer"), -1);
}

/* The ledger's refunds of this run, and a service's refund list. */
static void test_refunds(void)
{
    char no0[64], body[2048], err[256];
    refund_obs o;
    memset(&o, 0, sizeof(o));
    sched_order_no(&S, "pA", 0, no0, sizeof(no0));
    snprintf(body, sizeof(body),
             "{\"charges\":[],\"refunds\":["
             "{\"out_refund_no\":\"RMab\",\"refund_id\":\"5\",\"transaction_id\":\"T1\","
             "\"out_trade_no\":\"%s\",\"refund_fee\":60,\"status\":\"REFUNDCLOSE\"},"
             "{\"out_refund_no\":\"RMcd\",\"transaction_id\":\"T9\","
             "\"out_trade_no\":\"otherrun123456\",\"refund_fee\":1,\"status\":\"SUCCESS\"}]}",
             no0);
    CU_ASSERT_EQUAL_FATAL(refund_obs_parse_ledger(&o, body, strlen(body), &S, "pA", err,
                                                  sizeof(err)),
                          0);
    CU_ASSERT_EQUAL_FATAL(o.nledger, 1); /* RMcd is another run's */
    CU_ASSERT_STRING_EQUAL(o.ledger[0].refund_no, "RMab");
    CU_ASSERT_STRING_EQUAL(o.ledger[0].transaction_id, "T1");
    CU_ASSERT_EQUAL(o.ledger[0].order, 0);
    CU_ASSERT_EQUAL(o.ledger[0].fee, 60);
    CU_ASSERT_EQUAL(o.ledger[0].status, RST_REFUNDCLOSE);
    CU_ASSERT_EQUAL(refund_obs_parse_ledger(&o, "{", 1, &S, "pA", err, sizeof(err)), -1);
    o.list_read = calloc(S.norders, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o.list_read);
    static const char list[] =
        "{\"order_no\":\"x\",\"refundable\":\"0.40\",\"refunds\":["
        "{\"refund_no\":\"RMab\",\"kind\":\"merchant\",\"amount\":\"0.60\","
        "\"status\":\"PROCESSING\"},"
        "{\"refund_no\":\"RDxy\",\"kind\":\"duplicate_charge\",\"amount\":\"1.00\","
        "\"status\":\"ABNORMAL\"}]}";
    CU_ASSERT_EQUAL_FATAL(refund_obs_parse_list(&o, 1, list, strlen(list)), 0);
    CU_ASSERT_EQUAL_FATAL(o.nlisted, 2);
    CU_ASSERT_EQUAL(o.list_read[1], 1);
    CU_ASSERT_EQUAL(o.list_read[0], 0);
    CU_ASSERT_EQUAL(o.listed[0].fee, 60);
    CU_ASSERT_FALSE(o.listed[0].duplicate);
    CU_ASSERT_EQUAL(o.listed[0].status, RST_PROCESSING);
    CU_ASSERT_TRUE(o.listed[1].duplicate);
    CU_ASSERT_EQUAL(o.listed[1].status, RST_ABNORMAL);
    CU_ASSERT_EQUAL(refund_obs_parse_list(&o, 0, "{\"error\":\"x\"}", 13), -1);
    CU_ASSERT_EQUAL(o.list_read[0], 0);
    refund_obs_free(&o);
}

/* Knobs a phase does not name go back to the mock's defaults. */
static void test_with_defaults(void)
{
    char out[512];
    CU_ASSERT_EQUAL_FATAL(
        mock_admin_with_defaults(
            "{\"latency_ms\":5,\"userpaying_rate\":1}",
            "{\"latency_ms\":0,\"userpaying_rate\":0,\"close_race_rate\":0,"
            "\"closeorder_min_age_ms\":3000,\"endpoints\":{\"refund\":{}},\"dedupe\":true}",
            out, sizeof(out)),
        0);
    CU_ASSERT_STRING_EQUAL(out, "{\"close_race_rate\":0,\"closeorder_min_age_ms\":3000,"
                                "\"latency_ms\":5,\"userpaying_rate\":1}");
    CU_ASSERT_EQUAL(mock_admin_with_defaults("[1]", NULL, out, sizeof(out)), -1);
    CU_ASSERT_EQUAL(mock_admin_with_defaults("{}", NULL, out, sizeof(out)), 0);
    CU_ASSERT_STRING_EQUAL(out, "{}");
}

int main(void)
{
    static const cu_test tests[] = {
        { "the ledger is filtered to this run and mapped to charges", test_filter_and_map },
        { "empty and bad bodies are refused", test_empty_and_bad },
        { "knobs an older mock lacks are cut from the config", test_config_filter },
        { "ledger times parse to microseconds, others refused", test_ledger_time },
        { "the journal reads as text in time order", test_journal },
        { "the ledger's refunds and a service's list are read", test_refunds },
        { "the journal's payment calls and fences of this run are read", test_gateway_calls },
        { "knobs a phase does not name go back to the defaults", test_with_defaults },
    };
    return CU_SUITE_RUN("sim_mock_admin", setup, teardown, tests);
}
