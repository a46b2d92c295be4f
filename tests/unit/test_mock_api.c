/* test_mock_api.c - CUnit suite for gateway-mock/api's pure parts: a signed
 * request built with the shared wx_xml/wx_sign round-trips through
 * api_validate; every refusal maps to WeChat's answer; replies are signed
 * and verify with the shared verifier (MD5 and HMAC-SHA256). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "api.h"

static const mock_creds creds = { IDEMPAY_DEV_APPID, IDEMPAY_DEV_MCHID, IDEMPAY_DEV_KEY,
                                  WX_SIGN_MD5 };

/* A complete unifiedorder request. */
static void order_request(wx_msg *m)
{
    wx_msg_init(m);
    wx_msg_set(m, "appid", creds.appid);
    wx_msg_set(m, "mch_id", creds.mch_id);
    wx_msg_set(m, "nonce_str", "5K8264ILTKCH16CQ2502SI8ZNMTM67VS");
    wx_msg_set(m, "body", "idempay order");
    wx_msg_set(m, "out_trade_no", "ORD-20240301-0001");
    wx_msg_set(m, "total_fee", "1230");
    wx_msg_set(m, "spbill_create_ip", "127.0.0.1");
    wx_msg_set(m, "notify_url", "http://127.0.0.1:18080/api/pay/callback/wechat");
    wx_msg_set(m, "trade_type", "NATIVE");
}

/* Signs m, serialises it and runs api_validate on the XML. */
static int validate(api_endpoint ep, wx_msg *m, wx_sign_type type, const char *key, api_verdict *v)
{
    wx_msg parsed;
    CU_ASSERT_EQUAL(wx_sign_msg(m, key, type, type == WX_SIGN_HMAC_SHA256), 0);
    char *xml = wx_xml_build(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(&parsed);
    int rc = api_validate(ep, xml, strlen(xml), &creds, &parsed, v);
    wx_msg_free(&parsed);
    free(xml);
    return rc;
}

/* A complete micropay request (mock-flows). */
static void micropay_request(wx_msg *m)
{
    order_request(m);
    wx_msg_del(m, "notify_url");
    wx_msg_del(m, "trade_type");
    wx_msg_set(m, "auth_code", "134567890123456789");
}

static void test_endpoint_of(void)
{
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/unifiedorder"), API_UNIFIEDORDER);
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/orderquery"), API_ORDERQUERY);
    CU_ASSERT_EQUAL(api_endpoint_of("/secapi/pay/refund"), API_REFUND);
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/closeorder"), API_CLOSEORDER);
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/downloadbill"), API_DOWNLOADBILL);
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/refundquery"), API_REFUNDQUERY);
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_REFUNDQUERY), "refundquery");
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/micropay"), API_MICROPAY);
    CU_ASSERT_EQUAL(api_endpoint_of("/secapi/pay/reverse"), API_REVERSE);
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_MICROPAY), "micropay");
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_REVERSE), "reverse");
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/closeorder/"), API_NONE);
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_CLOSEORDER), "closeorder");
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_DOWNLOADBILL), "downloadbill");
    CU_ASSERT_STRING_EQUAL(api_endpoint_name(API_UNIFIEDORDER), "unifiedorder");
    CU_ASSERT_EQUAL(api_endpoint_of("/pay/unifiedorder/"), API_NONE);
    CU_ASSERT_EQUAL(api_endpoint_of("/"), API_NONE);
}

static void test_round_trip_md5(void)
{
    wx_msg m, parsed;
    api_verdict v;
    char err[128];
    order_request(&m);
    CU_ASSERT_EQUAL(wx_sign_msg(&m, creds.key, WX_SIGN_MD5, 0), 0);
    char *xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    /* The shared parser and verifier accept what the shared builder made. */
    wx_msg_init(&parsed);
    CU_ASSERT_EQUAL(wx_xml_parse(xml, strlen(xml), &parsed, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(wx_sign_verify(&parsed, creds.key, WX_SIGN_MD5), 1);
    CU_ASSERT_EQUAL(api_validate(API_UNIFIEDORDER, xml, strlen(xml), &creds, &parsed, &v), 0);
    CU_ASSERT_PTR_NULL(v.fail_msg);
    CU_ASSERT_PTR_NULL(v.err_code);
    CU_ASSERT_EQUAL(v.total_fee, 1230);
    CU_ASSERT_EQUAL(v.sign_type, WX_SIGN_MD5);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&parsed, "out_trade_no"), "ORD-20240301-0001");
    wx_msg_free(&parsed);
    wx_msg_free(&m);
    free(xml);
}

