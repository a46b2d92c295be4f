/* order_store.c - payment_order through prepared statements in the
 * thread's app_ctx: reads, the insert that decides concurrent first
 * requests, and the compare-and-set moves of the state table. */
#include "order_store.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "db_retry.h"
#include "log.h"
#include "money.h"

/* The row's times as UTC text with milliseconds: "2024-01-02T03:04:05.678Z". */
#define ORDER_TIME_SQL(col)                                                                        \
    "CONCAT(LEFT(DATE_FORMAT(CONVERT_TZ(" col ", @@session.time_zone, '+00:00'), "                 \
    "'%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')"

enum {
    ORDER_SQL_GET = 0,
    ORDER_SQL_INSERT,
    ORDER_SQL_TAKE_EXPIRED,
    ORDER_SQL_RETRY,
    ORDER_SQL_PAID,
    ORDER_SQL_FAILED,
    ORDER_SQL_EXPIRED,
    ORDER_SQL_RELEASE,
    ORDER_SQL_RECHECK_DUE,
    ORDER_SQL_RECHECK_TAKE,
    ORDER_SQL_RECHECK_PAID,
    ORDER_SQL_RECHECK_DONE,
    ORDER_SQL_FINAL,
    ORDER_SQL_WRONG_AMOUNT,
    ORDER_SQL_LEASE_FOR,
    ORDER_SQL_ARCHIVED,
    ORDER_SQL_COUNT
};

static const char *const order_sql[ORDER_SQL_COUNT] = {
    /* clang-format off */
    [ORDER_SQL_GET] =
        "SELECT order_no, user_id, CAST(amount * 100 AS SIGNED), status, transaction_id,"
        " IF(lease_until IS NULL, 0, IF(lease_until > NOW(3), 1, 2)), attempts, final_reason, "
        ORDER_TIME_SQL("create_time") ", " ORDER_TIME_SQL("update_time")
        ", caller_id FROM payment_order WHERE order_no = ?",
    /* clang-format on */
    [ORDER_SQL_INSERT] =
        "INSERT INTO payment_order (order_no, caller_id, user_id, amount, status, lease_until,"
        " attempts) VALUES (?, ?, ?, ?, 1, NOW(3) + INTERVAL ? MICROSECOND, 1)",
    [ORDER_SQL_TAKE_EXPIRED] =
        "UPDATE payment_order SET lease_until = NOW(3) + INTERVAL ? MICROSECOND,"
        " attempts = attempts + 1"
        " WHERE order_no = ? AND status = 1 AND attempts = ?"
        " AND (lease_until IS NULL OR lease_until <= NOW(3))",
    [ORDER_SQL_RETRY] =
        "UPDATE payment_order SET status = 1, lease_until = NOW(3) + INTERVAL ? MICROSECOND,"
        " attempts = attempts + 1 WHERE order_no = ? AND status = ? AND attempts = ?"
        " AND final_reason = 0 AND (status <> 3 OR lease_until IS NULL)",
    [ORDER_SQL_PAID] = "UPDATE payment_order SET status = 2, transaction_id = ?, lease_until = NULL"
                       " WHERE order_no = ? AND status = 1 AND amount * 100 = ?",
    /* On a FAILED order lease_until is when to ask the gateway once more
     * (NULL: final); see order_store_mark_failed. */
    [ORDER_SQL_FAILED] = "UPDATE payment_order SET status = 3,"
                         " lease_until = IF(? > 0, NOW(3) + INTERVAL ? MICROSECOND, NULL)"
                         " WHERE order_no = ? AND status = 1 AND attempts = ?",
    [ORDER_SQL_EXPIRED] = "SELECT order_no, attempts FROM payment_order"
                          " WHERE status = 1 AND (lease_until IS NULL OR lease_until <= NOW(3))"
                          " ORDER BY lease_until LIMIT ?",
    [ORDER_SQL_RECHECK_DUE] = "SELECT order_no, attempts FROM payment_order"
                              " WHERE status = 3 AND lease_until <= NOW(3)"
                              " ORDER BY lease_until LIMIT ?",
    [ORDER_SQL_RECHECK_TAKE] =
        "UPDATE payment_order SET lease_until = NOW(3) + INTERVAL ? MICROSECOND"
        " WHERE order_no = ? AND status = 3 AND attempts = ? AND lease_until <= NOW(3)",
    /* FAILED -> PAID: only on the gateway's proof of a charge (as a verified
     * notification does in callback.c): the money was taken. */
    [ORDER_SQL_RECHECK_PAID] =
        "UPDATE payment_order SET status = 2, transaction_id = ?, lease_until = NULL"
        " WHERE order_no = ? AND status = 3 AND attempts = ? AND final_reason = 0",
    [ORDER_SQL_RECHECK_DONE] = "UPDATE payment_order SET lease_until = NULL"
                               " WHERE order_no = ? AND status = 3 AND attempts = ?",
    [ORDER_SQL_FINAL] = "UPDATE payment_order SET status = 3, final_reason = ?, lease_until = NULL"
                        " WHERE order_no = ? AND status = 1 AND attempts = ?",
    [ORDER_SQL_WRONG_AMOUNT] =
        "UPDATE payment_order SET status = 3, final_reason = 2, lease_until = NULL"
        " WHERE order_no = ? AND status IN (0, 1, 3) AND final_reason = 0",
    [ORDER_SQL_LEASE_FOR] = "UPDATE payment_order SET lease_until = NOW(3) + INTERVAL ? MICROSECOND"
                            " WHERE order_no = ? AND status = 1 AND attempts = ?",
    /* After the INSERT, in its transaction: a locking read sees the latest
     * committed archive row (any isolation level) and waits for an archive
     * batch still open (docs/FENCE.md, "Order retention"). */
    [ORDER_SQL_ARCHIVED] =
        "SELECT 1 FROM payment_order_archive WHERE order_no = ? LOCK IN SHARE MODE",
    [ORDER_SQL_RELEASE] =
        "UPDATE payment_order SET lease_until = NOW(3)"
        " WHERE order_no = ? AND status = 1 AND attempts = ? AND lease_until > NOW(3)",
};

