/* gateway_refund - WeChat Pay v2 refunds: /secapi/pay/refund (mutual TLS,
 * the merchant certificate of IDEMPAY_WX_CERT) and /pay/refundquery, over
 * gateway_call. A refund's SUCCESS reply means "accepted", never
 * "refunded": the result comes from refundquery or the refund notification
 * (refund_notify.c). Both calls are idempotent per out_refund_no. With
 * IDEMPAY_WX_API=v3 both go to APIv3 (gateway_v3_refund, _refundquery:
 * no client certificate, the request signature authenticates) with the
 * same outcomes. */
#ifndef IDEMPAY_GATEWAY_REFUND_H
#define IDEMPAY_GATEWAY_REFUND_H

#include "gateway.h"

/* refund of refund_fee fen of the charge transaction_id (total_fee fen),
 * named out_refund_no; reason (may be NULL) becomes refund_desc; notify_url
 * is IDEMPAY_REFUND_NOTIFY_URL. GW_CHARGED here means "accepted";
 * GW_NOT_CHARGED "refused" (out->err_code says why: refund_state decides
 * whether a retry may cure it); GW_UNKNOWN "not known: ask again later"
 * (transport trouble, TLS refused, SYSTEMERROR, BIZERR_NEED_RETRY, an
 * unverifiable reply). */
gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, const char *reason,
                          gw_result *out);

/* refundquery by out_refund_no. GW_CHARGED: a verified answer about that
 * refund, out->trade_state holds its refund_status_0 (SUCCESS, REFUNDCLOSE,
 * PROCESSING, CHANGE) and out->total_fee its refund_fee_0 (-1 when absent);
 * GW_NOT_CHARGED with trade_state "REFUNDNOTEXIST": the gateway has no such
 * refund; GW_UNKNOWN otherwise. */
gw_outcome gateway_refundquery(app_ctx *ctx, const char *out_refund_no, gw_result *out);

/* The meaning of a trusted refundquery reply about out_refund_no (pure; see
 * gateway_refundquery). A reply about another refund is GW_UNKNOWN. */
gw_outcome gateway_reply_refundquery(const wx_msg *reply, const char *out_refund_no,
                                     gw_result *out);

#endif
