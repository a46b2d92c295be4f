/* gateway - the WeChat Pay v2 client (unifiedorder, micropay, orderquery,
 * closeorder, reverse, downloadbill; refund and refundquery in gateway_refund.c).
 * Every request is signed and every reply's signature is verified; a reply
 * that is missing, late, unparsable or badly signed is GW_UNKNOWN, never a
 * decline. Uses the thread's reused curl handle (ctx->gateway).
 *
 * With IDEMPAY_WX_API=v3 (config_v3.h) the same functions speak APIv3
 * (gateway_v3.h) with the same outcomes: the flows above never know which
 * dialect answered. gateway_micropay and gateway_reverse stay v2. */
#ifndef IDEMPAY_GATEWAY_H
#define IDEMPAY_GATEWAY_H

#include "app_ctx.h"
#include "gateway_reply.h"
#include "wx_endpoint.h"

/* What a unifiedorder of a prepay flow sends: the same values on every
 * call of one order (time_expire included, fixed when the order was
 * created), so WeChat answers a repeat with the same prepay. */
typedef struct {
    const char *order_no;    /* out_trade_no */
    long long total_fee;     /* fen */
    const char *trade_type;  /* "NATIVE" or "JSAPI" */
    const char *openid;      /* JSAPI: the payer; NULL for NATIVE */
    const char *time_expire; /* yyyyMMddHHmmss, China time */
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
 * gateway itself. ORDERNOTEXIST -> GW_NOT_CHARGED (no such trade yet: not a
 * fence, a queued micropay may still land). Anything
 * else GW_UNKNOWN (out->recall 1: call again). */
gw_outcome gateway_reverse(app_ctx *ctx, const char *order_no, gw_result *out);
/* orderquery by out_trade_no. trade_state SUCCESS/REFUND -> GW_CHARGED
 * (transaction_id, total_fee when present); CLOSED -> GW_CLOSED;
 * NOTPAY/PAYERROR/REVOKED or err_code ORDERNOTEXIST -> GW_NOT_CHARGED (not
 * charged *yet*: an attempt still queued at the gateway may charge after
 * this answer; only a close makes it final); anything else (USERPAYING,
 * SYSTEMERROR, transport trouble) -> GW_UNKNOWN. Never GW_ORDERPAID. */
gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out);
/* orderquery of one charge: by transaction_id (WeChat answers by it when
 * both are given), with out_trade_no order_no. The same outcomes as
 * gateway_orderquery; the signed reply must name order_no and, when
 * charged, this very transaction_id (else GW_UNKNOWN). ORDERNOTEXIST ->
 * GW_NOT_CHARGED: the gateway has no such charge. The statement job's
 * confirmation of a bill line (the bill is unsigned). */
gw_outcome gateway_orderquery_charge(app_ctx *ctx, const char *order_no, const char *transaction_id,
                                     gw_result *out);
/* closeorder of out_trade_no order_no: after GW_CLOSED no unifiedorder of
 * it can charge, including one still queued at the gateway. result_code
 * SUCCESS or err_code ORDERCLOSED -> GW_CLOSED; ORDERPAID -> GW_ORDERPAID
 * (charged: ask orderquery); HTTP 404 -> GW_UNSUPPORTED (a gateway without
 * closeorder); anything else -> GW_UNKNOWN (ask again later). */
gw_outcome gateway_closeorder(app_ctx *ctx, const char *order_no, gw_result *out);
/* refund and refundquery: gateway_refund.h. */

/* What a trusted reply means for one endpoint (subject: the order or
 * refund the call is about); fills out and returns its outcome. */
typedef gw_outcome (*gw_meaning)(const wx_msg *reply, const char *subject, gw_result *out);

/* One signed call of endpoint ep (common/wx_endpoint: its path, "/pay/..."
 * or "/secapi/..." at IDEMPAY_GATEWAY_SECAPI_URL) with the merchant fields
 * added to req; the reply is checked (gateway_reply_trusted) and read by
 * meaning. built = 0 when the caller could not fill req (GW_UNKNOWN, nothing
 * sent). Frees req; logs the outcome under the endpoint's name. For the
 * endpoint modules (gateway_refund.c). */
gw_outcome gateway_call(app_ctx *ctx, wx_endpoint ep, wx_msg *req, int built, const char *subject,
                        gw_meaning meaning, gw_result *out);

/* downloadbill: the gateway's statement (bill_type ALL) of the whole
 * China-time day bill_date ("yyyyMMdd"). 0 with *text (malloc'd,
 * NUL-terminated, the caller frees; "" for WeChat's "No Bill Exist": no
 * record that day) and *len; 1 when the day's bill is not generated yet
 * (return_msg "Bill Creating"; out->err_code "bill_creating"); -1 with
 * out->err_code/message saying why (nothing to free). */
int gateway_downloadbill(app_ctx *ctx, const char *bill_date, char **text, size_t *len,
                         gw_result *out);

#endif
