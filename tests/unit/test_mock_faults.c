/* test_mock_faults.c - CUnit suite for gateway-mock/faults: knob defaults,
 * strict merging of partial JSON (per-endpoint knobs included), the JSON
 * round trip, reproducible fault decisions for a seed (unifiedorder's five
 * draws untouched by the other endpoints' knobs and draws), and the scaled
 * WeChat retry schedule. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "faults.h"

static int merge_text(const faults_config *base, const char *text, faults_config *out, int *seeded,
                      char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, JSON_DECODE_ANY, &je);
    if (o == NULL)
        return -2;
    int rc = faults_config_merge(base, o, out, seeded, err, errlen);
    json_decref(o);
    return rc;
}

static void test_defaults(void)
{
    faults_config c;
    faults_config_defaults(&c);
    CU_ASSERT_EQUAL(c.latency_ms, 0);
    CU_ASSERT_EQUAL(c.jitter_ms, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.error_rate, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(c.reset_rate, 0.0, 0.0);
    CU_ASSERT_TRUE(c.dedupe);
    CU_ASSERT_EQUAL(c.notify_copies, 1);
    CU_ASSERT_EQUAL(c.notify_concurrency, 8);
    CU_ASSERT_EQUAL(c.notify_delay_ms, 0);
    CU_ASSERT_EQUAL(c.notify_retry_ms, 1000);
    CU_ASSERT_TRUE(c.notify_enabled);
    CU_ASSERT_EQUAL(c.hold_max_ms, 30000);
    CU_ASSERT_EQUAL(c.seed, MOCK_DEFAULT_SEED);
    CU_ASSERT_EQUAL(c.bill_ready_hour, 10); /* WeChat: fetch day D after D+1 10:00 */
    CU_ASSERT_FALSE(c.bill_range_enabled);
    CU_ASSERT_FALSE(c.bill_forge);
    CU_ASSERT_FALSE(c.bill_bad_line);
    CU_ASSERT_EQUAL(c.clock_offset_ms, 0);
    CU_ASSERT_TRUE(c.closeorder_enabled);
    CU_ASSERT_TRUE(c.journal);
    /* Refunds: WeChat's 20 min unless the environment scales it. */
    unsetenv("IDEMPAY_MOCK_REFUND_DELAY_MS");
    unsetenv("IDEMPAY_MOCK_REQUIRE_CLIENT_CERT");
    faults_config_defaults(&c);
    CU_ASSERT_EQUAL(c.refund_delay_ms, 1200000);
    CU_ASSERT_DOUBLE_EQUAL(c.refund_close_rate + c.refund_change_rate + c.refund_notenough_rate +
                               c.refund_abnormal_rate,
                           0.0, 0.0);
    CU_ASSERT_TRUE(c.require_client_cert);
    setenv("IDEMPAY_MOCK_REFUND_DELAY_MS", "500", 1);
    setenv("IDEMPAY_MOCK_REQUIRE_CLIENT_CERT", "0", 1);
    faults_config c2;
    faults_config_defaults(&c2);
    CU_ASSERT_EQUAL(c2.refund_delay_ms, 500);
    CU_ASSERT_FALSE(c2.require_client_cert);
    setenv("IDEMPAY_MOCK_REFUND_DELAY_MS", "-5", 1); /* out of range: WeChat's */
    faults_config_defaults(&c2);
    CU_ASSERT_EQUAL(c2.refund_delay_ms, 1200000);
    unsetenv("IDEMPAY_MOCK_REFUND_DELAY_MS");
    unsetenv("IDEMPAY_MOCK_REQUIRE_CLIENT_CERT");
    for (int i = 0; i < MOCK_EP_COUNT; i++) {
        CU_ASSERT_EQUAL(c.endpoints[i].latency_ms, MOCK_INHERIT);
        CU_ASSERT_EQUAL(c.endpoints[i].jitter_ms, MOCK_INHERIT);
        CU_ASSERT_DOUBLE_EQUAL(c.endpoints[i].error_rate, 0.0, 0.0);
        CU_ASSERT_DOUBLE_EQUAL(c.endpoints[i].reset_rate, 0.0, 0.0);
    }
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_ORDERQUERY), "orderquery");
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_CLOSEORDER), "closeorder");
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_REFUND), "refund");
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_DOWNLOADBILL), "downloadbill");
}