/* A deadlock or lock wait timeout: up to 3 tries; a lost connection: one
 * reconnect. No pause (each statement is short and autocommitted). */
static const db_retry_policy order_retry = {
    .max_tries = 3,
    .max_lost_tries = 2,
};

/* The failure of st (NULL: nothing was executed, the prepare or the connect
 * failed) into *r: a lost connection is dropped, and ctx->err says why
 * unless the failure is a deadlock or lock wait timeout. */
static void order_try_report(app_ctx *ctx, MYSQL_STMT *st, db_try_report *r)
{
    if (st == NULL) {
        r->err_no = ctx->db != NULL ? mysql_errno(ctx->db) : 0;
        r->lost = true;
        if (r->err_no != 0)
            app_ctx_db_error(ctx, r->err_no);
        return;
    }
    r->err_no = mysql_stmt_errno(st);
    if (db_conn_retryable(r->err_no))
        return;
    snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", r->err_no, mysql_stmt_error(st));
    r->lost = app_ctx_db_error(ctx, r->err_no) == 1; /* st is closed from here on */
}

bool order_store_should_retry(app_ctx *ctx, MYSQL_STMT *st, int *tries, unsigned int *err)
{
    db_try_report r = { 0, false, false };

    (*tries)++;
    order_try_report(ctx, st, &r);
    *err = r.err_no;
    return db_retry_next(&order_retry, *tries, DB_TRY_FAILED, &r);
}

static MYSQL_STMT *order_stmt(app_ctx *ctx, int which)
{
    return app_ctx_stmt(ctx, STMT_ORDER_BASE + which, order_sql[which]);
}

/* Maps the outcome of a CAS-style write: rc from db_stmt_exec. */
static order_store_result order_cas_result(MYSQL_STMT *st, int rc)
{
    if (rc != 0)
        return ORDER_STORE_ERROR;
    return mysql_stmt_affected_rows(st) == 1 ? ORDER_STORE_OK : ORDER_STORE_MISS;
}

static void order_log_error(app_ctx *ctx, const char *what, const char *order_no)
{
    log_msg(LOG_ERROR, "order_store %s order=%s: %s", what, order_no, ctx->err);
}