static void test_round_trip_hmac(void)
{
    wx_msg m;
    api_verdict v;
    order_request(&m);
    CU_ASSERT_EQUAL(validate(API_UNIFIEDORDER, &m, WX_SIGN_HMAC_SHA256, creds.key, &v), 0);
    CU_ASSERT_EQUAL(v.sign_type, WX_SIGN_HMAC_SHA256);
    wx_msg_free(&m);
}

static void test_bad_signature(void)
{
    wx_msg m;
    api_verdict v;
    order_request(&m);
    CU_ASSERT_EQUAL(validate(API_UNIFIEDORDER, &m, WX_SIGN_MD5, "wrong-key-wrong-key-wrong-key-00",
                             &v),
                    -1);
    CU_ASSERT_PTR_NOT_NULL(v.fail_msg);
    CU_ASSERT_STRING_EQUAL(v.fail_msg, "签名错误");
    wx_msg_free(&m);

    /* Tampered after signing. */
    wx_msg parsed;
    order_request(&m);
    wx_sign_msg(&m, creds.key, WX_SIGN_MD5, 0);
    wx_msg_set(&m, "total_fee", "1");
    char *xml = wx_xml_build(&m);
    wx_msg_init(&parsed);
    CU_ASSERT_EQUAL(api_validate(API_UNIFIEDORDER, xml, strlen(xml), &creds, &parsed, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.fail_msg, "签名错误");
    free(xml);
    wx_msg_free(&m);

    /* No sign at all. */
    order_request(&m);
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(api_validate(API_UNIFIEDORDER, xml, strlen(xml), &creds, &parsed, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.fail_msg, "签名错误");
    free(xml);
    wx_msg_free(&m);

    /* An unknown sign_type. */
    order_request(&m);
    wx_msg_set(&m, "sign_type", "SHA1");
    wx_sign_msg(&m, creds.key, WX_SIGN_MD5, 0);
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(api_validate(API_UNIFIEDORDER, xml, strlen(xml), &creds, &parsed, &v), -1);
    CU_ASSERT_PTR_NOT_NULL(v.fail_msg);
    CU_ASSERT_EQUAL(v.sign_type, WX_SIGN_MD5);
    free(xml);
    wx_msg_free(&m);
    wx_msg_free(&parsed);
}

static void test_bad_xml(void)
{
    static const char *const bad[] = {
        "",
        "not xml",
        "<xml><a>1</a>",
        "<xml><a><b>1</b></a></xml>",
        "<!DOCTYPE x [<!ENTITY e \"x\">]><xml><a>&e;</a></xml>",
    };
    wx_msg parsed;
    api_verdict v;
    wx_msg_init(&parsed);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(api_validate(API_ORDERQUERY, bad[i], strlen(bad[i]), &creds, &parsed, &v),
                        -1);
        CU_ASSERT_PTR_NOT_NULL(v.fail_msg);
        CU_ASSERT_PTR_NULL(v.err_code);
    }
    wx_msg_free(&parsed);
}

static void test_lack_params(void)
{
    static const char *const required[] = {
        "appid",     "mch_id",           "nonce_str",  "body",       "out_trade_no",
        "total_fee", "spbill_create_ip", "notify_url", "trade_type",
    };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        wx_msg m;
        api_verdict v;
        order_request(&m);
        wx_msg_del(&m, required[i]);
        CU_ASSERT_EQUAL(validate(API_UNIFIEDORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
        CU_ASSERT_PTR_NULL(v.fail_msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v.err_code);
        CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
        CU_ASSERT_PTR_NOT_NULL(strstr(v.err_des, required[i]));
        wx_msg_free(&m);
    }
}

static void test_param_errors(void)
{
    static const struct {
        const char *field, *value, *code;
    } cases[] = {
        { "total_fee", "0", "PARAM_ERROR" },
        { "total_fee", "-1", "PARAM_ERROR" },
        { "total_fee", "12.30", "PARAM_ERROR" },
        { "total_fee", "012", "PARAM_ERROR" },
        { "total_fee", "1e3", "PARAM_ERROR" },
        { "total_fee", "10000000000", "PARAM_ERROR" },
        { "out_trade_no", "abc", "PARAM_ERROR" },
        { "out_trade_no", "123456789012345678901234567890123", "PARAM_ERROR" },
        { "out_trade_no", "order 0001", "PARAM_ERROR" },
        { "out_trade_no", "订单订单订单", "PARAM_ERROR" },
        { "trade_type", "CASH", "PARAM_ERROR" },
        { "notify_url", "ftp://x/y", "PARAM_ERROR" },
        { "notify_url", "http://a b/", "PARAM_ERROR" },
        { "appid", "wx1111111111111111", "APPID_MCHID_NOT_MATCH" },
        { "mch_id", "1900000999", "APPID_MCHID_NOT_MATCH" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wx_msg m;
        api_verdict v;
        order_request(&m);
        wx_msg_set(&m, cases[i].field, cases[i].value);
        CU_ASSERT_EQUAL(validate(API_UNIFIEDORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v.err_code);
        CU_ASSERT_STRING_EQUAL(v.err_code, cases[i].code);
        wx_msg_free(&m);
    }
    /* The boundaries that are fine. */
    static const struct {
        const char *field, *value;
    } good[] = {
        { "total_fee", "1" },         { "total_fee", "9999999999" },
        { "out_trade_no", "a-_|*9" }, { "out_trade_no", "12345678901234567890123456789012" },
        { "trade_type", "JSAPI" },    { "notify_url", "https://merchant.example/notify?x=1" },
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        wx_msg m;
        api_verdict v;
        order_request(&m);
        wx_msg_set(&m, good[i].field, good[i].value);
        CU_ASSERT_EQUAL(validate(API_UNIFIEDORDER, &m, WX_SIGN_MD5, creds.key, &v), 0);
        wx_msg_free(&m);
    }
}

static void test_query_and_refund_rules(void)
{
    wx_msg m;
    api_verdict v;
    wx_msg_init(&m);
    wx_msg_set(&m, "appid", creds.appid);
    wx_msg_set(&m, "mch_id", creds.mch_id);
    wx_msg_set(&m, "nonce_str", "n1");
    CU_ASSERT_EQUAL(validate(API_ORDERQUERY, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    wx_msg_set(&m, "transaction_id", "4200000000000000000000000000");
    CU_ASSERT_EQUAL(validate(API_ORDERQUERY, &m, WX_SIGN_MD5, creds.key, &v), 0);

    /* Refund: out_refund_no, total_fee, refund_fee, and the charge. */
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    wx_msg_set(&m, "out_refund_no", "R-1@x");
    wx_msg_set(&m, "total_fee", "100");
    wx_msg_set(&m, "refund_fee", "100");
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), 0);
    CU_ASSERT_EQUAL(v.total_fee, 100);
    CU_ASSERT_EQUAL(v.refund_fee, 100);
    wx_msg_set(&m, "refund_fee", "101");
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "INVALID_REQUEST");
    wx_msg_set(&m, "refund_fee", "50");
    wx_msg_set(&m, "out_refund_no", "R 1");
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "PARAM_ERROR");
    /* The refund's notify_url, when given, is a URL. */
    wx_msg_set(&m, "out_refund_no", "R-1");
    wx_msg_set(&m, "notify_url", "ftp://x");
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "PARAM_ERROR");
    wx_msg_set(&m, "notify_url", "https://merchant.example/refund");
    CU_ASSERT_EQUAL(validate(API_REFUND, &m, WX_SIGN_MD5, creds.key, &v), 0);
    wx_msg_free(&m);

    /* refundquery: one of four keys; out_refund_no's rule. */
    wx_msg_init(&m);
    wx_msg_set(&m, "appid", creds.appid);
    wx_msg_set(&m, "mch_id", creds.mch_id);
    wx_msg_set(&m, "nonce_str", "n1");
    CU_ASSERT_EQUAL(validate(API_REFUNDQUERY, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    wx_msg_set(&m, "refund_id", "5030202612020000000000000001");
    CU_ASSERT_EQUAL(validate(API_REFUNDQUERY, &m, WX_SIGN_MD5, creds.key, &v), 0);
    wx_msg_set(&m, "out_refund_no", "R 1");
    CU_ASSERT_EQUAL(validate(API_REFUNDQUERY, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "PARAM_ERROR");
    wx_msg_free(&m);
}

/* appid, mch_id, nonce_str: what every request carries. */
static void base_request(wx_msg *m)
{
    wx_msg_init(m);
    wx_msg_set(m, "appid", creds.appid);
    wx_msg_set(m, "mch_id", creds.mch_id);
    wx_msg_set(m, "nonce_str", "n1");
}

static void test_closeorder_rules(void)
{
    wx_msg m;
    api_verdict v;
    base_request(&m);
    /* out_trade_no is required; a transaction_id does not replace it. */
    wx_msg_set(&m, "transaction_id", "4200000000000000000000000000");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    CU_ASSERT_PTR_NOT_NULL(strstr(v.err_des, "out_trade_no"));
    wx_msg_set(&m, "out_trade_no", "abc");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "PARAM_ERROR");
    wx_msg_set(&m, "out_trade_no", "ORD-20240301-0001");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, creds.key, &v), 0);
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_HMAC_SHA256, creds.key, &v), 0);
    CU_ASSERT_EQUAL(v.sign_type, WX_SIGN_HMAC_SHA256);
    wx_msg_del(&m, "sign_type");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, "wrong-key-wrong-key-wrong-key-00",
                             &v),
                    -1);
    CU_ASSERT_STRING_EQUAL(v.fail_msg, "签名错误");
    wx_msg_del(&m, "nonce_str");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    wx_msg_set(&m, "nonce_str", "n1");
    wx_msg_set(&m, "mch_id", "1900000999");
    CU_ASSERT_EQUAL(validate(API_CLOSEORDER, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "APPID_MCHID_NOT_MATCH");
    wx_msg_free(&m);
}

