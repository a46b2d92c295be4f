/* test_refund_state.c - CUnit suite of the refund state machine, the amount
 * rule, the merchant refund number, the refundquery reply and the refund
 * notification's verification (all database-free). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "config.h"
#include "config_refund.h"
#include "gateway_refund.h"
#include "refund_api.h"
#include "refund_notify.h"
#include "refund_state.h"
#include "wx_refund_info.h"
#include "wx_xml.h"

static void test_submit(void)
{
    refund_step s = refund_state_on_submit(REFUND_PENDING, 1, NULL);
    CU_ASSERT_EQUAL(s.next, REFUND_ACCEPTED);
    CU_ASSERT_EQUAL(s.action, REFUND_ACT_MOVE);
    /* Accepted is not done: never SUCCESS from a submission. */
    CU_ASSERT_NOT_EQUAL(s.next, REFUND_SUCCESS);

    const char *retry[] = { NULL,
                            "",
                            "NOTENOUGH",
                            "SYSTEMERROR",
                            "BIZERR_NEED_RETRY",
                            "FREQUENCY_LIMITED",
                            "INVALID_REQ_TOO_MUCH" };
    for (size_t i = 0; i < sizeof(retry) / sizeof(retry[0]); i++) {
        s = refund_state_on_submit(REFUND_PENDING, 0, retry[i]);
        CU_ASSERT_EQUAL(s.next, REFUND_PENDING);
        CU_ASSERT_EQUAL(s.action, REFUND_ACT_RETRY);
    }
    const char *hopeless[] = { "USER_ACCOUNT_ABNORMAL", "INVALID_TRANSACTIONID",
                               "TRADE_OVERDUE",         "ERROR",
                               "PARAM_ERROR",           "SOMETHING_NEW" };
    for (size_t i = 0; i < sizeof(hopeless) / sizeof(hopeless[0]); i++) {
        s = refund_state_on_submit(REFUND_PENDING, 0, hopeless[i]);
        CU_ASSERT_EQUAL(s.next, REFUND_ABNORMAL);
        CU_ASSERT_EQUAL(s.action, REFUND_ACT_STUCK);
    }
    /* Only a PENDING row is submitted. */
    for (int st = REFUND_SUCCESS; st <= REFUND_ABNORMAL; st++) {
        s = refund_state_on_submit((refund_status)st, 1, NULL);
        CU_ASSERT_EQUAL(s.action, REFUND_ACT_NONE);
        CU_ASSERT_EQUAL(s.next, (refund_status)st);
    }
}

static void test_result(void)
{
    refund_step s = refund_state_on_result(REFUND_ACCEPTED, "SUCCESS");
    CU_ASSERT(s.next == REFUND_SUCCESS && s.action == REFUND_ACT_MOVE);
    s = refund_state_on_result(REFUND_PENDING, "SUCCESS"); /* the notification can come first */
    CU_ASSERT(s.next == REFUND_SUCCESS && s.action == REFUND_ACT_MOVE);
    s = refund_state_on_result(REFUND_ACCEPTED, "REFUNDCLOSE");
    CU_ASSERT(s.next == REFUND_CLOSED && s.action == REFUND_ACT_STUCK);
    s = refund_state_on_result(REFUND_ACCEPTED, "CHANGE");
    CU_ASSERT(s.next == REFUND_CHANGE && s.action == REFUND_ACT_STUCK);
    s = refund_state_on_result(REFUND_ACCEPTED, "PROCESSING");
    CU_ASSERT(s.next == REFUND_ACCEPTED && s.action == REFUND_ACT_POLL);
    s = refund_state_on_result(REFUND_ACCEPTED, NULL);
    CU_ASSERT(s.next == REFUND_ACCEPTED && s.action == REFUND_ACT_POLL);
    s = refund_state_on_result(REFUND_ACCEPTED, "REFUNDNOTEXIST");
    CU_ASSERT(s.next == REFUND_PENDING && s.action == REFUND_ACT_MOVE);
    s = refund_state_on_result(REFUND_PENDING, "PROCESSING");
    CU_ASSERT(s.next == REFUND_PENDING && s.action == REFUND_ACT_RETRY);
    /* Final states stay: a late SUCCESS never revives a closed refund, a
     * late REFUNDCLOSE never undoes a SUCCESS. */
    for (int st = REFUND_SUCCESS; st <= REFUND_ABNORMAL; st++) {
        if (st == REFUND_ACCEPTED)
            continue;
        const char *texts[] = { "SUCCESS", "REFUNDCLOSE", "CHANGE", "PROCESSING", NULL };
        for (size_t i = 0; i < 5; i++) {
            s = refund_state_on_result((refund_status)st, texts[i]);
            CU_ASSERT_EQUAL(s.action, REFUND_ACT_NONE);
            CU_ASSERT_EQUAL(s.next, (refund_status)st);
        }
        CU_ASSERT(refund_state_final((refund_status)st));
    }
    CU_ASSERT(!refund_state_final(REFUND_PENDING) && !refund_state_final(REFUND_ACCEPTED));
    CU_ASSERT(refund_state_stuck(REFUND_CLOSED) && !refund_state_stuck(REFUND_SUCCESS));
    CU_ASSERT_STRING_EQUAL(refund_state_name(REFUND_ACCEPTED), "PROCESSING");
    CU_ASSERT_STRING_EQUAL(refund_state_name(REFUND_CLOSED), "REFUNDCLOSE");
    CU_ASSERT_STRING_EQUAL(refund_state_name(99), "UNKNOWN");
}

