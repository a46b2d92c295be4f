/* test_mock_knobs.c - CUnit suite for common/mock_knobs, the one table of
 * the mock's knobs: every knob named once with a default in its range, the
 * defaults as the table says, the knobs and endpoints a simulator phase
 * writes (and their text, part of every schedule digest), checked stores. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "mock_knobs.h"

/* The default phase config as the simulator writes it (sorted keys, rates
 * with 6 significant digits): the text in every schedule before this table
 * existed. A change here changes every schedule digest. */
static const char *const phase_defaults_text =
    "{\"closeorder_enabled\":true,\"decline_rate\":0.0,\"dedupe\":true,\"endpoints\":{"
    "\"closeorder\":{\"error_rate\":0.0,\"jitter_ms\":null,\"latency_ms\":null,\"reset_rate\":0.0},"
    "\"downloadbill\":{\"error_rate\":0.0,\"jitter_ms\":null,\"latency_ms\":null,"
    "\"reset_rate\":0.0},"
    "\"orderquery\":{\"error_rate\":0.0,\"jitter_ms\":null,\"latency_ms\":null,\"reset_rate\":0.0},"
    "\"refund\":{\"error_rate\":0.0,\"jitter_ms\":null,\"latency_ms\":null,\"reset_rate\":0.0}},"
    "\"error_rate\":0.0,\"hold_max_ms\":30000,\"jitter_ms\":0,\"latency_ms\":0,"
    "\"notify_concurrency\":8,\"notify_copies\":1,\"notify_delay_ms\":0,\"notify_enabled\":true,"
    "\"notify_retry_ms\":1000,\"reset_rate\":0.0,\"seed\":1,\"timeout_after_charge_rate\":0.0}";

/* The knob's default is in its range and its field inside its struct. */
static void check_knob(const mock_knob *k, size_t struct_size)
{
    size_t width = k->type == MOCK_KNOB_INT    ? sizeof(long long)
                   : k->type == MOCK_KNOB_RATE ? sizeof(double)
                                               : sizeof(bool);
    CU_ASSERT(k->offset + width <= struct_size);
    if (k->type == MOCK_KNOB_INT && (k->flags & MOCK_KNOB_NULL))
        CU_ASSERT_EQUAL(k->dflt, MOCK_INHERIT);
    if (k->type == MOCK_KNOB_INT && !(k->flags & MOCK_KNOB_NULL))
        CU_ASSERT(k->min <= k->dflt && k->dflt <= k->max);
    if (k->type == MOCK_KNOB_RATE)
        CU_ASSERT(k->dflt_rate >= 0.0 && k->dflt_rate <= 1.0);
    if (k->type == MOCK_KNOB_BOOL)
        CU_ASSERT(k->dflt == 0 || k->dflt == 1);
}

static void test_every_knob_named_once_default_in_range(void)
{
    const mock_knob *k;
    for (int i = 0; (k = mock_knob_at(i)) != NULL; i++) {
        check_knob(k, sizeof(mock_config));
        CU_ASSERT_PTR_EQUAL(mock_knob_of(k->name), k);
    }
    for (int i = 0; (k = mock_endpoint_knob_at(i)) != NULL; i++) {
        check_knob(k, sizeof(mock_endpoint_config));
        CU_ASSERT_PTR_EQUAL(mock_endpoint_knob_of(k->name), k);
        CU_ASSERT(k->flags & MOCK_KNOB_PHASE);
    }
    CU_ASSERT_PTR_NULL(mock_knob_of("endpoints"));
    CU_ASSERT_PTR_NULL(mock_knob_of("bogus"));
    CU_ASSERT_PTR_NULL(mock_knob_at(-1));
}

static void test_defaults_are_the_tables(void)
{
    mock_config c;
    memset(&c, 0x5a, sizeof(c));
    mock_config_defaults(&c);
    CU_ASSERT_EQUAL(c.latency_ms, 0);
    CU_ASSERT_TRUE(c.dedupe);
    CU_ASSERT_EQUAL(c.notify_concurrency, 8);
    CU_ASSERT_EQUAL(c.notify_retry_ms, 1000);
    CU_ASSERT_EQUAL(c.hold_max_ms, 30000);
    CU_ASSERT_EQUAL(c.seed, MOCK_DEFAULT_SEED);
    CU_ASSERT_EQUAL(c.prepay_ttl_ms, 7200000);
    CU_ASSERT_EQUAL(c.refund_delay_ms, 1200000); /* the table's: never the environment's */
    CU_ASSERT_DOUBLE_EQUAL(c.userpaying_pay_rate, 1.0, 0.0);
    CU_ASSERT_TRUE(c.require_client_cert);
    CU_ASSERT_FALSE(c.instant_charge);
    for (int e = 0; e < MOCK_EP_COUNT; e++) {
        CU_ASSERT_EQUAL(c.endpoints[e].latency_ms, MOCK_INHERIT);
        CU_ASSERT_EQUAL(c.endpoints[e].jitter_ms, MOCK_INHERIT);
        CU_ASSERT_DOUBLE_EQUAL(c.endpoints[e].error_rate + c.endpoints[e].reset_rate, 0.0, 0.0);
    }
}

