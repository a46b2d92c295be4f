/* test_caller_auth.c - CUnit suite for caller_sign and caller_auth: the
 * signature of a known request (the Python twin in tests/integration/lib.py
 * computes the same vector), every signed part changing the signature, the
 * header shapes, the replay window's edges, upper-case hex, and the key
 * derivation of caller_store. Pure: needs no stack. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <string.h>

#include "dev_merchant.h"
#include "caller_auth.h"
#include "caller_sign.h"
#include "caller_store.h"

#define NOW 1700000000LL
#define VECTOR_SIG "e0c69b9be021e75e038f7c4ea6bfe92fdc49f51b60c0e321dccba080ae4d74b8"

static unsigned char key[CALLER_KEY_LEN];
static char sig[CALLER_SIG_HEX_LEN + 1];
static const char body[] = "{\"order_no\":\"A1\"}";

static int suite_init(void)
{
    for (int i = 0; i < CALLER_KEY_LEN; i++)
        key[i] = (unsigned char)i;
    return 0;
}

static http_request signed_request(void)
{
    http_request r;

    memset(&r, 0, sizeof(r));
    r.method = "POST";
    r.path = "/api/pay";
    r.query = "x=1";
    r.content_type = "application/json";
    r.remote_addr = "";
    r.body = body;
    r.body_len = strlen(body);
    r.auth_caller = "shop-1";
    r.auth_timestamp = "1700000000";
    r.auth_nonce = "nonce-0123456789ab";
    r.auth_signature = sig;
    caller_sign_compute(key, r.method, r.path, r.query, r.auth_timestamp, r.auth_nonce, r.body,
                        r.body_len, sig);
    return r;
}

static void test_vector(void)
{
    http_request r = signed_request();

    CU_ASSERT_STRING_EQUAL(sig, VECTOR_SIG);
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_OK);
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_OK);
}

static void test_every_part_is_signed(void)
{
    http_request r = signed_request();
    unsigned char other[CALLER_KEY_LEN];

    r.method = "GET";
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.path = "/api/pay/token";
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.query = "x=2";
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.query = ""; /* "/api/pay?x=1" is not "/api/pay" */
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.auth_timestamp = "1700000001";
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.auth_nonce = "nonce-0123456789ac";
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    r.body_len--;
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r = signed_request();
    memcpy(other, key, sizeof(other));
    other[31] ^= 1;
    CU_ASSERT_EQUAL(caller_auth_verify(&r, other), CALLER_AUTH_BAD_SIGNATURE);
}

static void test_signature_text(void)
{
    http_request r = signed_request();
    char upper[CALLER_SIG_HEX_LEN + 1], flipped[CALLER_SIG_HEX_LEN + 1];

    for (int i = 0; i <= CALLER_SIG_HEX_LEN; i++)
        upper[i] = (char)(sig[i] >= 'a' && sig[i] <= 'f' ? sig[i] - 32 : sig[i]);
    r.auth_signature = upper;
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_OK);
    memcpy(flipped, sig, sizeof(flipped));
    flipped[63] = flipped[63] == '0' ? '1' : '0';
    r.auth_signature = flipped;
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
    r.auth_signature = NULL;
    CU_ASSERT_EQUAL(caller_auth_verify(&r, key), CALLER_AUTH_BAD_SIGNATURE);
}

static void test_shapes(void)
{
    http_request r = signed_request();
    static const char *const bad_ts[] = {
        "",     "-1700000000", "+1700000000", " 1700000000", "1700000000 ", "17000000000000",
        "0x10", "1e9"
    };
    static const char *const bad_nonce[] = { "", "short", "has space 0123456789",
                                             "nonce/0123456789ab", "nonce.0123456789ab" };

    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_OK);
    r.auth_caller = NULL;
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MISSING);
    r = signed_request();
    r.auth_signature = NULL;
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MISSING);
    for (size_t i = 0; i < sizeof(bad_ts) / sizeof(bad_ts[0]); i++) {
        r = signed_request();
        r.auth_timestamp = bad_ts[i];
        CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
    }
    for (size_t i = 0; i < sizeof(bad_nonce) / sizeof(bad_nonce[0]); i++) {
        r = signed_request();
        r.auth_nonce = bad_nonce[i];
        CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
    }
    r = signed_request();
    r.auth_caller = "a name";
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
    r = signed_request();
    r.auth_signature = "abc";
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
    r.auth_signature = VECTOR_SIG "0";
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
    r.auth_signature = "g0c69b9be021e75e038f7c4ea6bfe92fdc49f51b60c0e321dccba080ae4d74b8";
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW, 300, NULL), CALLER_AUTH_MALFORMED);
}