static void test_micropay_and_reverse_rules(void)
{
    static const char *const required[] = {
        "body", "out_trade_no", "total_fee", "spbill_create_ip", "auth_code",
    };
    static const char *const bad_codes[] = {
        "164567890123456789",
        "094567890123456789",
        "13456789012345678",
        "13456789012345678x",
    };
    wx_msg m;
    api_verdict v;
    micropay_request(&m);
    CU_ASSERT_EQUAL(validate(API_MICROPAY, &m, WX_SIGN_MD5, creds.key, &v), 0);
    CU_ASSERT_EQUAL(v.total_fee, 1230);
    wx_msg_free(&m);
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        micropay_request(&m);
        wx_msg_del(&m, required[i]);
        CU_ASSERT_EQUAL(validate(API_MICROPAY, &m, WX_SIGN_MD5, creds.key, &v), -1);
        CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
        wx_msg_free(&m);
    }
    for (size_t i = 0; i < sizeof(bad_codes) / sizeof(bad_codes[0]); i++) {
        micropay_request(&m);
        wx_msg_set(&m, "auth_code", bad_codes[i]);
        CU_ASSERT_EQUAL(validate(API_MICROPAY, &m, WX_SIGN_MD5, creds.key, &v), -1);
        CU_ASSERT_STRING_EQUAL(v.err_code, "AUTH_CODE_INVALID");
        wx_msg_free(&m);
    }
    base_request(&m); /* reverse: out_trade_no or transaction_id */
    CU_ASSERT_EQUAL(validate(API_REVERSE, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "LACK_PARAMS");
    wx_msg_set(&m, "transaction_id", "4200000000000000000000000000");
    CU_ASSERT_EQUAL(validate(API_REVERSE, &m, WX_SIGN_MD5, creds.key, &v), 0);
    wx_msg_del(&m, "transaction_id");
    wx_msg_set(&m, "out_trade_no", "ORD-20240301-0001");
    CU_ASSERT_EQUAL(validate(API_REVERSE, &m, WX_SIGN_MD5, creds.key, &v), 0);
    wx_msg_free(&m);
}

