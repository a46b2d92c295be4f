/* test_callback.c - CUnit suite of the callback module's database-free part:
 * verdicts of callback_verify on notifications built and signed with
 * wx_xml_build / wx_sign_msg, the order check, and the reply format. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "callback_verify.h"
#include "config.h"
#include "metrics.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define T_APPID "wx0000000000000000"
#define T_MCHID "1900000109"
#define T_KEY IDEMPAY_DEV_KEY

static app_config t_cfg;

static int suite_init(void)
{
    memset(&t_cfg, 0, sizeof(t_cfg));
    snprintf(t_cfg.appid, sizeof(t_cfg.appid), "%s", T_APPID);
    snprintf(t_cfg.mch_id, sizeof(t_cfg.mch_id), "%s", T_MCHID);
    snprintf(t_cfg.key, sizeof(t_cfg.key), "%s", T_KEY);
    return 0;
}

/* A notification as WeChat sends it (fields of the v2 payment result). */
static void t_notification(wx_msg *m, const char *total_fee)
{
    wx_msg_init(m);
    wx_msg_set(m, "appid", T_APPID);
    wx_msg_set(m, "bank_type", "CFT");
    wx_msg_set(m, "cash_fee", total_fee);
    wx_msg_set(m, "fee_type", "CNY");
    wx_msg_set(m, "is_subscribe", "N");
    wx_msg_set(m, "mch_id", T_MCHID);
    wx_msg_set(m, "nonce_str", "5K8264ILTKCH16CQ2502SI8ZNMTM67VS");
    wx_msg_set(m, "openid", "oUpF8uMEb4qRXf22hE3X68TekukE");
    wx_msg_set(m, "out_trade_no", "ORDER_000123");
    wx_msg_set(m, "result_code", "SUCCESS");
    wx_msg_set(m, "return_code", "SUCCESS");
    wx_msg_set(m, "time_end", "20240101120000");
    wx_msg_set(m, "total_fee", total_fee);
    wx_msg_set(m, "trade_type", "NATIVE");
    wx_msg_set(m, "transaction_id", "4200000001202401011234567890");
}

/* Signs m (MD5 unless hmac) and runs callback_verify on its XML. */
static callback_verdict t_verify_msg(wx_msg *m, int hmac, callback_notification *n)
{
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(m, T_KEY, hmac ? WX_SIGN_HMAC_SHA256 : WX_SIGN_MD5, hmac), 0);
    char *xml = wx_xml_build(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    callback_verdict v = callback_verify(&t_cfg, xml, strlen(xml), 0, n);
    free(xml);
    return v;
}

static callback_verdict t_verify_text(const char *xml, callback_notification *n)
{
    return callback_verify(&t_cfg, xml, strlen(xml), 0, n);
}

static void test_valid_md5(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    CU_ASSERT_STRING_EQUAL(n.order_no, "ORDER_000123");
    CU_ASSERT_STRING_EQUAL(n.transaction_id, "4200000001202401011234567890");
    CU_ASSERT_EQUAL(n.total_fee, 1230);
    CU_ASSERT_STRING_EQUAL(n.reason, "");
    wx_msg_free(&m);
}

static void test_valid_hmac_sha256(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 1, &n), CB_VERDICT_OK);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign_type"), "HMAC-SHA256");
    CU_ASSERT_EQUAL(n.total_fee, 1);
    wx_msg_free(&m);
}

/* sign_type is honoured: an MD5 signature under sign_type HMAC-SHA256 fails. */
static void test_sign_type_honoured(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, T_KEY, WX_SIGN_MD5, 0), 0);
    wx_msg_set(&m, "sign_type", "HMAC-SHA256"); /* the MD5 sign stays */
    char *xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    free(xml);

    wx_msg_set(&m, "sign_type", "SHA1");
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    CU_ASSERT_STRING_EQUAL(n.reason, "unsupported sign_type");
    free(xml);
    wx_msg_free(&m);
}