static void test_amount(void)
{
    /* 1.00 of a 3.00 order, then 2.00, then 0.01 refused. */
    CU_ASSERT_EQUAL(refund_amount_check(300, 0, 100), REFUND_AMOUNT_OK);
    CU_ASSERT_EQUAL(refund_amount_check(300, 100, 200), REFUND_AMOUNT_OK);
    CU_ASSERT_EQUAL(refund_amount_check(300, 300, 1), REFUND_AMOUNT_EXCEEDS);
    CU_ASSERT_EQUAL(refund_amount_check(300, 0, 301), REFUND_AMOUNT_EXCEEDS);
    CU_ASSERT_EQUAL(refund_amount_check(300, 0, 300), REFUND_AMOUNT_OK);
    CU_ASSERT_EQUAL(refund_amount_check(300, 301, 1), REFUND_AMOUNT_EXCEEDS);
    CU_ASSERT_EQUAL(refund_amount_check(300, 0, 0), REFUND_AMOUNT_INVALID);
    CU_ASSERT_EQUAL(refund_amount_check(300, 0, -1), REFUND_AMOUNT_INVALID);
    CU_ASSERT_EQUAL(refund_amount_check(-1, 0, 1), REFUND_AMOUNT_INVALID);
    /* No overflow near the limits. */
    CU_ASSERT_EQUAL(refund_amount_check(INT64_MAX, INT64_MAX - 1, INT64_MAX),
                    REFUND_AMOUNT_EXCEEDS);
    CU_ASSERT_EQUAL(refund_amount_check(INT64_MAX, INT64_MAX - 1, 1), REFUND_AMOUNT_OK);
}

static void test_refund_no(void)
{
    char a[REFUND_API_NO_LEN + 1], b[REFUND_API_NO_LEN + 1];

    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000001", "key-1", a, sizeof(a)), 0);
    CU_ASSERT_EQUAL(strlen(a), REFUND_API_NO_LEN);
    CU_ASSERT_EQUAL(strncmp(a, "RM", 2), 0);
    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000001", "key-1", b, sizeof(b)), 0);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000001", "key-2", b, sizeof(b)), 0);
    CU_ASSERT(strcmp(a, b) != 0);
    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000002", "key-1", b, sizeof(b)), 0);
    CU_ASSERT(strcmp(a, b) != 0);
    /* Never the duplicate charges' "RF" space. */
    CU_ASSERT(strncmp(b, "RF", 2) != 0);
    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000001", "", a, sizeof(a)), -1);
    CU_ASSERT_STRING_EQUAL(a, "");
    CU_ASSERT_EQUAL(refund_api_refund_no("ORDER000001", "k", a, 10), -1);
}

