/* test_idem_key.c - CUnit suite for idem_key's request fingerprint: a known
 * SHA-256 vector, stability, sensitivity to every field, and amounts by
 * value. (The claim/replay protocol runs against MariaDB in
 * tests/integration/test_idempotency.py.) */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdint.h>
#include <string.h>

#include "idem_key.h"
#include "money.h"

static void print_of(const char *order_no, long long user_id, int64_t fen,
                     char out[IDEM_FINGERPRINT_LEN + 1])
{
    CU_ASSERT_EQUAL(idem_key_fingerprint(order_no, user_id, fen, out), 0);
}

static void test_known_vector(void)
{
    char fp[IDEM_FINGERPRINT_LEN + 1];

    /* python3: hashlib.sha256(b"order_no=ORDER_0001\nuser_id=42\namount_fen=1230\n") */
    print_of("ORDER_0001", 42, 1230, fp);
    CU_ASSERT_STRING_EQUAL(fp, "f21c702251bf3b97f03ff9ececda877640f21e7fee9d14e77d0a64b503721252");
    CU_ASSERT_EQUAL(strlen(fp), IDEM_FINGERPRINT_LEN);
    for (size_t i = 0; i < strlen(fp); i++)
        CU_ASSERT(strchr("0123456789abcdef", fp[i]) != NULL);
}

static void test_same_request_same_print(void)
{
    char a[IDEM_FINGERPRINT_LEN + 1], b[IDEM_FINGERPRINT_LEN + 1];

    print_of("ORDER_0001", 42, 1230, a);
    print_of("ORDER_0001", 42, 1230, b);
    CU_ASSERT_STRING_EQUAL(a, b);
}

static void test_every_field_counts(void)
{
    char base[IDEM_FINGERPRINT_LEN + 1], other[IDEM_FINGERPRINT_LEN + 1];

    print_of("ORDER_0001", 42, 1230, base);
    print_of("ORDER_0002", 42, 1230, other);
    CU_ASSERT_STRING_NOT_EQUAL(base, other);
    print_of("ORDER_0001", 43, 1230, other);
    CU_ASSERT_STRING_NOT_EQUAL(base, other);
    print_of("ORDER_0001", 42, 1231, other);
    CU_ASSERT_STRING_NOT_EQUAL(base, other);
    /* no ambiguity between fields: "1" + "21" is not "12" + "1" */
    print_of("ORDER_00011", 2, 1230, other);
    print_of("ORDER_0001", 12, 1230, base);
    CU_ASSERT_STRING_NOT_EQUAL(base, other);
}

static void test_amount_by_value(void)
{
    char a[IDEM_FINGERPRINT_LEN + 1], b[IDEM_FINGERPRINT_LEN + 1];
    int64_t fa = 0, fb = 0;

    CU_ASSERT_EQUAL(money_parse_yuan("12.3", &fa), 0);
    CU_ASSERT_EQUAL(money_parse_yuan("12.30", &fb), 0);
    print_of("ORDER_0001", 42, fa, a);
    print_of("ORDER_0001", 42, fb, b);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_EQUAL(money_parse_yuan("7", &fa), 0);
    CU_ASSERT_EQUAL(money_parse_yuan("7.00", &fb), 0);
    print_of("ORDER_0001", 42, fa, a);
    print_of("ORDER_0001", 42, fb, b);
    CU_ASSERT_STRING_EQUAL(a, b);
}

static void test_limits(void)
{
    char fp[IDEM_FINGERPRINT_LEN + 1];

    print_of("0123456789abcdefghijABCDEFGHIJ_-", 9223372036854775807LL, MONEY_MAX_FEN, fp);
    CU_ASSERT_EQUAL(strlen(fp), IDEM_FINGERPRINT_LEN);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a known request gives its known fingerprint", test_known_vector },
        { "the same request gives the same fingerprint", test_same_request_same_print },
        { "every field counts", test_every_field_counts },
        { "amounts count by value, not by spelling", test_amount_by_value },
        { "the longest fields still give a full-length fingerprint", test_limits },
    };
    return CU_SUITE_RUN("idem_key", NULL, NULL, tests);
}
