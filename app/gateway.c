/* gateway.c - the WeChat Pay v2 client: signed XML requests over the
 * thread's keep-alive curl handle, and replies trusted only after their
 * signature and merchant ids check out. Anything short of a verified,
 * definite answer is GW_UNKNOWN: the caller then leaves the order PROCESSING,
 * never FAILED. */
#include "gateway.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "metrics.h"
#include "money.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define GW_TXID_MAX 32  /* payment_order.transaction_id is VARCHAR(32) */

static double gw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copies src into dst[cap], cut to fit (always NUL-terminated). */
static void gw_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

void gateway_result_init(gw_result *out)
{
    memset(out, 0, sizeof(*out));
    out->outcome = GW_UNKNOWN;
    out->total_fee = -1;
}

static gw_outcome gw_set(gw_result *out, gw_outcome o, const char *err_code, const char *message)
{
    out->outcome = o;
    if (err_code != NULL)
        gw_copy(out->err_code, sizeof(out->err_code), err_code);
    if (message != NULL)
        gw_copy(out->message, sizeof(out->message), message);
    return o;
}

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

int gateway_reply_trusted(const wx_msg *reply, const char *key, const char *appid,
                          const char *mch_id, gw_result *out)
{
    if (!gw_is(wx_msg_get(reply, "return_code"), "SUCCESS")) {
        const char *msg = wx_msg_get(reply, "return_msg");
        gw_set(out, GW_UNKNOWN, "return_fail", gw_printable(msg) ? msg : "return_code not SUCCESS");
        return -1;
    }
    if (wx_sign_verify(reply, key, WX_SIGN_MD5) != 1) {
        gw_set(out, GW_UNKNOWN, "bad_signature", "the reply's signature does not verify");
        return -1;
    }
    if (!gw_is(wx_msg_get(reply, "appid"), appid) || !gw_is(wx_msg_get(reply, "mch_id"), mch_id)) {
        gw_set(out, GW_UNKNOWN, "merchant_mismatch", "the reply names another appid or mch_id");
        return -1;
    }
    return 0;
}

/* Signs req, POSTs it to path and checks the reply: HTTP 200, well-formed
 * XML, then gateway_reply_trusted. Returns
 * 0 with *reply filled, or -1 with out set to GW_UNKNOWN and the reason. */
static int gw_exchange(app_ctx *ctx, const char *op, const char *path, wx_msg *req,
                       wx_msg *reply, gw_result *out)
{
    const app_config *cfg = ctx->cfg;
    char nonce[33], url[512], err[128];
    char *xml = NULL;
    http_reply hr;
    http_status hs;
    double started;
    int rc = -1;

    if (wx_nonce(nonce) != 0 || wx_msg_set(req, "appid", cfg->appid) != 0 ||
        wx_msg_set(req, "mch_id", cfg->mch_id) != 0 || wx_msg_set(req, "nonce_str", nonce) != 0 ||
        wx_sign_msg(req, cfg->key, WX_SIGN_MD5, 0) != 0 || (xml = wx_xml_build(req)) == NULL) {
        gw_set(out, GW_UNKNOWN, "local_error", "could not build the signed request");
        goto done;
    }
    if ((size_t)snprintf(url, sizeof(url), "%s%s", cfg->gateway_url, path) >= sizeof(url)) {
        gw_set(out, GW_UNKNOWN, "local_error", "gateway URL too long");
        goto done;
    }

    started = gw_now();
    metrics_gateway_begin(op);
    hs = http_client_request(ctx->gateway, "POST", url, "text/xml; charset=utf-8", xml,
                             strlen(xml), NULL, cfg->gateway_timeout_ms, &hr);
    metrics_gateway(op, gw_now() - started);

    if (hs != HTTP_OK) {
        gw_set(out, GW_UNKNOWN, http_status_name(hs), hr.error);
        goto done;
    }
    if (hr.code != 200) {
        snprintf(err, sizeof(err), "http_%ld", hr.code);
        gw_set(out, GW_UNKNOWN, err, "the gateway answered with an HTTP error");
        goto done;
    }
    if (wx_xml_parse(hr.body, hr.body_len, reply, err, sizeof(err)) != 0) {
        gw_set(out, GW_UNKNOWN, "bad_xml", err);
        goto done;
    }
    if (gateway_reply_trusted(reply, cfg->key, cfg->appid, cfg->mch_id, out) != 0)
        goto done;
    out->answered = 1;
    rc = 0;

done:
    free(xml);
    return rc;
}

