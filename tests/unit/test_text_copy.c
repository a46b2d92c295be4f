/* test_text_copy.c - CUnit suite for text_copy: whole copies, cuts at the
 * limit, cuts that never split a UTF-8 character, NULL and empty input. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "text_copy.h"

static void test_copy_that_fits_is_whole_and_reported_whole(void)
{
    char buf[8];

    CU_ASSERT_TRUE(text_copy(buf, sizeof(buf), "1234567")); /* exactly cap - 1 */
    CU_ASSERT_STRING_EQUAL(buf, "1234567");
    CU_ASSERT_TRUE(text_copy(buf, sizeof(buf), ""));
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_copy_too_long_is_cut_and_reported_cut(void)
{
    char buf[8];

    memset(buf, 'x', sizeof(buf));
    CU_ASSERT_FALSE(text_copy(buf, sizeof(buf), "12345678")); /* one byte over */
    CU_ASSERT_STRING_EQUAL(buf, "1234567");
    CU_ASSERT_FALSE(text_copy(buf, 1, "a"));
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_cut_never_splits_a_utf8_character(void)
{
    char buf[6];

    /* "ab" + 支 (3 bytes) + 付 (3 bytes): 5 bytes fit, 支 ends at byte 5. */
    CU_ASSERT_FALSE(text_copy(buf, sizeof(buf), "ab\xe6\x94\xaf\xe4\xbb\x98"));
    CU_ASSERT_STRING_EQUAL(buf, "ab\xe6\x94\xaf");
    /* "abc" + 支: only 2 of its 3 bytes would fit, so it is left out whole. */
    CU_ASSERT_FALSE(text_copy(buf, sizeof(buf), "abc\xe6\x94\xaf"));
    CU_ASSERT_STRING_EQUAL(buf, "abc");
    /* A 4-byte character (U+1F4B0) cut after its first byte. */
    CU_ASSERT_FALSE(text_copy(buf, sizeof(buf), "abcd\xf0\x9f\x92\xb0"));
    CU_ASSERT_STRING_EQUAL(buf, "abcd");
}

static void test_null_source_copies_empty(void)
{
    char buf[4] = "zzz";

    CU_ASSERT_TRUE(text_copy(buf, sizeof(buf), NULL));
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_zero_capacity_writes_nothing(void)
{
    char buf[2] = "q";

    CU_ASSERT_FALSE(text_copy(buf, 0, "a"));
    CU_ASSERT_TRUE(text_copy(buf, 0, ""));
    CU_ASSERT_EQUAL(buf[0], 'q');
}

static void test_span_copy_stops_at_its_length(void)
{
    char buf[8];
    const char *line = "SUCCESS,1.00,rest";

    CU_ASSERT_TRUE(text_copy_n(buf, sizeof(buf), line, 7));
    CU_ASSERT_STRING_EQUAL(buf, "SUCCESS");
    CU_ASSERT_FALSE(text_copy_n(buf, 4, line, 7));
    CU_ASSERT_STRING_EQUAL(buf, "SUC");
    CU_ASSERT_TRUE(text_copy_n(buf, sizeof(buf), line, 0));
    CU_ASSERT_STRING_EQUAL(buf, "");
}

int main(void)
{
    static const cu_test tests[] = {
        { "a copy that fits is whole and reported whole",
          test_copy_that_fits_is_whole_and_reported_whole },
        { "a copy too long is cut at the limit and reported cut",
          test_copy_too_long_is_cut_and_reported_cut },
        { "a cut never splits a UTF-8 character", test_cut_never_splits_a_utf8_character },
        { "a NULL source copies the empty string", test_null_source_copies_empty },
        { "capacity 0 writes nothing", test_zero_capacity_writes_nothing },
        { "a span copy stops at its length", test_span_copy_stops_at_its_length },
    };
    return CU_SUITE_RUN("text_copy", NULL, NULL, tests);
}
