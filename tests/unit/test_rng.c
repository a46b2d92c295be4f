/* test_rng.c - CUnit suite for rng: determinism, known values, bounds. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdint.h>
#include <string.h>

#include "rng.h"

static void test_splitmix_known(void)
{
    /* Reference outputs of splitmix64 from state 0 (Vigna's splitmix64.c). */
    uint64_t st = 0;
    CU_ASSERT_EQUAL(rng_splitmix64(&st), 0xE220A8397B1DCDAFULL);
    CU_ASSERT_EQUAL(rng_splitmix64(&st), 0x6E789E6AA1B965F4ULL);
    CU_ASSERT_EQUAL(rng_splitmix64(&st), 0x06C45D188009454FULL);
    CU_ASSERT_EQUAL(st, 3 * 0x9E3779B97F4A7C15ULL);
}

static void test_same_seed_same_sequence(void)
{
    rng_t a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL(rng_next(&a), rng_next(&b));
    /* Re-seeding restarts the sequence. */
    rng_t c;
    rng_seed(&c, 42);
    uint64_t first = rng_next(&c);
    rng_seed(&c, 42);
    CU_ASSERT_EQUAL(rng_next(&c), first);
}

static void test_different_seeds_differ(void)
{
    static const uint64_t seeds[] = { 0, 1, 2, 42, 43, UINT64_MAX };
    uint64_t firsts[6][4];
    for (size_t i = 0; i < 6; i++) {
        rng_t r;
        rng_seed(&r, seeds[i]);
        for (int k = 0; k < 4; k++)
            firsts[i][k] = rng_next(&r);
    }
    for (size_t i = 0; i < 6; i++)
        for (size_t j = i + 1; j < 6; j++)
            CU_ASSERT_NOT_EQUAL(memcmp(firsts[i], firsts[j], sizeof(firsts[i])), 0);
    /* Seed 0 still gives a working generator (state is never all zero). */
    rng_t z;
    rng_seed(&z, 0);
    CU_ASSERT_FALSE(z.s[0] == 0 && z.s[1] == 0 && z.s[2] == 0 && z.s[3] == 0);
    CU_ASSERT_NOT_EQUAL(rng_next(&z), rng_next(&z));
}

static void test_known_sequence(void)
{
    /* Pin the algorithm: xoshiro256** from the splitmix64(0) state. */
    rng_t r;
    rng_seed(&r, 0);
    CU_ASSERT_EQUAL(r.s[0], 0xE220A8397B1DCDAFULL);
    uint64_t s1 = r.s[1];
    uint64_t x = s1 * 5;
    uint64_t want = ((x << 7) | (x >> 57)) * 9;
    CU_ASSERT_EQUAL(rng_next(&r), want);
}

static void test_below(void)
{
    rng_t r;
    rng_seed(&r, 7);
    CU_ASSERT_EQUAL(rng_below(&r, 0), 0);
    CU_ASSERT_EQUAL(rng_below(&r, 1), 0);
    int seen[10] = { 0 };
    for (int i = 0; i < 10000; i++) {
        uint64_t v = rng_below(&r, 10);
        CU_ASSERT_FATAL(v < 10);
        seen[v]++;
    }
    for (int i = 0; i < 10; i++) {
        CU_ASSERT(seen[i] > 800); /* expected 1000 each */
        CU_ASSERT(seen[i] < 1200);
    }
    uint64_t big = (UINT64_MAX / 3) * 2 + 1; /* large n: worst case for rejection */
    for (int i = 0; i < 1000; i++)
        CU_ASSERT(rng_below(&r, big) < big);
    for (int i = 0; i < 100; i++)
        CU_ASSERT(rng_below(&r, UINT64_MAX) < UINT64_MAX);
}

static void test_range(void)
{
    rng_t r;
    rng_seed(&r, 99);
    int seen_lo = 0, seen_hi = 0;
    for (int i = 0; i < 2000; i++) {
        int64_t v = rng_range(&r, -3, 3);
        CU_ASSERT_FATAL(v >= -3 && v <= 3);
        seen_lo += v == -3;
        seen_hi += v == 3;
    }
    CU_ASSERT(seen_lo > 0); /* inclusive at both ends */
    CU_ASSERT(seen_hi > 0);
    CU_ASSERT_EQUAL(rng_range(&r, 5, 5), 5);
    CU_ASSERT_EQUAL(rng_range(&r, 5, 4), 5); /* hi < lo gives lo */
    CU_ASSERT_EQUAL(rng_range(&r, INT64_MAX, INT64_MIN), INT64_MAX);
    for (int i = 0; i < 1000; i++) {
        int64_t v = rng_range(&r, INT64_MIN, INT64_MAX); /* full span: no overflow */
        (void)v;
        int64_t w = rng_range(&r, INT64_MAX - 1, INT64_MAX);
        CU_ASSERT(w >= INT64_MAX - 1);
        int64_t m = rng_range(&r, INT64_MIN, INT64_MIN + 1);
        CU_ASSERT(m <= INT64_MIN + 1);
    }
    int neg = 0;
    for (int i = 0; i < 200; i++)
        neg += rng_range(&r, INT64_MIN, INT64_MAX) < 0;
    CU_ASSERT(neg > 50 && neg < 150);
}

static void test_unit_and_chance(void)
{
    rng_t r;
    rng_seed(&r, 1234);
    double sum = 0;
    for (int i = 0; i < 10000; i++) {
        double u = rng_unit(&r);
        CU_ASSERT_FATAL(u >= 0.0 && u < 1.0);
        sum += u;
    }
    CU_ASSERT(sum > 4800 && sum < 5200);

    int hits = 0;
    for (int i = 0; i < 10000; i++)
        hits += rng_chance(&r, 0.25);
    CU_ASSERT(hits > 2300 && hits < 2700);
    for (int i = 0; i < 100; i++) {
        CU_ASSERT_EQUAL(rng_chance(&r, 0.0), 0);
        CU_ASSERT_EQUAL(rng_chance(&r, -1.0), 0);
        CU_ASSERT_EQUAL(rng_chance(&r, 1.0), 1);
        CU_ASSERT_EQUAL(rng_chance(&r, 2.0), 1);
    }
    /* Always draws once, whatever p: sequences stay aligned. */
    rng_t a, b;
    rng_seed(&a, 5);
    rng_seed(&b, 5);
    rng_chance(&a, 0.0);
    rng_chance(&b, 1.0);
    CU_ASSERT_EQUAL(rng_next(&a), rng_next(&b));
}

int main(void)
{
    static const cu_test tests[] = {
        { "splitmix64 gives its known values", test_splitmix_known },
        { "the same seed gives the same sequence", test_same_seed_same_sequence },
        { "different seeds differ", test_different_seeds_differ },
        { "the generator gives its known sequence", test_known_sequence },
        { "below(n) stays under n and reaches every value", test_below },
        { "range(lo, hi) stays within and reaches both ends", test_range },
        { "unit stays in [0, 1) and chance(p) happens at about p", test_unit_and_chance },
    };
    return CU_SUITE_RUN("rng", NULL, NULL, tests);
}
