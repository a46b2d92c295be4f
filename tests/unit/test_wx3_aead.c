/* test_wx3_aead - CUnit suite for common/wx3_aead: a known vector (made with
 * Node.js' crypto, aes-256-gcm, the same key / nonce / AAD), the round
 * trip, every tampering refused (ciphertext, tag, nonce, AAD, key), the
 * limits and bad arguments, base64. */
#include <stdlib.h>
#include <string.h>

#include "cu_suite.h"
#include "wx3_aead.h"

#define KEY "idempayv3devkey0123456789abcdefA"
#define NONCE "0123456789ab"
#define AAD "transaction"
#define PLAIN "{\"out_trade_no\":\"ORDER-0001\"}"
/* node -e: createCipheriv('aes-256-gcm', KEY, NONCE), setAAD(AAD),
 * ciphertext || getAuthTag(), base64. */
#define VECTOR "vNEoIswOywgIjTMLch3pLSoV0XHCLApIWorPx9d7GF+ipXR43CRbRnx95CCU"

static void test_known_vector(void)
{
    char *ct = NULL, *pt = NULL;
    size_t len = 0;
    CU_ASSERT_FATAL(wx3_aead_encrypt(KEY, NONCE, AAD, PLAIN, strlen(PLAIN), &ct) == 0);
    CU_ASSERT_STRING_EQUAL(ct, VECTOR);
    CU_ASSERT_FATAL(wx3_aead_decrypt(KEY, NONCE, AAD, VECTOR, &pt, &len) == 0);
    CU_ASSERT_STRING_EQUAL(pt, PLAIN);
    CU_ASSERT_EQUAL(len, strlen(PLAIN));
    free(ct);
    free(pt);
}

/* b64 with the byte at index i (of the decoded bytes) flipped. */
static char *flip(const char *b64, size_t i)
{
    unsigned char *raw = NULL;
    size_t n = 0;
    if (wx3_base64_decode(b64, &raw, &n) != 0 || i >= n)
        return NULL;
    raw[i] ^= 0x01;
    char *out = wx3_base64_encode(raw, n);
    free(raw);
    return out;
}

static void test_tampering_refused(void)
{
    char *pt = (char *)"x";
    size_t len = 0;
    char *ct_flip = flip(VECTOR, 0);                   /* the first ciphertext byte */
    char *tag_flip = flip(VECTOR, strlen(PLAIN) + 15); /* the last tag byte */
    CU_ASSERT_FATAL(ct_flip != NULL && tag_flip != NULL);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, ct_flip, &pt, &len), -1);
    CU_ASSERT_PTR_NULL(pt);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, tag_flip, &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, "0123456789ac", AAD, VECTOR, &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, "refund", VECTOR, &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, "", VECTOR, &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt("idempayv3devkey0123456789abcdefB", NONCE, AAD, VECTOR, &pt,
                                     &len),
                    -1);
    free(ct_flip);
    free(tag_flip);
}

static void test_round_trip_and_limits(void)
{
    char *ct = NULL, *pt = NULL;
    size_t len = 0;
    char *big = malloc(WX3_AEAD_MAX + 1);
    CU_ASSERT_FATAL(big != NULL);
    memset(big, 'a', WX3_AEAD_MAX);
    big[WX3_AEAD_MAX] = '\0';
    CU_ASSERT_EQUAL(wx3_aead_encrypt(KEY, NONCE, "", big, WX3_AEAD_MAX, &ct), 0); /* the maximum */
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, "", ct, &pt, &len), 0);
    CU_ASSERT_EQUAL(len, WX3_AEAD_MAX);
    free(ct);
    free(pt);
    CU_ASSERT_EQUAL(wx3_aead_encrypt(KEY, NONCE, "", big, WX3_AEAD_MAX + 1, &ct), -1);
    CU_ASSERT_PTR_NULL(ct);
    free(big);
    /* the empty plain text: only the tag */
    CU_ASSERT_EQUAL(wx3_aead_encrypt(KEY, NONCE, AAD, "", 0, &ct), 0);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, ct, &pt, &len), 0);
    CU_ASSERT_EQUAL(len, 0);
    free(ct);
    free(pt);
    /* bad arguments */
    CU_ASSERT_EQUAL(wx3_aead_encrypt("short", NONCE, AAD, "x", 1, &ct), -1);
    CU_ASSERT_EQUAL(wx3_aead_encrypt(KEY, "", AAD, "x", 1, &ct), -1);
    CU_ASSERT_EQUAL(wx3_aead_encrypt(KEY, NONCE, NULL, "x", 1, &ct), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, "", &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, "AAAA", &pt, &len), -1); /* < tag */
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, "not*base64!!", &pt, &len), -1);
    CU_ASSERT_EQUAL(wx3_aead_decrypt(KEY, NONCE, AAD, NULL, &pt, &len), -1);
}

static void test_base64(void)
{
    unsigned char *raw = NULL;
    size_t n = 0;
    char *s = wx3_base64_encode((const unsigned char *)"ab", 2);
    CU_ASSERT_STRING_EQUAL(s, "YWI=");
    CU_ASSERT_EQUAL(wx3_base64_decode(s, &raw, &n), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT(memcmp(raw, "ab", 2) == 0);
    free(raw);
    free(s);
    CU_ASSERT_EQUAL(wx3_base64_decode("YWI", &raw, &n), -1);
    CU_ASSERT_EQUAL(wx3_base64_decode("Y\nI=", &raw, &n), -1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a known vector decrypts as Node.js aes-256-gcm made it", test_known_vector },
        { "a tampered ciphertext, tag, nonce, AAD or key is refused", test_tampering_refused },
        { "texts round-trip up to the maximum, the empty one too; bad arguments are refused",
          test_round_trip_and_limits },
        { "base64 encodes and decodes, refusing bad input", test_base64 },
    };
    return CU_SUITE_RUN("wx3_aead", NULL, NULL, tests);
}