static void add(wx_msg *m, const char *k, const char *v)
{
    CU_ASSERT_EQUAL(wx_msg_set(m, k, v), 0);
}

static void test_refundquery_reply(void)
{
    wx_msg m;
    gw_result r;

    wx_msg_init(&m);
    add(&m, "result_code", "SUCCESS");
    add(&m, "out_refund_no_0", "RF123");
    add(&m, "refund_status_0", "PROCESSING");
    add(&m, "refund_fee_0", "100");
    gateway_result_init(&r);
    CU_ASSERT_EQUAL(gateway_reply_refundquery(&m, "RF123", &r), GW_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.trade_state, "PROCESSING");
    CU_ASSERT_EQUAL(r.total_fee, 100);
    gateway_result_init(&r);
    CU_ASSERT_EQUAL(gateway_reply_refundquery(&m, "RF124", &r), GW_UNKNOWN);
    add(&m, "refund_status_0", "<bad>");
    gateway_result_init(&r);
    CU_ASSERT_EQUAL(gateway_reply_refundquery(&m, "RF123", &r), GW_UNKNOWN);
    wx_msg_free(&m);

    wx_msg_init(&m);
    add(&m, "result_code", "FAIL");
    add(&m, "err_code", "REFUNDNOTEXIST");
    gateway_result_init(&r);
    CU_ASSERT_EQUAL(gateway_reply_refundquery(&m, "RF123", &r), GW_NOT_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.trade_state, "REFUNDNOTEXIST");
    add(&m, "err_code", "SYSTEMERROR");
    gateway_result_init(&r);
    CU_ASSERT_EQUAL(gateway_reply_refundquery(&m, "RF123", &r), GW_UNKNOWN);
    wx_msg_free(&m);
}

/* A refund notification as WeChat sends it, req_info encrypted under key. */
static char *notification(const char *key, const char *appid, const char *inner)
{
    char *enc = NULL, *xml;
    wx_msg m;

    if (wx_refund_info_encrypt(key, inner, strlen(inner), &enc) != 0)
        return NULL;
    wx_msg_init(&m);
    add(&m, "return_code", "SUCCESS");
    add(&m, "appid", appid);
    add(&m, "mch_id", "1900000109");
    add(&m, "nonce_str", "abc");
    add(&m, "req_info", enc);
    xml = wx_xml_build(&m);
    wx_msg_free(&m);
    free(enc);
    return xml;
}

static const char INNER[] =
    "<root><out_refund_no><![CDATA[RF4200000001]]></out_refund_no>"
    "<out_trade_no><![CDATA[ORDER000001]]></out_trade_no>"
    "<refund_status><![CDATA[SUCCESS]]></refund_status>"
    "<transaction_id><![CDATA[4200000001]]></transaction_id>"
    "<refund_id><![CDATA[50000000001]]></refund_id>"
    "<total_fee><![CDATA[300]]></total_fee><refund_fee><![CDATA[100]]></refund_fee></root>";

static void test_notify_verify(void)
{
    app_config cfg;
    refund_notification n;
    const char *other_key = "00000000000000000000000000000000";

    memset(&cfg, 0, sizeof(cfg));
    snprintf(cfg.appid, sizeof(cfg.appid), "wx0000000000000000");
    snprintf(cfg.mch_id, sizeof(cfg.mch_id), "1900000109");
    snprintf(cfg.key, sizeof(cfg.key), IDEMPAY_DEV_KEY);

    char *xml = notification(cfg.key, cfg.appid, INNER);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, xml, strlen(xml), 0, &n), 0);
    CU_ASSERT_STRING_EQUAL(n.out_refund_no, "RF4200000001");
    CU_ASSERT_STRING_EQUAL(n.transaction_id, "4200000001");
    CU_ASSERT_STRING_EQUAL(n.refund_status, "SUCCESS");
    CU_ASSERT_STRING_EQUAL(n.refund_id, "50000000001");
    CU_ASSERT_EQUAL(n.refund_fee, 100);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, xml, strlen(xml), 1, &n), -1);
    free(xml);

    /* Another key: req_info does not decrypt (or not to our XML). */
    xml = notification(other_key, cfg.appid, INNER);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, xml, strlen(xml), 0, &n), -1);
    free(xml);
    /* Another merchant. */
    xml = notification(cfg.key, "wx1111111111111111", INNER);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, xml, strlen(xml), 0, &n), -1);
    CU_ASSERT_STRING_EQUAL(n.reason, "appid or mch_id is not ours");
    free(xml);
    /* A status we do not know. */
    xml =
        notification(cfg.key, cfg.appid,
                     "<root><out_refund_no>RF1</out_refund_no><transaction_id>42</transaction_id>"
                     "<refund_status>PROCESSING</refund_status><refund_fee>1</refund_fee></root>");
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, xml, strlen(xml), 0, &n), -1);
    free(xml);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, "<xml>", 5, 0, &n), -1);
    CU_ASSERT_EQUAL(refund_notify_verify(&cfg, "", 0, 0, &n), -1);
}

