/* test_sim_dialect - CUnit suite for sim/dialect: a mock journal's prepay
 * calls counted by dialect (v3_native / v3_jsapi vs unifiedorder; other
 * endpoints ignored), a body that is not a journal refused, and
 * --gateway's two meanings (a dialect, or the mock's URL). */
#include <string.h>

#include "cu_suite.h"

#include "args.h"
#include "dialect.h"

static void test_prepay_calls_are_counted_by_dialect(void)
{
    const char *j =
        "{\"requests\":[{\"endpoint\":\"v3_native\"},{\"endpoint\":\"v3_certificates\"},"
        "{\"endpoint\":\"payer\"},{\"endpoint\":\"v3_jsapi\"},{\"endpoint\":\"orderquery\"},"
        "{\"endpoint\":\"unifiedorder\"}],\"notifications\":[]}";
    int v3 = 0, v2 = 0;

    CU_ASSERT_EQUAL(dialect_count(j, strlen(j), &v3, &v2), 0);
    CU_ASSERT_EQUAL(v3, 2);
    CU_ASSERT_EQUAL(v2, 1);
}

static void test_a_body_that_is_not_a_journal_is_refused(void)
{
    int v3 = 0, v2 = 0;

    CU_ASSERT_EQUAL(dialect_count("{\"error\":\"x\"}", 13, &v3, &v2), -1);
    CU_ASSERT_EQUAL(dialect_count("not json", 8, &v3, &v2), -1);
    CU_ASSERT_EQUAL(v3 + v2, 0);
}

static void test_gateway_names_a_dialect_or_the_mock(void)
{
    sim_args a;
    char *v3[] = { "idempay-sim", "--gateway", "v3", NULL };
    char *url[] = { "idempay-sim", "--gateway", "http://127.0.0.1:9/", NULL };
    char *bad[] = { "idempay-sim", "--gateway", "v4", NULL };

    CU_ASSERT_EQUAL_FATAL(args_parse(3, v3, &a), ARGS_RUN);
    CU_ASSERT_EQUAL(a.dialect, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(a.gateway, "http://127.0.0.1:")); /* the default mock */
    CU_ASSERT_EQUAL_FATAL(args_parse(3, url, &a), ARGS_RUN);
    CU_ASSERT_EQUAL(a.dialect, 0); /* not checked */
    CU_ASSERT_STRING_EQUAL(a.gateway, "http://127.0.0.1:9");
    CU_ASSERT_EQUAL(args_parse(3, bad, &a), ARGS_BAD);
}

static void test_v3_attacks_only_with_v3(void)
{
    char note[128];
    unsigned v3 = 1u << SC_V3_ATTACKS, dc = 1u << SC_DOUBLE_CLICK;

    CU_ASSERT_EQUAL(dialect_runnable(dc | v3, 3, note, sizeof(note)), dc | v3);
    CU_ASSERT_STRING_EQUAL(note, "");
    CU_ASSERT_EQUAL(dialect_runnable(dc | v3, 2, note, sizeof(note)), dc);
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "v3-attacks"));
    CU_ASSERT_EQUAL(dialect_runnable(dc | v3, 0, note, sizeof(note)), dc); /* not named */
    CU_ASSERT_EQUAL(dialect_runnable(dc, 2, note, sizeof(note)), dc);
    CU_ASSERT_STRING_EQUAL(note, "");
}

int main(void)
{
    static const cu_test tests[] = {
        { "v3-attacks runs only against v3", test_v3_attacks_only_with_v3 },
        { "prepay calls are counted by dialect", test_prepay_calls_are_counted_by_dialect },
        { "a body that is not a journal is refused", test_a_body_that_is_not_a_journal_is_refused },
        { "--gateway names a dialect or the mock", test_gateway_names_a_dialect_or_the_mock },
    };
    return CU_SUITE_RUN("sim_dialect", NULL, NULL, tests);
}