int gateway_reply_charge(const wx_msg *reply, gw_result *out)
{
    const char *txid = wx_msg_get(reply, "transaction_id");
    const char *fee = wx_msg_get(reply, "total_fee");
    int64_t fen;

    if (!gw_printable(txid) || strlen(txid) > GW_TXID_MAX) {
        gw_set(out, GW_UNKNOWN, "bad_transaction_id", "a charge without a usable transaction_id");
        return -1;
    }
    gw_copy(out->transaction_id, sizeof(out->transaction_id), txid);
    if (fee != NULL) {
        if (money_parse_fen(fee, &fen) != 0) {
            gw_set(out, GW_UNKNOWN, "bad_total_fee", "a charge with an unreadable total_fee");
            return -1;
        }
        out->total_fee = fen;
    }
    return 0;
}

/* The err_code of a result_code FAIL reply into out, and a message. */
static void gw_take_error(const wx_msg *reply, const char *what, gw_result *out)
{
    const char *code = wx_msg_get(reply, "err_code");
    const char *des = wx_msg_get(reply, "err_code_des");

    gw_copy(out->err_code, sizeof(out->err_code), gw_printable(code) ? code : "");
    if (gw_printable(des))
        snprintf(out->message, sizeof(out->message), "%s: %s (%s)", what, out->err_code, des);
    else
        snprintf(out->message, sizeof(out->message), "%s: %s", what,
                 out->err_code[0] ? out->err_code : "no reason given");
}

/* err_codes after which the outcome of the request is not known (WeChat
 * says: query the order). Every other FAIL of a verified reply is final. */
static bool gw_uncertain_code(const char *code)
{
    static const char *const uncertain[] = {"", "SYSTEMERROR", "BANKERROR", "USERPAYING",
                                            "OUT_TRADE_NO_USED", "BIZERR_NEED_RETRY",
                                            "FREQUENCY_LIMITED"};
    for (size_t i = 0; i < sizeof(uncertain) / sizeof(uncertain[0]); i++)
        if (strcmp(code, uncertain[i]) == 0)
            return true;
    return false;
}

static void gw_log(const char *op, const char *order_no, const gw_result *out)
{
    static const char *const names[] = {"charged", "not_charged", "orderpaid", "unknown"};
    log_level lvl = out->outcome == GW_UNKNOWN ? LOG_WARN : LOG_DEBUG;

    log_msg(lvl, "gateway %s order=%s outcome=%s err=%s msg=%s", op, order_no,
            names[out->outcome], out->err_code, out->message);
}

gw_outcome gateway_unifiedorder(app_ctx *ctx, const char *order_no, long long total_fee,
                                gw_result *out)
{
    wx_msg req, reply;
    const char *result;

    gateway_result_init(out);
    wx_msg_init(&req);
    wx_msg_init(&reply);
    if (wx_msg_set(&req, "body", "idempay order") != 0 ||
        wx_msg_set(&req, "out_trade_no", order_no) != 0 ||
        wx_msg_set_int(&req, "total_fee", total_fee) != 0 ||
        wx_msg_set(&req, "spbill_create_ip", "127.0.0.1") != 0 ||
        wx_msg_set(&req, "notify_url", ctx->cfg->notify_url) != 0 ||
        wx_msg_set(&req, "trade_type", "NATIVE") != 0 ||
        wx_msg_set(&req, "product_id", order_no) != 0) {
        gw_set(out, GW_UNKNOWN, "local_error", "could not build the request");
        goto done;
    }
    if (gw_exchange(ctx, "unifiedorder", "/pay/unifiedorder", &req, &reply, out) != 0)
        goto done;

    result = wx_msg_get(&reply, "result_code");
    if (gw_is(result, "SUCCESS")) {
        if (gateway_reply_charge(&reply, out) != 0)
            goto done;
        if (out->total_fee >= 0 && out->total_fee != total_fee) {
            gw_set(out, GW_UNKNOWN, "amount_mismatch", "the charge's total_fee differs");
            goto done;
        }
        gw_set(out, GW_CHARGED, NULL, "charged");
    } else if (gw_is(result, "FAIL")) {
        const char *code = wx_msg_get(&reply, "err_code");
        if (gw_is(code, "ORDERPAID")) {
            gw_take_error(&reply, "charged before", out);
            out->outcome = GW_ORDERPAID;
        } else if (gw_uncertain_code(gw_printable(code) ? code : "")) {
            gw_take_error(&reply, "the gateway could not tell the outcome", out);
            out->outcome = GW_UNKNOWN;
        } else {
            gw_take_error(&reply, "the gateway declined the payment", out);
            out->outcome = GW_NOT_CHARGED;
        }
    } else {
        gw_set(out, GW_UNKNOWN, "bad_result_code", "result_code is neither SUCCESS nor FAIL");
    }

done:
    gw_log("unifiedorder", order_no, out);
    wx_msg_free(&req);
    wx_msg_free(&reply);
    return out->outcome;
}

gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out)
{
    wx_msg req, reply;
    const char *result, *state, *echoed;

    gateway_result_init(out);
    wx_msg_init(&req);
    wx_msg_init(&reply);
    if (wx_msg_set(&req, "out_trade_no", order_no) != 0) {
        gw_set(out, GW_UNKNOWN, "local_error", "could not build the request");
        goto done;
    }
    if (gw_exchange(ctx, "orderquery", "/pay/orderquery", &req, &reply, out) != 0)
        goto done;

    result = wx_msg_get(&reply, "result_code");
    if (gw_is(result, "FAIL")) {
        gw_take_error(&reply, "orderquery failed", out);
        out->outcome = strcmp(out->err_code, "ORDERNOTEXIST") == 0 ? GW_NOT_CHARGED : GW_UNKNOWN;
        goto done;
    }
    if (!gw_is(result, "SUCCESS")) {
        gw_set(out, GW_UNKNOWN, "bad_result_code", "result_code is neither SUCCESS nor FAIL");
        goto done;
    }
    echoed = wx_msg_get(&reply, "out_trade_no");
    if (echoed != NULL && strcmp(echoed, order_no) != 0) {
        gw_set(out, GW_UNKNOWN, "order_mismatch", "the reply is about another out_trade_no");
        goto done;
    }
    state = wx_msg_get(&reply, "trade_state");
    gw_copy(out->trade_state, sizeof(out->trade_state), gw_printable(state) ? state : "");
    if (gw_is(state, "SUCCESS") || gw_is(state, "REFUND")) {
        if (gateway_reply_charge(&reply, out) == 0)
            gw_set(out, GW_CHARGED, NULL, "charged");
    } else if (gw_is(state, "NOTPAY") || gw_is(state, "PAYERROR") || gw_is(state, "CLOSED") ||
               gw_is(state, "REVOKED")) {
        gw_set(out, GW_NOT_CHARGED, state, "the order was not charged");
    } else {
        gw_set(out, GW_UNKNOWN, "trade_state", "the trade is not settled yet");
    }

done:
    gw_log("orderquery", order_no, out);
    wx_msg_free(&req);
    wx_msg_free(&reply);
    return out->outcome;
}

gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, gw_result *out)
{
    wx_msg req, reply;
    const char *result;

    gateway_result_init(out);
    wx_msg_init(&req);
    wx_msg_init(&reply);
    if (wx_msg_set(&req, "transaction_id", transaction_id) != 0 ||
        wx_msg_set(&req, "out_refund_no", out_refund_no) != 0 ||
        wx_msg_set_int(&req, "total_fee", total_fee) != 0 ||
        wx_msg_set_int(&req, "refund_fee", refund_fee) != 0) {
        gw_set(out, GW_UNKNOWN, "local_error", "could not build the request");
        goto done;
    }
    if (gw_exchange(ctx, "refund", "/secapi/pay/refund", &req, &reply, out) != 0)
        goto done;

    result = wx_msg_get(&reply, "result_code");
    if (gw_is(result, "SUCCESS")) {
        const char *txid = wx_msg_get(&reply, "transaction_id");
        if (txid != NULL && strcmp(txid, transaction_id) != 0) {
            gw_set(out, GW_UNKNOWN, "txid_mismatch", "the reply is about another transaction");
            goto done;
        }
        gw_copy(out->transaction_id, sizeof(out->transaction_id), transaction_id);
        gw_set(out, GW_CHARGED, NULL, "refund accepted");
    } else if (gw_is(result, "FAIL")) {
        const char *code = wx_msg_get(&reply, "err_code");
        if (gw_uncertain_code(gw_printable(code) ? code : "")) {
            gw_take_error(&reply, "the gateway could not tell the refund's outcome", out);
            out->outcome = GW_UNKNOWN;
        } else {
            gw_take_error(&reply, "the gateway refused the refund", out);
            out->outcome = GW_NOT_CHARGED;
        }
    } else {
        gw_set(out, GW_UNKNOWN, "bad_result_code", "result_code is neither SUCCESS nor FAIL");
    }

done:
    gw_log("refund", transaction_id, out);
    wx_msg_free(&req);
    wx_msg_free(&reply);
    return out->outcome;
}
