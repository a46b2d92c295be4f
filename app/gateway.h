/* gateway - the WeChat Pay v2 client (unifiedorder, orderquery, refund).
 * Every request is signed and every reply's signature is verified; a reply
 * that is missing, late, unparsable or badly signed is GW_UNKNOWN, never a
 * decline. Uses the thread's reused curl handle (ctx->gateway). */
#ifndef IDEMPAY_GATEWAY_H
#define IDEMPAY_GATEWAY_H

#include "app_ctx.h"
#include "wx_xml.h"

typedef enum {
    GW_CHARGED = 0,   /* the order is charged (unifiedorder SUCCESS, orderquery SUCCESS/REFUND) */
    GW_NOT_CHARGED,   /* definitively not charged (declined; NOTPAY/PAYERROR/CLOSED/ORDERNOTEXIST) */
    GW_ORDERPAID,     /* unifiedorder: already charged before; ask orderquery for the transaction */
    GW_UNKNOWN        /* timeout, reset, 5xx, SYSTEMERROR, bad XML or signature: outcome not known */
} gw_outcome;

typedef struct {
    gw_outcome outcome;
    char transaction_id[40];   /* when charged */
    long long total_fee;       /* fen, when the reply carries it; else -1 */
    char trade_state[24];      /* orderquery */
    char err_code[40];         /* WeChat err_code or transport reason */
    char message[160];         /* human text for logs / 402 bodies */
    int answered;              /* 1 when a complete, verified reply came back: the call is
                                * over at the gateway (not in flight), whatever it said */
} gw_result;

/* An empty result: GW_UNKNOWN, no transaction, total_fee -1. */
void gateway_result_init(gw_result *out);
/* The checks every reply must pass before anything in it is believed:
 * return_code SUCCESS, a valid signature with key (MD5 or the sign_type it
 * names), our appid and mch_id. 0, or -1 with out set to GW_UNKNOWN and the
 * reason. (Pure: the fuzz harness fuzz_gateway_reply calls it too.) */
int gateway_reply_trusted(const wx_msg *reply, const char *key, const char *appid,
                          const char *mch_id, gw_result *out);
/* transaction_id and total_fee (when present) of a trusted reply that
 * reports a charge, into out. 0, or -1 (GW_UNKNOWN) when the transaction_id
 * is not printable ASCII of at most 32 characters or total_fee is not a
 * valid amount in fen. */
int gateway_reply_charge(const wx_msg *reply, gw_result *out);

/* unifiedorder for order_no (= out_trade_no) and total_fee fen (NATIVE,
 * notify_url from the config). GW_CHARGED only with a transaction_id and,
 * when the reply carries total_fee, the same amount (else GW_UNKNOWN).
 * result_code FAIL: ORDERPAID -> GW_ORDERPAID; SYSTEMERROR, BANKERROR,
 * USERPAYING, OUT_TRADE_NO_USED, BIZERR_NEED_RETRY, FREQUENCY_LIMITED or no
 * err_code -> GW_UNKNOWN; any other err_code of a verified reply ->
 * GW_NOT_CHARGED (a decline; out->message says why). *out is always filled;
 * the result is also out->outcome. */
gw_outcome gateway_unifiedorder(app_ctx *ctx, const char *order_no, long long total_fee, gw_result *out);
/* orderquery by out_trade_no. trade_state SUCCESS/REFUND -> GW_CHARGED
 * (transaction_id, total_fee when present); NOTPAY/PAYERROR/CLOSED/REVOKED
 * or err_code ORDERNOTEXIST -> GW_NOT_CHARGED; anything else (USERPAYING,
 * SYSTEMERROR, transport trouble) -> GW_UNKNOWN. Never GW_ORDERPAID. */
gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out);
/* refund of one charge (by transaction_id), idempotent per out_refund_no.
 * GW_CHARGED here means "refund accepted"; GW_NOT_CHARGED "refused for good"
 * (err_code says why); GW_UNKNOWN "not known: ask again later" (transport
 * trouble, SYSTEMERROR, BIZERR_NEED_RETRY, an unverifiable reply). */
gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, gw_result *out);

#endif
