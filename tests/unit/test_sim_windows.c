/* test_sim_windows.c - CUnit suite for sim/windows: the simulator aims at
 * the windows the service reads, from the same environment and
 * configuration file, with the service's defaults and derivations. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "service_windows.h"
#include "windows.h"

static void clear_windows_env(void)
{
    for (int i = 0; service_windows_setting(i) != NULL; i++)
        unsetenv(service_windows_setting(i));
}

static void test_defaults_are_the_service_defaults(void)
{
    sim_windows w;
    service_windows s;

    windows_defaults(&w);
    service_windows_defaults(&s);
    CU_ASSERT_EQUAL(w.gateway_timeout_ms, s.gateway_timeout_ms);
    CU_ASSERT_EQUAL(w.lease_ms, s.lease_ms);
    CU_ASSERT_EQUAL(w.reconcile_ms, s.reconcile_interval_ms);
    CU_ASSERT_EQUAL(w.failed_recheck_ms, s.failed_recheck_ms);
    CU_ASSERT_EQUAL(w.statement_ms, s.statement_interval_ms);
    CU_ASSERT_EQUAL(w.retry_after_s, s.retry_after_s);
    CU_ASSERT_EQUAL(w.claim_ms, service_windows_claim_ms(s.lease_ms, s.gateway_timeout_ms));
    CU_ASSERT_EQUAL(w.service_call_ms, service_windows_call_ms(s.gateway_timeout_ms));
    CU_ASSERT_EQUAL(w.from_env, 0);
}

static void test_windows_are_read_from_the_config_file(void)
{
    char path[64], text[300];
    sim_windows w;

    clear_windows_env();
    CU_ASSERT_EQUAL_FATAL(cu_temp_file("IDEMPAY_LEASE_MS=20000\nIDEMPAY_GATEWAY_TIMEOUT_MS=9000\n",
                                       path, sizeof(path)),
                          0);
    setenv("IDEMPAY_CONFIG", path, 1);
    env_config_reset();
    windows_load(&w);
    unlink(path);
    CU_ASSERT_EQUAL(w.lease_ms, 20000);
    CU_ASSERT_EQUAL(w.gateway_timeout_ms, 9000);
    CU_ASSERT_EQUAL(w.claim_ms, 20000);
    CU_ASSERT_EQUAL(w.service_call_ms, 19000); /* 2 x 9000 + 1000 */
    CU_ASSERT_EQUAL(w.from_env, 2);
    CU_ASSERT_STRING_EQUAL(windows_describe(&w, text, sizeof(text)),
                           "timeout=9000 lease=20000 reconcile=2000 recheck=60000 "
                           "statement=300000 claim=20000 retry_after=1s");
}

static void test_window_below_one_takes_the_default(void)
{
    sim_windows w;

    clear_windows_env();
    setenv("IDEMPAY_CONFIG", "none", 1);
    env_config_reset();
    setenv("IDEMPAY_LEASE_MS", "0", 1);
    setenv("IDEMPAY_RETRY_AFTER", "soon", 1);
    windows_load(&w);
    CU_ASSERT_EQUAL(w.lease_ms, 10000);
    CU_ASSERT_EQUAL(w.retry_after_s, 1);
    clear_windows_env();
}

/* The loaded configuration names a file the test deleted: forget it. */
static int suite_clean(void)
{
    env_config_reset();
    return 0;
}

int main(void)
{
    static const cu_test tests[] = {
        { "the simulator's defaults are the service's", test_defaults_are_the_service_defaults },
        { "the windows are read from the service's config file",
          test_windows_are_read_from_the_config_file },
        { "a window below 1 takes the service's default", test_window_below_one_takes_the_default },
    };
    return CU_SUITE_RUN("sim_windows", NULL, suite_clean, tests);
}
