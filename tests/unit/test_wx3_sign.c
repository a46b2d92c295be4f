/* test_wx3_sign - CUnit suite for common/wx3_sign: SHA256withRSA against a
 * signature made by `openssl dgst -sha256 -sign` (RSASSA-PKCS1-v1_5 is
 * deterministic, so the base64 must match byte for byte), a signature of
 * ours verified by the openssl command line, refusals (another message,
 * another key, bad base64), the certificate's serial, the messages signed,
 * and the Authorization header's grammar. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_suite.h"
#include <openssl/rsa.h>

#include "wx3_sign.h"

#include "wx3_test_keys.h"

/* openssl dgst -sha256 -sign k.pem of MSG, base64. */
static const char openssl_sig[] =
    "Nb8+3pQBjdu+WfORz9BSUXDoycndMffJrhcJ/6jAWPWYiHyfLEHJo0r8dJC7RgQF7gGuIFG9Sqlf+VH6Vnh6PoUJdyFKv8Pi30WAk6dRK3tckVt5rHwDvKatVTlqdoCBUob6u+4aAjCm3bYsUAbx7xaleub1c9owSNOu87zWahms9ezX5iJ6HnCPXPRausktdl1HRpwwxaPJT2oVl+JxNwlIV2cfCX3l0b4zMX9dpi7LOYNBF+ivj6HWd8ukx4/NQBHUvH21tNpWZ+Dt1wyDW05F7qumFpRpq5I2Cz72myIihhAQOiSN35z6tU8OKQ1jENjB6UeyQH53veoX1+MmUw==";
#define MSG "GET\n/v3/certificates\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n"

