/* gateway_reply.c - the meaning of WeChat Pay v2 replies, without I/O (see
 * gateway_reply.h). */
#include "gateway_reply.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "money.h"
#include "text_copy.h"
#include "wx_sign.h"

#define GW_TXID_MAX 32 /* payment_order.transaction_id is VARCHAR(32) */

/* true when s is non-empty printable ASCII (safe to echo in logs and JSON). */
static bool gw_printable(const char *s)
{
    if (s == NULL || *s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7E)
            return false;
    return true;
}

static bool gw_is(const char *v, const char *want)
{
    return v != NULL && strcmp(v, want) == 0;
}

void gateway_result_init(gw_result *out)
{
    memset(out, 0, sizeof(*out));
    out->outcome = GW_UNKNOWN;
    out->total_fee = -1;
}

gw_outcome gateway_result_set(gw_result *out, gw_outcome o, const char *err_code,
                              const char *message)
{
    out->outcome = o;
    if (err_code != NULL)
        (void)text_copy(out->err_code, sizeof(out->err_code), err_code);
    if (message != NULL)
        (void)text_copy(out->message, sizeof(out->message), message);
    return o;
}

int gateway_reply_trusted(const wx_msg *reply, const char *key, wx_sign_type sign_type,
                          const char *appid, const char *mch_id, gw_result *out)
{
    wx_sign_type used;

    if (!gw_is(wx_msg_get(reply, "return_code"), "SUCCESS")) {
        const char *msg = wx_msg_get(reply, "return_msg");
        gateway_result_set(out, GW_UNKNOWN, "return_fail",
                           gw_printable(msg) ? msg : "return_code not SUCCESS");
        return -1;
    }
    if (wx_sign_type_of(reply, WX_SIGN_MD5, &used) == 0 && !wx_sign_type_allowed(used, sign_type)) {
        gateway_result_set(out, GW_UNKNOWN, "sign_type",
                           "the reply is signed with MD5 but HMAC-SHA256 is configured");
        return -1;
    }
    if (wx_sign_verify(reply, key, WX_SIGN_MD5) != 1) {
        gateway_result_set(out, GW_UNKNOWN, "bad_signature",
                           "the reply's signature does not verify");
        return -1;
    }
    if (!gw_is(wx_msg_get(reply, "appid"), appid) || !gw_is(wx_msg_get(reply, "mch_id"), mch_id)) {
        gateway_result_set(out, GW_UNKNOWN, "merchant_mismatch",
                           "the reply names another appid or mch_id");
        return -1;
    }
    return 0;
}

int gateway_reply_charge(const wx_msg *reply, gw_result *out)
{
    const char *txid = wx_msg_get(reply, "transaction_id");
    const char *fee = wx_msg_get(reply, "total_fee");
    int64_t fen;

    if (!gw_printable(txid) || strlen(txid) > GW_TXID_MAX) {
        gateway_result_set(out, GW_UNKNOWN, "bad_transaction_id",
                           "a charge without a usable transaction_id");
        return -1;
    }
    (void)text_copy(out->transaction_id, sizeof(out->transaction_id), txid);
    if (fee != NULL) {
        if (money_parse_fen(fee, &fen) != 0) {
            gateway_result_set(out, GW_UNKNOWN, "bad_total_fee",
                               "a charge with an unreadable total_fee");
            return -1;
        }
        out->total_fee = fen;
    }
    return 0;
}

/* The err_code of a result_code FAIL reply into out, a message, and o. */
static gw_outcome gw_take_error(const wx_msg *reply, const char *what, gw_outcome o, gw_result *out)
{
    const char *code = wx_msg_get(reply, "err_code");
    const char *des = wx_msg_get(reply, "err_code_des");

    (void)text_copy(out->err_code, sizeof(out->err_code), gw_printable(code) ? code : "");
    if (gw_printable(des))
        snprintf(out->message, sizeof(out->message), "%s: %s (%s)", what, out->err_code, des);
    else
        snprintf(out->message, sizeof(out->message), "%s: %s", what,
                 out->err_code[0] ? out->err_code : "no reason given");
    out->outcome = o;
    return o;
}

/* err_codes after which the outcome of the request is not known (WeChat
 * says: query the order). Every other FAIL of a verified reply is final. */
