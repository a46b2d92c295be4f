/* gateway - the WeChat Pay v2 client (unifiedorder, orderquery, refund).
 * Every request is signed and every reply's signature is verified; a reply
 * that is missing, late, unparsable or badly signed is GW_UNKNOWN, never a
 * decline. Uses the thread's reused curl handle (ctx->gateway). */
#ifndef IDEMPAY_GATEWAY_H
#define IDEMPAY_GATEWAY_H

#include "app_ctx.h"

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
} gw_result;

/* unifiedorder for order_no (= out_trade_no) and total_fee fen. */
gw_outcome gateway_unifiedorder(app_ctx *ctx, const char *order_no, long long total_fee, gw_result *out);
/* orderquery by out_trade_no. */
gw_outcome gateway_orderquery(app_ctx *ctx, const char *order_no, gw_result *out);
/* refund of one charge (by transaction_id), idempotent per out_refund_no.
 * GW_CHARGED here means "refund accepted". */
gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, gw_result *out);

#endif
