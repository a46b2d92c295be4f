/* settle.c - charges and uncertain attempts, settled the same way on every
 * path (see settle.h and docs/FENCE.md). */
#include "settle.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "metrics.h"
#include "refund_queue.h"
#include "settle_micropay.h"
#include "trade_store.h"

/* Re-reads after a lost compare-and-set before giving up (SETTLE_PENDING). */
#define SETTLE_ROUNDS 4

settle_result settle_of_row(const order_row *row)
{
    switch (row->status) {
    case ORDER_PAID:
        return SETTLE_PAID;
    case ORDER_FAILED:
        return row->final_reason != ORDER_RETRYABLE ? SETTLE_CLOSED : SETTLE_FAILED;
    case ORDER_PENDING:
    case ORDER_PROCESSING:
        break;
    }
    return SETTLE_PENDING;
}

settle_result settle_reread(app_ctx *ctx, const char *order_no, order_row *row)
{
    switch (order_store_get(ctx, order_no, row)) {
    case ORDER_STORE_OK:
        return settle_of_row(row);
    case ORDER_STORE_MISS:
        return SETTLE_NO_ORDER;
    default:
        return SETTLE_ERROR;
    }
}

/* Queues the refund of a charge that is not its order's (why: for the log).
 * Counted once, when this call queued it. Returns refund_queue_enqueue's
 * result: 1 queued now, 0 queued before, -1 not queued (logged, and
 * *unqueued set when unqueued is not NULL: the caller must not count the
 * charge as settled). */
static int settle_refund(app_ctx *ctx, const char *order_no, const char *transaction_id,
                         long long total_fee, const char *why, const char *source, bool *unqueued)
{
    unsigned int e = 0;
    int q = refund_queue_enqueue(ctx, transaction_id, order_no, total_fee, &e);

    if (q == 1) {
        metrics_inc(MET_REFUND_QUEUED);
        log_msg(LOG_ERROR, "%s order=%s: charge %s (%lld fen) is %s; queued for refund", source,
                order_no, transaction_id, total_fee, why);
    } else if (q < 0) {
        log_msg(LOG_ERROR,
                "%s order=%s: charge %s (%lld fen) is %s; refund NOT queued (%s):"
                " the statement job will find it again",
                source, order_no, transaction_id, total_fee, why, ctx->err);
        if (unqueued != NULL)
            *unqueued = true;
    }
    return q;
}

/* A charge of another amount than the order's: refunded, and the order can
 * never be paid by it (FAILED for good unless it is PAID already). */
static settle_result settle_wrong_amount(app_ctx *ctx, const char *order_no,
                                         const char *transaction_id, long long total_fee,
                                         const char *source, order_row *row, bool *unqueued)
{
    if (settle_refund(ctx, order_no, transaction_id, total_fee, "of another amount", source,
                      unqueued) == 1) {
        metrics_inc(MET_AMOUNT_MISMATCH);
        log_msg(LOG_ERROR, "%s order=%s: the gateway charged %lld fen, the order is %lld fen",
                source, order_no, total_fee, (long long)row->amount_fen);
    }
    if (row->status == ORDER_PAID ||
        (row->status == ORDER_FAILED && row->final_reason != ORDER_RETRYABLE))
        return settle_of_row(row);
    if (order_store_mark_wrong_amount(ctx, order_no) == ORDER_STORE_ERROR)
        return SETTLE_ERROR;
    return settle_reread(ctx, order_no, row);
}

/* One round of settle_charge on the row as read: SETTLE_PENDING when a CAS
 * was lost (read again). */
static settle_result settle_charge_row(app_ctx *ctx, const char *order_no,
                                       const char *transaction_id, long long total_fee,
                                       const char *source, order_row *row, bool *unqueued)
{
    order_store_result r;

    if (total_fee >= 0 && total_fee != row->amount_fen)
        return settle_wrong_amount(ctx, order_no, transaction_id, total_fee, source, row, unqueued);
    switch (row->status) {
    case ORDER_PAID:
        if (strcmp(row->transaction_id, transaction_id) != 0 &&
            settle_refund(ctx, order_no, transaction_id, row->amount_fen,
                          "a second charge of a PAID order", source, unqueued) == 1)
            metrics_inc(MET_DOUBLE_CHARGE_DETECTED);
        return SETTLE_PAID;
    case ORDER_FAILED:
        if (row->final_reason != ORDER_RETRYABLE) {
            settle_refund(ctx, order_no, transaction_id, row->amount_fen,
                          "a charge of an order that can no longer be paid", source, unqueued);
            return SETTLE_CLOSED;
        }
        r = order_store_recheck_paid(ctx, order_no, row->attempts, transaction_id);
        break;
    case ORDER_PENDING:
    case ORDER_PROCESSING:
    default:
        r = order_store_mark_paid(ctx, order_no, transaction_id, row->amount_fen);
        break;
    }
    if (r == ORDER_STORE_ERROR)
        return SETTLE_ERROR;
    if (r == ORDER_STORE_MISS)
        return SETTLE_PENDING;
    if (row->status == ORDER_FAILED)
        log_msg(LOG_WARN, "%s order=%s: charged after it FAILED; PAID (%s)", source, order_no,
                transaction_id);
    row->status = ORDER_PAID;
    snprintf(row->transaction_id, sizeof(row->transaction_id), "%s", transaction_id);
    return SETTLE_PAID;
}