static bool gw_uncertain_code(const char *code)
{
    static const char *const uncertain[] = { "",
                                             "SYSTEMERROR",
                                             "BANKERROR",
                                             "USERPAYING",
                                             "OUT_TRADE_NO_USED",
                                             "BIZERR_NEED_RETRY",
                                             "FREQUENCY_LIMITED" };
    for (size_t i = 0; i < sizeof(uncertain) / sizeof(uncertain[0]); i++)
        if (strcmp(code, uncertain[i]) == 0)
            return true;
    return false;
}

static gw_outcome gw_bad_result(gw_result *out)
{
    return gateway_result_set(out, GW_UNKNOWN, "bad_result_code",
                              "result_code is neither SUCCESS nor FAIL");
}

gw_outcome gateway_reply_micropay(const wx_msg *reply, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *code = wx_msg_get(reply, "err_code");

    if (gw_is(result, "SUCCESS")) {
        if (gateway_reply_charge(reply, out) != 0)
            return out->outcome;
        return gateway_result_set(out, GW_CHARGED, NULL, "charged");
    }
    if (!gw_is(result, "FAIL"))
        return gw_bad_result(out);
    if (gw_is(code, "ORDERPAID"))
        return gw_take_error(reply, "charged before", GW_ORDERPAID, out);
    if (gw_is(code, "ORDERCLOSED") || gw_is(code, "ORDERREVERSED"))
        return gw_take_error(reply, "the order is closed at the gateway", GW_CLOSED, out);
    if (gw_uncertain_code(gw_printable(code) ? code : ""))
        return gw_take_error(reply, "the gateway could not tell the outcome", GW_UNKNOWN, out);
    return gw_take_error(reply, "the gateway declined the payment", GW_NOT_CHARGED, out);
}

/* A prepay field: printable, at most cap - 1 characters, copied to dst. */
static bool gw_take_field(const wx_msg *reply, const char *name, char *dst, size_t cap)
{
    const char *v = wx_msg_get(reply, name);

    if (!gw_printable(v) || strlen(v) >= cap)
        return false;
    (void)text_copy(dst, cap, v);
    return true;
}

gw_outcome gateway_reply_unifiedorder(const wx_msg *reply, int need_code_url, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *code = wx_msg_get(reply, "err_code");

    if (gw_is(result, "SUCCESS")) {
        if (!gw_take_field(reply, "prepay_id", out->prepay_id, sizeof(out->prepay_id)))
            return gateway_result_set(out, GW_UNKNOWN, "bad_prepay_id",
                                      "a prepay without a usable prepay_id");
        if (!gw_take_field(reply, "code_url", out->code_url, sizeof(out->code_url))) {
            out->code_url[0] = '\0';
            if (need_code_url)
                return gateway_result_set(out, GW_UNKNOWN, "bad_code_url",
                                          "a NATIVE prepay without a usable code_url");
        }
        return gateway_result_set(out, GW_PREPAY, NULL, "prepay created");
    }
    if (!gw_is(result, "FAIL"))
        return gw_bad_result(out);
    if (gw_is(code, "ORDERPAID"))
        return gw_take_error(reply, "paid before", GW_ORDERPAID, out);
    if (gw_is(code, "ORDERCLOSED"))
        return gw_take_error(reply, "the order is closed at the gateway", GW_CLOSED, out);
    if (gw_uncertain_code(gw_printable(code) ? code : ""))
        return gw_take_error(reply, "the gateway could not tell the outcome", GW_UNKNOWN, out);
    return gw_take_error(reply, "the gateway refused the prepay", GW_NOT_CHARGED, out);
}

gw_outcome gateway_reply_reverse(const wx_msg *reply, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");

    out->recall = gw_is(wx_msg_get(reply, "recall"), "Y");
    if (gw_is(result, "SUCCESS") && !out->recall)
        return gateway_result_set(out, GW_CLOSED, "", "reversed");
    if (gw_is(result, "SUCCESS"))
        return gateway_result_set(out, GW_UNKNOWN, "recall", "reverse: call it again");
    if (!gw_is(result, "FAIL"))
        return gw_bad_result(out);
    if (gw_is(wx_msg_get(reply, "err_code"), "ORDERNOTEXIST") && !out->recall)
        return gw_take_error(reply, "no such trade", GW_NOT_CHARGED, out);
    return gw_take_error(reply, "reverse failed", GW_UNKNOWN, out);
}