static char dir[64];
static char key_path[128], cert_path[128];

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    size_t n = fwrite(text, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

static int suite_init(void)
{
    snprintf(dir, sizeof(dir), "/tmp/test_wx3_sign.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
    return write_file(key_path, test_key_pem, strlen(test_key_pem)) != 0 ||
           write_file(cert_path, test_cert_pem, strlen(test_cert_pem)) != 0;
}

static int suite_clean(void)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_known_vector(void)
{
    EVP_PKEY *k = NULL;
    char *sig = NULL;
    CU_ASSERT_FATAL(wx3_key_load(key_path, &k) == 0);
    CU_ASSERT_FATAL(wx3_sign(k, MSG, strlen(MSG), &sig) == 0);
    CU_ASSERT_STRING_EQUAL(sig, openssl_sig);
    free(sig);
    EVP_PKEY_free(k);
}

static void test_verify_and_refusals(void)
{
    wx3_cert c;
    EVP_PKEY *other = EVP_RSA_gen(2048);
    char *sig2 = NULL;
    CU_ASSERT_FATAL(wx3_cert_load(cert_path, &c) == 0);
    CU_ASSERT_EQUAL(wx3_verify(c.pub, MSG, strlen(MSG), openssl_sig), 0);
    CU_ASSERT_EQUAL(wx3_verify(c.pub, MSG, strlen(MSG) - 1, openssl_sig), -1);
    CU_ASSERT_EQUAL(wx3_verify(c.pub, MSG, strlen(MSG), "not base64!"), -1);
    CU_ASSERT_EQUAL(wx3_verify(c.pub, MSG, strlen(MSG), ""), -1);
    CU_ASSERT_EQUAL(wx3_verify(NULL, MSG, strlen(MSG), openssl_sig), -1);
    CU_ASSERT_FATAL(other != NULL && wx3_sign(other, MSG, strlen(MSG), &sig2) == 0);
    CU_ASSERT_EQUAL(wx3_verify(c.pub, MSG, strlen(MSG), sig2), -1); /* another key */
    free(sig2);
    EVP_PKEY_free(other);
    wx3_cert_free(&c);
}

/* A signature of ours, checked by `openssl dgst -verify` (skipped only
 * when the openssl program is missing). */
static void test_openssl_cli_verifies(void)
{
    EVP_PKEY *k = NULL;
    char *sig = NULL, cmd[1024], msg_path[160], sig_path[160];
    static const char body[] =
        "1554208460\nc5ac7061fccab6bf3e254dcf98995b8c\n{\"code_url\":\"weixin://x\"}\n";
    if (system("command -v openssl > /dev/null 2>&1") != 0) {
        fprintf(stderr, "openssl missing: CLI check skipped\n");
        return;
    }
    CU_ASSERT_FATAL(wx3_key_load(key_path, &k) == 0);
    CU_ASSERT_FATAL(wx3_sign(k, body, strlen(body), &sig) == 0);
    snprintf(msg_path, sizeof(msg_path), "%s/msg", dir);
    snprintf(sig_path, sizeof(sig_path), "%s/sig.b64", dir);
    CU_ASSERT_FATAL(write_file(msg_path, body, strlen(body)) == 0);
    CU_ASSERT_FATAL(write_file(sig_path, sig, strlen(sig)) == 0);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && openssl x509 -in cert.pem -pubkey -noout > pub.pem && "
             "base64 -d sig.b64 > sig.bin && "
             "openssl dgst -sha256 -verify pub.pem -signature sig.bin msg > /dev/null",
             dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    /* and a changed message is refused by openssl too */
    CU_ASSERT_FATAL(write_file(msg_path, body, strlen(body) - 1) == 0);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
    free(sig);
    EVP_PKEY_free(k);
}

static void test_cert_fields(void)
{
    wx3_cert c;
    CU_ASSERT_FATAL(wx3_cert_load(cert_path, &c) == 0);
    CU_ASSERT_STRING_EQUAL(c.serial, "5157F09EFDC096DE15EBE81A47057A7232F1B8E1");
    CU_ASSERT(c.not_after > c.not_before);
    CU_ASSERT(strncmp(c.pem, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
    wx3_cert_free(&c);
    CU_ASSERT_EQUAL(wx3_cert_load(key_path, &c), -1); /* a key is no certificate */
    CU_ASSERT_EQUAL(wx3_cert_load("/nonexistent/cert.pem", &c), -1);
    EVP_PKEY *k = NULL;
    CU_ASSERT_EQUAL(wx3_key_load(cert_path, &k), -1);
    CU_ASSERT_PTR_NULL(k);
}

static void test_messages(void)
{
    size_t len = 0;
    char *m = wx3_request_message("GET", "/v3/certificates", "1554208460",
                                  "593BEC0C930BF1AFEB40B4A08C8FB242", NULL, 0);
    CU_ASSERT_STRING_EQUAL(m, MSG);
    free(m);
    m = wx3_request_message("POST", "/v3/pay/transactions/native", "1", "n", "{\"a\":1}", 7);
    CU_ASSERT_STRING_EQUAL(m, "POST\n/v3/pay/transactions/native\n1\nn\n{\"a\":1}\n");
    free(m);
    m = wx3_response_message("1", "n", "", 0, &len); /* a 204: the body is empty */
    CU_ASSERT_STRING_EQUAL(m, "1\nn\n\n");
    CU_ASSERT_EQUAL(len, 5);
    free(m);
}

static void test_auth_parse(void)
{
    wx3_auth a;
    char why[160];
    const char *ok =
        "WECHATPAY2-SHA256-RSA2048 mchid=\"1900009191\",nonce_str=\"593BEC0C930BF1AF\","
        "signature=\"uOVRnA4qG/MNnYzdQxJanN+zU+lTgIcnU9BxGw5dKjK+VdEUz2FeIoC+D5sB/LN+nG"
        "zX3hfZg6r5wT1pl2ZobmIc6p0ldN7J6yDgUzbX8Uk3sD4a4eZVPTBvqNDoUqcYMlZ9uuDdCvNv4TM3c1WzsXUr"
        "ExwVkI1XO5jCNbgDJ25nkT/c1gIFvqoogl7MdSFGc4W4xZsqCItnqbypR3RuGIlR9h9vlRsy7zJR9PBI83X8al"
        "LDIfR1ukt1P7tMnmogZ0cuDY8cZsd8ZlCgLadmvej58SLsIkVxFJ8XyUgx9FmutKSYTmYtWBZ0+tNvfGmbXU7c"
        "ob8H/4nLBiCwIUFluw==\",timestamp=\"1554208460\",serial_no=\"1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C\"";
    CU_ASSERT_EQUAL(wx3_auth_parse(ok, &a, why, sizeof(why)), 0);
    CU_ASSERT_STRING_EQUAL(a.mchid, "1900009191");
    CU_ASSERT_STRING_EQUAL(a.timestamp, "1554208460");
    CU_ASSERT_STRING_EQUAL(a.serial_no, "1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C");
    CU_ASSERT(strncmp(a.signature, "uOVRnA4qG/", 10) == 0);
    /* any order (wechatpay-axios-plugin sends serial_no before timestamp) */
    CU_ASSERT_EQUAL(wx3_auth_parse("WECHATPAY2-SHA256-RSA2048 serial_no=\"AB\",timestamp=\"1\","
                                   "nonce_str=\"n\",mchid=\"m\",signature=\"s\"",
                                   &a, why, sizeof(why)),
                    0);
    static const char *const bad[] = {
        NULL,
        "",
        "Bearer x",
        "WECHATPAY2-SHA256-RSA2048",
        "WECHATPAY2-SHA256-RSA2048 ",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"m\",nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"m\",mchid=\"m\",nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"m\",nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s\",x=\"y\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=m,nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"m\" nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"\",nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s\"",
        "WECHATPAY2-SHA256-RSA2048 mchid=\"m\",nonce_str=\"n\",timestamp=\"1\",serial_no=\"A\",signature=\"s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(wx3_auth_parse(bad[i], &a, why, sizeof(why)), -1);
        CU_ASSERT(why[0] != '\0');
    }
}

static void test_nonce(void)
{
    char a[33], b[33], small[4];
    CU_ASSERT_EQUAL(wx3_nonce(a, sizeof(a), 32), 0);
    CU_ASSERT_EQUAL(wx3_nonce(b, sizeof(b), 32), 0);
    CU_ASSERT_EQUAL(strlen(a), 32);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(wx3_nonce(small, sizeof(small), 4), -1);
}

/* wx3_pair_load: both files or nothing; wx3_signed_lines: the four
 * Wechatpay-* lines in http_client's form, NULL-terminated. */
static void test_pair_and_signed_lines(void)
{
    wx3_cert c;
    EVP_PKEY *k = NULL;
    char *lines[5];

    CU_ASSERT_EQUAL_FATAL(wx3_pair_load(cert_path, key_path, &c, &k), 0);
    CU_ASSERT_PTR_NOT_NULL(k);
    CU_ASSERT(strlen(c.serial) > 0);
    EVP_PKEY_free(k);
    wx3_cert_free(&c);
    CU_ASSERT_EQUAL(wx3_pair_load(cert_path, NULL, &c, &k), -1);
    CU_ASSERT_PTR_NULL(k);
    CU_ASSERT_EQUAL(wx3_pair_load(cert_path, "/nonexistent/key.pem", &c, &k), -1);
    CU_ASSERT_PTR_NULL(k);
    CU_ASSERT_EQUAL_FATAL(wx3_signed_lines("5157F0", "c2ln", "1554208460", "N0nce", lines), 0);
    CU_ASSERT_STRING_EQUAL(lines[0], "Wechatpay-Serial: 5157F0");
    CU_ASSERT_STRING_EQUAL(lines[1], "Wechatpay-Signature: c2ln");
    CU_ASSERT_STRING_EQUAL(lines[2], "Wechatpay-Timestamp: 1554208460");
    CU_ASSERT_STRING_EQUAL(lines[3], "Wechatpay-Nonce: N0nce");
    CU_ASSERT_PTR_NULL(lines[4]);
    wx3_lines_free(lines);
    CU_ASSERT_PTR_NULL(lines[0]);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a certificate and key pair; the signed header lines", test_pair_and_signed_lines },
        { "SHA256withRSA matches openssl dgst's signature", test_known_vector },
        { "only the right signature verifies", test_verify_and_refusals },
        { "openssl dgst -verify accepts our signature", test_openssl_cli_verifies },
        { "a certificate's serial, dates and PEM are read", test_cert_fields },
        { "the signed messages are built as WeChat defines them", test_messages },
        { "the Authorization header is parsed by its grammar", test_auth_parse },
        { "a nonce is fresh and of the right form", test_nonce },
    };
    return CU_SUITE_RUN("wx3_sign", suite_init, suite_clean, tests);
}
