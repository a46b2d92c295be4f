/* callback_verify.c - verifying a WeChat payment notification without the
 * database (see callback_verify.h). */
#include "callback_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "money.h"
#include "text_token.h"
#include "wx_sign.h"
#include "wx_xml.h"

/* ---- verification (no database) ---------------------------------------- */

void callback_set_reason(callback_notification *n, const char *reason)
{
    snprintf(n->reason, sizeof(n->reason), "%s", reason);
}

static int cb_txn_valid(const char *s)
{
    return text_token_valid(s, 1, CALLBACK_TXN_MAX, "_-");
}

static int cb_equal(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* The payment notification's fields WeChat Pay v2 documents as required
 * (支付结果通知, https://pay.weixin.qq.com/doc/v2/merchant/4011937248; see
 * docs/CALLBACKS.md). is_subscribe is left out: copies of the table differ
 * on it, and it proves nothing about the charge. */
static const char *const cb_required_fields[] = {
    "return_code", "result_code",    "appid",        "mch_id",    "nonce_str",
    "sign",        "openid",         "trade_type",   "bank_type", "total_fee",
    "cash_fee",    "transaction_id", "out_trade_no", "time_end",
};

/* Fields of other signed messages that a payment notification never carries:
 * orderquery (trade_state, trade_state_desc), unifiedorder (prepay_id,
 * code_url), reverse (recall), refund and refundquery (refund_id,
 * out_refund_no, refund_fee, refund_count), the refund notification
 * (req_info). */
static const char *const cb_foreign_fields[] = {
    "trade_state", "trade_state_desc", "prepay_id",  "code_url",     "recall",
    "refund_id",   "out_refund_no",    "refund_fee", "refund_count", "req_info",
};

static int cb_digits(const char *s, size_t min, size_t max)
{
    size_t n = 0;
    if (s == NULL)
        return 0;
    for (; s[n] != '\0'; n++)
        if (s[n] < '0' || s[n] > '9' || n >= max)
            return 0;
    return n >= min;
}

int callback_notification_shape(const wx_msg *m, char *reason, size_t reason_len)
{
    for (size_t i = 0; i < sizeof(cb_required_fields) / sizeof(cb_required_fields[0]); i++) {
        const char *v = wx_msg_get(m, cb_required_fields[i]);
        if (v == NULL || v[0] == '\0') {
            snprintf(reason, reason_len, "not a payment notification: no %s",
                     cb_required_fields[i]);
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof(cb_foreign_fields) / sizeof(cb_foreign_fields[0]); i++)
        if (wx_msg_get(m, cb_foreign_fields[i]) != NULL) {
            snprintf(reason, reason_len, "not a payment notification: it carries %s",
                     cb_foreign_fields[i]);
            return -1;
        }
    if (!cb_digits(wx_msg_get(m, "time_end"), 14, 14)) {
        snprintf(reason, reason_len, "not a payment notification: time_end is not yyyyMMddHHmmss");
        return -1;
    }
    if (!cb_digits(wx_msg_get(m, "cash_fee"), 1, 18)) {
        snprintf(reason, reason_len, "not a payment notification: cash_fee is not fen");
        return -1;
    }
    return 0;
}

/* The result and merchant checks (nothing is trusted yet: these only say
 * which refusal it is). CB_VERDICT_OK when they pass. */
static callback_verdict cb_check_result_merchant(const app_config *cfg, const wx_msg *m,
                                                 callback_notification *out)
{
    if (!cb_equal(wx_msg_get(m, "return_code"), "SUCCESS")) {
        callback_set_reason(out, "return_code is not SUCCESS");
        return CB_VERDICT_RESULT;
    }
    if (!cb_equal(wx_msg_get(m, "result_code"), "SUCCESS")) {
        callback_set_reason(out, "result_code is not SUCCESS");
        return CB_VERDICT_RESULT;
    }
    if (!cb_equal(wx_msg_get(m, "appid"), cfg->appid)) {
        callback_set_reason(out, "appid mismatch");
        return CB_VERDICT_MERCHANT;
    }
    if (!cb_equal(wx_msg_get(m, "mch_id"), cfg->mch_id)) {
        callback_set_reason(out, "mch_id mismatch");
        return CB_VERDICT_MERCHANT;
    }
    return CB_VERDICT_OK;
}

/* The signature: its type allowed by the configuration, and valid under the
 * merchant key. CB_VERDICT_OK when it verifies. */
static callback_verdict cb_check_signature(const app_config *cfg, const wx_msg *m,
                                           callback_notification *out)
{
    wx_sign_type type;
    if (wx_sign_type_of(m, WX_SIGN_MD5, &type) != 0) {
        callback_set_reason(out, "unsupported sign_type");
        return CB_VERDICT_SIGNATURE;
    }
    if (!wx_sign_type_allowed(type, cfg->sign_type)) {
        callback_set_reason(out, "signed with MD5 but HMAC-SHA256 is configured");
        return CB_VERDICT_SIGN_TYPE;
    }
    if (!wx_sign_verify(m, cfg->key, WX_SIGN_MD5)) {
        callback_set_reason(out, wx_msg_get(m, "sign") == NULL ? "missing sign" : "invalid sign");
        return CB_VERDICT_SIGNATURE;
    }
    return CB_VERDICT_OK;
}

/* The signed fields the service acts on, into out: transaction_id,
 * total_fee (CNY fen), and the notification's shape. CB_VERDICT_OK when
 * every one is usable. */
static callback_verdict cb_read_fields(const wx_msg *m, callback_notification *out)
{
    if (out->order_no[0] == '\0') {
        callback_set_reason(out, "missing or invalid out_trade_no");
        return CB_VERDICT_MALFORMED;
    }
    const char *txn = wx_msg_get(m, "transaction_id");
    if (!cb_txn_valid(txn)) {
        callback_set_reason(out, "missing or invalid transaction_id");
        return CB_VERDICT_MALFORMED;
    }
    snprintf(out->transaction_id, sizeof(out->transaction_id), "%s", txn);
    int64_t fee;
    if (money_parse_fen(wx_msg_get(m, "total_fee"), &fee) != 0) {
        callback_set_reason(out, "missing or invalid total_fee");
        return CB_VERDICT_AMOUNT;
    }
    const char *fee_type = wx_msg_get(m, "fee_type");
    if (fee_type != NULL && fee_type[0] != '\0' && strcmp(fee_type, "CNY") != 0) {
        callback_set_reason(out, "fee_type is not CNY");
        return CB_VERDICT_AMOUNT;
    }
    out->total_fee = (long long)fee;
    if (callback_notification_shape(m, out->reason, sizeof(out->reason)) != 0)
        return CB_VERDICT_NOT_NOTIFICATION;
    return CB_VERDICT_OK;
}

callback_verdict callback_verify(const app_config *cfg, const char *body, size_t len, int too_large,
                                 callback_notification *out)
{
    wx_msg m;
    char err[CALLBACK_REASON_MAX];
    callback_verdict v = CB_VERDICT_MALFORMED;

    memset(out, 0, sizeof(*out));
    out->total_fee = -1;
    wx_msg_init(&m);

    if (too_large || len > WX_XML_MAX_BODY) {
        callback_set_reason(out, "body too large");
        goto done;
    }
    if (body == NULL || wx_xml_parse(body, len, &m, err, sizeof(err)) != 0) {
        callback_set_reason(out, body == NULL || err[0] == '\0' ? "malformed XML" : err);
        goto done;
    }

    /* out_trade_no first, only so that failures can name the order in logs;
     * nothing is trusted before the signature is checked. */
    const char *order_no = wx_msg_get(&m, "out_trade_no");
    if (order_no_valid(order_no))
        snprintf(out->order_no, sizeof(out->order_no), "%s", order_no);

    v = cb_check_result_merchant(cfg, &m, out);
    if (v == CB_VERDICT_OK)
        v = cb_check_signature(cfg, &m, out);
    if (v == CB_VERDICT_OK)
        v = cb_read_fields(&m, out);
    if (v == CB_VERDICT_OK)
        out->reason[0] = '\0';

done:
    wx_msg_free(&m);
    return v;
}

callback_verdict callback_check_order(callback_notification *n, int found, const char *order_amount)
{
    int64_t fen;

    if (!found) {
        callback_set_reason(n, "unknown order");
        return CB_VERDICT_UNKNOWN_ORDER;
    }
    if (money_parse_yuan(order_amount, &fen) != 0 || (long long)fen != n->total_fee) {
        callback_set_reason(n, "total_fee does not match the order");
        return CB_VERDICT_AMOUNT;
    }
    return CB_VERDICT_OK;
}

int callback_verdict_metric(callback_verdict v)
{
    switch (v) {
    case CB_VERDICT_OK:
        return -1;
    case CB_VERDICT_MALFORMED:
        return MET_CB_FAIL_MALFORMED;
    case CB_VERDICT_RESULT:
        return MET_CB_FAIL_RESULT;
    case CB_VERDICT_MERCHANT:
        return MET_CB_FAIL_MERCHANT;
    case CB_VERDICT_SIGNATURE:
        return MET_CB_FAIL_SIGNATURE;
    case CB_VERDICT_AMOUNT:
        return MET_CB_FAIL_AMOUNT;
    case CB_VERDICT_UNKNOWN_ORDER:
        return MET_CB_FAIL_UNKNOWN_ORDER;
    case CB_VERDICT_UNAVAILABLE:
        return MET_CB_UNAVAILABLE;
    case CB_VERDICT_SIGN_TYPE:
        return MET_CB_FAIL_SIGN_TYPE;
    case CB_VERDICT_NOT_NOTIFICATION:
        return MET_CB_FAIL_NOT_NOTIFICATION;
    }
    return MET_CB_FAIL_MALFORMED;
}

void callback_reply(http_response *resp, int success, const char *msg)
{
    static const char oom_reply[] = "<xml><return_code><![CDATA[FAIL]]></return_code>"
                                    "<return_msg><![CDATA[out of memory]]></return_msg></xml>";
    char *xml = wx_xml_notify_reply(success, msg);

    if (xml == NULL ||
        http_response_set(resp, 200, "text/xml; charset=utf-8", xml, strlen(xml)) != 0) {
        free(xml);
        xml = NULL;
        /* A constant body still needs a copy; if even that fails the adapter
         * answers with whatever status is set. */
        resp->status = 200;
        (void)http_response_set(resp, 200, "text/xml; charset=utf-8", oom_reply,
                                sizeof(oom_reply) - 1);
        return;
    }
    free(xml);
}
