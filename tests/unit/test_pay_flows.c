/* test_pay_flows.c - CUnit suite for the flows' pure parts (docs/FLOWS.md):
 * the trade_type/openid/auth_code rules of POST /api/pay, the fixed
 * time_expire, the prepay's lease, the JS bridge's paySign (WeChat's own
 * example), the meaning of unifiedorder/micropay/reverse replies, the
 * MICROPAY poll schedule, and the AWAITING_PAYMENT body. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "config.h"
#include "gateway_reply.h"
#include "pay_prepay.h"
#include "pay_request.h"
#include "settle_micropay.h"
#include "trade_store.h"
#include "wx_xml.h"

static int parse(const char *extra, pay_request *pr)
{
    char body[512], msg[PAY_MESSAGE_MAX];

    snprintf(body, sizeof(body),
             "{\"order_no\":\"ORDER_0001\",\"user_id\":42,\"amount\":\"1.00\"%s}", extra);
    memset(pr, 0, sizeof(*pr));
    return pay_request_parse_body(body, strlen(body), pr, msg, sizeof(msg));
}

static void test_flow_fields(void)
{
    pay_request pr;
    char key[PAY_FLOW_KEY_MAX];

    CU_ASSERT_EQUAL(parse("", &pr), 0);
    CU_ASSERT_EQUAL(pr.flow, TRADE_NATIVE); /* absent: NATIVE */
    CU_ASSERT_EQUAL(parse(",\"trade_type\":null", &pr), 0);
    CU_ASSERT_EQUAL(pr.flow, TRADE_NATIVE);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"NATIVE\"", &pr), 0);
    pay_request_flow_key(&pr, key);
    CU_ASSERT_STRING_EQUAL(key, "NATIVE");
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"native\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"APP\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":1", &pr), -1);
    /* JSAPI needs an openid */
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"JSAPI\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"JSAPI\",\"openid\":\"\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"JSAPI\",\"openid\":\"o x\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"JSAPI\",\"openid\":\"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o\"",
                          &pr),
                    0);
    CU_ASSERT_STRING_EQUAL(pr.openid, "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    pay_request_flow_key(&pr, key);
    CU_ASSERT_STRING_EQUAL(key, "JSAPI:oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    /* MICROPAY: 18 digits, prefix 10..15 */
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\"", &pr), -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"134567890123456789\"", &pr),
                    0);
    CU_ASSERT_STRING_EQUAL(pr.auth_code, "134567890123456789");
    pay_request_flow_key(&pr, key);
    CU_ASSERT_STRING_EQUAL(key, "MICROPAY:134567890123456789");
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"104567890123456789\"", &pr),
                    0);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"164567890123456789\"", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"094567890123456789\"", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"13456789012345678\"", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"1345678901234567890\"",
                          &pr),
                    -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":\"13456789012345678a\"", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse(",\"trade_type\":\"MICROPAY\",\"auth_code\":134567890123456789", &pr),
                    -1);
}

static void test_time_expire(void)
{
    trade_row r;

    /* 2024-01-02T03:04:05.100Z + 2 h -> 2024-01-02 05:04:06 UTC (rounded up) = 13:04:06 China */
    trade_row_new(&r, TRADE_NATIVE, NULL, 1704164645100LL, 7200000);
    CU_ASSERT_STRING_EQUAL(r.time_expire, "20240102130406");
    CU_ASSERT_EQUAL(r.expires_ms, 1704171846000LL);
    /* 2024-01-01T16:00:00Z is midnight in China: the next day */
    trade_row_new(&r, TRADE_JSAPI, "oid", 1704124800000LL - 1000, 1000);
    CU_ASSERT_STRING_EQUAL(r.time_expire, "20240102000000");
    CU_ASSERT_STRING_EQUAL(r.openid, "oid");
    trade_row_new(&r, TRADE_MICROPAY, NULL, 1704164645100LL, 7200000);
    CU_ASSERT_STRING_EQUAL(r.time_expire, "");
    CU_ASSERT_EQUAL(r.expires_ms, 0);
}

static void test_prepay_lease(void)
{
    app_config c;
    trade_row r;

    memset(&c, 0, sizeof(c));
    c.lease_ms = 10000;
    c.close_min_age_ms = 300000;
    c.close_margin_ms = 10000;
    trade_row_new(&r, TRADE_NATIVE, NULL, 1000000, 7200000);
    /* to time_expire (rounded up to the second) plus the margin */
    CU_ASSERT_EQUAL(pay_prepay_lease_ms(&c, &r, 1000000), 7200000 + 10000);
    /* a time_expire sooner than the close's minimum age: until the close is accepted */
    trade_row_new(&r, TRADE_NATIVE, NULL, 1000000, 60000);
    CU_ASSERT_EQUAL(pay_prepay_lease_ms(&c, &r, 1000000), 300000 + 10000);
    /* never shorter than a lease */
    c.close_min_age_ms = 0;
    c.close_margin_ms = 0;
    trade_row_new(&r, TRADE_NATIVE, NULL, 1000000, 1000);
    CU_ASSERT_EQUAL(pay_prepay_lease_ms(&c, &r, 1000000), 10000);
}