/* PAID needs a transaction_id that fits the column; false (logged) when not. */
static bool order_txid_usable(app_ctx *ctx, const char *what, const char *order_no,
                              const char *transaction_id)
{
    if (transaction_id != NULL && transaction_id[0] != '\0' &&
        strlen(transaction_id) <= ORDER_TXID_MAX)
        return true;
    snprintf(ctx->err, sizeof(ctx->err), "refusing PAID without a usable transaction_id");
    order_log_error(ctx, what, order_no);
    return false;
}

/* Runs the compare-and-set statement which with parameters by types (as
 * db_stmt_exec), retried as order_store_should_retry says. OK (one row
 * changed), MISS (none: the row is not in the expected state), ERROR
 * (logged as `what` of order_no). */
static order_store_result order_cas(app_ctx *ctx, int which, const char *what, const char *order_no,
                                    const char *types, ...)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;
    va_list ap;

    for (;;) {
        st = order_stmt(ctx, which);
        if (st != NULL) {
            va_start(ap, types);
            rc = db_stmt_vexec(st, types, ap);
            va_end(ap);
        } else {
            rc = -1;
        }
        if (rc == 0)
            return order_cas_result(st, rc);
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    order_log_error(ctx, what, order_no);
    return ORDER_STORE_ERROR;
}

order_store_result order_store_get(app_ctx *ctx, const char *order_no, order_row *row)
{
    MYSQL_STMT *st;
    long long fen = 0, status = 0, live = 0, final_reason = 0;
    int txid_null = 1, tries = 0, rc;
    unsigned int err;

    for (;;) {
        st = order_stmt(ctx, ORDER_SQL_GET);
        rc = st != NULL ? db_stmt_exec(st, "s", order_no) : -1;
        if (rc == 0) {
            memset(row, 0, sizeof(*row));
            rc = db_stmt_fetch(st, "slllSlllssl", row->order_no, sizeof(row->order_no),
                               &row->user_id, &fen, &status, row->transaction_id,
                               sizeof(row->transaction_id), &txid_null, &live, &row->attempts,
                               &final_reason, row->created_at, sizeof(row->created_at),
                               row->updated_at, sizeof(row->updated_at), &row->caller_id);
        }
        if (rc >= 0)
            break;
        if (!order_store_should_retry(ctx, st, &tries, &err)) {
            order_log_error(ctx, "read", order_no);
            return ORDER_STORE_ERROR;
        }
    }
    db_stmt_done(st);
    if (rc == 0)
        return ORDER_STORE_MISS;
    if (!order_state_from_int(status, &row->status)) {
        snprintf(ctx->err, sizeof(ctx->err), "status %lld outside the state table", status);
        order_log_error(ctx, "read", order_no);
        return ORDER_STORE_ERROR;
    }
    row->amount_fen = fen;
    row->lease_live = live == 1;
    row->lease_set = live != 0;
    row->final_reason = final_reason == ORDER_FINAL_CLOSED         ? ORDER_FINAL_CLOSED
                        : final_reason == ORDER_FINAL_WRONG_AMOUNT ? ORDER_FINAL_WRONG_AMOUNT
                                                                   : ORDER_RETRYABLE;
    if (txid_null)
        row->transaction_id[0] = '\0';
    return ORDER_STORE_OK;
}

/* One try of the insert transaction: START TRANSACTION, INSERT, the
 * archive's locking read, COMMIT (ROLLBACK when archived). *failed is the
 * statement that failed (NULL: the connection, BEGIN or COMMIT). */
static order_store_result order_insert_txn(app_ctx *ctx, long long caller_id, const char *order_no,
                                           long long user_id, const char *amount, long lease_ms,
                                           MYSQL_STMT **failed)
{
    MYSQL_STMT *ins = order_stmt(ctx, ORDER_SQL_INSERT);
    MYSQL_STMT *arc = order_stmt(ctx, ORDER_SQL_ARCHIVED);
    int found;

    *failed = NULL;
    if (ins == NULL || arc == NULL)
        return ORDER_STORE_ERROR;
    if (db_exec_simple(ctx->db, "START TRANSACTION") != 0)
        return ORDER_STORE_ERROR;
    *failed = ins;
    if (db_stmt_exec(ins, "sllsl", order_no, caller_id, user_id, amount,
                     (long long)lease_ms * 1000) != 0)
        return mysql_stmt_errno(ins) == 1062 ? ORDER_STORE_DUPLICATE : ORDER_STORE_ERROR;
    *failed = arc;
    if (db_stmt_exec(arc, "s", order_no) != 0)
        return ORDER_STORE_ERROR;
    long long one = 0;
    found = db_stmt_fetch(arc, "l", &one);
    db_stmt_done(arc);
    if (found < 0)
        return ORDER_STORE_ERROR;
    *failed = NULL;
    if (found == 1)
        return db_exec_simple(ctx->db, "ROLLBACK") == 0 ? ORDER_STORE_ARCHIVED : ORDER_STORE_ERROR;
    return db_exec_simple(ctx->db, "COMMIT") == 0 ? ORDER_STORE_OK : ORDER_STORE_ERROR;
}

