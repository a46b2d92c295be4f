/* settle - what the service does with the gateway's word about an order, in
 * one place for every path that hears it: the pay flow, the reconciler and
 * its recheck, the statement job (notifications apply the same rules inside
 * their own transaction, callback.c).
 *
 * Rules (the argument is docs/FENCE.md):
 * - A charge of the order's amount makes a PROCESSING or retryable FAILED
 *   order PAID with that transaction_id. Any other charge of an order — a
 *   second charge of a PAID order, a charge of another amount, a charge of
 *   an order that is final (closed) — is queued for refund, once per
 *   transaction_id (refund_queue), and counted.
 * - NOTPAY is never final while an attempt may still be queued at the
 *   gateway: an uncertain attempt is ended by orderquery and then
 *   closeorder. After the close no unifiedorder of the out_trade_no can
 *   charge, and the order is FAILED for good (402 payment_closed).
 * - A gateway without closeorder (HTTP 404) cannot be fenced: the order then
 *   fails retryably, due for the FAILED recheck, and the statement job
 *   refunds any late second charge.
 * Every write is order_store's compare-and-set; a lost CAS re-reads. */
#ifndef IDEMPAY_SETTLE_H
#define IDEMPAY_SETTLE_H

#include <stdbool.h>

#include "app_ctx.h"
#include "order_store.h"

typedef enum {
    SETTLE_PAID = 0, /* the order is PAID (row->transaction_id is its charge) */
    SETTLE_CLOSED,   /* the order is FAILED for good (row->final_reason says why) */
    SETTLE_FAILED,   /* FAILED and retryable: the gateway has no closeorder (fallback) */
    SETTLE_PENDING,  /* not known yet: the order stays PROCESSING (ask again later) */
    SETTLE_NO_ORDER, /* settle_charge: no order has this out_trade_no */
    SETTLE_ERROR     /* MariaDB failed (ctx->err); nothing more was learnt */
} settle_result;

/* The gateway reported a charge (transaction_id; total_fee in fen, -1 when
 * the reply did not say) of order_no; source names the path in logs
 * ("pay", "reconciler", "recheck", "statement"). Applies the rules above and
 * returns where the order stands, with *row as read last (unspecified on
 * SETTLE_NO_ORDER / SETTLE_ERROR). A refund that cannot be queued (MariaDB
 * down) is logged; the statement job finds the charge again. */
settle_result settle_charge(app_ctx *ctx, const char *order_no, const char *transaction_id,
                            long long total_fee, const char *source, order_row *row);

/* settle_charge, and *refund_unqueued (not NULL) says whether a refund the
 * charge needed could NOT be queued (MariaDB failed; logged): the charge is
 * then neither settled nor queued, and the caller must look at it again
 * (the statement job keeps its day open). */
settle_result settle_charge_noting(app_ctx *ctx, const char *order_no, const char *transaction_id,
                                   long long total_fee, const char *source, order_row *row,
                                   bool *refund_unqueued);

/* settle_charge for the holder of the order's current attempt, whose own
 * unifiedorder of amount_fen (the order's amount) was answered with a
 * charge: the order was PROCESSING under that holder's lease, so the CAS
 * PROCESSING -> PAID is tried first without reading the row; only when it
 * misses (the row moved: a notification, a resolver, a charge of another
 * amount) does settle_charge read it and decide. Same results, one
 * statement fewer on the common path. */
settle_result settle_own_charge(app_ctx *ctx, const char *order_no, long long amount_fen,
                                const char *transaction_id, long long total_fee, const char *source,
                                order_row *row);

/* Ends the uncertain attempt `fence` of order_no, which the caller holds
 * (PROCESSING under the caller's lease at attempt fence). A MICROPAY order
 * (payment_trade) is polled, then reversed (settle_micropay.h). Any other:
 * orderquery; a
 * charge is settle_charge'd; CLOSED, or NOTPAY followed by a successful
 * closeorder, makes the order FAILED for good; closeorder answering
 * ORDERPAID asks orderquery for the charge; a gateway without closeorder
 * fails the order retryably with a recheck after recheck_ms. Anything not
 * known leaves the order PROCESSING (SETTLE_PENDING). *row as for
 * settle_charge. */
settle_result settle_resolve(app_ctx *ctx, const char *order_no, long long fence, long recheck_ms,
                             const char *source, order_row *row);

/* The gateway said order_no's out_trade_no is closed (a unifiedorder of
 * the caller's attempt `fence` answered ORDERCLOSED): the order is FAILED
 * for good, unless it moved meanwhile. *row as for settle_charge. */
settle_result settle_closed(app_ctx *ctx, const char *order_no, long long fence, const char *source,
                            order_row *row);

/* No fence possible (a gateway without closeorder, a micropay the gateway
 * never knew): attempt `fence` ends FAILED retryably, asked about once more
 * after recheck_ms (the recheck and the statement job make it PAID when a
 * charge lands after all); a lost compare-and-set re-reads. *row as for
 * settle_charge. */
settle_result settle_failed_retryably(app_ctx *ctx, const char *order_no, long long fence,
                                      long recheck_ms, order_row *row);

/* Re-reads order_no after a lost compare-and-set into *row and says where
 * it stands: settle_of_row, SETTLE_NO_ORDER, or SETTLE_ERROR. */
settle_result settle_reread(app_ctx *ctx, const char *order_no, order_row *row);

/* Where a row stands, as a settle_result: PAID, CLOSED (final FAILED),
 * FAILED (retryable), PENDING (PROCESSING or PENDING). */
settle_result settle_of_row(const order_row *row);

#endif