/* A downloadbill request with the given fields (NULL: absent); returns
 * api_validate's result, the verdict in *v. */
static int bill_request(const char *date, const char *type, const char *begin, const char *end,
                        api_verdict *v)
{
    wx_msg m;
    base_request(&m);
    if (date != NULL)
        wx_msg_set(&m, "bill_date", date);
    if (type != NULL)
        wx_msg_set(&m, "bill_type", type);
    if (begin != NULL)
        wx_msg_set(&m, "begin_time", begin);
    if (end != NULL)
        wx_msg_set(&m, "end_time", end);
    int rc = validate(API_DOWNLOADBILL, &m, WX_SIGN_MD5, creds.key, v);
    wx_msg_free(&m);
    return rc;
}

static void test_downloadbill_rules(void)
{
    api_verdict v;
    /* 2024-03-01 China time is [2024-02-29 16:00, 2024-03-01 16:00) UTC. */
    CU_ASSERT_EQUAL(bill_request("20240301", NULL, NULL, NULL, &v), 0);
    CU_ASSERT_EQUAL(v.bill.from, 1709222400);
    CU_ASSERT_EQUAL(v.bill.to, 1709222400 + 86400);
    CU_ASSERT_EQUAL(v.bill.type, BILL_ALL);
    CU_ASSERT_EQUAL(bill_request("20240301", "SUCCESS", NULL, NULL, &v), 0);
    CU_ASSERT_EQUAL(v.bill.type, BILL_SUCCESS);
    CU_ASSERT_EQUAL(bill_request("20240301", "REFUND", NULL, NULL, &v), 0);
    CU_ASSERT_EQUAL(v.bill.type, BILL_REFUND);
    CU_ASSERT_EQUAL(bill_request("20240301", "ALL", NULL, NULL, &v), 0);
    CU_ASSERT_EQUAL(v.bill.type, BILL_ALL);
    /* The range replaces the day; bill_date may then be absent. */
    CU_ASSERT_EQUAL(bill_request(NULL, NULL, "20240301080000", "20240301080001", &v), 0);
    CU_ASSERT_EQUAL(v.bill.from, 1709251200);
    CU_ASSERT_EQUAL(v.bill.to, 1709251201);
    CU_ASSERT_EQUAL(bill_request("20240101", NULL, "20240301080000", "20240302080000", &v), 0);
    CU_ASSERT_EQUAL(v.bill.from, 1709251200);

    static const struct {
        const char *date, *type, *begin, *end, *code;
    } bad[] = {
        { NULL, NULL, NULL, NULL, "LACK_PARAMS" },
        { "2024031", NULL, NULL, NULL, "PARAM_ERROR" },
        { "20240230", NULL, NULL, NULL, "PARAM_ERROR" },
        { "2024-03-", NULL, NULL, NULL, "PARAM_ERROR" },
        { "20241301", NULL, NULL, NULL, "PARAM_ERROR" },
        { "19691231", NULL, NULL, NULL, "PARAM_ERROR" },
        { "20240301", "RECHARGE_REFUND", NULL, NULL, "PARAM_ERROR" },
        { "20240301", "all", NULL, NULL, "PARAM_ERROR" },
        { NULL, NULL, "20240301080000", NULL, "PARAM_ERROR" },
        { "20240301", NULL, NULL, "20240301080000", "PARAM_ERROR" },
        { NULL, NULL, "20240301080000", "20240301080000", "PARAM_ERROR" },
        { NULL, NULL, "20240301090000", "20240301080000", "PARAM_ERROR" },
        { NULL, NULL, "20240301246000", "20240302000000", "PARAM_ERROR" },
        { NULL, NULL, "2024030108000", "20240302000000", "PARAM_ERROR" },
        { "2024030x", NULL, "20240301080000", "20240302000000", "PARAM_ERROR" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(bill_request(bad[i].date, bad[i].type, bad[i].begin, bad[i].end, &v), -1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v.err_code);
        CU_ASSERT_STRING_EQUAL(v.err_code, bad[i].code);
        CU_ASSERT_NOT_EQUAL(v.err_des[0], '\0');
    }
    /* tar_type: GZIP (WeChat's one value) or absent. */
    wx_msg m;
    base_request(&m);
    wx_msg_set(&m, "bill_date", "20240301");
    wx_msg_set(&m, "tar_type", "GZIP");
    CU_ASSERT_EQUAL(validate(API_DOWNLOADBILL, &m, WX_SIGN_MD5, creds.key, &v), 0);
    CU_ASSERT_TRUE(v.bill.gzip);
    wx_msg_free(&m);
    base_request(&m);
    wx_msg_set(&m, "bill_date", "20240301");
    wx_msg_set(&m, "tar_type", "ZIP");
    CU_ASSERT_EQUAL(validate(API_DOWNLOADBILL, &m, WX_SIGN_MD5, creds.key, &v), -1);
    CU_ASSERT_STRING_EQUAL(v.err_code, "PARAM_ERROR");
    wx_msg_free(&m);
}

/* Parses a reply and checks it is signed for creds. */
static void parse_reply(const char *xml, wx_msg *out)
{
    char err[128];
    wx_msg_init(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), out, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(wx_sign_verify(out, creds.key, WX_SIGN_MD5), 1);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(out, "appid"), creds.appid);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(out, "mch_id"), creds.mch_id);
    CU_ASSERT_EQUAL(strlen(wx_msg_get(out, "nonce_str")), 32);
}