settle_result settle_charge(app_ctx *ctx, const char *order_no, const char *transaction_id,
                            long long total_fee, const char *source, order_row *row)
{
    return settle_charge_noting(ctx, order_no, transaction_id, total_fee, source, row, NULL);
}

settle_result settle_charge_noting(app_ctx *ctx, const char *order_no, const char *transaction_id,
                                   long long total_fee, const char *source, order_row *row,
                                   bool *refund_unqueued)
{
    if (refund_unqueued != NULL)
        *refund_unqueued = false;
    for (int round = 0; round < SETTLE_ROUNDS; round++) {
        switch (order_store_get(ctx, order_no, row)) {
        case ORDER_STORE_OK:
            break;
        case ORDER_STORE_MISS:
            return SETTLE_NO_ORDER;
        default:
            return SETTLE_ERROR;
        }
        settle_result s = settle_charge_row(ctx, order_no, transaction_id, total_fee, source, row,
                                            refund_unqueued);
        if (s != SETTLE_PENDING)
            return s;
    }
    return SETTLE_PENDING;
}

settle_result settle_closed(app_ctx *ctx, const char *order_no, long long fence, const char *source,
                            order_row *row)
{
    switch (order_store_mark_final(ctx, order_no, fence, ORDER_FINAL_CLOSED)) {
    case ORDER_STORE_OK:
        log_msg(LOG_INFO, "%s order=%s: closed at the gateway; FAILED for good", source, order_no);
        snprintf(row->order_no, sizeof(row->order_no), "%s", order_no);
        row->status = ORDER_FAILED;
        row->final_reason = ORDER_FINAL_CLOSED;
        return SETTLE_CLOSED;
    case ORDER_STORE_MISS:
        return settle_reread(ctx, order_no, row);
    default:
        return SETTLE_ERROR;
    }
}

settle_result settle_failed_retryably(app_ctx *ctx, const char *order_no, long long fence,
                                      long recheck_ms, order_row *row)
{
    switch (order_store_mark_failed(ctx, order_no, fence, recheck_ms)) {
    case ORDER_STORE_OK:
        row->status = ORDER_FAILED;
        row->final_reason = ORDER_RETRYABLE;
        return SETTLE_FAILED;
    case ORDER_STORE_MISS:
        return settle_reread(ctx, order_no, row);
    default:
        return SETTLE_ERROR;
    }
}

/* orderquery said the order is not charged (yet): close it, so that no
 * attempt still queued at the gateway can charge it later. */
static settle_result settle_close(app_ctx *ctx, const char *order_no, long long fence,
                                  long recheck_ms, const char *source, order_row *row)
{
    gw_result gw;

    switch (gateway_closeorder(ctx, order_no, &gw)) {
    case GW_CLOSED:
        metrics_inc(MET_CLOSE_CLOSED);
        return settle_closed(ctx, order_no, fence, source, row);
    case GW_ORDERPAID:
        /* A queued attempt charged between the orderquery and the close. */
        metrics_inc(MET_CLOSE_ORDERPAID);
        if (gateway_orderquery(ctx, order_no, &gw) == GW_CHARGED)
            return settle_charge(ctx, order_no, gw.transaction_id, gw.total_fee, source, row);
        return SETTLE_PENDING;
    case GW_UNSUPPORTED:
        /* No fence possible: fail retryably; the recheck and the statement
         * job catch a charge that lands later. */
        metrics_inc(MET_CLOSE_UNSUPPORTED);
        return settle_failed_retryably(ctx, order_no, fence, recheck_ms, row);
    default:
        metrics_inc(MET_CLOSE_UNKNOWN);
        return SETTLE_PENDING;
    }
}

settle_result settle_resolve(app_ctx *ctx, const char *order_no, long long fence, long recheck_ms,
                             const char *source, order_row *row)
{
    gw_result gw;
    trade_row tr;

    /* The payment-code flow's fence is the reverse; the prepay flows (and
     * an order from before the flows, without a trade row) close. */
    switch (trade_store_get(ctx, order_no, &tr)) {
    case ORDER_STORE_OK:
        if (tr.type == TRADE_MICROPAY)
            return settle_resolve_micropay(ctx, order_no, fence, &tr, source, row);
        break;
    case ORDER_STORE_MISS:
        break;
    default:
        return SETTLE_ERROR;
    }
    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        return settle_charge(ctx, order_no, gw.transaction_id, gw.total_fee, source, row);
    case GW_CLOSED:
        return settle_closed(ctx, order_no, fence, source, row);
    case GW_NOT_CHARGED:
        return settle_close(ctx, order_no, fence, recheck_ms, source, row);
    default:
        return SETTLE_PENDING;
    }
}

settle_result settle_own_charge(app_ctx *ctx, const char *order_no, long long amount_fen,
                                const char *transaction_id, long long total_fee, const char *source,
                                order_row *row)
{
    if (total_fee == amount_fen) {
        switch (order_store_mark_paid(ctx, order_no, transaction_id, amount_fen)) {
        case ORDER_STORE_OK:
            memset(row, 0, sizeof(*row));
            snprintf(row->order_no, sizeof(row->order_no), "%s", order_no);
            snprintf(row->transaction_id, sizeof(row->transaction_id), "%s", transaction_id);
            row->amount_fen = amount_fen;
            row->status = ORDER_PAID;
            return SETTLE_PAID;
        case ORDER_STORE_ERROR:
            return SETTLE_ERROR;
        default:
            break; /* the row moved: read it */
        }
    }
    return settle_charge(ctx, order_no, transaction_id, total_fee, source, row);
}
