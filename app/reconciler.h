/* reconciler - settles payments nobody is working on any more. One
 * background thread per service process, with its own app_ctx: every
 * IDEMPAY_RECONCILE_INTERVAL_MS it takes PROCESSING orders whose lease has
 * expired (by CAS on the lease, so several processes never work one order
 * at once) and ends the expired attempt (settle_resolve): orderquery, and
 * when it says "not charged", closeorder, so an attempt still queued at the
 * gateway can never charge later; a charge -> PAID (or refunded when it is
 * not the order's), closed -> FAILED for good, unknown -> left for the next
 * round. So an order charged just before its worker crashed ends PAID
 * without any client help. With a gateway that has no closeorder the order
 * fails retryably instead and is asked about once more
 * IDEMPAY_FAILED_RECHECK_MS later (a late charge makes it PAID; the
 * statement job refunds any second one). The same
 * thread purges expired Idempotency-Key records and, with
 * IDEMPAY_ORDER_RETENTION_DAYS > 0, archives up to ORDER_ARCHIVE_BATCH old
 * final orders per round (order_archive.h). */
#ifndef IDEMPAY_RECONCILER_H
#define IDEMPAY_RECONCILER_H

#include "app_ctx.h"
#include "config.h"

#define RECONCILER_BATCH 32        /* orders per round */
#define RECONCILER_PURGE_BATCH 500 /* Idempotency-Key records per round */

/* Starts the reconciler thread (detached; runs until the process exits).
 * Call once per process, after metrics_init, before or after the FastCGI
 * threads. cfg must outlive the process. Returns 0, or -1 when the thread
 * or its context cannot be created (logged). */
int reconciler_start(const app_config *cfg);

/* One reconciliation round on ctx (the thread calls this; tests may too):
 * settles up to RECONCILER_BATCH expired orders, rechecks up to
 * RECONCILER_BATCH FAILED orders whose recheck is due, purges expired
 * Idempotency-Key records and archives one batch of old final orders
 * (when the retention is on). Returns the number of orders settled (PAID or
 * FAILED), or -1 when MariaDB failed. */
int reconciler_run_once(app_ctx *ctx);

#endif