static void test_bad_signature(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, "another-key-0123456789abcdefABCDE", WX_SIGN_MD5, 0), 0);
    char *xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    CU_ASSERT_STRING_EQUAL(n.reason, "invalid sign");
    free(xml);
    wx_msg_free(&m);

    /* Signed correctly, then total_fee raised: the signature covers it. */
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, T_KEY, WX_SIGN_MD5, 0), 0);
    wx_msg_set(&m, "total_fee", "1");
    wx_msg_set(&m, "cash_fee", "1");
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    free(xml);
    wx_msg_free(&m);

    /* No sign at all. */
    t_notification(&m, "1230");
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    CU_ASSERT_STRING_EQUAL(n.reason, "missing sign");
    free(xml);
    wx_msg_free(&m);

    /* A lower-case copy of the right signature is not the signature. */
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, T_KEY, WX_SIGN_MD5, 0), 0);
    char lower[WX_SIGN_HEX_MAX];
    snprintf(lower, sizeof(lower), "%s", wx_msg_get(&m, "sign"));
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    wx_msg_set(&m, "sign", lower);
    xml = wx_xml_build(&m);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    free(xml);
    wx_msg_free(&m);
}

static void test_wrong_merchant(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1230");
    wx_msg_set(&m, "appid", "wx1111111111111111");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MERCHANT);
    CU_ASSERT_STRING_EQUAL(n.reason, "appid mismatch");
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "mch_id", "1900000110");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MERCHANT);
    CU_ASSERT_STRING_EQUAL(n.reason, "mch_id mismatch");
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_del(&m, "appid");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MERCHANT);
    wx_msg_free(&m);
}

static void test_result_codes(void)
{
    wx_msg m;
    callback_notification n;
    t_notification(&m, "1230");
    wx_msg_set(&m, "result_code", "FAIL");
    wx_msg_set(&m, "err_code", "NOTENOUGH");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_RESULT);
    CU_ASSERT_STRING_EQUAL(n.reason, "result_code is not SUCCESS");
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "return_code", "FAIL");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_RESULT);
    CU_ASSERT_STRING_EQUAL(n.reason, "return_code is not SUCCESS");
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_del(&m, "result_code");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_RESULT);
    wx_msg_free(&m);

    /* Case matters: "success" is not SUCCESS. */
    t_notification(&m, "1230");
    wx_msg_set(&m, "return_code", "success");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_RESULT);
    wx_msg_free(&m);
}

static void test_total_fee(void)
{
    static const char *bad[] = {
        "0", "-1", "12.30", "0100", "1e3", " 1", "abc", "99999999999", ""
    };
    wx_msg m;
    callback_notification n;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        t_notification(&m, "1230");
        wx_msg_set(&m, "total_fee", bad[i]);
        CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_AMOUNT);
        CU_ASSERT_STRING_EQUAL(n.reason, "missing or invalid total_fee");
        wx_msg_free(&m);
    }
    t_notification(&m, "1230");
    wx_msg_del(&m, "total_fee");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_AMOUNT);
    wx_msg_free(&m);

    /* total_fee is what counts, not cash_fee (coupons lower cash_fee). */
    t_notification(&m, "1230");
    wx_msg_set(&m, "cash_fee", "1000");
    wx_msg_set(&m, "coupon_fee", "230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    CU_ASSERT_EQUAL(n.total_fee, 1230);
    wx_msg_free(&m);

    /* The maximum amount. */
    t_notification(&m, "9999999999");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    CU_ASSERT_EQUAL(n.total_fee, 9999999999LL);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "fee_type", "USD");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_AMOUNT);
    wx_msg_free(&m);
}

static void test_required_fields(void)
{
    wx_msg m;
    callback_notification n;

    t_notification(&m, "1230");
    wx_msg_del(&m, "transaction_id");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_STRING_EQUAL(n.reason, "missing or invalid transaction_id");
    wx_msg_free(&m);

    /* An empty value is not signed over, and is no transaction_id either. */
    t_notification(&m, "1230");
    wx_msg_set(&m, "transaction_id", "");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "transaction_id", "420000000120240101123456789012345"); /* 33 chars */
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "transaction_id", "4200'; DROP TABLE x");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "transaction_id", "42000000012024010112345678901234"); /* 32: the max */
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_del(&m, "out_trade_no");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_STRING_EQUAL(n.reason, "missing or invalid out_trade_no");
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "out_trade_no", "abc"); /* shorter than 6 */
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_STRING_EQUAL(n.order_no, "");
    wx_msg_free(&m);
}

