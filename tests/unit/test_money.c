/* test_money.c - CUnit suite for money: yuan/fen parsing boundaries and
 * formatting. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdint.h>
#include <string.h>

#include "money.h"

static void expect_yuan(const char *s, int64_t want)
{
    int64_t fen = -7;
    int rc = money_parse_yuan(s, &fen);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(fen, want);
    if (rc != 0 || fen != want)
        fprintf(stderr, "  money_parse_yuan(\"%s\") rc=%d fen=%lld want %lld\n", s, rc,
                (long long)fen, (long long)want);
}

static void refuse_yuan(const char *s)
{
    int64_t fen = -7;
    int rc = money_parse_yuan(s, &fen);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_EQUAL(fen, -7); /* untouched on failure */
    if (rc != -1)
        fprintf(stderr, "  money_parse_yuan(\"%s\") accepted as %lld\n", s ? s : "(null)",
                (long long)fen);
}

static void test_parse_yuan_valid(void)
{
    expect_yuan("0.01", 1);
    expect_yuan("0.1", 10);
    expect_yuan("0.5", 50);
    expect_yuan("0.10", 10);
    expect_yuan("0.99", 99);
    expect_yuan("1", 100);
    expect_yuan("7", 700);
    expect_yuan("12.3", 1230);
    expect_yuan("12.30", 1230);
    expect_yuan("12.03", 1203);
    expect_yuan("10", 1000);
    expect_yuan("100.00", 10000);
    expect_yuan("99999999", 9999999900LL);
    expect_yuan("99999999.99", MONEY_MAX_FEN);
    expect_yuan("12345678.9", 1234567890LL);
}

static void test_parse_yuan_invalid(void)
{
    static const char *bad[] = {
        "",
        "0",
        "0.0",
        "0.00",
        "00",
        "0.001",
        "1.001",
        "12.345",
        "-1",
        "+1",
        "-0.01",
        "1e3",
        "1E3",
        " 1",
        "1 ",
        "\t1",
        "1\n",
        "\xEF\xBC\x91" /* full-width 1 */,
        "1\xEF\xBC\x90",
        ".5",
        "5.",
        ".",
        "1,00",
        "1.0.0",
        "00.5",
        "007",
        "01",
        "01.50",
        "100000000",
        "100000000.00",
        "999999999.99",
        "0x10",
        "1..0",
        "1.-1",
        "1.+1",
        "NaN",
        "inf",
        "one",
        "1.a",
        "a1",
        "99999999999999999999999999999999999999999999999999",
        "0.00000000000000000000000000000000000000000000000001",
        "18446744073709551617",
        "9223372036854775808",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refuse_yuan(bad[i]);
    refuse_yuan(NULL);
    /* A NUL inside the text ends it: "1\0x" is just "1". */
    expect_yuan("1\0x", 100);
}

static void test_parse_fen(void)
{
    int64_t fen = -7;
    CU_ASSERT_EQUAL(money_parse_fen("1", &fen), 0);
    CU_ASSERT_EQUAL(fen, 1);
    CU_ASSERT_EQUAL(money_parse_fen("1230", &fen), 0);
    CU_ASSERT_EQUAL(fen, 1230);
    CU_ASSERT_EQUAL(money_parse_fen("9999999999", &fen), 0);
    CU_ASSERT_EQUAL(fen, MONEY_MAX_FEN);

    static const char *bad[] = {
        "",
        "0",
        "00",
        "01",
        "-1",
        "+1",
        "1.0",
        "1.",
        " 1",
        "1 ",
        "1e3",
        "10000000000",
        "99999999999",
        "99999999999999999999999999999999",
        "18446744073709551617",
        "\xEF\xBC\x91",
        "0x1",
        "1,0",
        "abc",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fen = -7;
        CU_ASSERT_EQUAL(money_parse_fen(bad[i], &fen), -1);
        CU_ASSERT_EQUAL(fen, -7);
    }
    CU_ASSERT_EQUAL(money_parse_fen(NULL, &fen), -1);
}

static void test_format(void)
{
    char out[MONEY_STR_MAX];
    CU_ASSERT_STRING_EQUAL(money_format(1230, out), "12.30");
    CU_ASSERT_STRING_EQUAL(money_format(1, out), "0.01");
    CU_ASSERT_STRING_EQUAL(money_format(10, out), "0.10");
    CU_ASSERT_STRING_EQUAL(money_format(0, out), "0.00");
    CU_ASSERT_STRING_EQUAL(money_format(100, out), "1.00");
    CU_ASSERT_STRING_EQUAL(money_format(1203, out), "12.03");
    CU_ASSERT_STRING_EQUAL(money_format(MONEY_MAX_FEN, out), "99999999.99");
    CU_ASSERT_PTR_EQUAL(money_format(5, out), out);
    /* Outside what fits: "" rather than a wrong number. */
    CU_ASSERT_STRING_EQUAL(money_format(-1, out), "");
    CU_ASSERT_STRING_EQUAL(money_format(INT64_MIN, out), "");
    CU_ASSERT_STRING_EQUAL(money_format(INT64_MAX, out), "");
    CU_ASSERT_STRING_EQUAL(money_format(999999999999LL, out), "9999999999.99");
}

static void test_round_trip(void)
{
    char out[MONEY_STR_MAX];
    int64_t fen;
    static const int64_t samples[] = { 1, 9, 10, 99, 100, 101, 1230, 123456, 9999999999LL };
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        money_format(samples[i], out);
        CU_ASSERT_EQUAL(money_parse_yuan(out, &fen), 0);
        CU_ASSERT_EQUAL(fen, samples[i]);
        char digits[24];
        snprintf(digits, sizeof(digits), "%lld", (long long)samples[i]);
        CU_ASSERT_EQUAL(money_parse_fen(digits, &fen), 0);
        CU_ASSERT_EQUAL(fen, samples[i]);
    }
}

int main(void)
{
    static const cu_test tests[] = {
        { "parse_yuan accepts every valid yuan amount", test_parse_yuan_valid },
        { "parse_yuan refuses every invalid yuan amount", test_parse_yuan_invalid },
        { "parse_fen accepts digits up to the maximum and refuses the rest", test_parse_fen },
        { "an amount formats as yuan with two decimals", test_format },
        { "an amount survives format then parse", test_round_trip },
    };
    return CU_SUITE_RUN("money", NULL, NULL, tests);
}
