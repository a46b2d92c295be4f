/* gateway_reply - what a WeChat Pay v2 reply means, decided without any
 * I/O: the checks every reply must pass before anything in it is believed,
 * and the outcome each endpoint's verified reply stands for. gateway.c
 * sends the requests and calls these; the fuzz harness fuzz_gateway_reply
 * calls them directly. Anything short of a verified, definite answer is
 * GW_UNKNOWN: the caller then leaves the order PROCESSING, never FAILED. */
#ifndef IDEMPAY_GATEWAY_REPLY_H
#define IDEMPAY_GATEWAY_REPLY_H

#include "wx_sign.h"
#include "wx_xml.h"

typedef enum {
    GW_CHARGED = 0, /* the order is charged (unifiedorder SUCCESS, orderquery SUCCESS/REFUND) */
    GW_NOT_CHARGED, /* definitively not charged (declined; NOTPAY/PAYERROR/CLOSED/ORDERNOTEXIST) */
    GW_ORDERPAID, /* unifiedorder/closeorder: already charged; ask orderquery for the transaction */
    GW_UNKNOWN,   /* timeout, reset, 5xx, SYSTEMERROR, bad XML or signature: outcome not known */
    GW_CLOSED,    /* the out_trade_no is closed: it can never be charged (closeorder SUCCESS or
                   * ORDERCLOSED, unifiedorder ORDERCLOSED, orderquery trade_state CLOSED) */
    GW_UNSUPPORTED, /* closeorder: the gateway has no such API (HTTP 404): nothing happened */
    GW_PREPAY       /* unifiedorder (NATIVE/JSAPI): a prepay order exists (prepay_id, code_url);
                     * nothing is charged until the customer pays it */
} gw_outcome;

typedef struct {
    gw_outcome outcome;
    char transaction_id[40]; /* when charged */
    long long total_fee;     /* fen, when the reply carries it; else -1 */
    char trade_state[24];    /* orderquery */
    char err_code[40];       /* WeChat err_code or transport reason */
    char message[160];       /* human text for logs / 402 bodies */
    int answered;            /* 1 when a complete, verified reply came back: the call is
                              * over at the gateway (not in flight), whatever it said */
    long http_code;          /* the reply's HTTP status, 0 when none came */
    char prepay_id[65];      /* unifiedorder GW_PREPAY */
    char code_url[257];      /* unifiedorder GW_PREPAY of a NATIVE order ("" otherwise) */
    int recall;              /* reverse: 1 when the reply says recall=Y (call it again) */
} gw_result;

/* An empty result: GW_UNKNOWN, no transaction, total_fee -1. */
void gateway_result_init(gw_result *out);
/* The checks every reply must pass before anything in it is believed:
 * return_code SUCCESS, a valid signature with key (MD5 or the sign_type it
 * names) of a type the configured sign_type allows (wx_sign_type_allowed:
 * an MD5 reply under HMAC-SHA256 is refused with err_code "sign_type"),
 * our appid and mch_id. 0, or -1 with out set to GW_UNKNOWN and the reason.
 * (Pure: the fuzz harness fuzz_gateway_reply calls it too.) */
int gateway_reply_trusted(const wx_msg *reply, const char *key, wx_sign_type sign_type,
                          const char *appid, const char *mch_id, gw_result *out);
/* transaction_id and total_fee (when present) of a trusted reply that
 * reports a charge, into out. 0, or -1 (GW_UNKNOWN) when the transaction_id
 * is not printable ASCII of at most 32 characters or total_fee is not a
 * valid amount in fen. */
int gateway_reply_charge(const wx_msg *reply, gw_result *out);
/* Sets out's outcome and, when non-NULL, its err_code and message (cut to
 * fit). Returns o. */
gw_outcome gateway_result_set(gw_result *out, gw_outcome o, const char *err_code,
                              const char *message);

/* The outcome of a trusted unifiedorder reply (see gateway_unifiedorder):
 * the prepay flows. SUCCESS -> GW_PREPAY with prepay_id (printable, at most
 * 64) and code_url (printable, at most 256; required when need_code_url);
 * anything missing -> GW_UNKNOWN. FAIL as gateway_reply_micropay, except
 * that a decline means "no prepay was created". */
gw_outcome gateway_reply_unifiedorder(const wx_msg *reply, int need_code_url, gw_result *out);
/* The outcome of a trusted micropay reply (see gateway_micropay): the
 * charge with its reply. */
gw_outcome gateway_reply_micropay(const wx_msg *reply, gw_result *out);
/* The outcome of a trusted /secapi/pay/reverse reply (see gateway_reverse):
 * result_code SUCCESS and recall N -> GW_CLOSED; FAIL ORDERNOTEXIST (recall
 * not Y) -> GW_NOT_CHARGED (the micropay has not reached the gateway yet);
 * anything else GW_UNKNOWN (out->recall set when recall=Y). */
gw_outcome gateway_reply_reverse(const wx_msg *reply, gw_result *out);
/* The outcome of a trusted orderquery reply about order_no (see
 * gateway_orderquery); a reply about another out_trade_no is GW_UNKNOWN. */
gw_outcome gateway_reply_orderquery(const wx_msg *reply, const char *order_no, gw_result *out);
/* The outcome of a trusted closeorder reply (see gateway_closeorder). */
gw_outcome gateway_reply_closeorder(const wx_msg *reply, gw_result *out);
/* The outcome of a trusted refund reply for transaction_id (see
 * gateway_refund). */
gw_outcome gateway_reply_refund(const wx_msg *reply, const char *transaction_id, gw_result *out);
/* A downloadbill answer that is XML: 0 for WeChat's "No Bill Exist" (a day
 * without records), 1 for "Bill Creating" (the day's bill is not generated
 * yet; out->err_code "bill_creating"), -1 with out saying why for anything
 * else. */
int gateway_reply_bill_empty(const wx_msg *reply, gw_result *out);

#endif
