/* notifier - delivers payment notifications to the merchant's notify_url.
 *
 * After each charge, notify_copies independent deliveries are queued (when
 * notify_enabled); each is first tried notify_delay_ms later, and retried on
 * WeChat's schedule scaled by notify_retry_ms (faults_retry_delay_ms) until
 * the merchant answers return_code SUCCESS or the 15 retries are spent. At
 * most notify_concurrency deliveries are in flight at once, on background
 * threads that never block request threads. Every POST adds one to the
 * persisted notifications_sent counter (flushed to the ledger by its own
 * thread within about 100 ms), and is appended to the journal with the
 * merchant's answer or the transport error. Pending deliveries live in
 * memory: a restart of the mock drops them, and so does notifier_reset_begin. */
#ifndef IDEMPAY_MOCK_NOTIFIER_H
#define IDEMPAY_MOCK_NOTIFIER_H

#include "ledger.h"
#include "mock.h"
#include "refund_store.h"

#define NOTIFIER_MAX_URL 256
#define NOTIFIER_MAX_QUEUE 200000 /* deliveries beyond this are dropped (logged) */

typedef struct notifier notifier;

/* What a notification says about one charge. */
typedef struct {
    char transaction_id[TXID_BUF];
    char out_trade_no[33];
    long long total_fee;
    char trade_type[16];
    char openid[129];
    char time_end[15];
    char notify_url[NOTIFIER_MAX_URL + 1];
    int api_version; /* 2: the v2 XML notification; 3: APIv3's (v3_notify.h) */
} notifier_charge;

/* Starts the delivery threads (MOCK_MAX_NOTIFY_CONCURRENCY of them) and
 * the counter flusher. app must outlive the notifier. NULL on failure. */
notifier *notifier_start(mock_app *app);

/* Queues the deliveries for one charge (copied). Never blocks on the network. */
void notifier_charge_made(notifier *n, const notifier_charge *c);

/* Queues the deliveries of the result notification of refund r, which just
 * ended, to url (refund_notify.h), like a charge's: notify_copies copies,
 * the same delays and retries. Never blocks on the network. */
void notifier_refund_ended(notifier *n, const refund_record *r, const char *url);

/* Wakes the delivery threads after a config change (concurrency, enabled). */
void notifier_kick(notifier *n);

/* notifications_sent: the ledger's counter plus the POSTs not yet flushed.
 * Returns 0 or -1 (ledger failure). */
int notifier_count(notifier *n, ledger *l, long long *out);

/* A reset: notifier_reset_begin drops every pending delivery (in-flight
 * ones finish but are not retried), zeroes the unflushed count and holds the
 * flusher until notifier_reset_end, so the caller can zero the ledger's
 * counter in between. n may be NULL (both do nothing). */
void notifier_reset_begin(notifier *n);
void notifier_reset_end(notifier *n);

/* The signed notification XML for c: the fields appid, bank_type, cash_fee,
 * fee_type, is_subscribe, mch_id, nonce_str, openid, out_trade_no,
 * result_code, return_code, sign, time_end, total_fee, trade_type,
 * transaction_id in that order; total_fee and cash_fee as bare text, the
 * rest as CDATA (as WeChat sends them); MD5 signature. Returns a malloc'd
 * string (caller frees) or NULL on failure. */
char *notifier_build_xml(const notifier_charge *c, const mock_creds *creds, const char *nonce);

/* true when the merchant's reply body says return_code SUCCESS. */
int notifier_reply_ok(const char *body, size_t len);

#endif
