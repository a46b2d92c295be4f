/* order_archive - order retention (issue 23, "bounded growth"): moves
 * orders whose state is final and whose last change is older than
 * IDEMPAY_ORDER_RETENTION_DAYS out of the live tables into the archive
 * tables of sql/015_order_archive.sql, and answers for archived orders.
 *
 * What moves together: the payment_order row, its payment_trade row, its
 * payment_refund rows and its payment_callback_record rows, in one
 * transaction per batch, or nothing. An order moves only when
 *   - it is PAID, or FAILED with no recheck due (lease_until NULL): a
 *     PROCESSING or PENDING order, or one with a live lease, never moves;
 *   - it and every refund of it last changed more than the retention ago;
 *   - every refund of it is SUCCESS (a pending, accepted, closed, CHANGE or
 *     abnormal refund keeps its order live until it is finished or an
 *     operator settles it).
 *
 * The invariant the pay path relies on (docs/FENCE.md, "Order retention"):
 * an order_no is never both archived and live. The batch deletes the live
 * row in the transaction that inserts the archive row, and
 * order_store_insert refuses (ORDER_STORE_ARCHIVED) an order_no it finds in
 * the archive with a locking read after its own INSERT, in one transaction.
 *
 * Statements use the app_ctx slots STMT_ARCHIVE_BASE..STMT_ARCHIVE_BASE+15.
 * Never calls the gateway. */
#ifndef IDEMPAY_ORDER_ARCHIVE_H
#define IDEMPAY_ORDER_ARCHIVE_H

#include "app_ctx.h"
#include "order_store.h"

#define ORDER_ARCHIVE_BATCH 500 /* orders per batch (one batch per reconciler round) */

/* One batch on ctx: archives up to max (1..ORDER_ARCHIVE_BATCH) orders
 * that may move (above) under a retention of retention_days (> 0), in one
 * transaction. Several processes may run it at once: the candidates are
 * locked with SKIP LOCKED, so batches never overlap. Returns how many
 * orders were archived; 0 when none may move, or when the batch lost a
 * race with a writer (a deadlock, a row that changed between its copy and
 * its delete: the whole batch is rolled back and tried again next round);
 * -1 when MariaDB failed (ctx->err; nothing moved). */
int order_archive_run(app_ctx *ctx, long retention_days, int max);

/* Reads the archived order order_no into *row (lease_live false) and when
 * it was archived into archived_at (UTC, ISO-8601 with milliseconds, like
 * row's times). OK, MISS (not archived), ERROR. */
order_store_result order_archive_get(app_ctx *ctx, const char *order_no, order_row *row,
                                     char archived_at[ORDER_TIME_MAX]);

/* After order_store_insert answered ORDER_STORE_ARCHIVED: deletes the
 * payment_trade row of order_no that the refused request wrote before its
 * order insert, when no live order has that order_no and the archive has
 * it (a live order's trade row is never touched). 0 (deleted or nothing to
 * delete) or -1 (MariaDB failed; the row stays, harmless: it names no
 * order). */
int order_archive_forget_trade(app_ctx *ctx, const char *order_no);

/* The GET /api/pay/orders/{no} body of an archived order: the live
 * order's fields (order_no, user_id, amount, status, transaction_id,
 * created_at, updated_at) plus "archived": true and "archived_at".
 * malloc'd JSON, NULL on out of memory. */
char *order_archive_body(const order_row *row, const char *archived_at);

#endif
