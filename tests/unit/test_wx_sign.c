/* test_wx_sign.c - CUnit suite for wx_sign: WeChat Pay's published vectors
 * (MD5 and HMAC-SHA256), field selection and order, verification, nonces. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wx_sign.h"

#define VECTOR_KEY "192006250b4c09247ec02edce69f6a2d"
#define VECTOR_MD5 "9A0A8659F005D6984697E2CA0A9CF3B7"
#define VECTOR_HMAC "6A9AE1657590FD6257D693A078E1C3E4BB6BA4DC30B23E0EE2496E54170DACD6"

/* WeChat Pay's documented example, fields in a scrambled order. */
static void vector_msg(wx_msg *m)
{
    wx_msg_init(m);
    wx_msg_set(m, "nonce_str", "ibuaiVcKdpRxkhJA");
    wx_msg_set(m, "mch_id", "10000100");
    wx_msg_set(m, "body", "test");
    wx_msg_set(m, "appid", "wxd930ea5d5a258f4f");
    wx_msg_set(m, "device_info", "1000");
}

static void test_vectors(void)
{
    wx_msg m;
    char sig[WX_SIGN_HEX_MAX];
    vector_msg(&m);

    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, VECTOR_MD5);
    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, VECTOR_HMAC);

    /* "sign" and empty fields are not signed. */
    wx_msg_set(&m, "sign", "WHATEVER");
    wx_msg_set(&m, "attach", "");
    wx_msg_set(&m, "detail", "");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, VECTOR_MD5);
    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, VECTOR_HMAC);

    /* sign_type, when present, is signed like any other field. */
    wx_msg_set(&m, "sign_type", "HMAC-SHA256");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "2C9DF1156522C0B2B03B4DBF3BCA5CACB602CBD5CA0F9E112458CF3E9855303B");
    wx_msg_set(&m, "sign_type", "MD5");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, VECTOR_KEY, WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "6B4978B16793D0C2604CD59C47425A27");
    wx_msg_free(&m);
}

static void test_selection_and_order(void)
{
    wx_msg m;
    char sig[WX_SIGN_HEX_MAX];
    wx_msg_init(&m);

    /* Byte order: 'B' < '_' < 'b'; unknown fields are included. */
    wx_msg_set(&m, "ab", "2");
    wx_msg_set(&m, "a_b", "1");
    wx_msg_set(&m, "Body", "x");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, "k", WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "1F5E9E5BDA2D45307B2975FEF395DE6C"); /* Body=x&a_b=1&ab=2&key=k */
    wx_msg_free(&m);

    /* UTF-8 values are signed as their bytes. */
    wx_msg_set(&m, "body", "测试");
    wx_msg_set(&m, "attach", "支付");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, "k", WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "582EE80D602C51A67E2EEA9A4BD8DF69");
    wx_msg_free(&m);

    /* No signable field: just "key=k". */
    wx_msg_set(&m, "sign", "x");
    wx_msg_set(&m, "empty", "");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, "k", WX_SIGN_MD5, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "4B85A6894E0FDB0B6F6E58870839FDAF");
    wx_msg_free(&m);

    /* Empty key still works (HMAC with a zero-length key). */
    wx_msg_set(&m, "a", "1");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, "", WX_SIGN_HMAC_SHA256, sig), 0);
    CU_ASSERT_STRING_EQUAL(sig, "7C5F87BCED67716B1DFA96579EA85FF30CF68C752C899EBB7C4415FC57BB90EA");

    /* Bad arguments give -1 and "". */
    snprintf(sig, sizeof(sig), "junk");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, NULL, WX_SIGN_MD5, sig), -1);
    CU_ASSERT_STRING_EQUAL(sig, "");
    snprintf(sig, sizeof(sig), "junk");
    CU_ASSERT_EQUAL(wx_sign_compute(&m, "k", (wx_sign_type)7, sig), -1);
    CU_ASSERT_STRING_EQUAL(sig, "");
    wx_msg_free(&m);
}

static void test_type_of(void)
{
    wx_msg m;
    wx_sign_type t = (wx_sign_type)99;
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_MD5, &t), 0);
    CU_ASSERT_EQUAL(t, WX_SIGN_MD5);
    CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_HMAC_SHA256, &t), 0);
    CU_ASSERT_EQUAL(t, WX_SIGN_HMAC_SHA256);
    wx_msg_set(&m, "sign_type", "");
    CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_MD5, &t), 0);
    CU_ASSERT_EQUAL(t, WX_SIGN_MD5);
    wx_msg_set(&m, "sign_type", "MD5");
    CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_HMAC_SHA256, &t), 0);
    CU_ASSERT_EQUAL(t, WX_SIGN_MD5);
    wx_msg_set(&m, "sign_type", "HMAC-SHA256");
    CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_MD5, &t), 0);
    CU_ASSERT_EQUAL(t, WX_SIGN_HMAC_SHA256);
    static const char *bad[] = { "md5", "SHA256", "HMAC-SHA1", "HMAC-SHA256 ", "RSA", "none" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wx_msg_set(&m, "sign_type", bad[i]);
        CU_ASSERT_EQUAL(wx_sign_type_of(&m, WX_SIGN_MD5, &t), -1);
    }
    wx_msg_free(&m);
}

