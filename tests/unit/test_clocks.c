/* test_clocks.c - CUnit suite for clocks: the units agree with
 * clock_gettime, the monotonic clock never goes back, a sleep sleeps. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <time.h>

#include "clocks.h"

static void test_real_ms_is_the_wall_clock_in_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    long long before = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    long long ms = clocks_real_ms();
    clock_gettime(CLOCK_REALTIME, &ts);
    long long after = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    CU_ASSERT_TRUE(before <= ms && ms <= after);
}

static void test_mono_ms_and_s_are_one_clock(void)
{
    long long ms = clocks_mono_ms();
    double s = clocks_mono_s();
    long long ms2 = clocks_mono_ms();

    CU_ASSERT_TRUE(ms <= ms2);
    CU_ASSERT_TRUE(s * 1000.0 >= (double)ms - 1.0 && s * 1000.0 <= (double)ms2 + 1.0);
}

static void test_sleep_waits_at_least_its_time(void)
{
    long long t0 = clocks_mono_ms();

    clocks_sleep_ms(30);
    CU_ASSERT_TRUE(clocks_mono_ms() - t0 >= 30);
}

static void test_sleep_of_nothing_returns_at_once(void)
{
    long long t0 = clocks_mono_ms();

    clocks_sleep_ms(0);
    clocks_sleep_ms(-5);
    /* "at once": not a sleep of any length (a -5 read as a huge unsigned
     * would never return); the bound leaves room for a loaded machine,
     * which can deschedule a thread for longer than the 20 ms it was */
    CU_ASSERT_TRUE(clocks_mono_ms() - t0 < 1000);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the wall clock in ms matches clock_gettime", test_real_ms_is_the_wall_clock_in_ms },
        { "monotonic ms and s read one clock", test_mono_ms_and_s_are_one_clock },
        { "a sleep waits at least its time", test_sleep_waits_at_least_its_time },
        { "a sleep of nothing returns at once", test_sleep_of_nothing_returns_at_once },
    };
    return CU_SUITE_RUN("clocks", NULL, NULL, tests);
}
