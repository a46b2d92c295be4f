/* test_order_no.c - CUnit suite for the order number rule. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "order_no.h"

static void test_lengths(void)
{
    char s[64];
    for (size_t n = 0; n < sizeof(s) - 1; n++) {
        memset(s, 'A', n);
        s[n] = '\0';
        CU_ASSERT_EQUAL(order_no_valid(s), n >= ORDER_NO_MIN && n <= ORDER_NO_MAX);
    }
    CU_ASSERT_FALSE(order_no_valid("12345"));
    CU_ASSERT_TRUE(order_no_valid("123456"));
    CU_ASSERT_TRUE(order_no_valid("12345678901234567890123456789012"));
    CU_ASSERT_FALSE(order_no_valid("123456789012345678901234567890123"));
}

static void test_charset(void)
{
    CU_ASSERT_TRUE(order_no_valid("ORDER_2024-01|x*9"));
    CU_ASSERT_TRUE(order_no_valid("abcdefghijklmnopqrstuvwxyz"));
    CU_ASSERT_TRUE(order_no_valid("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
    CU_ASSERT_TRUE(order_no_valid("0123456789"));
    CU_ASSERT_TRUE(order_no_valid("______"));
    CU_ASSERT_TRUE(order_no_valid("||||**--"));

    /* Every ASCII byte outside the set is refused, at any position. */
    for (int c = 1; c < 256; c++) {
        int allowed = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      c == '_' || c == '|' || c == '*' || c == '-';
        char s[] = "abcdef";
        s[3] = (char)c;
        CU_ASSERT_EQUAL(order_no_valid(s), allowed);
    }
    CU_ASSERT_FALSE(order_no_valid("order 123"));
    CU_ASSERT_FALSE(order_no_valid(" order123"));
    CU_ASSERT_FALSE(order_no_valid("order123 "));
    CU_ASSERT_FALSE(order_no_valid("order\n123"));
    CU_ASSERT_FALSE(order_no_valid("订单号12345")); /* UTF-8 bytes */
    CU_ASSERT_FALSE(order_no_valid("order\xC3\xA9"
                                   "123"));
    CU_ASSERT_FALSE(order_no_valid("\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93")); /* full-width digits */
    CU_ASSERT_FALSE(order_no_valid("order.123"));
    CU_ASSERT_FALSE(order_no_valid("order/123"));
    CU_ASSERT_FALSE(order_no_valid("order%20123"));
    CU_ASSERT_FALSE(order_no_valid("order'123"));
}

static void test_null_empty(void)
{
    CU_ASSERT_FALSE(order_no_valid(NULL));
    CU_ASSERT_FALSE(order_no_valid(""));
    /* A long string is refused without reading past the first bad length. */
    char big[4096];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CU_ASSERT_FALSE(order_no_valid(big));
}

int main(void)
{
    static const cu_test tests[] = {
        { "an order number is valid only within its length bounds", test_lengths },
        { "an order number is valid only in its character set", test_charset },
        { "a NULL, empty or huge order number is refused", test_null_empty },
    };
    return CU_SUITE_RUN("order_no", NULL, NULL, tests);
}