/* WeChat 'JSAPI调起支付' (https://pay.weixin.qq.com/doc/v2/partner/4011936643):
 * MD5(appId=wxd678efh567hg6787&nonceStr=5K8264ILTKCH16CQ2502SI8ZNMTM67VS&
 * package=prepay_id=wx2017033010242291fcfe0db70013231072&signType=MD5&
 * timeStamp=1490840662&key=qazwsxedcrfvtgbyhnujmikolp111111)
 * = 22D9B4E54AB1950F51E0649E8810ACD6 */
static void test_jsapi_pay_sign(void)
{
    pay_jsapi js;

    CU_ASSERT_EQUAL(pay_prepay_jsapi_sign("wxd678efh567hg6787", "qazwsxedcrfvtgbyhnujmikolp111111",
                                          WX_SIGN_MD5, "1490840662",
                                          "5K8264ILTKCH16CQ2502SI8ZNMTM67VS",
                                          "wx2017033010242291fcfe0db70013231072", &js),
                    0);
    CU_ASSERT_STRING_EQUAL(js.pay_sign, "22D9B4E54AB1950F51E0649E8810ACD6");
    CU_ASSERT_STRING_EQUAL(js.package, "prepay_id=wx2017033010242291fcfe0db70013231072");
    CU_ASSERT_STRING_EQUAL(js.sign_type, "MD5");
}

static gw_outcome mean(const char *xml, int which, gw_result *out)
{
    wx_msg m;
    char err[128];
    gw_outcome o = GW_UNKNOWN;

    wx_msg_init(&m);
    gateway_result_init(out);
    if (wx_xml_parse(xml, strlen(xml), &m, err, sizeof(err)) == 0)
        o = which == 0   ? gateway_reply_unifiedorder(&m, 1, out)
            : which == 1 ? gateway_reply_unifiedorder(&m, 0, out)
            : which == 2 ? gateway_reply_micropay(&m, out)
                         : gateway_reply_reverse(&m, out);
    wx_msg_free(&m);
    return o;
}

/* The sign type policy on replies (gateway_reply_trusted): with
 * HMAC-SHA256 configured a correctly signed MD5 reply is refused with
 * err_code sign_type; an HMAC-SHA256 reply passes; with MD5 configured
 * both pass. */
static void test_reply_sign_type(void)
{
    static const char key[] = IDEMPAY_DEV_KEY;
    wx_msg m;
    gw_result g;

    for (int hmac = 0; hmac <= 1; hmac++) {
        wx_msg_init(&m);
        wx_msg_set(&m, "return_code", "SUCCESS");
        wx_msg_set(&m, "result_code", "SUCCESS");
        wx_msg_set(&m, "appid", "wxa");
        wx_msg_set(&m, "mch_id", "1900000109");
        wx_msg_set(&m, "nonce_str", "n");
        wx_msg_set(&m, "prepay_id", "wx1");
        CU_ASSERT_EQUAL_FATAL(wx_sign_msg(&m, key, hmac ? WX_SIGN_HMAC_SHA256 : WX_SIGN_MD5, hmac),
                              0);
        gateway_result_init(&g);
        CU_ASSERT_EQUAL(gateway_reply_trusted(&m, key, WX_SIGN_MD5, "wxa", "1900000109", &g), 0);
        gateway_result_init(&g);
        CU_ASSERT_EQUAL(gateway_reply_trusted(&m, key, WX_SIGN_HMAC_SHA256, "wxa", "1900000109",
                                              &g),
                        hmac ? 0 : -1);
        if (!hmac)
            CU_ASSERT_STRING_EQUAL(g.err_code, "sign_type");
        wx_msg_free(&m);
    }
}

