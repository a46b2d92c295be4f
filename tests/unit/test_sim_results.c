/* test_sim_results.c - CUnit suite for the run folder: the timeline's
 * intervals, counts and quantiles; a run written to a folder and loaded
 * back gives the same history, ledger, rows and verdict (and --check's
 * exit status); a ledger edited to hold a second charge is judged a double
 * charge; an edited recipe is refused (digest); report.html carries a data
 * block that parses and holds report.json's latency numbers. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checker.h"
#include "mock_admin.h"
#include "report.h"
#include "report_html.h"
#include "results.h"
#include "saved_run.h"
#include "scenarios.h"
#include "timeline.h"

#define PFX "t0000001"
#define ORIGIN "2026-01-01T00:00:00.000000Z" /* the run's time 0 */

static sim_schedule S;
static char DIGEST[65];
static sim_op OPS[6];
static sim_charge CH[2];
static sim_row *API;
static int64_t STARTS[64];
static sim_observations OBS;
static chk_result CHK;
static sim_report REP;
static saved_run_meta META;
static char BASE[64], DIR_[4096];

static void make_ops(void)
{
    memset(OPS, 0, sizeof(OPS));
    for (int i = 0; i < 6; i++) {
        sim_op *op = &OPS[i];
        op->kind = i < 4 ? OP_PAY : OP_QUERY;
        op->order = 0;
        op->token = i == 5 ? 3 : -1;
        op->token_use = i == 5 ? TOK_SLOT : TOK_NONE;
        op->task = i % 2;
        op->scenario = SC_DOUBLE_CLICK;
        op->user_id = S.orders[0].user_id;
        op->amount_fen = i < 4 ? S.orders[0].amount_fen : -1;
        op->http_code = i == 3 ? 0 : 200;
        op->transport = i == 3 ? 3 : 0;
        op->flags = i == 1 ? OPF_REPLAYED : 0;
        op->status = i == 3 ? OST_NONE : OST_PAID;
        op->outcome = i == 3 ? OUT_UNKNOWN : OUT_OK;
        op->attempt = 1;
        op->idem = i == 2 ? 1 : 0;
        op->start_us = 100000 * i + 1;
        op->end_us = 100000 * i + 40000 + 1000 * i;
        snprintf(op->txn, sizeof(op->txn), "%s", i == 3 ? "" : "TXNA");
        snprintf(op->error, sizeof(op->error), "%s", i == 3 ? "timeout" : "");
    }
}

static void make_ledger(void)
{
    memset(CH, 0, sizeof(CH));
    snprintf(CH[0].transaction_id, sizeof(CH[0].transaction_id), "TXNA");
    sched_order_no(&S, PFX, 0, CH[0].out_trade_no, sizeof(CH[0].out_trade_no));
    CH[0].total_fee = S.orders[0].amount_fen;
    CH[0].order = 0;
    snprintf(CH[0].charged_at, sizeof(CH[0].charged_at), "2026-01-01T00:00:00.000010Z");
    CH[0].epoch_us = mock_admin_time_us(CH[0].charged_at);
    CH[0].at_us = CH[0].epoch_us - mock_admin_time_us(ORIGIN); /* +10 us */
}

static int setup(void)
{
    saved_recipe rc = { .scenarios = "double-click",
                        .orders = 8,
                        .duration_s = 1.5,
                        .concurrency = 4,
                        .chaos = 0,
                        .chaos_every_s = 5.0,
                        .mock_override = "{\"dedupe\":false}" };
    windows_defaults(&rc.windows);
    sim_plan plan = { .mask = 1u << SC_DOUBLE_CLICK,
                      .orders = 8,
                      .duration_s = 1.5,
                      .concurrency = 4,
                      .chaos_every_s = 5.0,
                      .mock_override = rc.mock_override,
                      .windows = &rc.windows };
    char err[256];
    sched_init(&S, 4242);
    if (scenarios_build(&S, &plan, err, sizeof(err)) < 0 || sched_digest(&S, DIGEST) < 0)
        return -1;
    make_ops();
    make_ledger();
    API = calloc(S.norders, sizeof(*API));
    if (API == NULL || S.nphases > 64)
        return -1;
    for (size_t i = 0; i < S.norders; i++)
        API[i].state = ROW_ABSENT, API[i].status = OST_NONE;
    API[0] = (sim_row){ .state = ROW_PRESENT,
                        .status = OST_PAID,
                        .user_id = S.orders[0].user_id,
                        .amount_fen = S.orders[0].amount_fen };
    snprintf(API[0].transaction_id, sizeof(API[0].transaction_id), "TXNA");
    snprintf(API[0].updated_at, sizeof(API[0].updated_at), "2026-01-01 00:00:00");
    OBS = (sim_observations){ .ops = OPS,
                              .nops = 6,
                              .charges = CH,
                              .ncharges = 1,
                              .api_rows = API,
                              .prefix = PFX,
                              .seed = 4242,
                              .phase_start_us = STARTS,
                              .service_call_us = 7000000,
                              .lease_us = 10000000 };
    if (checker_run(&S, &OBS, &CHK) < 0)
        return -1;
    report_init(&REP);
    REP.seed = 4242;
    REP.digest = DIGEST;
    REP.prefix = PFX;
    REP.target = "http://127.0.0.1:1";
    REP.sched = &S;
    REP.obs = &OBS;
    REP.chk = &CHK;
    REP.requests[SC_DOUBLE_CLICK][OP_PAY][OUT_OK] = 3;
    REP.requests[SC_DOUBLE_CLICK][OP_PAY][OUT_UNKNOWN] = 1;
    REP.requests[SC_DOUBLE_CLICK][OP_QUERY][OUT_OK] = 2;
    for (int i = 0; i < 6; i++)
        hist_record(&REP.latency[OPS[i].kind], (uint64_t)(OPS[i].end_us - OPS[i].start_us));
    REP.exit_code = CHK.total ? 1 : 0;
    META = (saved_run_meta){ .recipe = rc,
                             .origin_epoch_us = mock_admin_time_us(ORIGIN),
                             .judged = 1 };
    META.recipe.mock_override = "{\"dedupe\":false}";
    snprintf(BASE, sizeof(BASE), "/tmp/test_sim_results.XXXXXX");
    return mkdtemp(BASE) ? 0 : -1;
}

