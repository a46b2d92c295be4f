/* refund_queue - refunds of duplicate charges, worked off the request path.
 *
 * A refund is one payment_refund row per charge (unique transaction_id), so a
 * charge is queued at most once. One worker thread per service process claims
 * due rows by a CAS on lease_until (attempts is bumped by the claim and fences
 * the later updates), calls the gateway's refund API with an out_refund_no
 * derived only from the transaction_id (a retried refund is the same refund
 * at the gateway, never a second one), marks the row done, and otherwise
 * retries it later with exponential backoff, forever. */
#ifndef IDEMPAY_REFUND_QUEUE_H
#define IDEMPAY_REFUND_QUEUE_H

#include <stddef.h>
#include "app_ctx.h"
#include "config.h"

#define REFUND_NO_MAX 64             /* WeChat's out_refund_no limit */
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

/* Works every refund that is due now, once: claim, gateway call, mark done or
 * schedule the retry. Returns the number of rows claimed (0 when none was
 * due), or -1 when MariaDB is unavailable (ctx->err says why). */
int refund_queue_run_once(app_ctx *ctx);

/* Starts this process's refund worker: a detached thread with its own
 * app_ctx that polls the queue until the process exits. cfg must outlive
 * the process. Call once per process, after metrics_init and
 * http_client_global_init. Returns 0, or -1 when the thread cannot start. */
int refund_queue_start(const app_config *cfg);

#endif
