/* test_sim_report.c - CUnit suite for the simulator's reports: the witness
 * names the order, its charges, final row and client ops in time order; the
 * JSON report has the documented shape; the JUnit file is well-formed XML
 * with one testcase per scenario x invariant and escaped failure text. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <mxml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "report.h"
#include "witness.h"
#include "rng.h"
#include "schedule.h"

#define PFX "r0000001"

static sim_schedule S;
static sim_op OPS[8];
static sim_charge CH[4];
static sim_row API[2];
static sim_observations OBS;
static chk_result CHK;
static sim_report REP;
static char TMPDIR_[64];

static int setup(void)
{
    rng_t r;
    rng_seed(&r, 3);
    sched_init(&S, 77);
    if (sched_begin_phase(&S, SC_DOUBLE_CLICK, "p", "{}", 0, 0) < 0)
        return -1;
    sched_add_order(&S, &r, SC_DOUBLE_CLICK, 11, 1230, AMT_SHORT, 0);
    if (sched_begin_phase(&S, SC_RETRY_STORM, "p", "{}", 0, 0) < 0)
        return -1;
    sched_add_order(&S, &r, SC_RETRY_STORM, 12, 500, AMT_FIXED2, 0);

    /* Order 0 charged twice (the second refunded); its two copies both 200. */
    memset(OPS, 0, sizeof(OPS));
    for (int i = 0; i < 2; i++) {
        OPS[i].kind = OP_PAY;
        OPS[i].order = 0;
        OPS[i].token = -1;
        OPS[i].task = i; /* two clients (one client's runs of one answer are folded) */
        OPS[i].scenario = SC_DOUBLE_CLICK;
        OPS[i].user_id = 11;
        OPS[i].amount_fen = 1230;
        OPS[i].http_code = 200;
        OPS[i].status = OST_PAID;
        OPS[i].outcome = OUT_OK;
        OPS[i].attempt = (uint8_t)(i + 1);
        OPS[i].start_us = 1000 + i * 10;
        OPS[i].end_us = 5000 + i * 10;
        snprintf(OPS[i].txn, sizeof(OPS[i].txn), "%s", "TXNA");
        snprintf(OPS[i].error, sizeof(OPS[i].error), "%s", "");
    }
    memset(CH, 0, sizeof(CH));
    snprintf(CH[0].transaction_id, sizeof(CH[0].transaction_id), "TXNA");
    snprintf(CH[1].transaction_id, sizeof(CH[1].transaction_id), "TXN<B>&\"'");
    for (int i = 0; i < 2; i++) {
        sched_order_no(&S, PFX, 0, CH[i].out_trade_no, sizeof(CH[i].out_trade_no));
        CH[i].total_fee = 1230;
        CH[i].order = 0;
        snprintf(CH[i].charged_at, sizeof(CH[i].charged_at), "2026-01-01T00:00:0%dZ", i);
    }
    CH[1].refunded = 1;
    memset(API, 0, sizeof(API));
    API[0].state = ROW_PRESENT;
    API[0].status = OST_PAID;
    API[0].user_id = 11;
    API[0].amount_fen = 1230;
    snprintf(API[0].transaction_id, sizeof(API[0].transaction_id), "TXNA");
    API[1].state = ROW_ABSENT;
    API[1].status = OST_NONE;
    OBS = (sim_observations){ .ops = OPS,
                              .nops = 2,
                              .charges = CH,
                              .ncharges = 2,
                              .api_rows = API,
                              .db_rows = NULL,
                              .prefix = PFX,
                              .seed = 77 };
    if (checker_run(&S, &OBS, &CHK) < 0)
        return -1;
    report_init(&REP);
    REP.seed = 77;
    REP.digest = "abc123";
    REP.prefix = PFX;
    REP.target = "http://127.0.0.1:1";
    REP.gateway = "http://127.0.0.1:2";
    REP.replay_cmd = "idempay-sim --seed 77";
    REP.sched = &S;
    REP.obs = &OBS;
    REP.chk = &CHK;
    REP.requests[SC_DOUBLE_CLICK][OP_PAY][OUT_OK] = 2;
    hist_record(&REP.latency[OP_PAY], 4000);
    hist_record(&REP.latency[OP_PAY], 4000);
    REP.traffic_s = 1.0;
    REP.total_s = 2.0;
    REP.exit_code = CHK.total ? 1 : 0;
    snprintf(TMPDIR_, sizeof(TMPDIR_), "/tmp/test_sim_report.XXXXXX");
    return mkdtemp(TMPDIR_) ? 0 : -1;
}

static int teardown(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/r.json", TMPDIR_);
    unlink(path);
    snprintf(path, sizeof(path), "%s/r.xml", TMPDIR_);
    unlink(path);
    rmdir(TMPDIR_);
    checker_result_free(&CHK);
    sched_free(&S);
    return 0;
}

static void test_checker_found_it(void)
{
    CU_ASSERT_EQUAL(CHK.total, 1);
    CU_ASSERT_EQUAL(CHK.count[SC_DOUBLE_CLICK][INV_NO_DOUBLE_CHARGE], 1);
    CU_ASSERT_EQUAL(REP.exit_code, 1);
}