static int teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", BASE);
    checker_result_free(&CHK);
    sched_free(&S);
    free(API);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_timeline(void)
{
    sim_timeline t;
    CU_ASSERT_EQUAL(timeline_interval_us(1000000), 100000);
    CU_ASSERT_EQUAL(timeline_interval_us(12000000), 100000 * 2);
    CU_ASSERT_EQUAL(timeline_interval_us(100000000000LL), 600000000);
    CU_ASSERT_EQUAL_FATAL(timeline_build(OPS, 6, &t), 0);
    CU_ASSERT_EQUAL(t.interval_us, 100000);
    CU_ASSERT_EQUAL(t.nbuckets, 6);
    uint64_t pay = 0, query = 0, ok = 0;
    for (size_t b = 0; b < t.nbuckets; b++) {
        pay += t.count[OP_PAY * t.nbuckets + b];
        query += t.count[OP_QUERY * t.nbuckets + b];
        ok += t.outcome[OUT_OK * t.nbuckets + b];
    }
    CU_ASSERT_EQUAL(pay, 4);
    CU_ASSERT_EQUAL(query, 2);
    CU_ASSERT_EQUAL(ok, 5);
    /* op 3 (pay, 43 ms) alone in interval 0.3 s */
    CU_ASSERT_DOUBLE_EQUAL(t.p50_ms[OP_PAY * t.nbuckets + 3], 42.999, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(t.p99_ms[OP_PAY * t.nbuckets + 3], 42.999, 0.01);
    timeline_free(&t);
    CU_ASSERT_EQUAL_FATAL(timeline_build(NULL, 0, &t), 0);
    CU_ASSERT_EQUAL(t.nbuckets, 1);
    timeline_free(&t);
}

static int op_equal(const sim_op *a, const sim_op *b)
{
    return a->start_us == b->start_us && a->end_us == b->end_us && a->order == b->order &&
           a->token == b->token && a->task == b->task && a->user_id == b->user_id &&
           a->amount_fen == b->amount_fen && a->http_code == b->http_code && a->kind == b->kind &&
           a->outcome == b->outcome && a->transport == b->transport && a->status == b->status &&
           a->scenario == b->scenario && a->flags == b->flags && a->token_use == b->token_use &&
           a->idem == b->idem && a->attempt == b->attempt && a->forge == b->forge &&
           strcmp(a->txn, b->txn) == 0 && strcmp(a->error, b->error) == 0;
}

static void test_write_and_load(void)
{
    char err[512];
    saved_run s;
    CU_ASSERT_EQUAL_FATAL(results_create(BASE, 4242, DIR_, sizeof(DIR_), err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(results_write(DIR_, &REP, &META, 10, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(results_link_latest(BASE, DIR_, err, sizeof(err)), 0);
    char latest[4200];
    struct stat st;
    snprintf(latest, sizeof(latest), "%s/latest/report.html", BASE);
    CU_ASSERT_EQUAL(stat(latest, &st), 0);
    int rc = saved_run_load(DIR_, &s, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "load: %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(s.digest, DIGEST);
    CU_ASSERT_STRING_EQUAL(s.prefix, PFX);
    CU_ASSERT_EQUAL_FATAL(s.hist.n, 6);
    for (int i = 0; i < 6; i++)
        CU_ASSERT(op_equal(&s.hist.op[i], &OPS[i]));
    CU_ASSERT_EQUAL_FATAL(s.ncharges, 1);
    CU_ASSERT_STRING_EQUAL(s.charges[0].transaction_id, "TXNA");
    CU_ASSERT_EQUAL(s.charges[0].order, 0);
    CU_ASSERT_EQUAL(s.api_rows[0].status, OST_PAID);
    CU_ASSERT_EQUAL(s.api_rows[1].state, ROW_ABSENT);
    CU_ASSERT_PTR_NULL(s.db_rows);
    CU_ASSERT_EQUAL(s.rep.requests[SC_DOUBLE_CLICK][OP_PAY][OUT_UNKNOWN], 1);
    CU_ASSERT_EQUAL(hist_quantile(&s.rep.latency[OP_PAY], 0.99),
                    hist_quantile(&REP.latency[OP_PAY], 0.99));
    CU_ASSERT_EQUAL(s.rep.latency[OP_QUERY].sum, REP.latency[OP_QUERY].sum);
    saved_run_free(&s);
    CU_ASSERT_EQUAL(results_check(DIR_, 10), REP.exit_code);
}

/* Rewrites dir/name with every occurrence of from replaced by to. */
static int edit_file(const char *dir, const char *name, const char *from, const char *to)
{
    char path[4200], buf[1 << 16];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *at = strstr(buf, from);
    if (at == NULL)
        return -1;
    f = fopen(path, "w");
    fprintf(f, "%.*s%s%s", (int)(at - buf), buf, to, at + strlen(from));
    return fclose(f);
}

static void test_edited_ledger_is_judged(void)
{
    char err[512], second[512], no[64];
    saved_run s;
    chk_result chk;
    sched_order_no(&S, PFX, 0, no, sizeof(no));
    snprintf(second, sizeof(second),
             "\"charges\": [{\"transaction_id\": \"TXNB\", \"out_trade_no\": \"%s\", "
             "\"total_fee\": %lld, \"refunded\": false, \"charged_at\": "
             "\"2026-01-01T00:00:00.050000Z\"},",
             no, (long long)S.orders[0].amount_fen);
    CU_ASSERT_EQUAL_FATAL(edit_file(DIR_, "ledger.json", "\"charges\": [", second), 0);
    CU_ASSERT_EQUAL_FATAL(saved_run_load(DIR_, &s, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(s.ncharges, 2);
    CU_ASSERT_EQUAL_FATAL(checker_run(&s.sched, &s.obs, &chk), 0);
    CU_ASSERT(chk.count[SC_DOUBLE_CLICK][INV_NO_DOUBLE_CHARGE] > 0);
    checker_result_free(&chk);
    saved_run_free(&s);
    CU_ASSERT_EQUAL(results_check(DIR_, 10), 1);
}

static void test_edited_recipe_is_refused(void)
{
    char err[512];
    saved_run s;
    CU_ASSERT_EQUAL_FATAL(edit_file(DIR_, "schedule.json", "\"orders\": 8", "\"orders\": 9"), 0);
    CU_ASSERT_EQUAL(saved_run_load(DIR_, &s, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "digest"));
    saved_run_free(&s);
    CU_ASSERT_EQUAL(results_check(DIR_, 10), 2);
    CU_ASSERT_EQUAL(results_check("/nonexistent/run", 10), 2);
}

static void test_html_data_block(void)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/page.html", BASE);
    CU_ASSERT_EQUAL_FATAL(report_html_write(&REP, path), 0);
    FILE *f = fopen(path, "r");
    static char page[1 << 18];
    size_t n = fread(page, 1, sizeof(page) - 1, f);
    fclose(f);
    page[n] = '\0';
    const char *tag = "<script type=\"application/json\" id=\"idempay-report-data\">";
    char *at = strstr(page, tag), *end = at ? strstr(at, "</script>") : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    at += strlen(tag);
    json_t *d = json_loadb(at, (size_t)(end - at), 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    json_t *p99 = json_object_get(json_object_get(json_object_get(d, "latency"), "pay"), "p99_ms");
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(p99), hist_quantile(&REP.latency[OP_PAY], 0.99) / 1e3,
                           1e-12);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(d, "requests"), "total")),
                    6);
    json_t *counts = json_object_get(
        json_object_get(json_object_get(json_object_get(d, "series"), "kinds"), "pay"), "count");
    CU_ASSERT_EQUAL(json_array_size(counts), 6);
    json_decref(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "<svg class=\"chart throughput\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "data-invariant=\"no_double_charge\""));
    CU_ASSERT_PTR_NULL(strstr(page, "http://www.w3.org/1999")); /* nothing but the SVG namespace */
}

int main(void)
{
    static const cu_test tests[] = {
        { "the timeline counts operations per interval", test_timeline },
        { "a written run loads back", test_write_and_load },
        { "an edited ledger is judged", test_edited_ledger_is_judged },
        { "an edited recipe is refused", test_edited_recipe_is_refused },
        { "report.html carries its data block", test_html_data_block },
    };
    return CU_SUITE_RUN("sim_results", setup, teardown, tests);
}
