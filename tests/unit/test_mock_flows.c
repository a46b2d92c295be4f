/* test_mock_flows.c - CUnit suite for the pure parts of the mock's payment
 * flows: the payment-code rule and the test codes (flows_rules), time_expire
 * in China time, the request fingerprint, the mock's clock (clock.c), the
 * flows' knobs with WeChat's defaults and ./stack's IDEMPAY_MOCK_DEFAULTS
 * (faults.c), and the flows' PRNG. No database. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "faults.h"
#include "flows_rules.h"

static void test_auth_code_rule(void)
{
    CU_ASSERT_TRUE(flows_auth_code_valid("134567890123456789"));
    CU_ASSERT_TRUE(flows_auth_code_valid("104567890123456789"));
    CU_ASSERT_TRUE(flows_auth_code_valid("154567890123456789"));
    CU_ASSERT_FALSE(flows_auth_code_valid("164567890123456789"));  /* prefix 16 */
    CU_ASSERT_FALSE(flows_auth_code_valid("094567890123456789"));  /* prefix 09 */
    CU_ASSERT_FALSE(flows_auth_code_valid("13456789012345678"));   /* 17 digits */
    CU_ASSERT_FALSE(flows_auth_code_valid("1345678901234567890")); /* 19 digits */
    CU_ASSERT_FALSE(flows_auth_code_valid("13456789012345678x"));
    CU_ASSERT_FALSE(flows_auth_code_valid(""));
    CU_ASSERT_FALSE(flows_auth_code_valid(NULL));
}

static void test_test_codes(void)
{
    int n = 0;
    const mp_test_code *all = flows_test_codes(&n);
    CU_ASSERT_TRUE(n >= 10);
    for (int i = 0; i < n; i++) {
        char code[19];
        snprintf(code, sizeof(code), "13999999999999%s", all[i].suffix);
        const mp_test_code *t = flows_test_code(code);
        CU_ASSERT_PTR_EQUAL(t, &all[i]);
        CU_ASSERT_TRUE(flows_auth_code_valid(code));
        /* success and USERPAYING carry no err_code; every other outcome does */
        CU_ASSERT_EQUAL(all[i].err_code == NULL, all[i].outcome == MP_SUCCESS ||
                                                     all[i].outcome == MP_USERPAYING_PAY ||
                                                     all[i].outcome == MP_USERPAYING_FAIL);
    }
    CU_ASSERT_PTR_NULL(flows_test_code("134567890123450001")); /* no marker: a real code */
    CU_ASSERT_PTR_NULL(flows_test_code("139999999999999999")); /* marker, unknown suffix */
    CU_ASSERT_PTR_NULL(flows_test_code("16999999999999"
                                       "0001")); /* not a payment code */
    CU_ASSERT_EQUAL(flows_test_code("109999999999990010")->outcome, MP_DECLINED);
    CU_ASSERT_STRING_EQUAL(flows_test_code("109999999999990010")->err_code, "NOTENOUGH");
}