static void test_witness(void)
{
    CU_ASSERT_EQUAL_FATAL(CHK.nv, 1);
    char *w = witness_text(&REP, &CHK.v[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    char no[64];
    sched_order_no(&S, PFX, 0, no, sizeof(no));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "no_double_charge"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, no));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "seed: 77"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "REFUNDED"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "ledger: 2 charge(s)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "final row (API): PAID"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "amount=12.30"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "TXN<B>&\"' total_fee=1230 REFUNDED"));
    /* Client ops in time order. */
    char *a = strstr(w, "try=1"), *b = strstr(w, "try=2");
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_PTR_NOT_NULL(b);
    CU_ASSERT(a != NULL && b != NULL && a < b);
    free(w);
}

static void test_human(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_human(&REP, f, 5);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "double-click"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "FAIL(1)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "result: FAIL"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "seed: 77"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "p99 ms"));
    free(buf);
}

static void test_json_shape(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/r.json", TMPDIR_);
    CU_ASSERT_EQUAL_FATAL(report_json(&REP, path), 0);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "seed")), 77);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "schedule_digest")), "abc123");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "exit_code")), 1);
    CU_ASSERT_TRUE(json_is_false(json_object_get(j, "all_invariants_held")));
    json_t *inv = json_object_get(j, "invariants");
    CU_ASSERT_EQUAL(json_object_size(inv), INV_COUNT);
    CU_ASSERT_TRUE(
        json_is_false(json_object_get(json_object_get(inv, "no_double_charge"), "pass")));
    CU_ASSERT_TRUE(json_is_true(json_object_get(json_object_get(inv, "all_settled"), "pass")));
    json_t *sc = json_object_get(j, "scenarios");
    CU_ASSERT_EQUAL(json_array_size(sc), 2);
    json_t *v = json_object_get(j, "violations");
    CU_ASSERT_EQUAL_FATAL(json_array_size(v), 1);
    json_t *v0 = json_array_get(v, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v0, "invariant")), "no_double_charge");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(v0, "charges")), 2);
    CU_ASSERT_PTR_NOT_NULL(json_object_get(v0, "row"));
    CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(v0, "witness")));
    json_t *lat = json_object_get(json_object_get(j, "latency"), "all");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(lat, "count")), 2);
    CU_ASSERT_PTR_NOT_NULL(json_object_get(lat, "p99_ms"));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(j, "requests"), "ok")), 2);
    json_decref(j);
}

static void test_junit_shape(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/r.xml", TMPDIR_);
    CU_ASSERT_EQUAL_FATAL(report_junit(&REP, path), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    CU_ASSERT(n > 0);
    /* The document is closed, and the escaped txn never appears raw. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "</testsuites>"));
    CU_ASSERT_PTR_NULL(strstr(text, "TXN<B>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "TXN&lt;B&gt;&amp;&quot;&apos;"));
    mxml_node_t *doc = mxmlLoadString(NULL, text, MXML_OPAQUE_CALLBACK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    int cases = 0, failures = 0;
    for (mxml_node_t *t = mxmlFindElement(doc, doc, "testcase", NULL, NULL, MXML_DESCEND); t;
         t = mxmlFindElement(t, doc, "testcase", NULL, NULL, MXML_DESCEND)) {
        cases++;
        if (mxmlFindElement(t, t, "failure", NULL, NULL, MXML_DESCEND) != NULL) {
            failures++;
            CU_ASSERT_STRING_EQUAL(mxmlElementGetAttr(t, "name"), "no_double_charge");
            CU_ASSERT_STRING_EQUAL(mxmlElementGetAttr(t, "classname"), "idempay-sim.double-click");
        }
    }
    CU_ASSERT_EQUAL(cases, 2 * INV_COUNT);
    CU_ASSERT_EQUAL(failures, 1);
    mxmlDelete(doc);
    free(text);
}

static void test_xml_escape(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_xml_escape(f, "a<b>&\"'\x01\tz");
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "a&lt;b&gt;&amp;&quot;&apos;?\tz");
    free(buf);
}

static void test_error_run(void)
{
    /* A run that could not be carried out: no checker result. */
    sim_report r;
    report_init(&r);
    r.seed = 5;
    r.sched = &S;
    r.exit_code = 2;
    r.error = "target http://127.0.0.1:1 is not answering";
    char path[128];
    snprintf(path, sizeof(path), "%s/r.xml", TMPDIR_);
    CU_ASSERT_EQUAL_FATAL(report_junit(&r, path), 0);
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    CU_ASSERT(n > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "<error message=\"target http://127.0.0.1:1"));
    snprintf(path, sizeof(path), "%s/r.json", TMPDIR_);
    CU_ASSERT_EQUAL(report_json(&r, path), 0);
    json_t *j = json_load_file(path, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "exit_code")), 2);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "result")), "error");
    json_decref(j);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the checker finds the planted double charge", test_checker_found_it },
        { "a witness names the invariant, the order and the seed", test_witness },
        { "the human report says the result and the seed", test_human },
        { "the JSON report has its documented shape", test_json_shape },
        { "the JUnit report has its documented shape", test_junit_shape },
        { "text in XML is escaped", test_xml_escape },
        { "a run that could not be carried out is reported as an error", test_error_run },
    };
    return CU_SUITE_RUN("sim_report", setup, teardown, tests);
}
