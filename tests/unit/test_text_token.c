/* test_text_token.c - CUnit suite for text_token (identifiers: letters,
 * digits, a field's punctuation, min..max long) and hex (bytes as
 * lower-case hex text). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "hex.h"
#include "text_token.h"

static void test_letters_digits_and_the_fields_punctuation_pass(void)
{
    CU_ASSERT_TRUE(text_token_valid("Az09_-", 1, 32, "_-"));
    CU_ASSERT_TRUE(text_token_valid("a|b*c@d", 1, 32, "|*@"));
    CU_ASSERT_FALSE(text_token_valid("a|b", 1, 32, "_-")); /* '|' not the field's */
}

static void test_other_characters_fail(void)
{
    CU_ASSERT_FALSE(text_token_valid("a b", 1, 32, "_-"));
    CU_ASSERT_FALSE(text_token_valid("a.b", 1, 32, "_-"));
    CU_ASSERT_FALSE(text_token_valid("\xe6\x94\xaf", 1, 32, "_-")); /* not ASCII */
    CU_ASSERT_FALSE(text_token_valid("ab\x7f", 1, 32, "_-"));
}

static void test_length_bounds_are_inclusive(void)
{
    CU_ASSERT_TRUE(text_token_valid("abcdef", 6, 8, ""));
    CU_ASSERT_TRUE(text_token_valid("abcdefgh", 6, 8, ""));
    CU_ASSERT_FALSE(text_token_valid("abcde", 6, 8, ""));
    CU_ASSERT_FALSE(text_token_valid("abcdefghi", 6, 8, ""));
}

static void test_null_and_empty_input_fail(void)
{
    CU_ASSERT_FALSE(text_token_valid(NULL, 1, 8, "_-"));
    CU_ASSERT_FALSE(text_token_valid("", 1, 8, "_-"));
    CU_ASSERT_TRUE(text_token_valid("", 0, 8, "_-"));
}

static void test_hex_writes_two_lowercase_digits_a_byte(void)
{
    static const unsigned char in[] = { 0x00, 0x0f, 0xa5, 0xff };
    char out[2 * sizeof(in) + 1];

    memset(out, 'x', sizeof(out));
    hex_lower(in, sizeof(in), out);
    CU_ASSERT_STRING_EQUAL(out, "000fa5ff");
    hex_lower(in, 0, out);
    CU_ASSERT_STRING_EQUAL(out, "");
}

int main(void)
{
    static const cu_test tests[] = {
        { "letters, digits and the field's punctuation pass",
          test_letters_digits_and_the_fields_punctuation_pass },
        { "any other character fails the check", test_other_characters_fail },
        { "both length bounds are inclusive", test_length_bounds_are_inclusive },
        { "NULL and empty input fail unless min is 0", test_null_and_empty_input_fail },
        { "hex writes two lower-case digits a byte and a NUL",
          test_hex_writes_two_lowercase_digits_a_byte },
    };
    return CU_SUITE_RUN("text_token", NULL, NULL, tests);
}