static void test_parse_cst(void)
{
    long long ms = 0;
    /* 2024-03-01 07:30:00 in China is 2024-02-29 23:30:00 UTC = 1709249400. */
    CU_ASSERT_EQUAL(flows_parse_cst("20240301073000", &ms), 0);
    CU_ASSERT_EQUAL(ms, 1709249400LL * 1000);
    CU_ASSERT_EQUAL(flows_parse_cst("20240229235959", &ms), 0);  /* a leap day */
    CU_ASSERT_EQUAL(flows_parse_cst("20230229120000", &ms), -1); /* not one */
    CU_ASSERT_EQUAL(flows_parse_cst("20240431120000", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst("20241301120000", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst("20240301246000", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst("2024030107300", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst("2024030107300a", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst("19690101000000", &ms), -1);
    CU_ASSERT_EQUAL(flows_parse_cst(NULL, &ms), -1);
}

static void fill(wx_msg *m, const char *nonce, const char *fee)
{
    wx_msg_init(m);
    wx_msg_set(m, "appid", "wx0000000000000000");
    wx_msg_set(m, "nonce_str", nonce);
    wx_msg_set(m, "out_trade_no", "ORDER-0001");
    wx_msg_set(m, "total_fee", fee);
    wx_msg_set(m, "sign", nonce);
}

static void test_fingerprint(void)
{
    wx_msg a, b, c;
    char fa[33], fb[33], fc[33];
    fill(&a, "nonce1", "100");
    fill(&b, "nonce2", "100"); /* another nonce and sign: the same request */
    fill(&c, "nonce1", "101");
    wx_msg_set(&b, "sign_type", "MD5");
    CU_ASSERT_EQUAL(flows_fingerprint(&a, fa), 0);
    CU_ASSERT_EQUAL(flows_fingerprint(&b, fb), 0);
    CU_ASSERT_EQUAL(flows_fingerprint(&c, fc), 0);
    CU_ASSERT_EQUAL(strlen(fa), 32);
    CU_ASSERT_STRING_EQUAL(fa, fb);
    CU_ASSERT_STRING_NOT_EQUAL(fa, fc);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&a, "nonce_str"), "nonce1"); /* a untouched */
    wx_msg_free(&a);
    wx_msg_free(&b);
    wx_msg_free(&c);
}

static void test_clock_offset(void)
{
    faults_state st;
    faults_config cfg;
    faults_config_defaults(&cfg);
    faults_init(&st, &cfg);
    long long real = mock_clock_now_ms();
    cfg.clock_offset_ms = 86400000LL;
    faults_set(&st, &cfg, 0);
    CU_ASSERT_EQUAL(mock_clock_offset_ms(), 86400000LL);
    long long moved = mock_clock_now_ms();
    CU_ASSERT_TRUE(moved - real >= 86400000LL && moved - real < 86400000LL + 5000);
    CU_ASSERT_TRUE(mock_clock_now() * 1000LL - real >= 86400000LL - 1000);
    cfg.clock_offset_ms = 999;
    faults_set(&st, &cfg, 0);
    struct timespec ts;
    mock_clock_now_ts(&ts);
    CU_ASSERT_TRUE(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    cfg.clock_offset_ms = 0;
    faults_set(&st, &cfg, 0);
    CU_ASSERT_EQUAL(mock_clock_offset_ms(), 0);
}

static void test_wechat_defaults(void)
{
    faults_config c;
    faults_config_defaults(&c);
    CU_ASSERT_FALSE(c.instant_charge);
    CU_ASSERT_EQUAL(c.clock_offset_ms, 0);
    CU_ASSERT_EQUAL(c.prepay_ttl_ms, 7200000);
    CU_ASSERT_EQUAL(c.time_expire_min_ms, 300000);
    CU_ASSERT_EQUAL(c.closeorder_min_age_ms, 300000);
    CU_ASSERT_EQUAL(c.userpaying_ms, 30000);
    CU_ASSERT_EQUAL(c.reverse_min_wait_ms, 15000);
    CU_ASSERT_DOUBLE_EQUAL(c.close_race_rate, 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.userpaying_rate, 0.0, 1e-12);
}

static void test_site_defaults(void)
{
    faults_config c;
    char err[256];
    setenv("IDEMPAY_MOCK_DEFAULTS", "{\"instant_charge\":true,\"closeorder_min_age_ms\":3000}", 1);
    faults_config_site_defaults(&c, err, sizeof(err));
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_TRUE(c.instant_charge);
    CU_ASSERT_EQUAL(c.closeorder_min_age_ms, 3000);
    CU_ASSERT_EQUAL(c.reverse_min_wait_ms, 15000);
    setenv("IDEMPAY_MOCK_DEFAULTS", "{\"closeorder_min_age_ms\":-1}", 1);
    faults_config_site_defaults(&c, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ignored"));
    CU_ASSERT_EQUAL(c.closeorder_min_age_ms, 300000); /* all of it ignored */
    setenv("IDEMPAY_MOCK_DEFAULTS", "not json", 1);
    faults_config_site_defaults(&c, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ignored"));
    unsetenv("IDEMPAY_MOCK_DEFAULTS");
    faults_config_site_defaults(&c, err, sizeof(err));
    CU_ASSERT_FALSE(c.instant_charge);
}

static void test_flow_draws(void)
{
    faults_state st;
    faults_config cfg;
    faults_config_defaults(&cfg);
    faults_init(&st, &cfg);
    int hits = 0;
    for (int i = 0; i < 10000; i++)
        hits += faults_draw_flow(&st, 0.25);
    CU_ASSERT_TRUE(hits > 2200 && hits < 2800);
    CU_ASSERT_FALSE(faults_draw_flow(&st, 0.0));
    CU_ASSERT_TRUE(faults_draw_flow(&st, 1.0));
    /* the flows' draws leave unifiedorder's sequence alone */
    faults_state a, b;
    faults_init(&a, &cfg);
    faults_init(&b, &cfg);
    for (int i = 0; i < 100; i++)
        (void)faults_draw_flow(&a, 0.5);
    fault_decision da, db;
    faults_draw_order(&a, &da);
    faults_draw_order(&b, &db);
    CU_ASSERT_EQUAL(da.kind, db.kind);
    CU_ASSERT_EQUAL(da.delay_ms, db.delay_ms);
}

static void test_knob_ranges(void)
{
    faults_config c, out;
    char err[200];
    faults_config_defaults(&c);
    json_t *o = json_pack("{s:I}", "clock_offset_ms", (json_int_t)-1);
    CU_ASSERT_EQUAL(faults_config_merge(&c, o, &out, NULL, err, sizeof(err)), -1);
    json_decref(o);
    o = json_pack("{s:f}", "close_race_rate", 1.5);
    CU_ASSERT_EQUAL(faults_config_merge(&c, o, &out, NULL, err, sizeof(err)), -1);
    json_decref(o);
    o = json_pack("{s:I, s:b, s:f}", "clock_offset_ms", (json_int_t)86400000, "instant_charge", 1,
                  "userpaying_rate", 0.5);
    CU_ASSERT_EQUAL(faults_config_merge(&c, o, &out, NULL, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(out.clock_offset_ms, 86400000);
    CU_ASSERT_TRUE(out.instant_charge);
    json_decref(o);
}

int main(void)
{
    static const cu_test tests[] = {
        { "an auth_code has 18 digits and a prefix 10-15", test_auth_code_rule },
        { "the test payment codes decide the payment's outcome", test_test_codes },
        { "time_expire is read in China time", test_parse_cst },
        { "the fingerprint ignores nonce, sign and sign_type", test_fingerprint },
        { "the clock is offset by its knob", test_clock_offset },
        { "WeChat's values are the defaults", test_wechat_defaults },
        { "IDEMPAY_MOCK_DEFAULTS sets the knobs the mock starts with", test_site_defaults },
        { "the flows draw apart from unifiedorder", test_flow_draws },
        { "the flows' knobs are refused out of range", test_knob_ranges },
    };
    return CU_SUITE_RUN("mock_flows", NULL, NULL, tests);
}