static void test_malformed(void)
{
    callback_notification n;
    wx_msg m;

    CU_ASSERT_EQUAL(t_verify_text("", &n), CB_VERDICT_MALFORMED);
    CU_ASSERT(n.reason[0] != '\0');
    CU_ASSERT_EQUAL(t_verify_text("not xml at all", &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_EQUAL(t_verify_text("{\"return_code\":\"SUCCESS\"}", &n), CB_VERDICT_MALFORMED);

    /* A valid signed notification, truncated anywhere before its end tag. */
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, T_KEY, WX_SIGN_MD5, 0), 0);
    char *xml = wx_xml_build(&m);
    size_t len = strlen(xml);
    CU_ASSERT_EQUAL(callback_verify(&t_cfg, xml, len, 0, &n), CB_VERDICT_OK);
    size_t cuts[] = { len - 1, len - 6, len / 2, 5 };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        CU_ASSERT_EQUAL(callback_verify(&t_cfg, xml, cuts[i], 0, &n), CB_VERDICT_MALFORMED);
        CU_ASSERT(n.reason[0] != '\0');
    }

    /* A DOCTYPE (and an entity from it) in front of a valid notification. */
    char *doc = malloc(len + 128);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    snprintf(doc, len + 128, "<!DOCTYPE xml [<!ENTITY x \"y\">]>%s", xml);
    CU_ASSERT_EQUAL(t_verify_text(doc, &n), CB_VERDICT_MALFORMED);
    snprintf(doc, len + 128,
             "<?xml version=\"1.0\"?><!DOCTYPE xml SYSTEM \"file:///etc/passwd\">%s", xml);
    CU_ASSERT_EQUAL(t_verify_text(doc, &n), CB_VERDICT_MALFORMED);
    free(doc);

    /* The same field twice (the second would otherwise win or lose). */
    char *dup = malloc(len + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dup);
    snprintf(dup, len + 64, "%.*s<total_fee>1</total_fee></xml>", (int)(len - 6), xml);
    CU_ASSERT_EQUAL(t_verify_text(dup, &n), CB_VERDICT_MALFORMED);
    free(dup);

    /* Nested elements. */
    CU_ASSERT_EQUAL(t_verify_text("<xml><a><b>1</b></a></xml>", &n), CB_VERDICT_MALFORMED);
    free(xml);
    wx_msg_free(&m);
}

/* The body limit: the adapter's too-large flag and the length itself. */
static void test_body_limit(void)
{
    callback_notification n;
    CU_ASSERT_EQUAL(callback_verify(&t_cfg, "", 0, 1, &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_STRING_EQUAL(n.reason, "body too large");

    size_t big = 70 * 1024;
    char *body = malloc(big + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    memcpy(body, "<xml><a>", 8);
    memset(body + 8, 'x', big - 8);
    memcpy(body + big - 10, "</a></xml>", 10);
    body[big] = '\0';
    CU_ASSERT_EQUAL(callback_verify(&t_cfg, body, big, 0, &n), CB_VERDICT_MALFORMED);
    CU_ASSERT_STRING_EQUAL(n.reason, "body too large");
    free(body);
}

/* Bare-text values (as real notifications mix them) verify like CDATA. */
static void test_bare_text_values(void)
{
    wx_msg m;
    callback_notification n;
    char text[2048];

    t_notification(&m, "1230");
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, T_KEY, WX_SIGN_MD5, 0), 0);
    size_t off = (size_t)snprintf(text, sizeof(text), "<xml>");
    for (size_t i = 0; i < m.n; i++)
        off += (size_t)snprintf(text + off, sizeof(text) - off, "<%s>%s</%s>", m.field[i].name,
                                m.field[i].value, m.field[i].name);
    snprintf(text + off, sizeof(text) - off, "</xml>");
    CU_ASSERT_EQUAL(t_verify_text(text, &n), CB_VERDICT_OK);
    CU_ASSERT_EQUAL(n.total_fee, 1230);
    wx_msg_free(&m);
}

static void test_check_order(void)
{
    callback_notification n;
    memset(&n, 0, sizeof(n));
    n.total_fee = 1230;
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, "12.30"), CB_VERDICT_OK);
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, "12.3"), CB_VERDICT_OK);
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, "12.31"), CB_VERDICT_AMOUNT);
    CU_ASSERT_STRING_EQUAL(n.reason, "total_fee does not match the order");
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, "1230"), CB_VERDICT_AMOUNT);
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, ""), CB_VERDICT_AMOUNT);
    CU_ASSERT_EQUAL(callback_check_order(&n, 0, NULL), CB_VERDICT_UNKNOWN_ORDER);
    CU_ASSERT_STRING_EQUAL(n.reason, "unknown order");
    n.total_fee = 1;
    CU_ASSERT_EQUAL(callback_check_order(&n, 1, "0.01"), CB_VERDICT_OK);
}

