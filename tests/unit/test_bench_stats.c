/* test_bench_stats.c - CUnit suite for the bench's stats: medians of odd
 * and even counts, spreads, the empty set, nearest-rank percentiles. */
#include <CUnit/Basic.h>
#include "cu_suite.h"

#include "stats.h"

static void test_median_odd_even(void)
{
    stats_runs s = { 0 };

    stats_add(&s, 3);
    CU_ASSERT_DOUBLE_EQUAL(stats_median(&s), 3, 1e-12);
    stats_add(&s, 1);
    CU_ASSERT_DOUBLE_EQUAL(stats_median(&s), 2, 1e-12);
    stats_add(&s, 10);
    CU_ASSERT_DOUBLE_EQUAL(stats_median(&s), 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_min(&s), 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_max(&s), 10, 1e-12);
    /* the runs keep their order: the median sorts a copy */
    CU_ASSERT_DOUBLE_EQUAL(s.v[0], 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.v[2], 10, 1e-12);
}

static void test_spread(void)
{
    stats_runs s = { 0 };

    stats_add(&s, 100);
    CU_ASSERT_DOUBLE_EQUAL(stats_spread(&s), 0, 1e-12); /* one run: no spread */
    stats_add(&s, 90);
    stats_add(&s, 110);
    CU_ASSERT_DOUBLE_EQUAL(stats_spread(&s), 0.2, 1e-12); /* (110 - 90) / 100 */
}

static void test_empty_and_full(void)
{
    stats_runs s = { 0 };

    CU_ASSERT_FALSE(stats_has(&s));
    CU_ASSERT_DOUBLE_EQUAL(stats_median(&s), 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_spread(&s), 0, 1e-12);
    for (int i = 0; i < STATS_MAX_RUNS + 5; i++)
        stats_add(&s, i);
    CU_ASSERT_EQUAL(s.n, STATS_MAX_RUNS); /* beyond the limit: ignored */
    CU_ASSERT_DOUBLE_EQUAL(stats_max(&s), STATS_MAX_RUNS - 1, 1e-12);
}

static void test_quantiles(void)
{
    double v[100];

    for (int i = 0; i < 100; i++)
        v[i] = 100 - i; /* 100 .. 1, unsorted */
    stats_sort(v, 100);
    CU_ASSERT_DOUBLE_EQUAL(v[0], 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 100, 0.50), 50, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 100, 0.99), 99, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 100, 1.0), 100, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 100, 0.0), 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 1, 0.99), 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(stats_quantile_sorted(v, 0, 0.99), 0, 1e-12);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the median is right for odd and even counts", test_median_odd_even },
        { "spread is (max - min) / median", test_spread },
        { "an empty set gives zeros and the run limit is kept", test_empty_and_full },
        { "quantiles are nearest-rank", test_quantiles },
    };
    return CU_SUITE_RUN("bench_stats", NULL, NULL, tests);
}