gw_outcome gateway_reply_orderquery(const wx_msg *reply, const char *order_no, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *echoed = wx_msg_get(reply, "out_trade_no");
    const char *state = wx_msg_get(reply, "trade_state");

    if (gw_is(result, "FAIL"))
        return gw_take_error(reply, "orderquery failed",
                             gw_is(wx_msg_get(reply, "err_code"), "ORDERNOTEXIST") ? GW_NOT_CHARGED
                                                                                   : GW_UNKNOWN,
                             out);
    if (!gw_is(result, "SUCCESS"))
        return gw_bad_result(out);
    if (echoed != NULL && strcmp(echoed, order_no) != 0)
        return gateway_result_set(out, GW_UNKNOWN, "order_mismatch",
                                  "the reply is about another out_trade_no");
    (void)text_copy(out->trade_state, sizeof(out->trade_state), gw_printable(state) ? state : "");
    if (gw_is(state, "SUCCESS") || gw_is(state, "REFUND")) {
        if (gateway_reply_charge(reply, out) != 0)
            return out->outcome;
        return gateway_result_set(out, GW_CHARGED, NULL, "charged");
    }
    if (gw_is(state, "CLOSED"))
        return gateway_result_set(out, GW_CLOSED, state, "the order is closed at the gateway");
    if (gw_is(state, "NOTPAY") || gw_is(state, "PAYERROR") || gw_is(state, "REVOKED"))
        return gateway_result_set(out, GW_NOT_CHARGED, state, "the order was not charged");
    return gateway_result_set(out, GW_UNKNOWN, "trade_state", "the trade is not settled yet");
}

gw_outcome gateway_reply_closeorder(const wx_msg *reply, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *code = wx_msg_get(reply, "err_code");

    if (gw_is(result, "SUCCESS"))
        return gateway_result_set(out, GW_CLOSED, "", "closed");
    if (!gw_is(result, "FAIL"))
        return gw_bad_result(out);
    if (gw_is(code, "ORDERCLOSED"))
        return gw_take_error(reply, "closed before", GW_CLOSED, out);
    if (gw_is(code, "ORDERPAID"))
        return gw_take_error(reply, "charged before the close", GW_ORDERPAID, out);
    return gw_take_error(reply, "the gateway did not close the order", GW_UNKNOWN, out);
}

gw_outcome gateway_reply_refund(const wx_msg *reply, const char *transaction_id, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *code = wx_msg_get(reply, "err_code");
    const char *txid = wx_msg_get(reply, "transaction_id");

    if (gw_is(result, "SUCCESS")) {
        if (txid != NULL && strcmp(txid, transaction_id) != 0)
            return gateway_result_set(out, GW_UNKNOWN, "txid_mismatch",
                                      "the reply is about another transaction");
        (void)text_copy(out->transaction_id, sizeof(out->transaction_id), transaction_id);
        return gateway_result_set(out, GW_CHARGED, NULL, "refund accepted");
    }
    if (!gw_is(result, "FAIL"))
        return gw_bad_result(out);
    if (gw_uncertain_code(gw_printable(code) ? code : ""))
        return gw_take_error(reply, "the gateway could not tell the refund's outcome", GW_UNKNOWN,
                             out);
    return gw_take_error(reply, "the gateway refused the refund", GW_NOT_CHARGED, out);
}

int gateway_reply_bill_empty(const wx_msg *reply, gw_result *out)
{
    const char *msg = wx_msg_get(reply, "return_msg");

    if (gw_is(wx_msg_get(reply, "return_code"), "FAIL") && gw_is(msg, "No Bill Exist"))
        return 0;
    if (gw_is(wx_msg_get(reply, "return_code"), "FAIL") && gw_is(msg, "Bill Creating")) {
        gateway_result_set(out, GW_UNKNOWN, "bill_creating", "the day's bill is not generated yet");
        return 1;
    }
    gateway_result_set(out, GW_UNKNOWN, "bill_error",
                       gw_printable(msg) ? msg : "downloadbill failed");
    return -1;
}
