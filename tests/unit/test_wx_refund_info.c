/* test_wx_refund_info.c - CUnit suite for wx_refund_info: a vector made
 * with the openssl command line (`openssl enc -aes-256-ecb -K hex(md5hex)
 * -base64 -A`), round trips, the wrong key, malformed input, the limit. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "wx_refund_info.h"

/* The key of WeChat's signing example; MD5 hex d96eb16afdd491fa1e705096edbc2205. */
#define KEY "192006250b4c09247ec02edce69f6a2d"
#define PLAIN                                                                                      \
    "<root><out_refund_no><![CDATA[R1]]></out_refund_no>"                                          \
    "<refund_status><![CDATA[SUCCESS]]></refund_status></root>"
#define CIPHER                                                                                     \
    "WBzGpzQuNpcFxIlFjUUD9BZv+lpBMzd2SHiKCkwfALWid5G8ZvfOussfMIHLbKJmcnxPKdb1ZJEqTAp8ys"           \
    "Qv+xa1fj+Eorgndx3fNxf3KAYa3LPgsjvZgxaeYyrhV05Kbjkj6ywg27cEyTTaPZFYNg=="

static void test_vector(void)
{
    char *b64 = NULL, *plain = NULL;
    size_t len = 0;

    CU_ASSERT_EQUAL(wx_refund_info_encrypt(KEY, PLAIN, strlen(PLAIN), &b64), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b64);
    CU_ASSERT_STRING_EQUAL(b64, CIPHER);
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, CIPHER, &plain, &len), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_EQUAL(len, strlen(PLAIN));
    CU_ASSERT_STRING_EQUAL(plain, PLAIN);
    free(b64);
    free(plain);
}

static void test_empty_and_block_sizes(void)
{
    /* The empty text is one block of padding (openssl: /BcB3Z9W/JlQ+4KolHJy6Q==). */
    char *b64 = NULL, *plain = NULL;
    size_t len = 99;
    CU_ASSERT_EQUAL(wx_refund_info_encrypt(KEY, "", 0, &b64), 0);
    CU_ASSERT_STRING_EQUAL(b64, "/BcB3Z9W/JlQ+4KolHJy6Q==");
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, b64, &plain, &len), 0);
    CU_ASSERT_EQUAL(len, 0);
    free(b64);
    free(plain);

    /* 15, 16, 17 bytes: padding to 16, 32, 32. */
    static const char text[] = "0123456789abcdefX";
    for (size_t n = 15; n <= 17; n++) {
        b64 = plain = NULL;
        CU_ASSERT_EQUAL(wx_refund_info_encrypt(KEY, text, n, &b64), 0);
        CU_ASSERT_EQUAL(strlen(b64), n < 16 ? 24u : 44u);
        CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, b64, &plain, &len), 0);
        CU_ASSERT_EQUAL(len, n);
        CU_ASSERT_EQUAL(memcmp(plain, text, n), 0);
        free(b64);
        free(plain);
    }
}

static void test_wrong_key_and_bad_input(void)
{
    char *plain = (char *)1;
    size_t len = 0;
    /* Another key: the padding check fails (or, 1 in 256, garbage: not the text). */
    if (wx_refund_info_decrypt("another-key", CIPHER, &plain, &len) == 0) {
        CU_ASSERT(strcmp(plain, PLAIN) != 0);
        free(plain);
    } else {
        CU_ASSERT_PTR_NULL(plain);
    }
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, "", &plain, &len), -1);
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, NULL, &plain, &len), -1);
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, "abc", &plain, &len), -1);      /* not 4n */
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, "@@@@@@@@", &plain, &len), -1); /* not base64 */
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, "QUJD", &plain, &len), -1);     /* 3 bytes */
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, CIPHER + 4, &plain, &len), -1); /* cut */
    CU_ASSERT_PTR_NULL(plain);
}

static void test_limit(void)
{
    char *big = malloc(WX_REFUND_INFO_MAX + 1);
    char *b64 = NULL, *plain = NULL;
    size_t len = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memset(big, 'x', WX_REFUND_INFO_MAX + 1);
    CU_ASSERT_EQUAL(wx_refund_info_encrypt(KEY, big, WX_REFUND_INFO_MAX + 1, &b64), -1);
    CU_ASSERT_PTR_NULL(b64);
    CU_ASSERT_EQUAL(wx_refund_info_encrypt(KEY, big, WX_REFUND_INFO_MAX, &b64), 0);
    CU_ASSERT_EQUAL(wx_refund_info_decrypt(KEY, b64, &plain, &len), 0);
    CU_ASSERT_EQUAL(len, WX_REFUND_INFO_MAX);
    free(b64);
    free(plain);
    free(big);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a known plain text encrypts to its known req_info and back", test_vector },
        { "the empty text and texts of block sizes round-trip", test_empty_and_block_sizes },
        { "a wrong key or bad input is refused", test_wrong_key_and_bad_input },
        { "a text over the limit is refused, at the limit it round-trips", test_limit },
    };
    return CU_SUITE_RUN("wx_refund_info", NULL, NULL, tests);
}
