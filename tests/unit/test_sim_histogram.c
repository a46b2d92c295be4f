/* test_sim_histogram.c - CUnit suite for the simulator's log-bucketed
 * latency histogram: bucket bounds, relative error, quantiles, merge. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdint.h>

#include "histogram.h"

static void test_empty(void)
{
    sim_hist h;
    hist_init(&h);
    CU_ASSERT_EQUAL(h.count, 0);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.5), 0);
    CU_ASSERT_EQUAL(hist_quantile(&h, 1.0), 0);
    CU_ASSERT_DOUBLE_EQUAL(hist_mean(&h), 0.0, 1e-9);
}

static void test_bucket_bounds(void)
{
    /* Small values are exact. */
    for (uint64_t v = 0; v < 16; v++) {
        CU_ASSERT_EQUAL(hist_bucket_index(v), v);
        CU_ASSERT_EQUAL(hist_bucket_low(v), v);
        CU_ASSERT_EQUAL(hist_bucket_high(v), v);
    }
    /* Every value lies in its bucket, buckets are contiguous and the width is
     * at most 1/16 of the low bound. */
    uint64_t probes[] = { 16,
                          17,
                          31,
                          32,
                          33,
                          100,
                          1000,
                          12345,
                          999999,
                          1ULL << 40,
                          (1ULL << 40) + 12345,
                          UINT64_MAX / 3,
                          UINT64_MAX };
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        uint64_t v = probes[i];
        size_t b = hist_bucket_index(v);
        CU_ASSERT_FATAL(b < HIST_BUCKETS);
        CU_ASSERT(hist_bucket_low(b) <= v);
        CU_ASSERT(hist_bucket_high(b) >= v);
        CU_ASSERT((hist_bucket_high(b) - hist_bucket_low(b)) <= hist_bucket_low(b) / 16);
    }
    for (size_t b = 1; b < HIST_BUCKETS; b++)
        CU_ASSERT_EQUAL_FATAL(hist_bucket_low(b), hist_bucket_high(b - 1) + 1);
    CU_ASSERT_EQUAL(hist_bucket_index(UINT64_MAX), HIST_BUCKETS - 1);
    CU_ASSERT_EQUAL(hist_bucket_high(HIST_BUCKETS - 1), UINT64_MAX);
}

static void test_quantiles_uniform(void)
{
    sim_hist h;
    hist_init(&h);
    for (uint64_t v = 1; v <= 10000; v++)
        hist_record(&h, v);
    CU_ASSERT_EQUAL(h.count, 10000);
    CU_ASSERT_EQUAL(h.min, 1);
    CU_ASSERT_EQUAL(h.max, 10000);
    uint64_t p50 = hist_quantile(&h, 0.5), p90 = hist_quantile(&h, 0.9),
             p99 = hist_quantile(&h, 0.99);
    /* Within the bucket resolution (6.25 %), never below the true value. */
    CU_ASSERT(p50 >= 5000 && p50 <= 5000 + 5000 / 16 + 1);
    CU_ASSERT(p90 >= 9000 && p90 <= 9000 + 9000 / 16 + 1);
    CU_ASSERT(p99 >= 9900 && p99 <= 10000);
    CU_ASSERT_EQUAL(hist_quantile(&h, 1.0), 10000);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.0), 1);
    CU_ASSERT_DOUBLE_EQUAL(hist_mean(&h), 5000.5, 1e-6);
}

static void test_quantile_clamped_to_max(void)
{
    sim_hist h;
    hist_init(&h);
    hist_record(&h, 1000);
    /* The bucket of 1000 reaches past 1000, but no quantile exceeds max. */
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.5), 1000);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.99), 1000);
    hist_record(&h, 5);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.5), 5);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.51), 1000);
}

static void test_merge(void)
{
    sim_hist a, b, all;
    hist_init(&a);
    hist_init(&b);
    hist_init(&all);
    for (uint64_t v = 0; v < 500; v++) {
        hist_record(&a, v * 3);
        hist_record(&all, v * 3);
        hist_record(&b, v * 7 + 100000);
        hist_record(&all, v * 7 + 100000);
    }
    hist_merge(&a, &b);
    CU_ASSERT_EQUAL(a.count, all.count);
    CU_ASSERT_EQUAL(a.min, all.min);
    CU_ASSERT_EQUAL(a.max, all.max);
    CU_ASSERT_EQUAL(a.sum, all.sum);
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        CU_ASSERT_EQUAL_FATAL(a.bucket[i], all.bucket[i]);
    CU_ASSERT_EQUAL(hist_quantile(&a, 0.9), hist_quantile(&all, 0.9));
    /* Merging an empty histogram changes nothing. */
    sim_hist e;
    hist_init(&e);
    hist_merge(&a, &e);
    CU_ASSERT_EQUAL(a.count, all.count);
    CU_ASSERT_EQUAL(a.min, all.min);
}

static void test_sum_saturates(void)
{
    sim_hist h;
    hist_init(&h);
    hist_record(&h, UINT64_MAX);
    hist_record(&h, UINT64_MAX);
    CU_ASSERT_EQUAL(h.sum, UINT64_MAX);
    CU_ASSERT_EQUAL(h.max, UINT64_MAX);
    CU_ASSERT_EQUAL(hist_quantile(&h, 0.5), UINT64_MAX);
}

int main(void)
{
    static const cu_test tests[] = {
        { "an empty histogram gives zeros", test_empty },
        { "every value lies in its bucket, small values exactly", test_bucket_bounds },
        { "quantiles of a uniform run are within a bucket", test_quantiles_uniform },
        { "quantiles are clamped to the maximum", test_quantile_clamped_to_max },
        { "merged histograms equal one of all values", test_merge },
        { "the sum saturates instead of wrapping", test_sum_saturates },
    };
    return CU_SUITE_RUN("sim_histogram", NULL, NULL, tests);
}
