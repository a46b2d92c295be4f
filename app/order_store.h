/* order_store - payment_order rows, read and moved only by compare-and-set.
 *
 * Every write but the insert is one autocommit statement whose WHERE clause
 * names the state it expects (the insert is INSERT + a locking read of the
 * archive in one transaction); its affected-row count (changed rows: connections run
 * without CLIENT_FOUND_ROWS, and every CAS here changes status or lease)
 * decides who won. No transaction is held open, in particular never across
 * a gateway call.
 *
 * The lease: a PROCESSING order carries lease_until; whoever set it works
 * the order (calls the gateway) until then. `attempts` counts the leases
 * taken (the insert is attempt 1, each takeover or retry adds one) and
 * fences the holder: a decline is recorded only by the holder of the
 * current attempt, so a stale worker can never mark FAILED an order a newer
 * attempt charged. A verified charge (PROCESSING -> PAID) needs no fence.
 *
 * Statements use the app_ctx slots STMT_ORDER_BASE..STMT_ORDER_BASE+23.
 * The fence against late charges (an uncertain attempt is closed at the
 * gateway before the order may move on) is docs/FENCE.md. */
#ifndef IDEMPAY_ORDER_STORE_H
#define IDEMPAY_ORDER_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include "app_ctx.h"
#include "order_no.h"
#include "order_state.h"

#define ORDER_TXID_MAX 32 /* payment_order.transaction_id VARCHAR(32) */
#define ORDER_TIME_MAX 32 /* "2024-01-02T03:04:05.678Z" */

typedef struct {
    char order_no[ORDER_NO_MAX + 1];
    long long caller_id; /* the merchant-door caller that created it; 0 none */
    long long user_id;
    int64_t amount_fen;
    order_status status;
    char transaction_id[ORDER_TXID_MAX + 1]; /* "" while NULL */
    bool lease_live;                         /* lease_until > NOW(3) (database clock) */
    bool lease_set;                  /* lease_until not NULL: FAILED with its recheck to come
                                      * (an earlier attempt not fenced: no new attempt yet) */
    long long attempts;              /* the fence of the current lease */
    order_final_reason final_reason; /* FAILED: ORDER_RETRYABLE or why it is final */
    char created_at[ORDER_TIME_MAX]; /* UTC, ISO-8601 with milliseconds */
    char updated_at[ORDER_TIME_MAX];
} order_row;

/* A retryable FAILED order whose recheck is to come: its last attempt could
 * not be fenced and may still charge, so no new attempt starts and readers
 * are shown PROCESSING until the recheck (docs/FENCE.md, step 3 (b)). */
static inline bool order_row_awaits_recheck(const order_row *row)
{
    return row->status == ORDER_FAILED && row->final_reason == ORDER_RETRYABLE && row->lease_set;
}

typedef enum {
    ORDER_STORE_OK = 0,    /* read a row / won the CAS / inserted */
    ORDER_STORE_MISS,      /* no such row / lost the CAS */
    ORDER_STORE_DUPLICATE, /* insert: the order_no exists (1062) */
    ORDER_STORE_ERROR,     /* MariaDB failed (connection dropped when lost); ctx->err says why */
    ORDER_STORE_ARCHIVED   /* insert: the order_no is in the archive (order_archive.h) */
} order_store_result;

/* Reads order_no into *row. A lost connection is retried once (a read is
 * safe to repeat). OK, MISS or ERROR. */
order_store_result order_store_get(app_ctx *ctx, const char *order_no, order_row *row);

/* Inserts a new order as PROCESSING, attempts 1, leased for lease_ms, in a
 * short transaction with a locking read of payment_order_archive after the
 * INSERT: an order_no found there is rolled back (docs/FENCE.md, "Order
 * retention": an archived order is never created again, so never charged
 * again). OK (the caller holds attempt 1), DUPLICATE (another request
 * created it: re-read, it is a repeat), ARCHIVED (nothing written), or
 * ERROR. */
order_store_result order_store_insert(app_ctx *ctx, const char *order_no, long long user_id,
                                      int64_t amount_fen, long lease_ms);
/* The same for an order created by caller_id (payment_order.caller_id;
 * order_store_insert is caller 0). The order_no stays unique across all
 * callers: a DUPLICATE may be another caller's order. */
order_store_result order_store_insert_owned(app_ctx *ctx, long long caller_id, const char *order_no,
                                            long long user_id, int64_t amount_fen, long lease_ms);

/* PROCESSING with an expired (or missing) lease, still at attempt
 * `attempts` -> leased for lease_ms at attempt attempts+1 (the caller's new
 * fence). OK (taken), MISS (someone else moved it first), ERROR. */
order_store_result order_store_take_expired(app_ctx *ctx, const char *order_no, long long attempts,
                                            long lease_ms);

/* FAILED (retryable only, its recheck done or never due) or PENDING at
 * attempt `attempts` -> PROCESSING, leased for lease_ms at attempt
 * attempts+1. from must be ORDER_FAILED or ORDER_PENDING. OK, MISS (also
 * while a recheck is to come), ERROR. */
