/* test_mock_notifier.c - CUnit suite for gateway-mock/notifier's pure parts:
 * the signed notification XML (exact field set and order, bare fees, CDATA
 * text, a signature the shared verifier accepts) and the merchant reply check. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "notifier.h"
#include "wx_sign.h"
#include "wx_xml.h"

static const mock_creds creds = { IDEMPAY_DEV_APPID, IDEMPAY_DEV_MCHID, IDEMPAY_DEV_KEY,
                                  WX_SIGN_MD5 };

static void sample(notifier_charge *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->transaction_id, sizeof(c->transaction_id), "4200202403011234567890123456");
    snprintf(c->out_trade_no, sizeof(c->out_trade_no), "ORDER_0001");
    c->total_fee = 1230;
    snprintf(c->trade_type, sizeof(c->trade_type), "NATIVE");
    snprintf(c->openid, sizeof(c->openid), "oUpF8uMEb4qRXf22hE3X68TekukE");
    snprintf(c->time_end, sizeof(c->time_end), "20240301073000");
    snprintf(c->notify_url, sizeof(c->notify_url), "http://127.0.0.1:1/notify");
}

static void test_fields_exact(void)
{
    static const char *const names[] = {
        "appid",     "bank_type", "cash_fee",     "fee_type",       "is_subscribe", "mch_id",
        "nonce_str", "openid",    "out_trade_no", "result_code",    "return_code",  "sign",
        "time_end",  "total_fee", "trade_type",   "transaction_id",
    };
    notifier_charge c;
    wx_msg m;
    char err[128];
    sample(&c);
    char *xml = notifier_build_xml(&c, &creds, "0123456789abcdef0123456789ABCDEF");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 16);
    for (size_t i = 0; i < 16 && i < m.n; i++)
        CU_ASSERT_STRING_EQUAL(m.field[i].name, names[i]);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "total_fee"), "1230");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "cash_fee"), "1230");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "transaction_id"), c.transaction_id);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "out_trade_no"), "ORDER_0001");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "appid"), creds.appid);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "mch_id"), creds.mch_id);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "return_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "result_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "time_end"), "20240301073000");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "trade_type"), "NATIVE");
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "sign_type"));
    /* MD5 signature by the shared verifier; a wrong key or a change fails. */
    CU_ASSERT_EQUAL(strlen(wx_msg_get(&m, "sign")), 32);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, creds.key, WX_SIGN_MD5), 1);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, "another-key-another-key-another-", WX_SIGN_MD5), 0);
    wx_msg_set(&m, "total_fee", "1");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, creds.key, WX_SIGN_MD5), 0);
    wx_msg_free(&m);
    free(xml);
}

/* With IDEMPAY_WX_SIGN_TYPE=HMAC-SHA256 the notification names sign_type
 * and carries a 64-digit HMAC-SHA256 signature (the service configured so
 * refuses MD5). */
static void test_hmac_sha256(void)
{
    mock_creds hc = creds;
    notifier_charge c;
    wx_msg m;
    char err[128];
    hc.sign_type = WX_SIGN_HMAC_SHA256;
    sample(&c);
    char *xml = notifier_build_xml(&c, &hc, "nonce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &m, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign_type"), "HMAC-SHA256");
    CU_ASSERT_EQUAL(strlen(wx_msg_get(&m, "sign")), 64);
    CU_ASSERT_EQUAL(wx_sign_verify(&m, creds.key, WX_SIGN_MD5), 1);
    wx_msg_free(&m);
    free(xml);
}

static void test_bare_fees_and_cdata(void)
{
    notifier_charge c;
    sample(&c);
    char *xml = notifier_build_xml(&c, &creds, "nonce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<total_fee>1230</total_fee>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<cash_fee>1230</cash_fee>"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(xml, "<openid><![CDATA[oUpF8uMEb4qRXf22hE3X68TekukE]]></openid>"));
    CU_ASSERT_NSTRING_EQUAL(xml, "<xml><appid><![CDATA[wx0000000000000000]]></appid>", 50);
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "</transaction_id></xml>"));
    CU_ASSERT_PTR_NULL(strstr(xml, "notify_url"));
    free(xml);
}

static void test_cdata_split(void)
{
    /* A value holding "]]>" still parses back to itself. */
    notifier_charge c;
    wx_msg m;
    char err[128];
    sample(&c);
    snprintf(c.openid, sizeof(c.openid), "a]]>b");
    char *xml = notifier_build_xml(&c, &creds, "nonce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &m, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "openid"), "a]]>b");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, creds.key, WX_SIGN_MD5), 1);
    wx_msg_free(&m);
    free(xml);
}

static void test_reply_ok(void)
{
    char *ok = wx_xml_notify_reply(1, "OK");
    char *fail = wx_xml_notify_reply(0, "busy");
    CU_ASSERT_TRUE(notifier_reply_ok(ok, strlen(ok)));
    CU_ASSERT_FALSE(notifier_reply_ok(fail, strlen(fail)));
    free(ok);
    free(fail);
    static const char bare[] = "<xml><return_code>SUCCESS</return_code></xml>";
    CU_ASSERT_TRUE(notifier_reply_ok(bare, strlen(bare)));
    static const char *const bad[] = {
        "SUCCESS",
        "",
        "<xml><return_code>SUCCESS</return_code>",
        "<xml><return_code>success</return_code></xml>",
        "<xml><return_msg>OK</return_msg></xml>",
        "{\"return_code\":\"SUCCESS\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CU_ASSERT_FALSE(notifier_reply_ok(bad[i], strlen(bad[i])));
    CU_ASSERT_FALSE(notifier_reply_ok(NULL, 0));
}

int main(void)
{
    static const cu_test tests[] = {
        { "notification has exactly WeChat's 16 fields, signed", test_fields_exact },
        { "notifications are signed HMAC-SHA256 when configured", test_hmac_sha256 },
        { "fees are bare and text is in CDATA", test_bare_fees_and_cdata },
        { "a value holding ]]> survives CDATA", test_cdata_split },
        { "only a merchant reply of SUCCESS counts as acknowledged", test_reply_ok },
    };
    return CU_SUITE_RUN("mock_notifier", NULL, NULL, tests);
}