static void test_replies(void)
{
    gw_result g;

    CU_ASSERT_EQUAL(mean("<xml><result_code>SUCCESS</result_code><prepay_id>wx1</prepay_id>"
                         "<code_url>weixin://wxpay/bizpayurl?pr=abc</code_url></xml>",
                         0, &g),
                    GW_PREPAY);
    CU_ASSERT_STRING_EQUAL(g.prepay_id, "wx1");
    CU_ASSERT_STRING_EQUAL(g.code_url, "weixin://wxpay/bizpayurl?pr=abc");
    /* NATIVE without code_url: not usable; JSAPI needs none */
    CU_ASSERT_EQUAL(mean("<xml><result_code>SUCCESS</result_code><prepay_id>wx1</prepay_id></xml>",
                         0, &g),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(mean("<xml><result_code>SUCCESS</result_code><prepay_id>wx1</prepay_id></xml>",
                         1, &g),
                    GW_PREPAY);
    /* a real SUCCESS carries no transaction_id: never a charge */
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>SUCCESS</result_code><transaction_id>4200</transaction_id>"
             "</xml>",
             1, &g),
        GW_UNKNOWN);
    CU_ASSERT_EQUAL(mean("<xml><result_code>FAIL</result_code><err_code>ORDERPAID</err_code></xml>",
                         1, &g),
                    GW_ORDERPAID);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>ORDERCLOSED</err_code></xml>", 1, &g),
        GW_CLOSED);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>SYSTEMERROR</err_code></xml>", 1, &g),
        GW_UNKNOWN);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>INVALID_REQUEST</err_code></xml>", 1,
             &g),
        GW_NOT_CHARGED);
    /* micropay: the charge with its reply; USERPAYING is not a decline */
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>SUCCESS</result_code><transaction_id>4200</transaction_id>"
             "<total_fee>100</total_fee></xml>",
             2, &g),
        GW_CHARGED);
    CU_ASSERT_EQUAL(g.total_fee, 100);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>USERPAYING</err_code></xml>", 2, &g),
        GW_UNKNOWN);
    CU_ASSERT_EQUAL(mean("<xml><result_code>FAIL</result_code><err_code>BANKERROR</err_code></xml>",
                         2, &g),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>AUTHCODEEXPIRE</err_code></xml>", 2,
             &g),
        GW_NOT_CHARGED);
    CU_ASSERT_EQUAL(
        mean("<xml><result_code>FAIL</result_code><err_code>ORDERREVERSED</err_code></xml>", 2, &g),
        GW_CLOSED);
    /* reverse: done only with recall N */
    CU_ASSERT_EQUAL(mean("<xml><result_code>SUCCESS</result_code><recall>N</recall></xml>", 3, &g),
                    GW_CLOSED);
    CU_ASSERT_EQUAL(mean("<xml><result_code>SUCCESS</result_code><recall>Y</recall></xml>", 3, &g),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(g.recall, 1);
    CU_ASSERT_EQUAL(mean("<xml><result_code>FAIL</result_code><err_code>SYSTEMERROR</err_code>"
                         "<recall>Y</recall></xml>",
                         3, &g),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(mean("<xml><result_code>FAIL</result_code><err_code>ORDERNOTEXIST</err_code>"
                         "</xml>",
                         3, &g),
                    GW_NOT_CHARGED);
}

static void test_micropay_schedule(void)
{
    app_config c;

    memset(&c, 0, sizeof(c));
    c.micropay_poll_ms = 5000;
    c.micropay_window_ms = 30000;
    c.reverse_min_wait_ms = 15000;
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, 0), 5000);
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, 27000), 3000);
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, 30000), 0); /* the window is over: reverse */
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, -1), 0);    /* sent long ago */
    /* a window shorter than the reverse's minimum wait: wait for it */
    c.micropay_window_ms = 1000;
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, 12000), 3000);
    CU_ASSERT_EQUAL(settle_micropay_next_ms(&c, 15000), 0);
}

static void test_awaiting_body(void)
{
    char *b = pay_body_awaiting("ORDER_0001", TRADE_NATIVE, "weixin://x", "wx1",
                                "2024-01-02T03:04:05.000Z", NULL);
    pay_jsapi js;

    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b, "{\"order_no\":\"ORDER_0001\",\"status\":\"AWAITING_PAYMENT\","
                              "\"trade_type\":\"NATIVE\",\"code_url\":\"weixin://x\","
                              "\"prepay_id\":\"wx1\",\"expires_at\":\"2024-01-02T03:04:05.000Z\"}");
    free(b);
    CU_ASSERT_EQUAL(pay_prepay_jsapi_sign("wxa", "k", WX_SIGN_MD5, "1", "n", "wx1", &js), 0);
    b = pay_body_awaiting("ORDER_0001", TRADE_JSAPI, "", "wx1", "e", &js);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "\"jsapi\":{\"appId\":\"wxa\",\"timeStamp\":\"1\","
                                     "\"nonceStr\":\"n\",\"package\":\"prepay_id=wx1\","
                                     "\"signType\":\"MD5\",\"paySign\":\""));
    CU_ASSERT_PTR_NULL(strstr(b, "code_url"));
    free(b);
}

int main(void)
{
    static const cu_test tests[] = {
        { "trade_type, openid and auth_code are checked per flow", test_flow_fields },
        { "time_expire is fixed at insert", test_time_expire },
        { "a prepay's lease runs past its close", test_prepay_lease },
        { "the JSAPI paySign matches WeChat's example", test_jsapi_pay_sign },
        { "unifiedorder, micropay and reverse replies are understood", test_replies },
        { "with HMAC-SHA256 configured an MD5 reply is refused", test_reply_sign_type },
        { "MICROPAY polls on its schedule until the window ends", test_micropay_schedule },
        { "an order awaiting payment answers its AWAITING_PAYMENT body", test_awaiting_body },
    };
    return CU_SUITE_RUN("pay_flows", NULL, NULL, tests);
}