static void test_reply_success(void)
{
    wx_msg extra, r;
    wx_msg_init(&extra);
    wx_msg_set(&extra, "trade_type", "NATIVE");
    wx_msg_set(&extra, "prepay_id", "wx20240301073000aaaaaaaaaabbbbbbbbbb");
    wx_msg_set(&extra, "transaction_id", "4200202403011234567890123456");
    wx_msg_set_int(&extra, "total_fee", 1230);
    wx_msg_set(&extra, "out_trade_no", "ORD-20240301-0001");
    char *xml = api_build_reply(&creds, WX_SIGN_MD5, NULL, NULL, NULL, &extra);
    parse_reply(xml, &r);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "result_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "transaction_id"), "4200202403011234567890123456");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "total_fee"), "1230");
    CU_ASSERT_PTR_NULL(wx_msg_get(&r, "err_code"));
    CU_ASSERT_PTR_NULL(wx_msg_get(&r, "sign_type"));
    wx_msg_free(&r);
    free(xml);

    /* HMAC-SHA256: the reply says so and verifies under it. */
    xml = api_build_reply(&creds, WX_SIGN_HMAC_SHA256, NULL, NULL, NULL, &extra);
    wx_msg_init(&r);
    char err[128];
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &r, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "sign_type"), "HMAC-SHA256");
    CU_ASSERT_EQUAL(strlen(wx_msg_get(&r, "sign")), 64);
    CU_ASSERT_EQUAL(wx_sign_verify(&r, creds.key, WX_SIGN_MD5), 1);
    wx_msg_free(&r);
    free(xml);
    wx_msg_free(&extra);
}

