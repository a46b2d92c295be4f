/* pay_prepay - the prepay flows (NATIVE, JSAPI) under POST /api/pay and the
 * order poll: obtaining the order's one prepay, the JS bridge's signed
 * parameters, and the rate-limited orderquery of a client's poll.
 *
 * unifiedorder charges nothing: the customer pays the prepay later, in
 * WeChat. So unlike the payment-code charge it may be repeated by anyone
 * (the lease holder, a repeat whose lease is live, after an uncertain
 * call): it always sends the order's stored parameters, time_expire
 * included, which WeChat answers with the same prepay; at most one open
 * gateway order exists per business order (one out_trade_no). The fence of
 * the prepay (orderquery, then closeorder, after time_expire) is the
 * reconciler's settle_resolve (docs/FENCE.md). */
#ifndef IDEMPAY_PAY_PREPAY_H
#define IDEMPAY_PAY_PREPAY_H

#include "app_ctx.h"
#include "gateway.h"
#include "pay_request.h"
#include "settle.h"
#include "trade_store.h"

typedef enum {
    PREPAY_AWAITING = 0, /* tr->prepay_id (and code_url) hold the order's prepay */
    PREPAY_SETTLED,      /* the gateway said paid or closed: *s, *row say where */
    PREPAY_DECLINED,     /* no prepay was created: a definitive refusal (gw->message) */
    PREPAY_UNKNOWN       /* no prepay yet (timeout, SYSTEMERROR...): ask again */
} prepay_result;

/* The lease a new prepay order takes: until its time_expire, or until
 * closeorder accepts it (creation + IDEMPAY_CLOSE_MIN_AGE_MS) when later,
 * plus IDEMPAY_CLOSE_MARGIN_MS; from now_ms. Pure. */
long pay_prepay_lease_ms(const app_config *cfg, const trade_row *tr, long long now_ms);

/* Makes sure order_no (amount_fen, trade *tr) has its prepay: when
 * tr->prepay_id is empty, one unifiedorder with tr's parameters, the
 * answer stored (first writer wins; *tr re-read). fence is the attempt the
 * caller read (a close or charge is settled against it). */
prepay_result pay_prepay_obtain(app_ctx *ctx, const char *order_no, long long amount_fen,
                                long long fence, trade_row *tr, gw_result *gw, settle_result *s,
                                order_row *row);

/* The JS bridge's parameters for prepay_id, signed with the merchant key
 * (WeChat 'JSAPI调起支付': paySign over appId, nonceStr, package, signType,
 * timeStamp; signType is the configured IDEMPAY_WX_SIGN_TYPE, which WeChat
 * wants equal to the unifiedorder's). With IDEMPAY_WX_API=v3, APIv3's
 * form instead (pay_prepay_jsapi_sign_v3). 0, or -1 (random source or
 * crypto). */
int pay_prepay_jsapi(const app_config *cfg, const char *prepay_id, pay_jsapi *out);
/* APIv3's JS bridge parameters (JSAPI调起支付, v3): signType "RSA", paySign
 * the base64 SHA256withRSA of "appId\ntimeStamp\nnonceStr\nprepay_id=...\n"
 * with the merchant key (gateway_v3_jsapi_sign). 0 or -1. */
int pay_prepay_jsapi_sign_v3(const app_config *cfg, const char *time_stamp, const char *nonce,
                             const char *prepay_id, pay_jsapi *out);
/* The same with the sign type, time stamp and nonce given (pure; the unit
 * test checks WeChat's documented example). */
int pay_prepay_jsapi_sign(const char *appid, const char *key, wx_sign_type type,
                          const char *time_stamp, const char *nonce, const char *prepay_id,
                          pay_jsapi *out);

/* Unix ms as "2024-01-02T03:04:05.000Z". */
void pay_prepay_iso(long long ms, char out[32]);

/* A client's poll of a PROCESSING order awaiting payment: at most one
 * orderquery per order per IDEMPAY_QUERY_MIN_INTERVAL_MS across every
 * process (trade_store_query_take); a charge it shows is settle_charge'd
 * (*row re-read). Returns SETTLE_PAID or SETTLE_CLOSED when the order
 * moved, else SETTLE_PENDING (nothing asked, or nothing new). */
settle_result pay_prepay_poll(app_ctx *ctx, const char *order_no, order_row *row);

#endif
