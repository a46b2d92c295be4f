/* refund_queue - refunds worked off the request path: duplicate charges
 * (queued here) and merchant refunds (queued by refund_api.c).
 *
 * A refund is one payment_refund row per out_refund_no (unique), fixed when
 * the row is written: a duplicate charge's is "RF" + its transaction_id, so
 * a charge is queued at most once. One worker thread per service process
 * claims due rows by a CAS on lease_until (attempts is bumped by the claim
 * and fences the later updates) and steps them through refund_state.h: a
 * PENDING row is submitted (/secapi/pay/refund; a retry names the same
 * out_refund_no, so it is the same refund at the gateway, never a second
 * one) until accepted, with exponential backoff; an ACCEPTED row is asked
 * about (refundquery) every IDEMPAY_REFUND_QUERY_INTERVAL_MS until SUCCESS,
 * or REFUNDCLOSE / CHANGE, which stop it for an operator (ERROR log,
 * idempay_refunds_stuck_total). The refund notification (refund_notify.h)
 * may end it first. */
#ifndef IDEMPAY_REFUND_QUEUE_H
#define IDEMPAY_REFUND_QUEUE_H

#include <stddef.h>
#include "app_ctx.h"
#include "config.h"
#include "refund_state.h"

#define REFUND_NO_MAX 64 /* WeChat's out_refund_no limit */
#define REFUND_BACKOFF_MIN_MS 500L
#define REFUND_BACKOFF_MAX_MS 60000L

/* The out_refund_no for the charge transaction_id: "RF" + transaction_id.
 * Deterministic, so every attempt names the same refund. Returns 0, or -1
 * when transaction_id is empty, not [0-9A-Za-z_-] or does not fit (out is
 * then ""). */
int refund_queue_refund_no(const char *transaction_id, char *out, size_t outlen);

/* Delay before the next attempt after `attempts` failed ones (>= 1):
 * REFUND_BACKOFF_MIN_MS doubled per attempt, capped at REFUND_BACKOFF_MAX_MS. */
long refund_queue_backoff_ms(long attempts);

/* Queues the refund of charge transaction_id (of order_no, total_fee fen)
 * inside the caller's open transaction on ctx->db. Returns 1 when queued now,
 * 0 when that charge was already queued (nothing written), -1 on a MariaDB
 * error (*db_errno set; the caller rolls back). */
int refund_queue_enqueue(app_ctx *ctx, const char *transaction_id, const char *order_no,
                         long long total_fee, unsigned int *db_errno);

/* Counts a refund that stopped for an operator (idempay_refunds_stuck_total
 * by state) and logs it at ERROR with its order, refund and why. */
void refund_queue_report_stuck(const char *order_no, const char *out_refund_no,
                               long long refund_fee, refund_status state, const char *why);

/* Works every refund that is due now, once: claim, gateway call (refund for
 * a PENDING row, refundquery for an ACCEPTED one), write the step. Returns the number of rows
 * claimed (0 when none was due), or -1 when MariaDB is unavailable (ctx->err says why). */
int refund_queue_run_once(app_ctx *ctx);

/* Starts this process's refund worker: a detached thread with its own
 * app_ctx that polls the queue until the process exits. cfg must outlive
 * the process. Call once per process, after metrics_init and
 * http_client_global_init. With IDEMPAY_REFUNDS=off the thread only logs
 * that refunds stay queued. Returns 0, or -1 when the thread cannot start. */
int refund_queue_start(const app_config *cfg);

#endif
