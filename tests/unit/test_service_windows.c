/* test_service_windows.c - CUnit suite for service_windows: the service's
 * windows have one set of defaults, come from the environment over the
 * configuration file, and are derived one way. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "service_windows.h"

static char dir[] = "/tmp/idempay-test-windows.XXXXXX";

static void clear_windows_env(void)
{
    for (int i = 0; service_windows_setting(i) != NULL; i++)
        unsetenv(service_windows_setting(i));
}

/* Makes dir/name hold text and the configuration file of the next env_* call. */
static void use_config(const char *name, const char *text)
{
    char p[256];
    FILE *f;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    setenv("IDEMPAY_CONFIG", p, 1);
    env_config_reset();
}

static void test_empty_environment_gives_documented_defaults(void)
{
    service_windows d, w;

    clear_windows_env();
    setenv("IDEMPAY_CONFIG", "none", 1);
    env_config_reset();
    service_windows_defaults(&d);
    CU_ASSERT_EQUAL(d.gateway_timeout_ms, 3000);     /* README "Configuration" */
    CU_ASSERT_EQUAL(d.lease_ms, 10000);
    CU_ASSERT_EQUAL(d.reconcile_interval_ms, 2000);
    CU_ASSERT_EQUAL(d.failed_recheck_ms, 60000);
    CU_ASSERT_EQUAL(d.statement_interval_ms, 300000);
    CU_ASSERT_EQUAL(d.retry_after_s, 1);
    CU_ASSERT_EQUAL(service_windows_load(&w), 0);
    CU_ASSERT_EQUAL(memcmp(&d, &w, sizeof d), 0);
}

static void test_windows_come_from_file_and_environment_wins(void)
{
    service_windows w;

    clear_windows_env();
    use_config("w.conf", "IDEMPAY_LEASE_MS=12345\nIDEMPAY_GATEWAY_TIMEOUT_MS=2000\n");
    setenv("IDEMPAY_GATEWAY_TIMEOUT_MS", "1500", 1);
    CU_ASSERT_EQUAL(service_windows_load(&w), 2);
    CU_ASSERT_EQUAL(w.lease_ms, 12345);              /* the file */
    CU_ASSERT_EQUAL(w.gateway_timeout_ms, 1500);     /* the environment over the file */
    CU_ASSERT_EQUAL(w.reconcile_interval_ms, 2000);  /* the default */
    clear_windows_env();
}

static void test_every_window_setting_is_named_once(void)
{
    int n = 0;

    for (int i = 0; service_windows_setting(i) != NULL; i++, n++) {
        CU_ASSERT_EQUAL(strncmp(service_windows_setting(i), "IDEMPAY_", 8), 0);
        for (int j = 0; j < i; j++)
            CU_ASSERT_STRING_NOT_EQUAL(service_windows_setting(i), service_windows_setting(j));
    }
    CU_ASSERT_EQUAL(n, 6);
    CU_ASSERT_PTR_NULL(service_windows_setting(-1));
}

static void test_claim_covers_the_lease_and_two_gateway_calls(void)
{
    CU_ASSERT_EQUAL(service_windows_call_ms(3000), 7000);       /* 2 x timeout + 1 s */
    CU_ASSERT_EQUAL(service_windows_claim_ms(10000, 3000), 10000);
    CU_ASSERT_EQUAL(service_windows_claim_ms(5000, 3000), 7000);
    CU_ASSERT_EQUAL(service_windows_claim_ms(7000, 3000), 7000);
}

static void test_shortest_lease_covers_three_gateway_calls(void)
{
    CU_ASSERT_EQUAL(service_windows_lease_min_ms(3000), 10000); /* 3 x timeout + 1 s */
    CU_ASSERT_EQUAL(service_windows_lease_min_ms(1), 1003);
}

static int suite_init(void)
{
    return mkdtemp(dir) ? 0 : -1;
}

static int suite_clean(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    env_config_reset();
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    static const cu_test tests[] = {
        { "an empty environment gives the documented defaults",
          test_empty_environment_gives_documented_defaults },
        { "windows come from the config file, the environment wins",
          test_windows_come_from_file_and_environment_wins },
        { "every window setting is named once", test_every_window_setting_is_named_once },
        { "a claim covers the lease and two gateway calls",
          test_claim_covers_the_lease_and_two_gateway_calls },
        { "the shortest lease covers three gateway calls",
          test_shortest_lease_covers_three_gateway_calls },
    };
    return CU_SUITE_RUN("service_windows", suite_init, suite_clean, tests);
}