/* The sign type policy: with HMAC-SHA256 configured, an MD5 notification
 * (sign_type absent or "MD5") is refused as CB_VERDICT_SIGN_TYPE even when
 * its signature is right; HMAC-SHA256 passes. With MD5 configured both pass. */
static void test_sign_type_policy(void)
{
    wx_msg m;
    callback_notification n;

    t_cfg.sign_type = WX_SIGN_HMAC_SHA256;
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_SIGN_TYPE);
    CU_ASSERT_STRING_EQUAL(n.reason, "signed with MD5 but HMAC-SHA256 is configured");
    CU_ASSERT(strstr(n.reason, T_KEY) == NULL);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    wx_msg_set(&m, "sign_type", "MD5"); /* named MD5 is MD5 */
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_SIGN_TYPE);
    wx_msg_free(&m);

    t_notification(&m, "1230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 1, &n), CB_VERDICT_OK);
    wx_msg_free(&m);

    t_cfg.sign_type = WX_SIGN_MD5;
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    wx_msg_free(&m);
    t_notification(&m, "1230");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 1, &n), CB_VERDICT_OK);
    wx_msg_free(&m);

    CU_ASSERT_EQUAL(wx_sign_type_allowed(WX_SIGN_MD5, WX_SIGN_MD5), 1);
    CU_ASSERT_EQUAL(wx_sign_type_allowed(WX_SIGN_HMAC_SHA256, WX_SIGN_MD5), 1);
    CU_ASSERT_EQUAL(wx_sign_type_allowed(WX_SIGN_HMAC_SHA256, WX_SIGN_HMAC_SHA256), 1);
    CU_ASSERT_EQUAL(wx_sign_type_allowed(WX_SIGN_MD5, WX_SIGN_HMAC_SHA256), 0);
}

/* A signed orderquery reply of a paid order, as WeChat documents it: it has
 * every field of a notification and trade_state besides. */
static void t_orderquery_reply(wx_msg *m)
{
    t_notification(m, "1230");
    wx_msg_set(m, "return_msg", "OK");
    wx_msg_set(m, "trade_state", "SUCCESS");
    wx_msg_set(m, "trade_state_desc", "支付成功");
}

/* A notification must be a notification: each documented required field
 * missing is refused, and so is a signed orderquery reply (trade_state) or
 * any other message's fields; the verdict comes after the signature. */
static void test_notification_shape(void)
{
    static const char *const required[] = {
        "openid", "trade_type", "bank_type", "cash_fee", "time_end", "nonce_str",
    };
    wx_msg m;
    callback_notification n;

    t_orderquery_reply(&m);
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
    CU_ASSERT_STRING_EQUAL(n.reason, "not a payment notification: it carries trade_state");
    wx_msg_free(&m);

    t_orderquery_reply(&m);
    wx_msg_del(&m, "trade_state");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
    wx_msg_free(&m);

    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        char want[CALLBACK_REASON_MAX];
        t_notification(&m, "1230");
        wx_msg_del(&m, required[i]);
        CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
        snprintf(want, sizeof(want), "not a payment notification: no %s", required[i]);
        CU_ASSERT_STRING_EQUAL(n.reason, want);
        wx_msg_free(&m);
    }

    static const char *const foreign[] = { "prepay_id", "code_url",      "recall",
                                           "refund_id", "out_refund_no", "req_info" };
    for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
        t_notification(&m, "1230");
        wx_msg_set(&m, foreign[i], "x");
        CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
        wx_msg_free(&m);
    }

    t_notification(&m, "1230");
    wx_msg_set(&m, "time_end", "2024-01-01 12:00");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
    wx_msg_free(&m);
    t_notification(&m, "1230");
    wx_msg_set(&m, "time_end", "202401011200001"); /* 15 digits */
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
    wx_msg_free(&m);
    t_notification(&m, "1230");
    wx_msg_set(&m, "cash_fee", "12.30");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_NOT_NOTIFICATION);
    wx_msg_free(&m);

    /* The shape is judged after the signature: an unsigned orderquery reply
     * is a signature failure. */
    t_orderquery_reply(&m);
    CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, "x234567890123456789012345678901x", WX_SIGN_MD5, 0), 0);
    char *xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL(t_verify_text(xml, &n), CB_VERDICT_SIGNATURE);
    free(xml);
    wx_msg_free(&m);

    /* Optional fields WeChat documents (is_subscribe, attach, device_info,
     * coupon_fee, sign_type) change nothing. */
    t_notification(&m, "1230");
    wx_msg_del(&m, "is_subscribe");
    wx_msg_set(&m, "attach", "a");
    wx_msg_set(&m, "device_info", "013467007045764");
    wx_msg_set(&m, "coupon_fee", "10");
    CU_ASSERT_EQUAL(t_verify_msg(&m, 0, &n), CB_VERDICT_OK);
    wx_msg_free(&m);
}