static void test_sign_and_verify(void)
{
    wx_msg m;
    vector_msg(&m);

    CU_ASSERT_EQUAL(wx_sign_msg(&m, VECTOR_KEY, WX_SIGN_MD5, 0), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign"), VECTOR_MD5);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "sign_type"));
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 1);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, "wrongkey", WX_SIGN_MD5), 0);
    /* Without sign_type the default decides: an MD5 sign is not an HMAC one. */
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256), 0);

    /* Any change to a signed field breaks it; adding an empty field does not. */
    wx_msg_set(&m, "body", "test2");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_set(&m, "body", "test");
    wx_msg_set(&m, "attach", "");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 1);
    wx_msg_set(&m, "attach", "x");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_del(&m, "attach");

    /* Case, truncation and extension of the sign are mismatches. */
    wx_msg_set(&m, "sign", "9a0a8659f005d6984697e2ca0a9cf3b7");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_set(&m, "sign", "9A0A8659F005D6984697E2CA0A9CF3B");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_set(&m, "sign", VECTOR_MD5 "0");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_set(&m, "sign", "");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_del(&m, "sign");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, NULL, WX_SIGN_MD5), 0);

    /* HMAC with set_type: sign_type is set first and covered by the sign. */
    CU_ASSERT_EQUAL(wx_sign_msg(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, 1), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign_type"), "HMAC-SHA256");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign"),
                           "2C9DF1156522C0B2B03B4DBF3BCA5CACB602CBD5CA0F9E112458CF3E9855303B");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 1); /* type from the field */
    wx_msg_set(&m, "sign_type", "MD5");                              /* downgrade attempt */
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);
    wx_msg_set(&m, "sign_type", "SHA1");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);

    /* Re-signing MD5 with set_type corrects a stale sign_type. */
    CU_ASSERT_EQUAL(wx_sign_msg(&m, VECTOR_KEY, WX_SIGN_MD5, 1), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign_type"), "MD5");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256), 1);
    wx_msg_del(&m, "sign_type");

    /* HMAC without set_type: the published HMAC vector. */
    CU_ASSERT_EQUAL(wx_sign_msg(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, 0), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign"), VECTOR_HMAC);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "sign_type"));
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256), 1);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, VECTOR_KEY, WX_SIGN_MD5), 0);

    /* A failed signing leaves no sign behind. */
    CU_ASSERT_EQUAL(wx_sign_msg(&m, NULL, WX_SIGN_MD5, 0), -1);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "sign"));
    wx_msg_free(&m);
}

static void test_round_trip_xml(void)
{
    wx_msg m, back;
    char err[128];
    vector_msg(&m);
    wx_msg_init(&back);
    wx_msg_set(&m, "attach", "a]]>b & <c>");
    CU_ASSERT_EQUAL(wx_sign_msg(&m, VECTOR_KEY, WX_SIGN_HMAC_SHA256, 1), 0);
    char *xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL(wx_xml_parse(xml, strlen(xml), &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(wx_sign_verify(&back, VECTOR_KEY, WX_SIGN_MD5), 1);
    free(xml);
    wx_msg_free(&m);
    wx_msg_free(&back);
}

static void test_nonce(void)
{
    char a[33], b[33];
    int counts[256] = { 0 };
    CU_ASSERT_EQUAL(wx_nonce(a), 0);
    CU_ASSERT_EQUAL(wx_nonce(b), 0);
    CU_ASSERT_EQUAL(strlen(a), 32);
    CU_ASSERT_NOT_EQUAL(strcmp(a, b), 0);
    for (int round = 0; round < 200; round++) {
        CU_ASSERT_EQUAL_FATAL(wx_nonce(a), 0);
        CU_ASSERT_EQUAL(strlen(a), 32);
        for (int i = 0; i < 32; i++) {
            unsigned char c = (unsigned char)a[i];
            CU_ASSERT((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'));
            counts[c]++;
        }
    }
    /* 6400 characters over 62 symbols: each one shows up (expected ~103). */
    int distinct = 0;
    for (int c = 0; c < 256; c++)
        distinct += counts[c] > 0;
    CU_ASSERT_EQUAL(distinct, 62);
}

int main(void)
{
    static const cu_test tests[] = {
        { "WeChat's published vectors sign as published", test_vectors },
        { "fields are selected and ordered by byte", test_selection_and_order },
        { "type_of reads sign_type or the default", test_type_of },
        { "a signed message verifies and a changed one does not", test_sign_and_verify },
        { "a signature survives a round trip through XML", test_round_trip_xml },
        { "a nonce is 32 random characters", test_nonce },
    };
    return CU_SUITE_RUN("wx_sign", NULL, NULL, tests);
}
