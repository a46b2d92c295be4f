/* api.c - the mock's WeChat Pay v2 requests, the pure part: which endpoint
 * a path names, validation of a request (unit-tested without a database),
 * and signed replies. Serving a call is api_handle.c. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flows_rules.h"
#include "money.h"
#include "notifier.h"
#include "order_no.h"
#include "text_token.h"

/* WeChat's words. */
#define MSG_XML_ERROR "XML格式错误"
#define MSG_SIGN_ERROR "签名错误"
#define MSG_SIGN_TYPE "sign_type参数错误"

api_endpoint api_endpoint_of(const char *path)
{
    int ep = wx_endpoint_of_path(path);
    return ep < 0 ? API_NONE : (api_endpoint)ep;
}

const char *api_endpoint_name(api_endpoint ep)
{
    return wx_endpoint_name((int)ep);
}

/* ---- validation ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int api_reject(api_verdict *v, const char *err_code,
                                                            const char *fmt, ...)
{
    va_list ap;
    v->err_code = err_code;
    va_start(ap, fmt);
    vsnprintf(v->err_des, sizeof(v->err_des), fmt, ap);
    va_end(ap);
    return -1;
}

static bool api_present(const wx_msg *m, const char *name)
{
    const char *s = wx_msg_get(m, name);
    return s != NULL && s[0] != '\0';
}

/* WeChat's out_refund_no: 1-64 of [0-9A-Za-z_|*@-]. */
static bool api_refund_no_valid(const char *s)
{
    return text_token_valid(s, 1, 64, "_|*@-");
}

static bool api_url_valid(const char *s)
{
    size_t n = strlen(s);
    if (n > NOTIFIER_MAX_URL)
        return false;
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7F)
            return false;
    return true;
}

/* downloadbill: the statement's day or range and type (bill.c's rules). */
static int api_check_bill(const wx_msg *m, api_verdict *v)
{
    const char *code = NULL;
    char why[sizeof(v->err_des)];

    if (bill_parse_query(wx_msg_get(m, "bill_date"), wx_msg_get(m, "bill_type"),
                         wx_msg_get(m, "begin_time"), wx_msg_get(m, "end_time"), &v->bill, &code,
                         why, sizeof(why)) != 0)
        return api_reject(v, code, "%s", why);
    if (bill_parse_tar_type(wx_msg_get(m, "tar_type"), &v->bill, why, sizeof(why)) != 0)
        return api_reject(v, "PARAM_ERROR", "%s", why);
    return 0;
}

/* refundquery: one of refund_id, out_refund_no, transaction_id, out_trade_no. */
static int api_check_refundquery(const wx_msg *m, api_verdict *v)
{
    if (!api_present(m, "refund_id") && !api_present(m, "out_refund_no") &&
        !api_present(m, "transaction_id") && !api_present(m, "out_trade_no"))
        return api_reject(v, "LACK_PARAMS", "缺少参数 %s",
                          "refund_id/out_refund_no/transaction_id/out_trade_no");
    if (api_present(m, "out_refund_no") && !api_refund_no_valid(wx_msg_get(m, "out_refund_no")))
        return api_reject(v, "PARAM_ERROR", "out_refund_no 格式错误: %s",
                          "1-64 characters of [0-9A-Za-z_|*@-]");
    if (api_present(m, "refund_id") && strlen(wx_msg_get(m, "refund_id")) > 32)
        return api_reject(v, "PARAM_ERROR", "refund_id 格式错误");
    return 0;
}

