/* test_metrics.c - CUnit suite for metrics: the exposition's shape (HELP
 * before TYPE for every family, each family once), the request histogram's
 * labels and cumulative buckets, the in-flight gauge across begin/end, the
 * optional PROCESSING gauge, build_info, and the shared file's reuse. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev_merchant.h"
#include "config_report.h"
#include "metrics.h"

static char path[] = "/tmp/idempay-test-metrics.XXXXXX";

/* The exposition as a NUL-terminated string (caller frees). */
static char *scrape(long long processing)
{
    metrics_scrape s = { processing };
    http_response r;
    char *text;

    http_response_init(&r);
    metrics_handle(&r, &s);
    CU_ASSERT_EQUAL(r.status, 200);
    text = strndup(r.body, r.body_len);
    http_response_free(&r);
    return text;
}

static long long value_of(const char *text, const char *series)
{
    char needle[512];
    const char *p;

    snprintf(needle, sizeof(needle), "\n%s ", series);
    p = strstr(text, needle);
    return p ? atoll(p + strlen(needle)) : -1;
}

static void test_every_family_has_help_then_type_once(void)
{
    char *text = scrape(3);
    char *copy = strdup(text), *next;
    char last_help[256] = "";
    int families = 0;

    for (char *line = copy; line && *line; line = next) {
        char name[256];

        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (sscanf(line, "# HELP %255s", name) == 1) {
            char again[300];
            snprintf(again, sizeof(again), "# HELP %s ", name);
            /* once only */
            CU_ASSERT_PTR_NULL(strstr(strstr(text, again) + 1, again));
            snprintf(last_help, sizeof(last_help), "%s", name);
            families++;
        } else if (sscanf(line, "# TYPE %255s", name) == 1) {
            CU_ASSERT_STRING_EQUAL(name, last_help);
        } else {
            /* a sample belongs to the family announced last */
            CU_ASSERT_EQUAL(strncmp(line, last_help, strlen(last_help)), 0);
        }
    }
    CU_ASSERT(families >= 15);
    free(copy);
    free(text);
}

static void test_request_histogram(void)
{
    char *text;

    metrics_request("GET", "/api/ping", 200, 0.0004);
    metrics_request("GET", "/api/ping", 200, 0.003);
    metrics_request("POST", "/api/pay", 503, 20.0);
    metrics_request("BREW", "/nowhere", 418, 0.01);
    text = scrape(-1);
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_request_duration_seconds_bucket{method=\"GET\","
                                   "route=\"/api/ping\",code=\"200\",le=\"0.0005\"}"),
                    1);
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_request_duration_seconds_bucket{method=\"GET\","
                                   "route=\"/api/ping\",code=\"200\",le=\"0.005\"}"),
                    2);
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_request_duration_seconds_count{method=\"GET\","
                                   "route=\"/api/ping\",code=\"200\"}"),
                    2);
    /* beyond the last bound: only +Inf counts it */
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_request_duration_seconds_bucket{method=\"POST\","
                                   "route=\"/api/pay\",code=\"503\",le=\"10\"}"),
                    0);
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_request_duration_seconds_bucket{method=\"POST\","
                                   "route=\"/api/pay\",code=\"503\",le=\"+Inf\"}"),
                    1);
    /* unknown method, route and code fold into "other" */
    CU_ASSERT_EQUAL(value_of(text, "idempay_http_requests_total{method=\"other\",route=\"other\","
                                   "code=\"other\"}"),
                    1);
    /* the PROCESSING gauge is left out when unknown */
    CU_ASSERT_PTR_NULL(strstr(text, "idempay_orders_processing"));
    free(text);
}

static void test_gauges_and_build_info(void)
{
    char *text;

    metrics_gateway_begin("unifiedorder");
    metrics_gateway_begin("orderquery");
    text = scrape(7);
    CU_ASSERT_EQUAL(value_of(text, "idempay_gateway_calls_in_flight"), 2);
    CU_ASSERT_EQUAL(value_of(text, "idempay_orders_processing"), 7);
    CU_ASSERT_EQUAL(value_of(text, "idempay_service_processes"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nidempay_build_info{version=\"" IDEMPAY_VERSION "\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n# TYPE process_cpu_seconds_total counter\n"));
    free(text);
    metrics_gateway("unifiedorder", 0.02);
    metrics_gateway("orderquery", 0.2);
    text = scrape(0);
    CU_ASSERT_EQUAL(value_of(text, "idempay_gateway_calls_in_flight"), 0);
    CU_ASSERT_EQUAL(value_of(text,
                             "idempay_gateway_seconds_bucket{op=\"unifiedorder\",le=\"0.025\"}"),
                    1);
    CU_ASSERT_EQUAL(value_of(text, "idempay_gateway_seconds_count{op=\"orderquery\"}"), 1);
    free(text);
}

static void test_counters_survive_a_remap(void)
{
    char *text;
    long long before;

    metrics_inc(MET_PAY_PAID);
    text = scrape(0);
    before = value_of(text, "idempay_payments_total{outcome=\"paid\"}");
    free(text);
    CU_ASSERT(before >= 1);
    /* a restarted process maps the same file and keeps counting */
    CU_ASSERT_EQUAL(metrics_init(path), 0);
    metrics_inc(MET_PAY_PAID);
    text = scrape(0);
    CU_ASSERT_EQUAL(value_of(text, "idempay_payments_total{outcome=\"paid\"}"), before + 1);
    free(text);
}

static void test_mask(void)
{
    char buf[64];

    CU_ASSERT_STRING_EQUAL(config_report_mask(IDEMPAY_DEV_KEY, buf, sizeof(buf)),
                           "<masked, 32 characters>");
    CU_ASSERT_STRING_EQUAL(config_report_mask(NULL, buf, sizeof(buf)), "<masked, 0 characters>");
    CU_ASSERT_PTR_NULL(strstr(buf, "idempay"));
}

static int suite_init(void)
{
    int fd = mkstemp(path);

    if (fd < 0)
        return -1;
    close(fd);
    return metrics_init(path) == 0 ? 0 : -1;
}

static int suite_clean(void)
{
    unlink(path);
    return 0;
}

int main(void)
{
    static const cu_test tests[] = {
        { "every family has HELP then TYPE once, its samples under it",
          test_every_family_has_help_then_type_once },
        { "the request histogram has its labels, cumulative buckets and other",
          test_request_histogram },
        { "gauges of in-flight and PROCESSING, build_info and process_* are exported",
          test_gauges_and_build_info },
        { "counters survive a remap of the shared file", test_counters_survive_a_remap },
        { "secrets are masked in --check-config", test_mask },
    };
    return CU_SUITE_RUN("metrics", suite_init, suite_clean, tests);
}