order_store_result order_store_retry(app_ctx *ctx, const char *order_no, order_status from,
                                     long long attempts, long lease_ms);

/* PROCESSING -> PAID storing transaction_id (non-empty), clearing the
 * lease, when the order's amount is amount_fen (the charge's): a charge
 * never pays an order of another amount, whatever its caller checked.
 * OK, MISS (not PROCESSING any more, or another amount: re-read), ERROR
 * (including a transaction_id already used by another order, logged). */
order_store_result order_store_mark_paid(app_ctx *ctx, const char *order_no,
                                         const char *transaction_id, long long amount_fen);

/* PROCESSING at attempt `attempts` -> FAILED (a definitive decline seen by
 * that attempt's holder, or orderquery's "not charged"). With recheck_ms > 0
 * the order stays due for one more orderquery that long from now (its
 * lease_until says when): an earlier attempt's unifiedorder may still be
 * queued at the gateway and charge after this answer. 0: final.
 * OK, MISS, ERROR. */
order_store_result order_store_mark_failed(app_ctx *ctx, const char *order_no, long long attempts,
                                           long recheck_ms);

/* PROCESSING at attempt `attempts` -> FAILED for good with reason (the
 * attempt was closed at the gateway): never retried, never PAID, no
 * recheck. OK, MISS (no longer this attempt's), ERROR. */
order_store_result order_store_mark_final(app_ctx *ctx, const char *order_no, long long attempts,
                                          order_final_reason reason);

/* The gateway charged another amount than the order's (that charge is
 * being refunded): a PENDING, PROCESSING or retryable FAILED order becomes
 * FAILED for good (ORDER_FINAL_WRONG_AMOUNT), whatever its attempt.
 * OK, MISS (PAID or final already), ERROR. */
order_store_result order_store_mark_wrong_amount(app_ctx *ctx, const char *order_no);

/* The recheck of a FAILED order at attempt `attempts` whose recheck is due:
 * take it (by CAS, its lease_until pushed lease_ms ahead, so one process
 * asks and a crash only delays the next ask); the order stays FAILED
 * meanwhile. OK, MISS (taken, retried or paid meanwhile), ERROR. */
order_store_result order_store_recheck_take(app_ctx *ctx, const char *order_no, long long attempts,
                                            long lease_ms);

/* A charge of a retryable FAILED order was found (the recheck, the
 * statement): FAILED at `attempts` -> PAID with its transaction_id (the
 * gateway's proof that the money was taken; the same edge a verified
 * notification takes). A final order never matches. OK, MISS, ERROR. */
order_store_result order_store_recheck_paid(app_ctx *ctx, const char *order_no, long long attempts,
                                            const char *transaction_id);

/* FAILED at attempt `attempts`, rechecked and still not charged: final (no
 * more rechecks). OK, MISS (retried or paid meanwhile), ERROR. */
order_store_result order_store_recheck_done(app_ctx *ctx, const char *order_no, long long attempts);

/* Up to max FAILED orders whose recheck is due (oldest first), with their
 * attempts, for the reconciler. Returns how many, or -1. */
int order_store_recheck_due(app_ctx *ctx, char (*order_nos)[ORDER_NO_MAX + 1], long long *attempts,
                            int max);

/* PROCESSING at attempt `attempts` -> the same, with its lease ended now:
 * the holder's gateway call is over without a known outcome, so the next
 * request or the reconciler may resolve it (orderquery) at once. OK, MISS
 * (no longer this attempt's), ERROR. */
order_store_result order_store_release_lease(app_ctx *ctx, const char *order_no,
                                             long long attempts);

/* PROCESSING at attempt `attempts` -> the same, leased until ms from now
 * (the holder's next look: a MICROPAY poll, the reverse's wait). OK, MISS
 * (no longer this attempt's), ERROR. */
order_store_result order_store_lease_for(app_ctx *ctx, const char *order_no, long long attempts,
                                         long ms);

/* Up to max expired PROCESSING order numbers (oldest lease first) with
 * their attempts, for the reconciler. Returns how many were written to
 * order_nos/attempts, or -1 on a database failure. */
int order_store_expired(app_ctx *ctx, char (*order_nos)[ORDER_NO_MAX + 1], long long *attempts,
                        int max);

/* For modules that run their own statements the same way: call after a
 * failed db_stmt_exec/db_stmt_fetch on st (NULL when app_ctx_stmt failed).
 * Returns true when the statement should be run again: a deadlock or lock
 * wait timeout (up to 3 tries), or one reconnect after a lost connection
 * (common/db_retry's db_retry_next with order_store's policy)
 * (e.g. the first use of a connection MariaDB dropped when it restarted).
 * Running a statement twice is safe for every statement of the pay modules:
 * each is a read, an insert whose second run is a recognised duplicate
 * (1062), or a compare-and-set whose second run misses and makes the caller
 * re-read. Otherwise drops a lost connection (app_ctx_db_error), sets
 * ctx->err and *err to the MariaDB error number (0 when unknown) and
 * returns false. *tries starts at 0. */
bool order_store_should_retry(app_ctx *ctx, MYSQL_STMT *st, int *tries, unsigned int *err);

#endif
