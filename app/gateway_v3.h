/* gateway_v3 - the WeChat Pay APIv3 client: the same operations as the v2
 * client (gateway.h, gateway_refund.h), spoken in v3's words, for a
 * merchant configured with IDEMPAY_WX_API=v3 (config_v3.h). gateway.c and
 * gateway_refund.c hand their calls here in that case, so every flow above
 * them is the same for both dialects; MICROPAY and reverse stay v2 (v3 has
 * no payment-code API for a direct merchant).
 *
 * Every request is JSON signed WECHATPAY2-SHA256-RSA2048 with the merchant
 * key (serial of IDEMPAY_WX_V3_CERT); every reply (errors and a 204
 * included) must carry a valid platform signature (wx3_trust.h) within the
 * timestamp window. A reply signed by a serial we do not know makes the
 * client fetch /v3/certificates once (at most one fetch a process per
 * GW3_REFRESH_MIN_MS) and verify again: WeChat's certificate change.
 * Anything short of a verified, definite answer is GW_UNKNOWN; the
 * outcomes are those of the v2 functions (gateway_v3_reply.h). */
#ifndef IDEMPAY_GATEWAY_V3_H
#define IDEMPAY_GATEWAY_V3_H

#include "gateway.h"
#include "wx3_trust.h"

#define GW3_REFRESH_MIN_MS 1000

/* As gateway_unifiedorder: POST /v3/pay/transactions/native|jsapi. */
gw_outcome gateway_v3_prepay(app_ctx *ctx, const gw_prepay_req *p, gw_result *out);
/* As gateway_orderquery: GET /v3/pay/transactions/out-trade-no/{no}. */
gw_outcome gateway_v3_orderquery(app_ctx *ctx, const char *order_no, gw_result *out);
/* As gateway_orderquery_charge: GET /v3/pay/transactions/id/{transaction_id};
 * the reply must name order_no and that transaction. */
gw_outcome gateway_v3_orderquery_charge(app_ctx *ctx, const char *order_no,
                                        const char *transaction_id, gw_result *out);
/* As gateway_closeorder: POST .../out-trade-no/{no}/close (204: closed). */
gw_outcome gateway_v3_closeorder(app_ctx *ctx, const char *order_no, gw_result *out);
/* As gateway_refund: POST /v3/refund/domestic/refunds (notify_url
 * IDEMPAY_WX_V3_NOTIFY_URL). */
gw_outcome gateway_v3_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                             long long total_fee, long long refund_fee, const char *reason,
                             gw_result *out);
/* As gateway_refundquery: GET /v3/refund/domestic/refunds/{out_refund_no}. */
gw_outcome gateway_v3_refundquery(app_ctx *ctx, const char *out_refund_no, gw_result *out);
/* As gateway_downloadbill: GET /v3/bill/tradebill, then its download_url
 * (unsigned, as WeChat's); the bytes must hash to hash_value (SHA1), else
 * -1 with err_code "bill_hash". NO_STATEMENT_EXIST is 0 with "";
 * STATEMENT_CREATING is 1 (err_code "bill_creating"). */
int gateway_v3_tradebill(app_ctx *ctx, const char *bill_date, char **text, size_t *len,
                         gw_result *out);

/* 0 when the SHA1 of text[0..len) is hex (40 hex digits, either case: the
 * tradebill's hash_value), -1 otherwise. Pure. */
int gateway_v3_bill_hash_ok(const char *text, size_t len, const char *hex);

/* The process's platform certificates: on first use the pinned
 * IDEMPAY_WX_V3_PLATFORM_CERT, if any. Never NULL. */
wx3_trust *gateway_v3_platform(const app_config *cfg);
/* Fetches /v3/certificates (signed), believes its entries that decrypt
 * under the APIv3 key once the reply verifies under one of them. 0, or -1
 * with out saying why (also when the last fetch is under
 * GW3_REFRESH_MIN_MS old: err_code "refresh_too_soon"). */
int gateway_v3_refresh(app_ctx *ctx, gw_result *out);

/* The request's header line "Authorization: WECHATPAY2-SHA256-RSA2048
 * mchid=..,nonce_str=..,signature=..,timestamp=..,serial_no=.." for method,
 * url (the path and query as sent), body (NULL for a GET), timestamp ts and
 * nonce, signed with the merchant key, into hdr[0..cap). Pure (the unit
 * test checks it). 0 or -1. */
int gateway_v3_authorization(const app_config *cfg, const char *method, const char *url,
                             const char *body, const char *ts, const char *nonce, char *hdr,
                             size_t cap);

/* The JSAPI bridge's paySign of APIv3: SHA256withRSA with the merchant key
 * over "appId\ntimeStamp\nnonceStr\nprepay_id=...\n", base64, into
 * out[0..cap). 0 or -1. */
int gateway_v3_jsapi_sign(const app_config *cfg, const char *time_stamp, const char *nonce,
                          const char *prepay_id, char *out, size_t cap);

#endif
