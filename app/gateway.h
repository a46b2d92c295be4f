/* gateway - the WeChat Pay v2 client (unifiedorder, orderquery, closeorder,
 * refund, downloadbill).
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
    GW_ORDERPAID,     /* unifiedorder/closeorder: already charged; ask orderquery for the transaction */
    GW_UNKNOWN,       /* timeout, reset, 5xx, SYSTEMERROR, bad XML or signature: outcome not known */
    GW_CLOSED,        /* the out_trade_no is closed: it can never be charged (closeorder SUCCESS or
                       * ORDERCLOSED, unifiedorder ORDERCLOSED, orderquery trade_state CLOSED) */
    GW_UNSUPPORTED    /* closeorder: the gateway has no such API (HTTP 404): nothing happened */
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
    long http_code;            /* the reply's HTTP status, 0 when none came */
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
 * notify_url from the config). GW_CHARGED only with a transaction_id; the
 * charge's total_fee as the reply says (-1 when it does not): the caller
 * compares it with the order (settle_charge), since a charge of another
 * amount is still money taken. result_code FAIL: ORDERPAID -> GW_ORDERPAID;
 * ORDERCLOSED -> GW_CLOSED; SYSTEMERROR, BANKERROR,
 * USERPAYING, OUT_TRADE_NO_USED, BIZERR_NEED_RETRY, FREQUENCY_LIMITED or no
 * err_code -> GW_UNKNOWN; any other err_code of a verified reply ->
 * GW_NOT_CHARGED (a decline; out->message says why). *out is always filled;
 * the result is also out->outcome. */
gw_outcome gateway_unifiedorder(app_ctx *ctx, const char *order_no, long long total_fee, gw_result *out);
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
