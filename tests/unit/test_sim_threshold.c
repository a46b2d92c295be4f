/* test_sim_threshold.c - CUnit suite for --threshold: the expression parser
 * (every metric, unit, operator, the spaces allowed, and a clear refusal of
 * each kind of bad expression), the measurement against a hand-made report
 * (quantiles, error rate, rate, count; a latency gate with nothing measured
 * fails), and the three renderings, including JUnit times that are never 0. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "history.h"
#include "http_client.h"
#include "report.h"
#include "schedule.h"
#include "threshold.h"

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static sim_threshold parse_ok(const char *expr)
{
    sim_threshold t;
    char err[512] = "";
    int rc = threshold_parse(expr, &t, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "parse '%s' failed: %s\n", expr, err);
    CU_ASSERT_EQUAL(rc, 0);
    return t;
}

static void test_parse_examples(void)
{
    sim_threshold t = parse_ok("pay.p99<800ms");
    CU_ASSERT_EQUAL(t.kind, OP_PAY);
    CU_ASSERT_EQUAL(t.metric, TH_QUANTILE);
    CU_ASSERT(near(t.quantile, 99));
    CU_ASSERT_EQUAL(t.op, TH_LT);
    CU_ASSERT(near(t.limit, 800));
    CU_ASSERT_STRING_EQUAL(t.expr, "pay.p99<800ms");

    t = parse_ok("pay.p50<=100ms");
    CU_ASSERT_EQUAL(t.op, TH_LE);
    CU_ASSERT(near(t.quantile, 50));
    t = parse_ok("pay.error_rate<0.01");
    CU_ASSERT_EQUAL(t.metric, TH_ERROR_RATE);
    CU_ASSERT(near(t.limit, 0.01));
    t = parse_ok("callback.rate>50");
    CU_ASSERT_EQUAL(t.kind, OP_CALLBACK);
    CU_ASSERT_EQUAL(t.metric, TH_RATE);
    CU_ASSERT_EQUAL(t.op, TH_GT);
    t = parse_ok("all.count>=1");
    CU_ASSERT_EQUAL(t.kind, THRESHOLD_KIND_ALL);
    CU_ASSERT_EQUAL(t.metric, TH_COUNT);
    CU_ASSERT_EQUAL(t.op, TH_GE);
    t = parse_ok("query.count==10");
    CU_ASSERT_EQUAL(t.kind, OP_QUERY);
    CU_ASSERT_EQUAL(t.op, TH_EQ);
    t = parse_ok("token.mean!=0");
    CU_ASSERT_EQUAL(t.metric, TH_MEAN);
    CU_ASSERT_EQUAL(t.op, TH_NE);
    t = parse_ok("ping.max<1");
    CU_ASSERT_EQUAL(t.kind, OP_PING);
    CU_ASSERT_EQUAL(t.metric, TH_MAX);
}

static void test_parse_units_and_spaces(void)
{
    sim_threshold t = parse_ok("  pay.p99.9 <  2s ");
    CU_ASSERT(near(t.quantile, 99.9));
    CU_ASSERT(near(t.limit, 2000));
    t = parse_ok("pay.max<500us");
    CU_ASSERT(near(t.limit, 0.5));
    t = parse_ok("pay.p95<250"); /* a latency without a unit is in ms */
    CU_ASSERT(near(t.limit, 250));
    t = parse_ok("pay.error_rate<1%");
    CU_ASSERT(near(t.limit, 0.01));
    t = parse_ok("callback.rate>50/s");
    CU_ASSERT(near(t.limit, 50));
    t = parse_ok("stray.count < 3");
    CU_ASSERT_EQUAL(t.kind, OP_STRAY);
    CU_ASSERT(near(t.limit, 3));
}

/* Each bad expression is refused, and the message names it and says what
 * was expected (the word given in want). */