static void test_verdict_metrics(void)
{
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_SIGN_TYPE), MET_CB_FAIL_SIGN_TYPE);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_NOT_NOTIFICATION),
                    MET_CB_FAIL_NOT_NOTIFICATION);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_OK), -1);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_MALFORMED), MET_CB_FAIL_MALFORMED);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_RESULT), MET_CB_FAIL_RESULT);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_MERCHANT), MET_CB_FAIL_MERCHANT);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_SIGNATURE), MET_CB_FAIL_SIGNATURE);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_AMOUNT), MET_CB_FAIL_AMOUNT);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_UNKNOWN_ORDER), MET_CB_FAIL_UNKNOWN_ORDER);
    CU_ASSERT_EQUAL(callback_verdict_metric(CB_VERDICT_UNAVAILABLE), MET_CB_UNAVAILABLE);
}

static void test_reply(void)
{
    http_response r;
    http_response_init(&r);
    callback_reply(&r, 1, "OK");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT(strncmp(r.content_type, "text/xml", 8) == 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.body);
    CU_ASSERT_STRING_EQUAL(r.body, "<xml><return_code><![CDATA[SUCCESS]]></return_code>"
                                   "<return_msg><![CDATA[OK]]></return_msg></xml>");
    http_response_free(&r);

    http_response_init(&r);
    callback_reply(&r, 0, "invalid sign");
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.body);
    CU_ASSERT_STRING_EQUAL(r.body, "<xml><return_code><![CDATA[FAIL]]></return_code>"
                                   "<return_msg><![CDATA[invalid sign]]></return_msg></xml>");
    /* The reply parses back as a WeChat message. */
    wx_msg m;
    char err[128];
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(wx_xml_parse(r.body, r.body_len, &m, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "return_code"), "FAIL");
    wx_msg_free(&m);
    http_response_free(&r);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a valid MD5 notification is accepted", test_valid_md5 },
        { "a valid HMAC-SHA256 notification is accepted", test_valid_hmac_sha256 },
        { "sign_type is honoured: MD5 under HMAC-SHA256 fails", test_sign_type_honoured },
        { "a bad, tampered or missing signature is refused", test_bad_signature },
        { "a wrong appid or mch_id is refused", test_wrong_merchant },
        { "return_code and result_code decide the verdict", test_result_codes },
        { "the amount is checked against total_fee, not cash_fee", test_total_fee },
        { "a notification without a required field is refused", test_required_fields },
        { "with HMAC-SHA256 configured an MD5 notification is refused", test_sign_type_policy },
        { "a notification is a notification (orderquery reply refused)", test_notification_shape },
        { "a malformed, truncated or DOCTYPE body is refused", test_malformed },
        { "a body over 64 KiB is refused", test_body_limit },
        { "bare-text values verify like CDATA", test_bare_text_values },
        { "a notification must name a known order and its amount", test_check_order },
        { "every verdict has its own metric", test_verdict_metrics },
        { "the reply to WeChat says SUCCESS or FAIL as WeChat expects", test_reply },
    };
    return CU_SUITE_RUN("callback", suite_init, NULL, tests);
}
