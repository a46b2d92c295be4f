/* test_paid_cache.c - CUnit suite for paid_cache: a put is read back whole,
 * a miss is a miss, entries too long (or without a transaction_id) are
 * never cached, a full cache keeps the newest entry of every slot (a
 * collision replaces, never mixes two orders), and concurrent puts and gets
 * never return a torn entry. No I/O. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "paid_cache.h"

static void test_put_get(void)
{
    paid_entry e;

    CU_ASSERT_FALSE(paid_cache_get("UTPC-never-put", &e));
    paid_cache_put("UTPC-1", 0, 42, 1230, "4200000001");
    CU_ASSERT_TRUE_FATAL(paid_cache_get("UTPC-1", &e));
    CU_ASSERT_STRING_EQUAL(e.order_no, "UTPC-1");
    CU_ASSERT_EQUAL(e.user_id, 42);
    CU_ASSERT_EQUAL(e.amount_fen, 1230);
    CU_ASSERT_STRING_EQUAL(e.transaction_id, "4200000001");
    CU_ASSERT_FALSE(paid_cache_get("UTPC-", &e)); /* a prefix is another order */
    CU_ASSERT_FALSE(paid_cache_get("", &e));
}

typedef struct {
    const char *order_no;
    const char *transaction_id;
    bool cached;
} put_case;

static void test_limits(void)
{
    char no32[33], no33[34], tx39[40], tx40[41];
    memset(no32, 'N', 32);
    no32[32] = '\0';
    memset(no33, 'M', 33);
    no33[33] = '\0';
    memset(tx39, '7', 39);
    tx39[39] = '\0';
    memset(tx40, '8', 40);
    tx40[40] = '\0';
    const put_case cases[] = {
        { no32, "42001", true },     /* the longest order_no */
        { no33, "42001", false },    /* one longer: not cached */
        { "UTPC-tx39", tx39, true }, /* the longest transaction_id */
        { "UTPC-tx40", tx40, false },
        { "UTPC-notx", "", false }, /* PAID always has a transaction_id */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        paid_entry e;
        paid_cache_put(cases[i].order_no, 0, 1, 1, cases[i].transaction_id);
        CU_ASSERT_EQUAL(paid_cache_get(cases[i].order_no, &e), cases[i].cached);
        if (cases[i].cached)
            CU_ASSERT_STRING_EQUAL(e.transaction_id, cases[i].transaction_id);
    }
}

static void test_full_cache_replaces(void)
{
    /* More orders than slots: some collide. Every get is a miss or the
     * order's own entry, and the last order put is always there. */
    const int n = PAID_CACHE_SLOTS + PAID_CACHE_SLOTS / 2;
    int hits = 0, wrong = 0;
    char no[33], tx[40];
    paid_entry e;

    for (int i = 0; i < n; i++) {
        snprintf(no, sizeof(no), "UTPCF%08d", i);
        snprintf(tx, sizeof(tx), "TX%08d", i);
        paid_cache_put(no, 0, i, i, tx);
    }
    for (int i = 0; i < n; i++) {
        snprintf(no, sizeof(no), "UTPCF%08d", i);
        snprintf(tx, sizeof(tx), "TX%08d", i);
        if (!paid_cache_get(no, &e))
            continue;
        hits++;
        if (strcmp(e.order_no, no) != 0 || strcmp(e.transaction_id, tx) != 0 || e.user_id != i ||
            e.amount_fen != i)
            wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_TRUE(hits <= PAID_CACHE_SLOTS);
    CU_ASSERT_TRUE(hits < n); /* collisions replaced older entries */
    CU_ASSERT_TRUE(hits > PAID_CACHE_SLOTS / 2);
    snprintf(no, sizeof(no), "UTPCF%08d", n - 1);
    CU_ASSERT_TRUE(paid_cache_get(no, &e));
}

#define THREADS 4
#define ROUNDS 20000

static void *hammer(void *arg)
{
    long t = (long)arg, torn = 0;
    char no[33], tx[40];
    paid_entry e;

    for (int i = 0; i < ROUNDS; i++) {
        int k = (int)((i * 7 + t) % 512);
        snprintf(no, sizeof(no), "UTPCT%04d", k);
        snprintf(tx, sizeof(tx), "T%04d", k);
        if (i % 2 == 0)
            paid_cache_put(no, 0, k, k * 10, tx);
        else if (paid_cache_get(no, &e) &&
                 (strcmp(e.transaction_id, tx) != 0 || e.user_id != k || e.amount_fen != k * 10))
            torn++;
    }
    return (void *)torn;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    long torn = 0;

    for (long t = 0; t < THREADS; t++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[t], NULL, hammer, (void *)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        torn += (long)r;
    }
    CU_ASSERT_EQUAL(torn, 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a put order is got, another misses", test_put_get },
        { "fields over their limits are not cached", test_limits },
        { "a full cache replaces, never mixes", test_full_cache_replaces },
        { "concurrent puts and gets never mix entries", test_threads },
    };
    return CU_SUITE_RUN("paid_cache", NULL, NULL, tests);
}
