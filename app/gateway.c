/* gateway.c - the WeChat Pay v2 client's transport: signed XML requests
 * over the thread's keep-alive curl handle, replies checked
 * (gateway_reply_trusted) before gateway_reply.c says what they mean.
 * Anything short of a verified, definite answer is GW_UNKNOWN: the caller
 * then leaves the order PROCESSING, never FAILED. */
#include "gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "gateway_v3.h"
#include "log.h"
#include "metrics.h"
#include "wx_sign.h"
#include "wx_xml.h"

/* Signs req (adding appid, mch_id, nonce_str) and POSTs it to path within
 * the gateway timeout. Returns 0 with *hr holding an HTTP answer (any
 * status; out->http_code set), or -1 with out set to GW_UNKNOWN and the
 * reason (no answer: the request may or may not have arrived). */
static int gw_post(app_ctx *ctx, const char *op, const char *path, wx_msg *req, http_reply *hr,
                   gw_result *out)
{
    const app_config *cfg = ctx->cfg;
    char nonce[33], url[512];
    char *xml = NULL;
    http_status hs;
    double started;
    int rc = -1;

    const wx_pair merchant[] = {
        WX_TEXT("appid", cfg->appid),
        WX_TEXT("mch_id", cfg->mch_id),
        WX_TEXT("nonce_str", nonce),
    };

    if (wx_nonce(nonce) != 0 || WX_MSG_SET_PAIRS(req, merchant) != 0 ||
        wx_sign_msg(req, cfg->key, cfg->sign_type, cfg->sign_type == WX_SIGN_HMAC_SHA256) != 0 ||
        (xml = wx_xml_build(req)) == NULL) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "could not build the signed request");
        goto done;
    }
    /* /secapi/... may live elsewhere (the mock's HTTPS port with mutual TLS). */
    const char *base = strncmp(path, "/secapi/", 8) == 0 ? cfg->refund.secapi_url
                                                         : cfg->gateway_url;
    if ((size_t)snprintf(url, sizeof(url), "%s%s", base, path) >= sizeof(url)) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "gateway URL too long");
        goto done;
    }

    started = clocks_mono_s();
    metrics_gateway_begin(op);
    hs = http_client_request(ctx->gateway, "POST", url, "text/xml; charset=utf-8", xml, strlen(xml),
                             NULL, cfg->gateway_timeout_ms, hr);
    metrics_gateway(op, clocks_mono_s() - started);
    if (hs != HTTP_OK) {
        gateway_result_set(out, GW_UNKNOWN, http_status_name(hs), hr->error);
        goto done;
    }
    out->http_code = hr->code;
    rc = 0;

done:
    free(xml);
    return rc;
}

/* gw_post, then checks the reply: HTTP 200, well-formed XML, then
 * gateway_reply_trusted. Returns 0 with *reply filled, or -1 with out set
 * to GW_UNKNOWN and the reason. */
static int gw_exchange(app_ctx *ctx, const char *op, const char *path, wx_msg *req, wx_msg *reply,
                       gw_result *out)
{
    char err[128];
    http_reply hr;

    if (gw_post(ctx, op, path, req, &hr, out) != 0)
        return -1;
    if (hr.code != 200) {
        snprintf(err, sizeof(err), "http_%ld", hr.code);
        gateway_result_set(out, GW_UNKNOWN, err, "the gateway answered with an HTTP error");
        return -1;
    }
    if (wx_xml_parse(hr.body, hr.body_len, reply, err, sizeof(err)) != 0) {
        gateway_result_set(out, GW_UNKNOWN, "bad_xml", err);
        return -1;
    }
    if (gateway_reply_trusted(reply, ctx->cfg->key, ctx->cfg->sign_type, ctx->cfg->appid,
                              ctx->cfg->mch_id, out) != 0) {
        if (strcmp(out->err_code, "sign_type") == 0)
            metrics_inc(MET_GW_REPLY_SIGN_TYPE);
        return -1;
    }
    out->answered = 1;
    return 0;
}

static void gw_log(const char *op, const char *order_no, const gw_result *out)
{
    static const char *const names[] = { "charged", "not_charged", "orderpaid", "unknown",
                                         "closed",  "unsupported", "prepay" };
    log_level lvl = out->outcome == GW_UNKNOWN ? LOG_WARN : LOG_DEBUG;

    log_msg(lvl, "gateway %s order=%s outcome=%s err=%s msg=%s", op, order_no, names[out->outcome],
            out->err_code, out->message);
}