order_store_result order_store_insert(app_ctx *ctx, const char *order_no, long long user_id,
                                      int64_t amount_fen, long lease_ms)
{
    return order_store_insert_owned(ctx, 0, order_no, user_id, amount_fen, lease_ms);
}

typedef struct {
    app_ctx *ctx;
    long long caller_id;
    const char *order_no;
    long long user_id;
    const char *amount;
    long lease_ms;
    order_store_result result;
} order_insert_arg;

/* One try of the insert transaction for db_run. Nothing of a failed try is
 * kept: a statement that failed inside the transaction leaves it open (rolled
 * back here); a failed BEGIN or COMMIT or a lost connection leaves nothing
 * open. */
static db_try_status order_insert_try(void *arg, db_try_report *r)
{
    order_insert_arg *a = arg;
    app_ctx *ctx = a->ctx;
    MYSQL_STMT *st;

    a->result = order_insert_txn(ctx, a->caller_id, a->order_no, a->user_id, a->amount, a->lease_ms,
                                 &st);
    if (a->result != ORDER_STORE_ERROR && a->result != ORDER_STORE_DUPLICATE)
        return DB_TRY_DONE;
    if (st != NULL && ctx->db != NULL && !db_conn_lost(mysql_stmt_errno(st)))
        (void)db_exec_simple(ctx->db, "ROLLBACK");
    if (a->result == ORDER_STORE_DUPLICATE)
        return DB_TRY_DONE;
    order_try_report(ctx, st, r);
    return DB_TRY_FAILED;
}

order_store_result order_store_insert_owned(app_ctx *ctx, long long caller_id, const char *order_no,
                                            long long user_id, int64_t amount_fen, long lease_ms)
{
    char amount[MONEY_STR_MAX];
    order_insert_arg a = { ctx, caller_id, order_no, user_id, amount, lease_ms, ORDER_STORE_ERROR };

    money_format(amount_fen, amount);
    if (db_run(&order_retry, order_insert_try, &a, NULL) == 0)
        return a.result;
    order_log_error(ctx, "insert", order_no);
    return ORDER_STORE_ERROR;
}

order_store_result order_store_take_expired(app_ctx *ctx, const char *order_no, long long attempts,
                                            long lease_ms)
{
    return order_cas(ctx, ORDER_SQL_TAKE_EXPIRED, "take lease", order_no, "lsl",
                     (long long)lease_ms * 1000, order_no, attempts);
}

order_store_result order_store_retry(app_ctx *ctx, const char *order_no, order_status from,
                                     long long attempts, long lease_ms)
{
    if (!order_state_can_transition(from, ORDER_PROCESSING)) {
        snprintf(ctx->err, sizeof(ctx->err), "no transition %s -> PROCESSING",
                 order_state_name(from));
        order_log_error(ctx, "retry", order_no);
        return ORDER_STORE_ERROR;
    }
    return order_cas(ctx, ORDER_SQL_RETRY, "retry", order_no, "lsll", (long long)lease_ms * 1000,
                     order_no, (long long)from, attempts);
}

order_store_result order_store_mark_paid(app_ctx *ctx, const char *order_no,
                                         const char *transaction_id, long long amount_fen)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;

    if (!order_txid_usable(ctx, "mark paid", order_no, transaction_id))
        return ORDER_STORE_ERROR;
    for (;;) {
        st = order_stmt(ctx, ORDER_SQL_PAID);
        rc = st != NULL ? db_stmt_exec(st, "ssl", transaction_id, order_no, amount_fen) : -1;
        if (rc == 0)
            return order_cas_result(st, rc);
        if (st != NULL && mysql_stmt_errno(st) == 1062) {
            snprintf(ctx->err, sizeof(ctx->err),
                     "transaction_id %s already belongs to another order", transaction_id);
            break;
        }
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    order_log_error(ctx, "mark paid", order_no);
    return ORDER_STORE_ERROR;
}