static void test_merge_endpoints(void)
{
    faults_config base, out;
    char err[160];
    faults_config_defaults(&base);
    CU_ASSERT_EQUAL(merge_text(&base,
                               "{\"endpoints\": {\"orderquery\": {\"error_rate\": 1}, "
                               "\"downloadbill\": {\"latency_ms\": 250, \"jitter_ms\": 5}}, "
                               "\"closeorder_enabled\": false, \"journal\": false}",
                               &out, NULL, err, sizeof(err)),
                    0);
    const faults_endpoint_config *oq = &out.endpoints[MOCK_EP_ORDERQUERY];
    const faults_endpoint_config *db = &out.endpoints[MOCK_EP_DOWNLOADBILL];
    CU_ASSERT_DOUBLE_EQUAL(oq->error_rate, 1.0, 0.0);
    CU_ASSERT_EQUAL(oq->latency_ms, MOCK_INHERIT); /* not named: still inherited */
    CU_ASSERT_EQUAL(db->latency_ms, 250);
    CU_ASSERT_EQUAL(db->jitter_ms, 5);
    CU_ASSERT_DOUBLE_EQUAL(db->reset_rate, 0.0, 0.0);
    CU_ASSERT_FALSE(out.closeorder_enabled);
    CU_ASSERT_FALSE(out.journal);
    CU_ASSERT_EQUAL(out.endpoints[MOCK_EP_REFUND].latency_ms, MOCK_INHERIT);
    CU_ASSERT_EQUAL(out.latency_ms, 0); /* the top level is unifiedorder's */
    CU_ASSERT_DOUBLE_EQUAL(out.error_rate, 0.0, 0.0);
    /* A later merge keeps what it does not name; null latency inherits again;
     * a null endpoint goes back to its defaults. */
    CU_ASSERT_EQUAL(merge_text(&out,
                               "{\"endpoints\": {\"downloadbill\": {\"latency_ms\": null}, "
                               "\"orderquery\": {\"reset_rate\": 0.5}}}",
                               &out, NULL, err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(db->latency_ms, MOCK_INHERIT);
    CU_ASSERT_EQUAL(db->jitter_ms, 5);
    CU_ASSERT_DOUBLE_EQUAL(oq->error_rate, 1.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(oq->reset_rate, 0.5, 0.0);
    CU_ASSERT_EQUAL(merge_text(&out, "{\"endpoints\": {\"orderquery\": null}}", &out, NULL, err,
                               sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(oq->error_rate, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(oq->reset_rate, 0.0, 0.0);
    CU_ASSERT_EQUAL(oq->latency_ms, MOCK_INHERIT);
    CU_ASSERT_EQUAL(db->jitter_ms, 5);
    CU_ASSERT_EQUAL(merge_text(&out, "{\"endpoints\": {}}", &out, NULL, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(db->jitter_ms, 5);
}

static void test_merge_partial(void)
{
    faults_config base, out;
    char err[160];
    int seeded = -1;
    faults_config_defaults(&base);
    CU_ASSERT_EQUAL(merge_text(&base,
                               "{\"error_rate\": 0.25, \"dedupe\": false, \"latency_ms\": 5}", &out,
                               &seeded, err, sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(out.error_rate, 0.25, 1e-12);
    CU_ASSERT_FALSE(out.dedupe);
    CU_ASSERT_EQUAL(out.latency_ms, 5);
    CU_ASSERT_EQUAL(out.notify_copies, 1); /* untouched knobs keep their value */
    CU_ASSERT_EQUAL(seeded, 0);
    /* Integers are accepted as rates; the seed is reported. */
    CU_ASSERT_EQUAL(merge_text(&out, "{\"reset_rate\": 1, \"seed\": 77}", &out, &seeded, err,
                               sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(out.reset_rate, 1.0, 0.0);
    CU_ASSERT_EQUAL(out.seed, 77);
    CU_ASSERT_EQUAL(seeded, 1);
    CU_ASSERT_FALSE(out.dedupe); /* from the previous merge */
    /* The empty object changes nothing. */
    faults_config same;
    CU_ASSERT_EQUAL(merge_text(&out, "{}", &same, NULL, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(memcmp(&same, &out, sizeof(same)), 0);
}

static void test_merge_rejects(void)
{
    static const char *const bad[] = {
        "{\"nope\": 1}",
        "{\"error_rate\": \"0.5\"}",
        "{\"error_rate\": 1.5}",
        "{\"error_rate\": -0.1}",
        "{\"dedupe\": 1}",
        "{\"dedupe\": \"true\"}",
        "{\"latency_ms\": 1.5}",
        "{\"latency_ms\": -1}",
        "{\"latency_ms\": 60001}",
        "{\"notify_concurrency\": 0}",
        "{\"notify_concurrency\": 65}",
        "{\"notify_copies\": 101}",
        "{\"seed\": -1}",
        "{\"seed\": null}",
        "{\"dedupe\": false, \"bogus\": true}",
        "{\"closeorder_enabled\": 1}",
        "{\"journal\": null}",
        "{\"endpoints\": 1}",
        "{\"endpoints\": null}",
        "{\"endpoints\": {\"unifiedorder\": {}}}",
        "{\"endpoints\": {\"orderquery\": 5}}",
        "{\"endpoints\": {\"orderquery\": {\"decline_rate\": 1}}}",
        "{\"endpoints\": {\"orderquery\": {\"error_rate\": 1.5}}}",
        "{\"endpoints\": {\"closeorder\": {\"reset_rate\": null}}}",
        "{\"endpoints\": {\"refund\": {\"latency_ms\": 60001}}}",
        "{\"endpoints\": {\"refund\": {\"jitter_ms\": -1}}}",
        "{\"endpoints\": {\"downloadbill\": {\"latency_ms\": \"5\"}}}",
        "{\"latency_ms\": 5, \"endpoints\": {\"orderquery\": {\"error_rate\": 1}, \"bogus\": {}}}",
        "[1, 2]",
        "42",
    };
    faults_config base, out;
    char err[160];
    faults_config_defaults(&base);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        faults_config_defaults(&out);
        out.latency_ms = 1234; /* sentinel: must survive a rejected merge */
        int rc = merge_text(&base, bad[i], &out, NULL, err, sizeof(err));
        CU_ASSERT_EQUAL(rc, -1);
        CU_ASSERT_NOT_EQUAL(err[0], '\0');
        CU_ASSERT_EQUAL(out.latency_ms, 1234);
        CU_ASSERT_TRUE(out.dedupe);
    }
    /* The reason names the knob. */
    merge_text(&base, "{\"dedupe\": 1}", &out, NULL, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dedupe"));
}

static void test_json_round_trip(void)
{
    faults_config a, b;
    char err[160];
    faults_config_defaults(&a);
    a.latency_ms = 12;
    a.jitter_ms = 3;
    a.error_rate = 0.1;
    a.decline_rate = 0.2;
    a.timeout_after_charge_rate = 0.3;
    a.reset_rate = 0.05;
    a.dedupe = false;
    a.notify_copies = 3;
    a.notify_concurrency = 64;
    a.notify_delay_ms = 250;
    a.notify_retry_ms = 20;
    a.notify_enabled = false;
    a.hold_max_ms = 5000;
    a.seed = 9007199254740993LL;
    a.closeorder_enabled = false;
    a.journal = false;
    a.endpoints[MOCK_EP_ORDERQUERY].error_rate = 0.25;
    a.endpoints[MOCK_EP_CLOSEORDER].reset_rate = 1.0;
    a.endpoints[MOCK_EP_REFUND].latency_ms = 0;
    a.endpoints[MOCK_EP_DOWNLOADBILL].latency_ms = 60000;
    a.endpoints[MOCK_EP_DOWNLOADBILL].jitter_ms = 3;
    char *text = faults_config_dump(&a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"error_rate\":0.1,")); /* printed short */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"seed\":9007199254740993"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"orderquery\":{\"latency_ms\":null,\"jitter_ms\":null,"
                                        "\"error_rate\":0.25,\"reset_rate\":0.0}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"refund\":{\"latency_ms\":0,\"jitter_ms\":null,"));
    faults_config_defaults(&b);
    CU_ASSERT_EQUAL(merge_text(&b, text, &b, NULL, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
    json_t *o = faults_config_to_json(&a);
    CU_ASSERT_EQUAL(json_object_size(o),
                    38); /* 37 knobs (4 of downloadbill, 1 of APIv3) and "endpoints" */
    json_decref(o);
    free(text);
}

static void test_decisions_reproducible(void)
{
    faults_config c;
    faults_config_defaults(&c);
    c.latency_ms = 10;
    c.jitter_ms = 50;
    c.error_rate = 0.2;
    c.decline_rate = 0.2;
    c.timeout_after_charge_rate = 0.2;
    c.reset_rate = 0.2;
    rng_t r1, r2, r3;
    rng_seed(&r1, 4242);
    rng_seed(&r2, 4242);
    rng_seed(&r3, 4243);
    int differ = 0, seen[5] = { 0 };
    for (int i = 0; i < 2000; i++) {
        fault_decision a, b, d;
        faults_decide(&r1, &c, &a);
        faults_decide(&r2, &c, &b);
        faults_decide(&r3, &c, &d);
        CU_ASSERT_EQUAL(a.kind, b.kind);
        CU_ASSERT_EQUAL(a.delay_ms, b.delay_ms);
        CU_ASSERT_TRUE(a.delay_ms >= 10 && a.delay_ms <= 60);
        differ += a.kind != d.kind || a.delay_ms != d.delay_ms;
        seen[a.kind]++;
    }
    CU_ASSERT_TRUE(differ > 100);
    /* Every outcome occurs; reset (first in precedence) near 20 %. */
    for (int k = 0; k < 5; k++)
        CU_ASSERT_TRUE(seen[k] > 0);
    CU_ASSERT_TRUE(seen[FAULT_RESET] > 300 && seen[FAULT_RESET] < 500);
}

static void test_always_five_draws(void)
{
    faults_config zero, all;
    faults_config_defaults(&zero);
    faults_config_defaults(&all);
    all.reset_rate = all.error_rate = all.decline_rate = all.timeout_after_charge_rate = 1.0;
    all.jitter_ms = 7;
    rng_t a, b, ref;
    rng_seed(&a, 99);
    rng_seed(&b, 99);
    rng_seed(&ref, 99);
    fault_decision d;
    faults_decide(&a, &zero, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
    CU_ASSERT_EQUAL(d.delay_ms, 0);
    faults_decide(&b, &all, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_RESET);
    for (int i = 0; i < 5; i++)
        rng_next(&ref);
    CU_ASSERT_EQUAL(memcmp(&a, &ref, sizeof(ref)), 0);
    CU_ASSERT_EQUAL(memcmp(&b, &ref, sizeof(ref)), 0);
}

static void test_endpoint_decisions(void)
{
    faults_config c;
    rng_t r, ref;
    fault_decision d;
    faults_config_defaults(&c);
    c.latency_ms = 40;
    rng_seed(&r, 7);
    rng_seed(&ref, 7);
    /* Inherited latency, no faults; always three draws. */
    faults_decide_endpoint(&r, &c, MOCK_EP_ORDERQUERY, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
    CU_ASSERT_EQUAL(d.delay_ms, 40);
    for (int i = 0; i < 3; i++)
        rng_next(&ref);
    CU_ASSERT_EQUAL(memcmp(&r, &ref, sizeof(ref)), 0);
    /* Its own latency (0 is a value, not "inherit"); reset wins over error. */
    c.endpoints[MOCK_EP_CLOSEORDER].latency_ms = 0;
    c.endpoints[MOCK_EP_CLOSEORDER].error_rate = 1.0;
    c.endpoints[MOCK_EP_CLOSEORDER].reset_rate = 1.0;
    faults_decide_endpoint(&r, &c, MOCK_EP_CLOSEORDER, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_RESET);
    CU_ASSERT_EQUAL(d.delay_ms, 0);
    c.endpoints[MOCK_EP_CLOSEORDER].reset_rate = 0.0;
    faults_decide_endpoint(&r, &c, MOCK_EP_CLOSEORDER, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_ERROR);
    for (int i = 0; i < 6; i++)
        rng_next(&ref);
    CU_ASSERT_EQUAL(memcmp(&r, &ref, sizeof(ref)), 0);
    /* The other endpoints are untouched by closeorder's knobs; jitter bounds. */
    c.endpoints[MOCK_EP_REFUND].latency_ms = 10;
    c.endpoints[MOCK_EP_REFUND].jitter_ms = 5;
    for (int i = 0; i < 200; i++) {
        faults_decide_endpoint(&r, &c, MOCK_EP_REFUND, &d);
        CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
        CU_ASSERT_TRUE(d.delay_ms >= 10 && d.delay_ms <= 15);
        faults_decide_endpoint(&r, &c, MOCK_EP_DOWNLOADBILL, &d);
        CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
        CU_ASSERT_EQUAL(d.delay_ms, 40);
    }
}

/* The simulator's schedule digests rest on this: for a seed, unifiedorder's
 * decisions do not depend on the endpoints' knobs nor on their calls. */
static void test_order_draws_independent_of_endpoints(void)
{
    faults_config plain, busy;
    faults_state a, b;
    faults_config_defaults(&plain);
    plain.error_rate = 0.3;
    plain.decline_rate = 0.2;
    plain.jitter_ms = 20;
    plain.seed = 4242;
    busy = plain;
    for (int i = 0; i < MOCK_EP_COUNT; i++) {
        busy.endpoints[i].error_rate = 0.5;
        busy.endpoints[i].reset_rate = 0.25;
        busy.endpoints[i].jitter_ms = 9;
    }
    faults_init(&a, &plain);
    faults_init(&b, &busy);
    for (int i = 0; i < 300; i++) {
        fault_decision x, y, z;
        faults_draw_order(&a, &x);
        for (int k = 0; k < i % 4; k++)
            faults_draw_endpoint(&b, (faults_endpoint)(k % MOCK_EP_COUNT), &z);
        faults_draw_order(&b, &y);
        CU_ASSERT_EQUAL(x.kind, y.kind);
        CU_ASSERT_EQUAL(x.delay_ms, y.delay_ms);
    }
}

static void test_precedence(void)
{
    faults_config c;
    rng_t r;
    fault_decision d;
    rng_seed(&r, 1);
    faults_config_defaults(&c);
    c.error_rate = c.decline_rate = c.timeout_after_charge_rate = 1.0;
    faults_decide(&r, &c, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_ERROR);
    c.error_rate = 0;
    faults_decide(&r, &c, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_DECLINE);
    c.decline_rate = 0;
    faults_decide(&r, &c, &d);
    CU_ASSERT_EQUAL(d.kind, FAULT_TIMEOUT_AFTER_CHARGE);
}

static void test_state_reseed(void)
{
    faults_config c;
    faults_state st;
    fault_decision first[50], again[50];
    faults_config_defaults(&c);
    c.error_rate = 0.5;
    c.jitter_ms = 100;
    c.seed = 5;
    faults_init(&st, &c);
    for (int i = 0; i < 50; i++) {
        faults_draw_order(&st, &first[i]);
        {
            fault_decision x;
            faults_draw_endpoint(&st, MOCK_EP_ORDERQUERY, &x);
        } /* other endpoints do not disturb the sequence */
    }
    faults_set(&st, &c, 1);
    for (int i = 0; i < 50; i++)
        faults_draw_order(&st, &again[i]);
    for (int i = 0; i < 50; i++) {
        CU_ASSERT_EQUAL(first[i].kind, again[i].kind);
        CU_ASSERT_EQUAL(first[i].delay_ms, again[i].delay_ms);
    }
    /* Without reseed the sequence continues instead of restarting. */
    faults_set(&st, &c, 0);
    int same = 0;
    for (int i = 0; i < 50; i++) {
        fault_decision d;
        faults_draw_order(&st, &d);
        same += d.kind == first[i].kind && d.delay_ms == first[i].delay_ms;
    }
    CU_ASSERT_TRUE(same < 50);
}

static void test_retry_schedule(void)
{
    /* notify_retry_ms is the first 15 s step; the rest scale with it. */
    static const long long expect_1000[FAULTS_MAX_RETRIES] = {
        1000,   1000,   2000,   12000,  40000,  80000,   120000,  120000,
        120000, 240000, 720000, 720000, 720000, 1440000, 1440000,
    };
    for (int i = 1; i <= FAULTS_MAX_RETRIES; i++)
        CU_ASSERT_EQUAL(faults_retry_delay_ms(i, 1000), expect_1000[i - 1]);
    /* 15000 ms per step is WeChat's real schedule. */
    CU_ASSERT_EQUAL(faults_retry_delay_ms(1, 15000), 15000);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(4, 15000), 180000);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(10, 15000), 3600000);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(15, 15000), 21600000);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(3, 30), 60);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(2, 0), 0);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(15, 900000), 1296000000LL);
    /* Out of range: give up. */
    CU_ASSERT_EQUAL(faults_retry_delay_ms(0, 1000), -1);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(16, 1000), -1);
    CU_ASSERT_EQUAL(faults_retry_delay_ms(1, -5), -1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the defaults inject no fault", test_defaults },
        { "a partial config merges over the current one", test_merge_partial },
        { "per-endpoint knobs merge", test_merge_endpoints },
        { "an unknown knob, a wrong type or an out-of-range value is rejected",
          test_merge_rejects },
        { "the config round-trips through JSON", test_json_round_trip },
        { "the same seed makes the same decisions", test_decisions_reproducible },
        { "every decision takes five draws, whatever the knobs", test_always_five_draws },
        { "an endpoint inherits or uses its own knobs, in three draws", test_endpoint_decisions },
        { "unifiedorder's draws do not depend on the endpoints",
          test_order_draws_independent_of_endpoints },
        { "reset wins over error, error over decline, decline over timeout", test_precedence },
        { "setting the config reseeds the state", test_state_reseed },
        { "the retry schedule scales with notify_retry_ms", test_retry_schedule },
    };
    return CU_SUITE_RUN("mock_faults", NULL, NULL, tests);
}