static void test_window(void)
{
    http_request r = signed_request();
    long long ts = 0;

    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW + 300, 300, &ts), CALLER_AUTH_OK);
    CU_ASSERT_EQUAL(ts, NOW);
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW - 300, 300, NULL), CALLER_AUTH_OK);
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW + 301, 300, NULL), CALLER_AUTH_STALE);
    CU_ASSERT_EQUAL(caller_auth_screen(&r, NOW - 301, 300, NULL), CALLER_AUTH_STALE);
    CU_ASSERT_STRING_EQUAL(caller_auth_code(CALLER_AUTH_STALE), "stale_timestamp");
    CU_ASSERT_STRING_EQUAL(caller_auth_code(CALLER_AUTH_MISSING), "unauthenticated");
}

static void test_keys(void)
{
    unsigned char k1[CALLER_KEY_LEN], k2[CALLER_KEY_LEN], k3[CALLER_KEY_LEN];
    char lines[4][CALLER_HEADER_LINE_MAX];
    static const char hex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    CU_ASSERT_EQUAL(caller_sign_key_from_hex(hex, k1), 0);
    CU_ASSERT_EQUAL(memcmp(k1, key, sizeof(k1)), 0);
    CU_ASSERT_EQUAL(caller_sign_key_from_hex("00", k1), -1);
    CU_ASSERT_EQUAL(caller_sign_key_from_hex(NULL, k1), -1);
    CU_ASSERT_EQUAL(caller_sign_key_from_hex(
                        "zz0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", k1),
                    -1);
    CU_ASSERT_EQUAL(caller_store_derive_key(IDEMPAY_DEV_KEY, "shop-1",
                                            "00112233445566778899aabbccddeeff", k1),
                    0);
    CU_ASSERT_EQUAL(caller_store_derive_key(IDEMPAY_DEV_KEY, "shop-2",
                                            "00112233445566778899aabbccddeeff", k2),
                    0);
    CU_ASSERT_EQUAL(caller_store_derive_key("another-merchant-key-0123456789ab", "shop-1",
                                            "00112233445566778899aabbccddeeff", k3),
                    0);
    CU_ASSERT_NOT_EQUAL(memcmp(k1, k2, sizeof(k1)), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(k1, k3, sizeof(k1)), 0);
    CU_ASSERT_EQUAL(caller_sign_headers("shop-1", hex, NOW, "GET", "/api/pay/token", "user_id=1",
                                        NULL, 0, lines),
                    0);
    CU_ASSERT_STRING_EQUAL(lines[0], "X-Idempay-Caller: shop-1");
    CU_ASSERT_STRING_EQUAL(lines[1], "X-Idempay-Timestamp: 1700000000");
    CU_ASSERT_EQUAL(strncmp(lines[3], "X-Idempay-Signature: ", 21), 0);
    CU_ASSERT_EQUAL(strlen(lines[3]), 21 + CALLER_SIG_HEX_LEN);
    CU_ASSERT_EQUAL(caller_sign_headers("bad name", hex, NOW, "GET", "/", "", NULL, 0, lines), -1);
    CU_ASSERT_EQUAL(caller_sign_headers("shop-1", "00", NOW, "GET", "/", "", NULL, 0, lines), -1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a known request signs to its known signature", test_vector },
        { "method, target, timestamp, nonce, body and key are signed", test_every_part_is_signed },
        { "a signature in upper-case hex or one digit off is refused", test_signature_text },
        { "headers of the wrong shape are refused", test_shapes },
        { "a timestamp is accepted up to the replay window's edges, not past them", test_window },
        { "a caller key is 64 hex digits, derived per merchant key and caller", test_keys },
    };
    return CU_SUITE_RUN("caller_auth", suite_init, NULL, tests);
}
