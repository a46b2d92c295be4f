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

static void clear_windows_env(void)
{
    for (int i = 0; service_windows_setting(i) != NULL; i++)
        unsetenv(service_windows_setting(i));
}

static void test_empty_environment_gives_documented_defaults(void)
{
    service_windows d, w;

    clear_windows_env();
    setenv("IDEMPAY_CONFIG", "none", 1);
    env_config_reset();
    service_windows_defaults(&d);
    CU_ASSERT_EQUAL(d.gateway_timeout_ms, 3000); /* README "Configuration" */
    CU_ASSERT_EQUAL(d.lease_ms, 10000);
    CU_ASSERT_EQUAL(d.reconcile_interval_ms, 2000);
    CU_ASSERT_EQUAL(d.failed_recheck_ms, 60000);
    CU_ASSERT_EQUAL(d.statement_interval_ms, 300000);
    CU_ASSERT_EQUAL(d.retry_after_s, 1);
    CU_ASSERT_EQUAL(d.prepay_ttl_ms, 7200000);
    CU_ASSERT_EQUAL(service_windows_load(&w), 0);
    CU_ASSERT_EQUAL(memcmp(&d, &w, sizeof(d)), 0);
}

static void test_windows_come_from_file_and_environment_wins(void)
{
    service_windows w;
    char path[64];

    clear_windows_env();
    CU_ASSERT_EQUAL_FATAL(cu_temp_file("IDEMPAY_LEASE_MS=12345\nIDEMPAY_GATEWAY_TIMEOUT_MS=2000\n",
                                       path, sizeof(path)),
                          0);
    setenv("IDEMPAY_CONFIG", path, 1);
    env_config_reset();
    setenv("IDEMPAY_GATEWAY_TIMEOUT_MS", "1500", 1);
    CU_ASSERT_EQUAL(service_windows_load(&w), 2);
    CU_ASSERT_EQUAL(w.lease_ms, 12345);             /* the file */
    CU_ASSERT_EQUAL(w.gateway_timeout_ms, 1500);    /* the environment over the file */
    CU_ASSERT_EQUAL(w.reconcile_interval_ms, 2000); /* the default */
    clear_windows_env();
    unlink(path);
}

static void test_every_window_setting_is_named_once(void)
{
    int n = 0;

    for (int i = 0; service_windows_setting(i) != NULL; i++, n++) {
        CU_ASSERT_EQUAL(strncmp(service_windows_setting(i), "IDEMPAY_", 8), 0);
        for (int j = 0; j < i; j++)
            CU_ASSERT_STRING_NOT_EQUAL(service_windows_setting(i), service_windows_setting(j));
    }
    CU_ASSERT_EQUAL(n, 7);
    CU_ASSERT_PTR_NULL(service_windows_setting(-1));
}

static void test_claim_covers_the_lease_and_two_gateway_calls(void)
{
    CU_ASSERT_EQUAL(service_windows_call_ms(3000), 7000); /* 2 x timeout + 1 s */
    CU_ASSERT_EQUAL(service_windows_claim_ms(10000, 3000), 10000);
    CU_ASSERT_EQUAL(service_windows_claim_ms(5000, 3000), 7000);
    CU_ASSERT_EQUAL(service_windows_claim_ms(7000, 3000), 7000);
}

static void test_shortest_lease_covers_three_gateway_calls(void)
{
    CU_ASSERT_EQUAL(service_windows_lease_min_ms(3000), 10000); /* 3 x timeout + 1 s */
    CU_ASSERT_EQUAL(service_windows_lease_min_ms(1), 1003);
}

/* The loaded configuration names a file the tests deleted: forget it. */
static int suite_clean(void)
{
    env_config_reset();
    return 0;
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
    return CU_SUITE_RUN("service_windows", NULL, suite_clean, tests);
}
