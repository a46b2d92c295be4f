/* gateway - the WeChat Pay v2 client (unifiedorder, micropay, orderquery,
 * closeorder, reverse, refund, downloadbill).
 * Every request is signed and every reply's signature is verified; a reply
 * that is missing, late, unparsable or badly signed is GW_UNKNOWN, never a
 * decline. Uses the thread's reused curl handle (ctx->gateway). */
#ifndef IDEMPAY_GATEWAY_H
#define IDEMPAY_GATEWAY_H

#include "app_ctx.h"
#include "gateway_reply.h"

/* What a unifiedorder of a prepay flow sends: the same values on every
 * call of one order (time_expire included, fixed when the order was
 * created), so WeChat answers a repeat with the same prepay. */
typedef struct {
    const char *order_no;     /* out_trade_no */
    long long total_fee;      /* fen */
    const char *trade_type;   /* "NATIVE" or "JSAPI" */
    const char *openid;       /* JSAPI: the payer; NULL for NATIVE */
    const char *time_expire;  /* yyyyMMddHHmmss, China time */
} gw_prepay_req;

/* unifiedorder (NATIVE or JSAPI, notify_url from the config): creates, or
 * finds again, the prepay order; it charges nothing (the customer pays it
 * later, in WeChat). SUCCESS -> GW_PREPAY (out->prepay_id, out->code_url
 * for NATIVE). result_code FAIL: ORDERPAID -> GW_ORDERPAID (paid: ask
 * orderquery); ORDERCLOSED -> GW_CLOSED; SYSTEMERROR and the other
 * uncertain codes -> GW_UNKNOWN (repeat it: the same parameters give the
 * same prepay); any other err_code -> GW_NOT_CHARGED (no prepay created). */
gw_outcome gateway_unifiedorder(app_ctx *ctx, const gw_prepay_req *p, gw_result *out);
/* micropay of auth_code (the customer's payment code) for order_no and
 * total_fee fen: the charge itself. GW_CHARGED only with a transaction_id;
 * the charge's total_fee as the reply says (-1 when it does not): the
 * caller compares it with the order (settle_charge). result_code FAIL:
 * ORDERPAID -> GW_ORDERPAID; ORDERCLOSED, ORDERREVERSED -> GW_CLOSED;
 * USERPAYING (the customer confirms on the phone), SYSTEMERROR, BANKERROR,
 * OUT_TRADE_NO_USED, BIZERR_NEED_RETRY, FREQUENCY_LIMITED or no err_code ->
 * GW_UNKNOWN (poll orderquery, then reverse); any other err_code of a
 * verified reply (AUTHCODEEXPIRE, NOTENOUGH, ...) -> GW_NOT_CHARGED. */
gw_outcome gateway_micropay(app_ctx *ctx, const char *order_no, long long total_fee,
                            const char *auth_code, gw_result *out);
/* /secapi/pay/reverse of out_trade_no order_no (the payment-code flow's
 * fence; the client certificate comes with the shared client, as for
 * refunds): GW_CLOSED when reversed (result_code SUCCESS, recall N): the
 * trade can never be charged, and a charge that landed is returned by the
 * gateway itself. Anything else GW_UNKNOWN (out->recall 1: call again). */
gw_outcome gateway_reverse(app_ctx *ctx, const char *order_no, gw_result *out);
/* orderquery by out_trade_no. trade_state SUCCESS/REFUND -> GW_CHARGED
 * (transaction_id, total_fee when present); CLOSED -> GW_CLOSED;
 * NOTPAY/PAYERROR/REVOKED or err_code ORDERNOTEXIST -> GW_NOT_CHARGED (not
 * charged *yet*: an attempt still queued at the gateway may charge after
 * this answer; only a close makes it final); anything else (USERPAYING,
 * SYSTEMERROR, transport trouble) -> GW_UNKNOWN. Never GW_ORDERPAID. */
gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out);
/* closeorder of out_trade_no order_no: after GW_CLOSED no unifiedorder of
 * it can charge, including one still queued at the gateway. result_code
 * SUCCESS or err_code ORDERCLOSED -> GW_CLOSED; ORDERPAID -> GW_ORDERPAID
 * (charged: ask orderquery); HTTP 404 -> GW_UNSUPPORTED (a gateway without
 * closeorder); anything else -> GW_UNKNOWN (ask again later). */
gw_outcome gateway_closeorder(app_ctx *ctx, const char *order_no, gw_result *out);
/* refund of one charge (by transaction_id), idempotent per out_refund_no.
 * GW_CHARGED here means "refund accepted"; GW_NOT_CHARGED "refused for good"
 * (err_code says why); GW_UNKNOWN "not known: ask again later" (transport
 * trouble, SYSTEMERROR, BIZERR_NEED_RETRY, an unverifiable reply). */
gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, gw_result *out);

/* downloadbill: the gateway's statement (bill_type ALL) of China-time day
 * bill_date ("yyyyMMdd"), narrowed to [begin, end) ("yyyyMMddHHmmss", China
 * time; the mock's extension, a real gateway answers the whole day) when
 * both are non-NULL. 0 with *text (malloc'd, NUL-terminated, the caller
 * frees; "" for WeChat's "No Bill Exist": no record that day) and *len;
 * -1 with out->err_code/message saying why (nothing to free). */
int gateway_downloadbill(app_ctx *ctx, const char *bill_date, const char *begin, const char *end,
                         char **text, size_t *len, gw_result *out);

#endif