/* One call of endpoint ep (common/wx_endpoint: its name in the log and the
 * metrics, its path): req (built by the caller; NULL when building it
 * failed) is exchanged at its path and its trusted reply read by `meaning`.
 * Frees req. */
static gw_outcome gw_call(app_ctx *ctx, wx_endpoint ep, wx_msg *req, int built, const char *subject,
                          gw_meaning meaning, gw_result *out)
{
    const char *op = wx_endpoint_name(ep), *path = wx_endpoint_path(ep);
    wx_msg reply;

    wx_msg_init(&reply);
    if (!built)
        gateway_result_set(out, GW_UNKNOWN, "local_error", "could not build the request");
    else if (gw_exchange(ctx, op, path, req, &reply, out) == 0)
        meaning(&reply, subject, out);
    gw_log(op, subject, out);
    wx_msg_free(req);
    wx_msg_free(&reply);
    return out->outcome;
}

static gw_outcome gw_mean_prepay(const wx_msg *reply, const char *subject, gw_result *out)
{
    (void)subject;
    return gateway_reply_unifiedorder(reply, 0, out);
}

static gw_outcome gw_mean_prepay_native(const wx_msg *reply, const char *subject, gw_result *out)
{
    (void)subject;
    return gateway_reply_unifiedorder(reply, 1, out);
}

static gw_outcome gw_mean_micropay(const wx_msg *reply, const char *subject, gw_result *out)
{
    (void)subject;
    return gateway_reply_micropay(reply, out);
}

static gw_outcome gw_mean_closeorder(const wx_msg *reply, const char *subject, gw_result *out)
{
    (void)subject;
    return gateway_reply_closeorder(reply, out);
}

static gw_outcome gw_mean_reverse(const wx_msg *reply, const char *subject, gw_result *out)
{
    (void)subject;
    return gateway_reply_reverse(reply, out);
}

gw_outcome gateway_unifiedorder(app_ctx *ctx, const gw_prepay_req *p, gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_prepay(ctx, p, out);
    wx_msg req;
    const int native = strcmp(p->trade_type, "NATIVE") == 0;
    const wx_pair fields[] = {
        WX_TEXT("body", "idempay order"),
        WX_TEXT("out_trade_no", p->order_no),
        WX_NUM("total_fee", p->total_fee),
        WX_TEXT("spbill_create_ip", "127.0.0.1"),
        WX_TEXT("notify_url", ctx->cfg->notify_url),
        WX_TEXT("trade_type", p->trade_type),
        WX_TEXT("time_expire", p->time_expire),
        WX_TEXT("product_id", native ? p->order_no : NULL), /* NULL: left out */
        WX_TEXT("openid", native ? NULL : p->openid),
    };

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = WX_MSG_SET_PAIRS(&req, fields) == 0;
    return gw_call(ctx, WX_EP_UNIFIEDORDER, &req, built, p->order_no,
                   native ? gw_mean_prepay_native : gw_mean_prepay, out);
}

gw_outcome gateway_micropay(app_ctx *ctx, const char *order_no, long long total_fee,
                            const char *auth_code, gw_result *out)
{
    wx_msg req;
    const wx_pair fields[] = {
        WX_TEXT("body", "idempay order"), WX_TEXT("out_trade_no", order_no),
        WX_NUM("total_fee", total_fee),   WX_TEXT("spbill_create_ip", "127.0.0.1"),
        WX_TEXT("auth_code", auth_code),
    };

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = WX_MSG_SET_PAIRS(&req, fields) == 0;
    return gw_call(ctx, WX_EP_MICROPAY, &req, built, order_no, gw_mean_micropay, out);
}

gw_outcome gateway_reverse(app_ctx *ctx, const char *order_no, gw_result *out)
{
    wx_msg req;

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = wx_msg_set(&req, "out_trade_no", order_no) == 0;
    return gw_call(ctx, WX_EP_REVERSE, &req, built, order_no, gw_mean_reverse, out);
}

gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_orderquery(ctx, order_no, out);
    wx_msg req;

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = wx_msg_set(&req, "out_trade_no", order_no) == 0;
    return gw_call(ctx, WX_EP_ORDERQUERY, &req, built, order_no, gateway_reply_orderquery, out);
}

gw_outcome gateway_orderquery_charge(app_ctx *ctx, const char *order_no, const char *transaction_id,
                                     gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_orderquery_charge(ctx, order_no, transaction_id, out);
    wx_msg req;
    const wx_pair fields[] = {
        WX_TEXT("transaction_id", transaction_id),
        WX_TEXT("out_trade_no", order_no),
    };

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = WX_MSG_SET_PAIRS(&req, fields) == 0;
    gw_call(ctx, WX_EP_ORDERQUERY, &req, built, order_no, gateway_reply_orderquery, out);
    if (out->outcome == GW_CHARGED && strcmp(out->transaction_id, transaction_id) != 0)
        gateway_result_set(out, GW_UNKNOWN, "charge_mismatch",
                           "the reply is about another transaction_id");
    return out->outcome;
}

gw_outcome gateway_closeorder(app_ctx *ctx, const char *order_no, gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_closeorder(ctx, order_no, out);
    wx_msg req;

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = wx_msg_set(&req, "out_trade_no", order_no) == 0;
    gw_call(ctx, WX_EP_CLOSEORDER, &req, built, order_no, gw_mean_closeorder, out);
    if (out->outcome == GW_UNKNOWN && out->http_code == 404)
        gateway_result_set(out, GW_UNSUPPORTED, "http_404", "the gateway has no closeorder");
    return out->outcome;
}

gw_outcome gateway_call(app_ctx *ctx, wx_endpoint ep, wx_msg *req, int built, const char *subject,
                        gw_meaning meaning, gw_result *out)
{
    return gw_call(ctx, ep, req, built, subject, meaning, out);
}

/* A downloadbill answer that is XML: "No Bill Exist" (0), "Bill Creating"
 * (1) or an error (-1). */
static int gw_bill_xml(const http_reply *hr, gw_result *out)
{
    wx_msg reply;
    char err[128];
    int rc = -1;

    wx_msg_init(&reply);
    if (wx_xml_parse(hr->body, hr->body_len, &reply, err, sizeof(err)) != 0)
        gateway_result_set(out, GW_UNKNOWN, "bad_xml", err);
    else
        rc = gateway_reply_bill_empty(&reply, out);
    wx_msg_free(&reply);
    return rc;
}

int gateway_downloadbill(app_ctx *ctx, const char *bill_date, char **text, size_t *len,
                         gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_tradebill(ctx, bill_date, text, len, out);
    wx_msg req;
    http_reply hr;
    int rc = -1;
    const wx_pair fields[] = {
        WX_TEXT("bill_date", bill_date),
        WX_TEXT("bill_type", "ALL"),
    };

    *text = NULL;
    *len = 0;
    gateway_result_init(out);
    wx_msg_init(&req);
    if (WX_MSG_SET_PAIRS(&req, fields) != 0) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "could not build the request");
        goto done;
    }
    if (gw_post(ctx, wx_endpoint_name(WX_EP_DOWNLOADBILL), wx_endpoint_path(WX_EP_DOWNLOADBILL),
                &req, &hr, out) != 0)
        goto done;
    if (hr.code != 200) {
        snprintf(out->err_code, sizeof(out->err_code), "http_%ld", hr.code);
        gateway_result_set(out, GW_UNKNOWN, NULL, "the gateway answered with an HTTP error");
        goto done;
    }
    if (hr.body_len >= 5 && memcmp(hr.body, "<xml>", 5) == 0) {
        int got = gw_bill_xml(&hr, out);
        if (got == 0 && (*text = calloc(1, 1)) != NULL)
            rc = 0;
        else if (got == 1)
            rc = 1;
        goto done;
    }
    if ((*text = malloc(hr.body_len + 1)) == NULL) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "out of memory");
        goto done;
    }
    memcpy(*text, hr.body, hr.body_len);
    (*text)[hr.body_len] = '\0';
    *len = hr.body_len;
    rc = 0;

done:
    if (rc < 0)
        log_msg(LOG_WARN, "gateway downloadbill %s: %s %s", bill_date, out->err_code, out->message);
    wx_msg_free(&req);
    return rc;
}
