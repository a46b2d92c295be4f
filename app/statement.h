/* statement - reconciliation against the gateway's statement (downloadbill).
 *
 * One background thread per service process; one run at a time across all
 * processes (a compare-and-set on payment_statement_job's lease, which is
 * also when the next run is due: every IDEMPAY_STATEMENT_INTERVAL_MS). A
 * run reads the statement from a little before where the last one ended
 * (IDEMPAY_STATEMENT_OVERLAP_MS, for charges committed late at the gateway)
 * up to now, and judges every charge in it with settle_charge: a charge of
 * a PROCESSING or retryable FAILED order makes it PAID; a charge that is not
 * its order's transaction_id (a second charge, another amount, a charge of
 * a closed order) is queued for refund, once per transaction_id. A charge
 * of an order PROCESSING under a live lease is left to the lease holder
 * (the next run, whose window overlaps this one by more than a lease,
 * judges it if it is still there). Charges
 * refunded in full in the statement are skipped; charges of an out_trade_no
 * that has no order are counted and logged, not refunded (the merchant
 * account may be shared with another system). Results are counted in
 * idempay_statement_*_total. Every action is idempotent, so a run that
 * crashes half-way is simply run again. */
#ifndef IDEMPAY_STATEMENT_H
#define IDEMPAY_STATEMENT_H

#include <stddef.h>
#include <time.h>

#include "app_ctx.h"
#include "statement_parse.h"

/* What a run saw. */
typedef struct {
    size_t charges;          /* charge records judged */
    size_t matched;          /* PAID with this very charge already */
    size_t made_paid;        /* made their order PAID */
    size_t refunds;          /* not their order's: refund queued (now or before) */
    size_t already_refunded; /* refunded in full in the statement */
    size_t in_flight;        /* order PROCESSING under a live lease: its holder settles it */
    size_t unmatched;        /* no order with that out_trade_no */
} statement_tally;

/* Judges records (as bill_parse returns them) against the orders; adds to
 * *tally. Returns 0, or -1 when MariaDB failed (ctx->err; the run is to be
 * repeated). */
int statement_judge(app_ctx *ctx, bill_record *records, size_t n, statement_tally *tally);

/* One run, if it is due and this process wins the claim: 1 ran (tally
 * filled), 0 not due / another process runs it, -1 failed (MariaDB or the
 * gateway; ctx->err; retried at the next poll). now_ms is the wall clock
 * (Unix ms). */
int statement_run_once(app_ctx *ctx, long long now_ms, statement_tally *tally);

/* Starts this process's statement thread (detached). cfg must outlive the
 * process. Returns 0, or -1 (logged). */
int statement_start(const app_config *cfg);

#endif