static void test_phase_writes_fifteen_knobs_and_four_endpoints(void)
{
    mock_config c;
    mock_config_defaults(&c);
    json_t *o = mock_config_json(&c, MOCK_KNOB_PHASE);
    CU_ASSERT_EQUAL(json_object_size(o), 16); /* the 15 knobs and "endpoints" */
    CU_ASSERT_EQUAL(json_object_size(json_object_get(o, "endpoints")), 4);
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    CU_ASSERT_STRING_EQUAL(text, phase_defaults_text);
    free(text);
    json_decref(o);
    o = mock_config_json(&c, 0); /* GET /mock/config: every knob, every endpoint */
    size_t n = 0;
    while (mock_knob_at((int)n) != NULL)
        n++;
    CU_ASSERT_EQUAL(json_object_size(o), n + 1);
    CU_ASSERT_EQUAL(json_object_size(json_object_get(o, "endpoints")), MOCK_EP_COUNT);
    CU_ASSERT_TRUE(
        json_is_null(json_object_get(json_object_get(json_object_get(o, "endpoints"), "reverse"),
                                     "latency_ms")));
    json_decref(o);
}

static void test_store_checked_against_type_and_range(void)
{
    mock_config c;
    char err[128];
    mock_config_defaults(&c);
    json_t *big = json_integer(60001), *null = json_null(), *half = json_real(0.5);
    json_t *one = json_integer(1), *no = json_false();
    CU_ASSERT_EQUAL(mock_knob_set(mock_knob_of("latency_ms"), big, &c, "latency_ms", err,
                                  sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "latency_ms must be between 0 and 60000");
    CU_ASSERT_EQUAL(c.latency_ms, 0);
    CU_ASSERT_EQUAL(mock_knob_set(mock_knob_of("latency_ms"), null, &c, "latency_ms", err,
                                  sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "latency_ms must be an integer");
    CU_ASSERT_EQUAL(mock_knob_set(mock_knob_of("dedupe"), one, &c, "dedupe", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "dedupe must be true or false");
    CU_ASSERT_EQUAL(mock_knob_set(mock_knob_of("dedupe"), no, &c, "dedupe", err, sizeof(err)), 0);
    CU_ASSERT_FALSE(c.dedupe);
    mock_endpoint_config *e = &c.endpoints[MOCK_EP_REFUND];
    CU_ASSERT_EQUAL(mock_knob_set(mock_endpoint_knob_of("latency_ms"), one, e, "x", err,
                                  sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(e->latency_ms, 1);
    CU_ASSERT_EQUAL(mock_knob_set(mock_endpoint_knob_of("latency_ms"), null, e, "x", err,
                                  sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(e->latency_ms, MOCK_INHERIT);
    CU_ASSERT_EQUAL(mock_knob_set(mock_endpoint_knob_of("error_rate"), null, e, "e.r", err,
                                  sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "e.r must be a number between 0 and 1");
    CU_ASSERT_EQUAL(mock_knob_set(mock_endpoint_knob_of("error_rate"), half, e, "x", err,
                                  sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(e->error_rate, 0.5, 0.0);
    json_decref(big);
    json_decref(null);
    json_decref(half);
    json_decref(one);
    json_decref(no);
}

static void test_endpoints_named_and_reverse_not_in_phase(void)
{
    for (int ep = 0; ep < MOCK_EP_COUNT; ep++) {
        CU_ASSERT_EQUAL(mock_endpoint_of_name(mock_endpoint_name(ep)), ep);
        CU_ASSERT_EQUAL(mock_endpoint_in_phase(ep), ep != MOCK_EP_REVERSE);
    }
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_DOWNLOADBILL), "downloadbill");
    CU_ASSERT_STRING_EQUAL(mock_endpoint_name(MOCK_EP_COUNT), "?");
    CU_ASSERT_EQUAL(mock_endpoint_of_name("unifiedorder"), -1);
    CU_ASSERT_FALSE(mock_endpoint_in_phase(-1));
}

int main(void)
{
    static const cu_test tests[] = {
        { "every knob is named once with its default in its range",
          test_every_knob_named_once_default_in_range },
        { "the defaults are the table's and every endpoint inherits",
          test_defaults_are_the_tables },
        { "a phase writes the fifteen knobs and four endpoints, as before the table",
          test_phase_writes_fifteen_knobs_and_four_endpoints },
        { "a stored value is checked against its knob's type and range",
          test_store_checked_against_type_and_range },
        { "every endpoint is found by name and reverse is not in a phase",
          test_endpoints_named_and_reverse_not_in_phase },
    };
    return CU_SUITE_RUN("mock_knobs", NULL, NULL, tests);
}
