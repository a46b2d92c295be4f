/* pay_prepay.c - the prepay, the JS bridge's signature and the poll (see
 * pay_prepay.h). */
#include "pay_prepay.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clocks.h"
#include "gateway_v3.h"
#include "log.h"
#include "wx_sign.h"
#include "wx_xml.h"

long pay_prepay_lease_ms(const app_config *cfg, const trade_row *tr, long long now_ms)
{
    long long closable = now_ms - tr->age_ms + cfg->close_min_age_ms;
    long long until = tr->expires_ms > closable ? tr->expires_ms : closable;
    long long ms = until + cfg->close_margin_ms - now_ms;

    return ms > cfg->lease_ms ? (long)ms : cfg->lease_ms;
}

void pay_prepay_iso(long long ms, char out[32])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char base[24];

    gmtime_r(&t, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%s.%03lldZ", base, ms % 1000);
}

/* The prepay came back: store it (the first writer wins), re-read. */
static prepay_result pay_prepay_store(app_ctx *ctx, const char *order_no, trade_row *tr,
                                      const gw_result *gw)
{
    switch (trade_store_set_prepay(ctx, order_no, gw->prepay_id, gw->code_url)) {
    case ORDER_STORE_OK:
        snprintf(tr->prepay_id, sizeof(tr->prepay_id), "%s", gw->prepay_id);
        snprintf(tr->code_url, sizeof(tr->code_url), "%s", gw->code_url);
        return PREPAY_AWAITING;
    case ORDER_STORE_MISS:
        if (trade_store_get(ctx, order_no, tr) == ORDER_STORE_OK && tr->prepay_id[0] != '\0')
            return PREPAY_AWAITING;
        return PREPAY_UNKNOWN;
    default:
        return PREPAY_UNKNOWN;
    }
}

prepay_result pay_prepay_obtain(app_ctx *ctx, const char *order_no, long long amount_fen,
                                long long fence, trade_row *tr, gw_result *gw, settle_result *s,
                                order_row *row)
{
    const gw_prepay_req req = {
        .order_no = order_no,
        .total_fee = amount_fen,
        .trade_type = trade_type_name(tr->type),
        .openid = tr->type == TRADE_JSAPI ? tr->openid : NULL,
        .time_expire = tr->time_expire,
    };

    gateway_result_init(gw);
    if (tr->prepay_id[0] != '\0')
        return PREPAY_AWAITING;
    switch (gateway_unifiedorder(ctx, &req, gw)) {
    case GW_PREPAY:
        return pay_prepay_store(ctx, order_no, tr, gw);
    case GW_ORDERPAID:
        /* The customer paid it (a prepay stored by an earlier call). */
        if (gateway_orderquery(ctx, order_no, gw) != GW_CHARGED)
            return PREPAY_UNKNOWN;
        *s = settle_charge(ctx, order_no, gw->transaction_id, gw->total_fee, "pay", row);
        return PREPAY_SETTLED;
    case GW_CLOSED:
        *s = settle_closed(ctx, order_no, fence, "pay", row);
        return PREPAY_SETTLED;
    case GW_NOT_CHARGED:
        return PREPAY_DECLINED;
    default:
        return PREPAY_UNKNOWN;
    }
}

int pay_prepay_jsapi_sign(const char *appid, const char *key, wx_sign_type type,
                          const char *time_stamp, const char *nonce, const char *prepay_id,
                          pay_jsapi *out)
{
    wx_msg m;
    char sign[WX_SIGN_HEX_MAX];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    snprintf(out->app_id, sizeof(out->app_id), "%s", appid);
    snprintf(out->time_stamp, sizeof(out->time_stamp), "%s", time_stamp);
    snprintf(out->nonce_str, sizeof(out->nonce_str), "%s", nonce);
    snprintf(out->package, sizeof(out->package), "prepay_id=%s", prepay_id);
    snprintf(out->sign_type, sizeof(out->sign_type), "%s", wx_sign_type_name(type));
    const wx_pair fields[] = {
        WX_TEXT("appId", out->app_id),       WX_TEXT("timeStamp", out->time_stamp),
        WX_TEXT("nonceStr", out->nonce_str), WX_TEXT("package", out->package),
        WX_TEXT("signType", out->sign_type),
    };
    wx_msg_init(&m);
    if (WX_MSG_SET_PAIRS(&m, fields) == 0 && wx_sign_compute(&m, key, type, sign) == 0) {
        snprintf(out->pay_sign, sizeof(out->pay_sign), "%s", sign);
        rc = 0;
    }
    wx_msg_free(&m);
    return rc;
}

int pay_prepay_jsapi_sign_v3(const app_config *cfg, const char *time_stamp, const char *nonce,
                             const char *prepay_id, pay_jsapi *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->app_id, sizeof(out->app_id), "%s", cfg->appid);
    snprintf(out->time_stamp, sizeof(out->time_stamp), "%s", time_stamp);
    snprintf(out->nonce_str, sizeof(out->nonce_str), "%s", nonce);
    snprintf(out->package, sizeof(out->package), "prepay_id=%s", prepay_id);
    snprintf(out->sign_type, sizeof(out->sign_type), "RSA");
    return gateway_v3_jsapi_sign(cfg, time_stamp, nonce, prepay_id, out->pay_sign,
                                 sizeof(out->pay_sign));
}

int pay_prepay_jsapi(const app_config *cfg, const char *prepay_id, pay_jsapi *out)
{
    char ts[24], nonce[33];

    snprintf(ts, sizeof(ts), "%lld", clocks_real_ms() / 1000);
    if (wx_nonce(nonce) != 0)
        return -1;
    if (cfg->v3.api == WX_API_V3)
        return pay_prepay_jsapi_sign_v3(cfg, ts, nonce, prepay_id, out);
    return pay_prepay_jsapi_sign(cfg->appid, cfg->key, cfg->sign_type, ts, nonce, prepay_id, out);
}

settle_result pay_prepay_poll(app_ctx *ctx, const char *order_no, order_row *row)
{
    gw_result gw;
    settle_result s;

    if (trade_store_query_take(ctx, order_no, ctx->cfg->query_min_interval_ms) != ORDER_STORE_OK)
        return SETTLE_PENDING;
    if (gateway_orderquery(ctx, order_no, &gw) != GW_CHARGED)
        return SETTLE_PENDING; /* not paid yet: only the reconciler closes, after time_expire */
    s = settle_charge(ctx, order_no, gw.transaction_id, gw.total_fee, "poll", row);
    return s == SETTLE_PAID || s == SETTLE_CLOSED ? s : SETTLE_PENDING;
}