static void test_parse_refusals(void)
{
    static const struct {
        const char *expr;
        const char *want;
    } bad[] = {
        { "", "expression" },
        { "p99<800", "request kind" },
        { "bogus.p99<1", "request kind" },
        { "pay.p100<1", "unknown metric" },
        { "pay.p0<1", "unknown metric" },
        { "pay.latency<1", "unknown metric" },
        { "pay.p99", "operator" },
        { "pay.p99=<1", "operator" },
        { "pay.p99<", "number" },
        { "pay.p99<abc", "number" },
        { "pay.p99<-1", "number" },
        { "pay.p99<800xs", "ms" },
        { "pay.error_rate<2", "at most 1" },
        { "pay.error_rate<0.5ms", "fraction" },
        { "pay.count<5ms", "count takes no unit" },
        { "pay.rate>5%", "per second" },
        { "pay.p99<1e999", "number" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sim_threshold t;
        char err[512] = "";
        CU_ASSERT_EQUAL(threshold_parse(bad[i].expr, &t, err, sizeof(err)), -1);
        if (strstr(err, bad[i].want) == NULL)
            fprintf(stderr, "'%s': message '%s' lacks '%s'\n", bad[i].expr, err, bad[i].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "--threshold"));
    }
    char longest[THRESHOLD_EXPR_MAX + 2];
    memset(longest, '1', sizeof(longest) - 1);
    memcpy(longest, "pay.count<", 10);
    longest[sizeof(longest) - 1] = '\0';
    sim_threshold t;
    char err[512];
    CU_ASSERT_EQUAL(threshold_parse(longest, &t, err, sizeof(err)), -1);
    longest[THRESHOLD_EXPR_MAX] = '\0'; /* exactly the limit: fine */
    CU_ASSERT_EQUAL(threshold_parse(longest, &t, err, sizeof(err)), 0);
}

static void test_holds(void)
{
    CU_ASSERT(threshold_holds(1, TH_LT, 2));
    CU_ASSERT(!threshold_holds(2, TH_LT, 2));
    CU_ASSERT(threshold_holds(2, TH_LE, 2));
    CU_ASSERT(threshold_holds(3, TH_GT, 2));
    CU_ASSERT(!threshold_holds(2, TH_GT, 2));
    CU_ASSERT(threshold_holds(2, TH_GE, 2));
    CU_ASSERT(threshold_holds(2, TH_EQ, 2));
    CU_ASSERT(threshold_holds(1, TH_NE, 2));
    CU_ASSERT(!threshold_holds(2, TH_NE, 2));
}

/* A report of 100 pay requests (1 ms .. 100 ms; 3 timed out, 2 answered 503,
 * 5 answered 402 which is no error) and 10 s of traffic; no callbacks. */
static sim_report REP;
static sim_op OPS[100];
static sim_observations OBS;

static void make_report(void)
{
    report_init(&REP);
    memset(OPS, 0, sizeof(OPS));
    for (int i = 0; i < 100; i++) {
        OPS[i].kind = OP_PAY;
        OPS[i].order = -1;
        OPS[i].http_code = 200;
        OPS[i].outcome = OUT_OK;
        if (i < 3) {
            OPS[i].http_code = 0;
            OPS[i].transport = HTTP_ERR_TIMEOUT;
            OPS[i].outcome = OUT_UNKNOWN;
        } else if (i < 5) {
            OPS[i].http_code = 503;
            OPS[i].outcome = OUT_UNKNOWN;
        } else if (i < 10) {
            OPS[i].http_code = 402;
            OPS[i].outcome = OUT_FAIL;
        }
        REP.requests[SC_DOUBLE_CLICK][OP_PAY][OPS[i].outcome]++;
        hist_record(&REP.latency[OP_PAY], (uint64_t)(i + 1) * 1000);
    }
    OBS.ops = OPS;
    OBS.nops = 100;
    REP.obs = &OBS;
    REP.traffic_s = 10.0;
    REP.total_s = 12.0;
}

static sim_threshold eval_one(const char *expr)
{
    sim_threshold t = parse_ok(expr);
    threshold_eval(&t, 1, &REP);
    CU_ASSERT(t.evaluated);
    return t;
}

static void test_eval(void)
{
    make_report();
    sim_threshold t = eval_one("pay.count==100");
    CU_ASSERT(t.pass);
    t = eval_one("pay.rate>=10");
    CU_ASSERT(near(t.value, 10));
    CU_ASSERT(t.pass);
    t = eval_one("pay.error_rate<0.05"); /* 5 errors of 100: not below 5 % */
    CU_ASSERT(near(t.value, 0.05));
    CU_ASSERT(!t.pass);
    t = eval_one("pay.error_rate<=5%");
    CU_ASSERT(t.pass);
    t = eval_one("pay.max<=100ms");
    CU_ASSERT(near(t.value, 100));
    CU_ASSERT(t.pass);
    t = eval_one("pay.p50<45ms"); /* the 50th of 1..100 ms is ~50 ms (within 6.25 %) */
    CU_ASSERT(t.value > 46.0 && t.value < 54.0);
    CU_ASSERT(!t.pass);
    t = eval_one("all.p99<=100ms");
    CU_ASSERT(t.pass);
    t = eval_one("callback.p99<800ms"); /* nothing measured: a gate on it fails */
    CU_ASSERT(!t.samples);
    CU_ASSERT(!t.pass);
    t = eval_one("callback.count==0"); /* but a count of nothing is 0 */
    CU_ASSERT(t.pass);
    t = eval_one("callback.error_rate<0.01");
    CU_ASSERT(t.pass);

    sim_threshold many[3] = { parse_ok("pay.count>1"), parse_ok("pay.count<1"),
                              parse_ok("pay.p99<1us") };
    CU_ASSERT_EQUAL(threshold_eval(many, 3, &REP), 2);
    CU_ASSERT_EQUAL(threshold_failed(many, 3), 2);
}