static void test_config(void)
{
    refund_config rc;
    const char *names[] = { "IDEMPAY_REFUNDS", "IDEMPAY_WX_CERT", "IDEMPAY_WX_CERT_KEY",
                            "IDEMPAY_GATEWAY_CA", "IDEMPAY_GATEWAY_SECAPI_URL" };
    for (size_t i = 0; i < 5; i++)
        unsetenv(names[i]);
    /* A plain-http gateway (the mock without TLS): no certificate needed. */
    CU_ASSERT_EQUAL(config_refund_load(&rc, "http://127.0.0.1:1", 8080), 0);
    CU_ASSERT(rc.enabled && !config_refund_has_cert(&rc));
    CU_ASSERT_STRING_EQUAL(rc.secapi_url, "http://127.0.0.1:1");
    /* WeChat over https: refused without the certificate, or unreadable. */
    CU_ASSERT_EQUAL(config_refund_load(&rc, "https://api.mch.weixin.qq.com", 8080), -1);
    setenv("IDEMPAY_WX_CERT", "/nonexistent/apiclient_cert.pem", 1);
    setenv("IDEMPAY_WX_CERT_KEY", "/nonexistent/apiclient_key.pem", 1);
    CU_ASSERT_EQUAL(config_refund_load(&rc, "https://api.mch.weixin.qq.com", 8080), -1);
    setenv("IDEMPAY_WX_CERT", "/dev/null", 1);
    setenv("IDEMPAY_WX_CERT_KEY", "/dev/null", 1);
    CU_ASSERT_EQUAL(config_refund_load(&rc, "https://api.mch.weixin.qq.com", 8080), 0);
    CU_ASSERT(config_refund_has_cert(&rc));
    unsetenv("IDEMPAY_WX_CERT_KEY"); /* one without the other */
    CU_ASSERT_EQUAL(config_refund_load(&rc, "http://127.0.0.1:1", 8080), -1);
    unsetenv("IDEMPAY_WX_CERT");
    setenv("IDEMPAY_REFUNDS", "off", 1); /* off: nothing needed */
    CU_ASSERT_EQUAL(config_refund_load(&rc, "https://api.mch.weixin.qq.com", 8080), 0);
    CU_ASSERT(!rc.enabled);
    setenv("IDEMPAY_REFUNDS", "maybe", 1);
    CU_ASSERT_EQUAL(config_refund_load(&rc, "http://127.0.0.1:1", 8080), -1);
    unsetenv("IDEMPAY_REFUNDS");
}

int main(void)
{
    static const cu_test tests[] = {
        { "a submission is accepted, retried or stuck", test_submit },
        { "SUCCESS, REFUNDCLOSE and CHANGE end a refund and final states stay", test_result },
        { "a refund is never above its charge", test_amount },
        { "a merchant refund's out_refund_no comes from its order and key", test_refund_no },
        { "a refundquery reply is understood", test_refundquery_reply },
        { "a refund notification is verified before it is believed", test_notify_verify },
        { "bad certificate settings are refused at start", test_config },
    };
    return CU_SUITE_RUN("refund_state", NULL, NULL, tests);
}