static void test_reply_failures(void)
{
    wx_msg r;
    char *xml = api_build_reply(&creds, WX_SIGN_MD5, NULL, "ORDERPAID", "该订单已支付", NULL);
    parse_reply(xml, &r);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "result_code"), "FAIL");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "err_code"), "ORDERPAID");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "err_code_des"), "该订单已支付");
    CU_ASSERT_PTR_NULL(wx_msg_get(&r, "transaction_id"));
    wx_msg_free(&r);
    free(xml);

    xml = api_build_reply(&creds, WX_SIGN_MD5, NULL, "ORDERCLOSED", "订单已关闭", NULL);
    parse_reply(xml, &r);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "result_code"), "FAIL");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "err_code"), "ORDERCLOSED");
    wx_msg_free(&r);
    free(xml);

    /* An empty statement, as WeChat answers it (signed like every FAIL). */
    xml = api_build_reply(&creds, WX_SIGN_MD5, "No Bill Exist", NULL, NULL, NULL);
    parse_reply(xml, &r);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_code"), "FAIL");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_msg"), "No Bill Exist");
    wx_msg_free(&r);
    free(xml);

    xml = api_build_reply(&creds, WX_SIGN_MD5, "签名错误", NULL, NULL, NULL);
    parse_reply(xml, &r);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_code"), "FAIL");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&r, "return_msg"), "签名错误");
    CU_ASSERT_PTR_NULL(wx_msg_get(&r, "result_code"));
    wx_msg_free(&r);
    free(xml);
}

int main(void)
{
    static const cu_test tests[] = {
        { "each path routes to its endpoint", test_endpoint_of },
        { "an MD5-signed request gets a signed answer", test_round_trip_md5 },
        { "an HMAC-SHA256-signed request gets a signed answer", test_round_trip_hmac },
        { "a bad signature is answered return_code FAIL", test_bad_signature },
        { "bad XML is answered return_code FAIL", test_bad_xml },
        { "each missing required field is answered LACK_PARAMS", test_lack_params },
        { "a broken field rule is answered PARAM_ERROR or APPID_MCHID_NOT_MATCH",
          test_param_errors },
        { "orderquery and refund enforce their field rules", test_query_and_refund_rules },
        { "closeorder enforces its field rules", test_closeorder_rules },
        { "micropay and reverse enforce their field rules", test_micropay_and_reverse_rules },
        { "downloadbill enforces its day, range and type rules", test_downloadbill_rules },
        { "a success reply is signed, MD5 or HMAC", test_reply_success },
        { "failure replies are signed too", test_reply_failures },
    };
    return CU_SUITE_RUN("mock_api", NULL, NULL, tests);
}