static int api_check_fields(api_endpoint ep, const wx_msg *m, api_verdict *v)
{
    static const char *const uo_required[] = {
        "body", "out_trade_no", "total_fee", "spbill_create_ip", "notify_url", "trade_type", NULL,
    };
    static const char *const refund_required[] = {
        "out_refund_no",
        "total_fee",
        "refund_fee",
        NULL,
    };
    static const char *const close_required[] = { "out_trade_no", NULL };
    static const char *const mp_required[] = {
        "body", "out_trade_no", "total_fee", "spbill_create_ip", "auth_code", NULL,
    };
    const char *const *required = ep == API_UNIFIEDORDER ? uo_required
                                  : ep == API_REFUND     ? refund_required
                                  : ep == API_CLOSEORDER ? close_required
                                  : ep == API_MICROPAY   ? mp_required
                                                         : NULL;
    for (size_t i = 0; required != NULL && required[i] != NULL; i++)
        if (!api_present(m, required[i]))
            return api_reject(v, "LACK_PARAMS", "缺少参数 %s", required[i]);
    if ((ep == API_ORDERQUERY || ep == API_REFUND || ep == API_REVERSE) &&
        !api_present(m, "transaction_id") && !api_present(m, "out_trade_no"))
        return api_reject(v, "LACK_PARAMS", "缺少参数 %s", "out_trade_no/transaction_id");
    if (ep == API_DOWNLOADBILL)
        return api_check_bill(m, v);
    if (ep == API_REFUNDQUERY)
        return api_check_refundquery(m, v);

    const char *otn = wx_msg_get(m, "out_trade_no");
    if (api_present(m, "out_trade_no") && !order_no_valid(otn))
        return api_reject(v, "PARAM_ERROR", "out_trade_no 格式错误: %s",
                          "6-32 characters of [0-9A-Za-z_|*-]");
    if (api_present(m, "transaction_id") && strlen(wx_msg_get(m, "transaction_id")) > 32)
        return api_reject(v, "PARAM_ERROR", "transaction_id 格式错误");

    if (ep == API_MICROPAY && !flows_auth_code_valid(wx_msg_get(m, "auth_code")))
        return api_reject(v, "AUTH_CODE_INVALID",
                          "请扫描微信支付授权码(以10/11/12/13/14/15为前缀的18位数字)");
    if (ep == API_UNIFIEDORDER || ep == API_REFUND || ep == API_MICROPAY) {
        int64_t fen = 0;
        if (money_parse_fen(wx_msg_get(m, "total_fee"), &fen) != 0)
            return api_reject(v, "PARAM_ERROR", "total_fee 格式错误: %s",
                              "a positive integer of fen");
        v->total_fee = fen;
    }
    if (ep == API_UNIFIEDORDER) {
        const char *tt = wx_msg_get(m, "trade_type");
        if (strcmp(tt, "JSAPI") != 0 && strcmp(tt, "NATIVE") != 0 && strcmp(tt, "APP") != 0 &&
            strcmp(tt, "MWEB") != 0)
            return api_reject(v, "PARAM_ERROR", "trade_type 参数错误: %s",
                              "one of JSAPI, NATIVE, APP, MWEB");
        if (!api_url_valid(wx_msg_get(m, "notify_url")))
            return api_reject(v, "PARAM_ERROR", "notify_url 格式错误: %s",
                              "an http:// or https:// URL of at most 256 characters");
    }
    if (ep == API_REFUND) {
        int64_t fen = 0;
        if (money_parse_fen(wx_msg_get(m, "refund_fee"), &fen) != 0)
            return api_reject(v, "PARAM_ERROR", "refund_fee 格式错误: %s",
                              "a positive integer of fen");
        v->refund_fee = fen;
        if (v->refund_fee > v->total_fee)
            return api_reject(v, "INVALID_REQUEST", "退款金额大于订单金额");
        if (!api_refund_no_valid(wx_msg_get(m, "out_refund_no")))
            return api_reject(v, "PARAM_ERROR", "out_refund_no 格式错误: %s",
                              "1-64 characters of [0-9A-Za-z_|*@-]");
        if (api_present(m, "notify_url") && !api_url_valid(wx_msg_get(m, "notify_url")))
            return api_reject(v, "PARAM_ERROR", "notify_url 格式错误: %s",
                              "an http:// or https:// URL of at most 256 characters");
    }
    return 0;
}

int api_validate(api_endpoint ep, const char *body, size_t len, const mock_creds *creds,
                 wx_msg *req, api_verdict *v)
{
    char why[128];

    memset(v, 0, sizeof(*v));
    v->sign_type = WX_SIGN_MD5;
    if (len == 0 || wx_xml_parse(body, len, req, why, sizeof(why)) != 0) {
        v->fail_msg = MSG_XML_ERROR;
        return -1;
    }
    if (wx_sign_type_of(req, WX_SIGN_MD5, &v->sign_type) != 0) {
        v->sign_type = WX_SIGN_MD5;
        v->fail_msg = MSG_SIGN_TYPE;
        return -1;
    }
    if (!wx_sign_verify(req, creds->key, WX_SIGN_MD5)) {
        v->fail_msg = MSG_SIGN_ERROR;
        return -1;
    }
    static const char *const common[] = { "appid", "mch_id", "nonce_str", NULL };
    for (size_t i = 0; common[i] != NULL; i++)
        if (!api_present(req, common[i]))
            return api_reject(v, "LACK_PARAMS", "缺少参数 %s", common[i]);
    if (strcmp(wx_msg_get(req, "appid"), creds->appid) != 0 ||
        strcmp(wx_msg_get(req, "mch_id"), creds->mch_id) != 0)
        return api_reject(v, "APPID_MCHID_NOT_MATCH", "appid和mch_id不匹配");
    return api_check_fields(ep, req, v);
}

/* ---- replies ------------------------------------------------------------- */

char *api_build_reply(const mock_creds *creds, wx_sign_type type, const char *fail_msg,
                      const char *err_code, const char *err_des, const wx_msg *extra)
{
    wx_msg m;
    char nonce[33];
    char *xml = NULL;
    const wx_pair head[] = {
        WX_TEXT("return_code", fail_msg != NULL ? "FAIL" : "SUCCESS"),
        WX_TEXT("return_msg", fail_msg != NULL ? fail_msg : "OK"),
        WX_TEXT("appid", creds->appid),
        WX_TEXT("mch_id", creds->mch_id),
        WX_TEXT("nonce_str", nonce),
    };
    const wx_pair result[] = {
        /* when the call was understood (no fail_msg) */
        WX_TEXT("result_code", err_code != NULL ? "FAIL" : "SUCCESS"),
        WX_TEXT("err_code", err_code),
        WX_TEXT("err_code_des", err_code == NULL  ? NULL
                                : err_des != NULL ? err_des
                                                  : ""),
    };

    wx_msg_init(&m);
    if (wx_nonce(nonce) != 0 || WX_MSG_SET_PAIRS(&m, head) != 0)
        goto done;
    if (fail_msg == NULL &&
        (WX_MSG_SET_PAIRS(&m, result) != 0 || (extra != NULL && wx_msg_merge(&m, extra) != 0)))
        goto done;
    if (wx_sign_msg(&m, creds->key, type, type == WX_SIGN_HMAC_SHA256) != 0)
        goto done;
    xml = wx_xml_build(&m);
done:
    wx_msg_free(&m);
    return xml;
}
