/* test_mock_txid.c - CUnit suite for gateway-mock/txid: the shape of
 * transaction, refund and prepay ids, their uniqueness (also across
 * threads), and the UTC+8 dates they carry. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "txid.h"

#define MANY 200000

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void test_transaction_shape(void)
{
    char id[TXID_BUF];
    /* 2024-02-29 23:30:00 UTC is 2024-03-01 07:30 in China. */
    time_t t = 1709249400;
    txid_transaction(t, id);
    CU_ASSERT_EQUAL(strlen(id), 28);
    CU_ASSERT_NSTRING_EQUAL(id, "420020240301", 12);
    CU_ASSERT_TRUE(txid_transaction_valid(id));
    for (size_t i = 0; i < 28; i++)
        CU_ASSERT_TRUE(id[i] >= '0' && id[i] <= '9');
}

static void test_refund_and_prepay_shape(void)
{
    char r[TXID_BUF], p[TXID_PREPAY_BUF];
    txid_refund(0, r);
    CU_ASSERT_EQUAL(strlen(r), 28);
    CU_ASSERT_NSTRING_EQUAL(r, "503019700101", 12);
    CU_ASSERT_FALSE(txid_transaction_valid(r));
    txid_prepay(0, p);
    CU_ASSERT_EQUAL(strlen(p), 36);
    CU_ASSERT_NSTRING_EQUAL(p, "wx19700101080000", 16);
    for (size_t i = 16; i < 36; i++)
        CU_ASSERT_PTR_NOT_NULL(strchr("0123456789abcdef", p[i]));
}

static void test_valid_boundaries(void)
{
    CU_ASSERT_FALSE(txid_transaction_valid(NULL));
    CU_ASSERT_FALSE(txid_transaction_valid(""));
    CU_ASSERT_TRUE(txid_transaction_valid("4200000000000000000000000000"));
    CU_ASSERT_FALSE(txid_transaction_valid("420000000000000000000000000"));   /* 27 */
    CU_ASSERT_FALSE(txid_transaction_valid("42000000000000000000000000000")); /* 29 */
    CU_ASSERT_FALSE(txid_transaction_valid("420000000000000000000000000a"));
    CU_ASSERT_FALSE(txid_transaction_valid("1200000000000000000000000000"));
}

static void test_time_end(void)
{
    char te[15];
    CU_ASSERT_STRING_EQUAL(txid_time_end(0, te), "19700101080000");
    CU_ASSERT_STRING_EQUAL(txid_time_end(1709249400, te), "20240301073000");
}

static void test_unique_many(void)
{
    char(*ids)[TXID_BUF] = malloc((size_t)MANY * TXID_BUF);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ids);
    txid_init_random();
    for (int i = 0; i < MANY; i++)
        txid_transaction(1709249400, ids[i]);
    qsort(ids, MANY, TXID_BUF, cmp_str);
    int dups = 0;
    for (int i = 1; i < MANY; i++)
        dups += strcmp(ids[i - 1], ids[i]) == 0;
    CU_ASSERT_EQUAL(dups, 0);
    free(ids);
}

static void test_unique_wraps_counter(void)
{
    /* The counter wraps at 10^16 without producing a repeat nearby. */
    char a[TXID_BUF], b[TXID_BUF], c[TXID_BUF];
    txid_init(9999999999999999ULL);
    txid_transaction(0, a);
    txid_transaction(0, b);
    txid_transaction(0, c);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT_STRING_NOT_EQUAL(b, c);
    CU_ASSERT_STRING_NOT_EQUAL(a, c);
    CU_ASSERT_TRUE(txid_transaction_valid(a) && txid_transaction_valid(b) &&
                   txid_transaction_valid(c));
}

#define THREADS 4
#define PER_THREAD 20000
static char thread_ids[THREADS * PER_THREAD][TXID_BUF];

static void *make_ids(void *arg)
{
    int k = *(int *)arg;
    for (int i = 0; i < PER_THREAD; i++)
        txid_transaction(1709249400, thread_ids[k * PER_THREAD + i]);
    return NULL;
}

static void test_unique_threads(void)
{
    pthread_t t[THREADS];
    int idx[THREADS];
    txid_init(12345);
    for (int i = 0; i < THREADS; i++) {
        idx[i] = i;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, make_ids, &idx[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    qsort(thread_ids, THREADS * PER_THREAD, TXID_BUF, cmp_str);
    int dups = 0;
    for (int i = 1; i < THREADS * PER_THREAD; i++)
        dups += strcmp(thread_ids[i - 1], thread_ids[i]) == 0;
    CU_ASSERT_EQUAL(dups, 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "transaction_id is 4200 + CST date + 16 digits", test_transaction_shape },
        { "refund_id and prepay_id have WeChat's shapes", test_refund_and_prepay_shape },
        { "txid_transaction_valid accepts up to its boundaries only", test_valid_boundaries },
        { "time_end is UTC+8", test_time_end },
        { "200000 ids are unique", test_unique_many },
        { "counter wrap keeps ids distinct", test_unique_wraps_counter },
        { "ids from 4 threads are unique", test_unique_threads },
    };
    return CU_SUITE_RUN("mock_txid", NULL, NULL, tests);
}