static void test_renderings(void)
{
    make_report();
    sim_threshold t[2] = { parse_ok("pay.p99<800ms"), parse_ok("pay.error_rate<0.01") };
    threshold_eval(t, 2, &REP);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    threshold_human(t, 2, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "thresholds: 2, 1 failed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pass  pay.p99<800ms"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "FAIL  pay.error_rate<0.01"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "error_rate = 0.0500"));
    free(buf);

    json_t *j = threshold_json(t, 2);
    CU_ASSERT_EQUAL_FATAL(json_array_size(j), 2);
    json_t *j1 = json_array_get(j, 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j1, "expression")),
                           "pay.error_rate<0.01");
    CU_ASSERT(json_is_false(json_object_get(j1, "pass")));
    CU_ASSERT(near(json_real_value(json_object_get(j1, "value")), 0.05));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(j, 0), "metric")),
                           "p99");
    json_decref(j);

    /* In the JUnit report: a testcase per threshold with the traffic's time,
     * and the run's own testcases' times are never 0. */
    sim_schedule s;
    sched_init(&s, 1);
    CU_ASSERT_EQUAL_FATAL(sched_begin_phase(&s, SC_DOUBLE_CLICK, "a", "{}", 1000, 0), 0);
    CU_ASSERT_EQUAL_FATAL(sched_begin_phase(&s, SC_RETRY_STORM, "b", "{}", 1000, 0), 0);
    double phase_s[2] = { 0.0, 4.0 };
    chk_result chk;
    sim_observations none = { 0 };
    CU_ASSERT_EQUAL_FATAL(checker_run(&s, &none, &chk), 0);
    REP.sched = &s;
    REP.chk = &chk;
    REP.phase_s = phase_s;
    REP.thresholds = t;
    REP.nthresholds = 2;
    REP.exit_code = 3;
    char path[] = "/tmp/test_sim_threshold.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(report_junit(&REP, path), 0);
    FILE *in = fdopen(fd, "r");
    char text[65536] = "";
    size_t n = fread(text, 1, sizeof(text) - 1, in);
    fclose(in);
    unlink(path);
    CU_ASSERT(n > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "classname=\"idempay-sim.thresholds\" "
                                        "name=\"pay.error_rate&lt;0.01\" time=\"10.000\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "<failure type=\"threshold\""));
    CU_ASSERT_PTR_NULL(strstr(text, "time=\"0\""));
    CU_ASSERT_PTR_NULL(strstr(text, "time=\"0.000000\""));
    /* double-click ran from 0 to 4 s, retry-storm from 4 s to the end (10 s) */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "classname=\"idempay-sim.double-click\" "
                                        "name=\"no_double_charge\" time=\"4.0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "classname=\"idempay-sim.retry-storm\" "
                                        "name=\"no_double_charge\" time=\"6.0"));
    /* 2 scenarios x every invariant + 2 thresholds */
    char tests[48];
    snprintf(tests, sizeof(tests), "tests=\"%d\" failures=\"1\"", 2 * INV_COUNT + 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, tests));
    checker_result_free(&chk);
    sched_free(&s);
    REP.sched = NULL;
    REP.chk = NULL;
}

int main(void)
{
    static const cu_test tests[] = {
        { "the brief's examples parse", test_parse_examples },
        { "units and spaces parse", test_parse_units_and_spaces },
        { "bad expressions are refused with a reason", test_parse_refusals },
        { "each operator holds or not", test_holds },
        { "a threshold is measured against a report", test_eval },
        { "thresholds render in the human, JSON and JUnit reports", test_renderings },
    };
    return CU_SUITE_RUN("sim_threshold", NULL, NULL, tests);
}
