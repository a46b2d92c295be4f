/* refund_flow - the mock's refunds as WeChat Pay v2 runs them
 * (docs/MOCK.md, "Refunds that complete"):
 *
 * - /secapi/pay/refund SUCCESS means accepted: the refund is PROCESSING
 *   (refund_id in the reply) and ends refund_delay_ms later as REFUNDCLOSE
 *   (refund_close_rate), CHANGE (refund_change_rate) or SUCCESS. A new
 *   refund may instead be refused NOTENOUGH (refund_notenough_rate) or
 *   USER_ACCOUNT_ABNORMAL (refund_abnormal_rate). The four draws come from a
 *   PRNG of its own (seeded from the config's seed), always four per new
 *   refund, so the other endpoints' decisions do not move.
 * - /pay/refundquery by refund_id, out_refund_no, transaction_id or
 *   out_trade_no (that priority) lists the refunds with their status; by
 *   an order key 10 from offset, with total_refund_count past 10.
 * - When a refund ends, its notification (refund_notify.h) is queued on
 *   the notifier to the request's notify_url, else IDEMPAY_MOCK_REFUND_NOTIFY_URL
 *   (none: no notification).
 * - every /secapi/ call wants a verified client certificate whose subject CN is the
 *   merchant's mch_id (require_client_cert).
 *
 * Refunds end in a background thread (every REFUND_FLOW_TICK_MS) and, so
 * that a reader never sees a refund past its time, before every refundquery
 * and every ledger listing. Each request thread keeps a refund_store of its
 * own (created on first use, freed when the thread ends). */
#ifndef IDEMPAY_MOCK_REFUND_FLOW_H
#define IDEMPAY_MOCK_REFUND_FLOW_H

#include <stdbool.h>
#include <jansson.h>

#include "mock.h"
#include "txid.h"
#include "wx_xml.h"

#define REFUND_FLOW_TICK_MS 100
/* The refunds of one charge refundquery reads (WeChat allows 50 per order)
 * and lists per page when asked by transaction_id / out_trade_no. */
#define REFUND_FLOW_MAX_LISTED 50
#define REFUND_FLOW_PAGE 10
/* WeChat's return_msg to a secapi call without a verified client certificate. */
#define REFUND_FLOW_CERT_MSG "证书错误"

/* How to answer a refund or refundquery call. */
typedef struct {
    const char *err_code; /* NULL: result_code SUCCESS with extra */
    char err_des[160];
    wx_msg extra;          /* the reply's fields (initialised; caller frees) */
    char out_trade_no[33]; /* for the journal ("" unknown) */
    char transaction_id[TXID_BUF];
} refund_flow_reply;

/* Starts the thread that ends due refunds. 0, or -1 (logged). */
int refund_flow_start(mock_app *app);

/* true when a request may call the /secapi/ endpoints: require_client_cert
 * off, or the TLS front verified the client's certificate against the test
 * CA (client_verify, its SSL_CLIENT_VERIFY, is "SUCCESS") and its subject
 * client_dn (SSL_CLIENT_S_DN, RFC 2253 or one-line form) has CN = the
 * merchant's mch_id, as WeChat's merchant certificates have. Either may be
 * NULL (no TLS, no certificate). */
bool refund_flow_cert_ok(mock_app *app, const char *client_verify, const char *client_dn);

/* Serves a validated /secapi/pay/refund (req holds its fields; total_fee and
 * refund_fee checked by api_validate) into *out (initialised here). */
void refund_flow_refund(mock_app *app, const wx_msg *req, long long total_fee, long long refund_fee,
                        int api_version, refund_flow_reply *out);

/* Serves a validated /pay/refundquery into *out (initialised here). */
void refund_flow_query(mock_app *app, const wx_msg *req, refund_flow_reply *out);

/* Ends the refunds that are due now (queuing their notifications). */
void refund_flow_settle_now(mock_app *app);

/* Every refund (out_trade_no's when non-NULL) as refund_store_json gives
 * them, after refund_flow_settle_now; NULL on failure. */
json_t *refund_flow_ledger_json(mock_app *app, const char *out_trade_no);

#endif