order_store_result order_store_mark_failed(app_ctx *ctx, const char *order_no, long long attempts,
                                           long recheck_ms)
{
    long long us = recheck_ms > 0 ? (long long)recheck_ms * 1000 : 0;

    return order_cas(ctx, ORDER_SQL_FAILED, "mark failed", order_no, "llsl", us, us, order_no,
                     attempts);
}

order_store_result order_store_mark_final(app_ctx *ctx, const char *order_no, long long attempts,
                                          order_final_reason reason)
{
    return order_cas(ctx, ORDER_SQL_FINAL, "mark final", order_no, "lsl", (long long)reason,
                     order_no, attempts);
}

order_store_result order_store_mark_wrong_amount(app_ctx *ctx, const char *order_no)
{
    return order_cas(ctx, ORDER_SQL_WRONG_AMOUNT, "mark wrong amount", order_no, "s", order_no);
}

order_store_result order_store_release_lease(app_ctx *ctx, const char *order_no, long long attempts)
{
    return order_cas(ctx, ORDER_SQL_RELEASE, "release lease", order_no, "sl", order_no, attempts);
}

order_store_result order_store_recheck_take(app_ctx *ctx, const char *order_no, long long attempts,
                                            long lease_ms)
{
    return order_cas(ctx, ORDER_SQL_RECHECK_TAKE, "take recheck", order_no, "lsl",
                     (long long)lease_ms * 1000, order_no, attempts);
}

order_store_result order_store_recheck_paid(app_ctx *ctx, const char *order_no, long long attempts,
                                            const char *transaction_id)
{
    if (!order_txid_usable(ctx, "recheck paid", order_no, transaction_id))
        return ORDER_STORE_ERROR;
    return order_cas(ctx, ORDER_SQL_RECHECK_PAID, "recheck paid", order_no, "ssl", transaction_id,
                     order_no, attempts);
}

order_store_result order_store_recheck_done(app_ctx *ctx, const char *order_no, long long attempts)
{
    return order_cas(ctx, ORDER_SQL_RECHECK_DONE, "recheck done", order_no, "sl", order_no,
                     attempts);
}

/* Up to max (order_no, attempts) rows of the listing query sql_id. */
static int order_store_list(app_ctx *ctx, int sql_id, char (*order_nos)[ORDER_NO_MAX + 1],
                            long long *attempts, int max)
{
    MYSQL_STMT *st;
    int tries = 0, rc, n;
    unsigned int err;

    for (;;) {
        n = 0;
        st = order_stmt(ctx, sql_id);
        rc = st != NULL ? db_stmt_exec(st, "l", (long long)max) : -1;
        while (rc == 0) {
            char no[ORDER_NO_MAX + 1];
            long long att = 0;
            rc = db_stmt_fetch(st, "sl", no, sizeof(no), &att);
            if (rc != 1)
                break;
            if (n < max) {
                snprintf(order_nos[n], sizeof(order_nos[n]), "%s", no);
                attempts[n] = att;
                n++;
            }
            rc = 0;
        }
        if (rc >= 0)
            return n;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    log_msg(LOG_ERROR, "order_store: listing orders: %s", ctx->err);
    return -1;
}

int order_store_expired(app_ctx *ctx, char (*order_nos)[ORDER_NO_MAX + 1], long long *attempts,
                        int max)
{
    return order_store_list(ctx, ORDER_SQL_EXPIRED, order_nos, attempts, max);
}

int order_store_recheck_due(app_ctx *ctx, char (*order_nos)[ORDER_NO_MAX + 1], long long *attempts,
                            int max)
{
    return order_store_list(ctx, ORDER_SQL_RECHECK_DUE, order_nos, attempts, max);
}

order_store_result order_store_lease_for(app_ctx *ctx, const char *order_no, long long attempts,
                                         long ms)
{
    return order_cas(ctx, ORDER_SQL_LEASE_FOR, "lease_for", order_no, "lsl", (long long)ms * 1000,
                     order_no, attempts);
}
