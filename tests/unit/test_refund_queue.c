/* test_refund_queue.c - CUnit suite of the refund queue's database-free part:
 * the deterministic out_refund_no and the retry backoff. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "refund_queue.h"

static void test_refund_no(void)
{
    char a[REFUND_NO_MAX + 1], b[REFUND_NO_MAX + 1];

    CU_ASSERT_EQUAL(refund_queue_refund_no("4200000001202401011234567890", a, sizeof(a)), 0);
    CU_ASSERT_STRING_EQUAL(a, "RF4200000001202401011234567890");
    /* Deterministic: every attempt names the same refund. */
    CU_ASSERT_EQUAL(refund_queue_refund_no("4200000001202401011234567890", b, sizeof(b)), 0);
    CU_ASSERT_STRING_EQUAL(a, b);
    /* Different charges, different refunds. */
    CU_ASSERT_EQUAL(refund_queue_refund_no("4200000001202401011234567891", b, sizeof(b)), 0);
    CU_ASSERT(strcmp(a, b) != 0);
    CU_ASSERT_EQUAL(refund_queue_refund_no("MOCK_tx-1", a, sizeof(a)), 0);
    CU_ASSERT_STRING_EQUAL(a, "RFMOCK_tx-1");
}

static void test_refund_no_refused(void)
{
    char out[REFUND_NO_MAX + 1];
    char longest[REFUND_NO_MAX - 1]; /* 62 characters: "RF" + 62 = 64, the limit */
    char too_long[REFUND_NO_MAX];    /* 63 characters: 65 with the prefix */

    CU_ASSERT_EQUAL(refund_queue_refund_no("", out, sizeof(out)), -1);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(refund_queue_refund_no(NULL, out, sizeof(out)), -1);
    CU_ASSERT_EQUAL(refund_queue_refund_no("42 00", out, sizeof(out)), -1);
    CU_ASSERT_EQUAL(refund_queue_refund_no("42&key=x", out, sizeof(out)), -1);

    memset(longest, '7', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    CU_ASSERT_EQUAL(refund_queue_refund_no(longest, out, sizeof(out)), 0);
    CU_ASSERT_EQUAL(strlen(out), REFUND_NO_MAX);

    memset(too_long, '7', sizeof(too_long) - 1);
    too_long[sizeof(too_long) - 1] = '\0';
    CU_ASSERT_EQUAL(refund_queue_refund_no(too_long, out, sizeof(out)), -1);
    CU_ASSERT_STRING_EQUAL(out, "");

    /* A buffer too small: refused, never truncated into another number. */
    char small[8];
    CU_ASSERT_EQUAL(refund_queue_refund_no("4200000001", small, sizeof(small)), -1);
    CU_ASSERT_STRING_EQUAL(small, "");
}

static void test_backoff(void)
{
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(0), REFUND_BACKOFF_MIN_MS);
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(1), REFUND_BACKOFF_MIN_MS);
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(2), 2 * REFUND_BACKOFF_MIN_MS);
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(3), 4 * REFUND_BACKOFF_MIN_MS);
    long prev = 0;
    for (long a = 1; a < 200; a++) {
        long ms = refund_queue_backoff_ms(a);
        CU_ASSERT(ms >= prev);
        CU_ASSERT(ms <= REFUND_BACKOFF_MAX_MS);
        prev = ms;
    }
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(1000000), REFUND_BACKOFF_MAX_MS);
    CU_ASSERT_EQUAL(refund_queue_backoff_ms(-5), REFUND_BACKOFF_MIN_MS);
}

int main(void)
{
    static const cu_test tests[] = {
        { "out_refund_no is derived from the transaction", test_refund_no },
        { "an out_refund_no that cannot be made is refused", test_refund_no_refused },
        { "retries back off", test_backoff },
    };
    return CU_SUITE_RUN("refund_queue", NULL, NULL, tests);
}
