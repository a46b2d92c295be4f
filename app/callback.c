/* callback.c - WeChat payment-result notifications: verified without the
 * database first, then applied exactly once in one MariaDB transaction whose
 * first write claims the transaction_id (see callback.h, docs/CALLBACKS.md). */
#include "callback.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "db_retry.h"
#include "log.h"
#include "metrics.h"
#include "money.h"
#include "order_state.h"
#include "refund_queue.h"

#define CB_TXN_ATTEMPTS 5 /* tries of the whole transaction on deadlock / lock wait */

/* ---- applying (one MariaDB transaction) -------------------------------- */

enum {
    CB_STMT_ORDER_AMOUNT = STMT_CALLBACK_BASE,
    CB_STMT_RECORD_INSERT,
    CB_STMT_ORDER_CAS,
    CB_STMT_ORDER_LOCK,
    CB_STMT_RECORD_DUPLICATE,
    CB_STMT_RECORD_ORDER
};

static const char SQL_ORDER_AMOUNT[] = "SELECT amount FROM payment_order WHERE order_no = ?";
/* The first write of the transaction claims the transaction_id: the unique
 * key on third_party_no serialises concurrent copies of one notification
 * (the seed's select-then-insert race is gone: there is no select before
 * it). The same round trip checks the order: a record is inserted only when
 * the order exists with this amount in fen (DECIMAL arithmetic is exact);
 * no row inserted sends the caller to cb_check_order for the reason. Under
 * READ COMMITTED the SELECT part is a consistent read: no lock on the
 * order until the CAS. */
static const char SQL_RECORD_INSERT[] =
    "INSERT INTO payment_callback_record (third_party_no, order_no, total_fee, outcome, raw_xml) "
    "SELECT ?, order_no, ?, 0, ? FROM payment_order WHERE order_no = ? AND amount * 100 = ?";
/* A CAS, not the seed's unconditional status update: only ORDER_PENDING (0),
 * ORDER_PROCESSING (1) and a retryable ORDER_FAILED (3) become ORDER_PAID
 * (2); a PAID order is never rewritten, so another transaction_id can never
 * replace the one it has, and a closed order (final_reason) is never paid. FORCE INDEX: the row is
 * found by its unique order_no; without the hint the range optimizer also sizes the three status
 * ranges of idx_status_lease on every call (measured in docs/PERFORMANCE.md). */
static const char SQL_ORDER_CAS[] =
    "UPDATE payment_order FORCE INDEX (uk_order_no) SET status = 2, transaction_id = ?, lease_until = NULL "
    "WHERE order_no = ? AND status IN (0, 1, 3) AND final_reason = 0";
static const char SQL_ORDER_LOCK[] =
    "SELECT status, transaction_id, final_reason FROM payment_order WHERE order_no = ? FOR UPDATE";
static const char SQL_RECORD_DUPLICATE[] =
    "UPDATE payment_callback_record SET outcome = 1 WHERE third_party_no = ?";
static const char SQL_RECORD_ORDER[] =
    "SELECT order_no FROM payment_callback_record WHERE third_party_no = ?";

typedef enum {
    CB_APPLIED = 0,         /* this notification made the order PAID */
    CB_ALREADY_APPLIED,     /* seen before, or the order is PAID with this transaction */
    CB_DOUBLE_CHARGE,       /* second charge of a PAID order: recorded, refund queued now */
    CB_DOUBLE_CHARGE_KNOWN, /* second charge whose refund someone else had queued */
    CB_STRAY_CHARGE,        /* charge of a closed order: recorded, refund queued now */
    CB_REJECTED             /* a check against the database failed: verdict says which */
} cb_effect;

typedef enum { CB_TXN_DONE = 0, CB_TXN_RETRY, CB_TXN_DOWN } cb_txn_status;

/* The raw body as stored: at most CALLBACK_RAW_XML_MAX bytes, cut on a UTF-8
 * character boundary (the body was already checked to be valid UTF-8). */
static char *cb_raw_copy(const char *body, size_t len)
{
    if (len > CALLBACK_RAW_XML_MAX) {
        len = CALLBACK_RAW_XML_MAX;
        while (len > 0 && ((unsigned char)body[len] & 0xC0) == 0x80)
            len--;
    }
    char *s = malloc(len + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, body, len);
    s[len] = '\0';
    return s;
}

/* Remembers the MariaDB error of st (or of the connection when st is NULL). */
static unsigned int cb_errno(app_ctx *ctx, MYSQL_STMT *st)
{
    unsigned int e = 0;
    if (st != NULL)
        e = mysql_stmt_errno(st);
    if (e == 0 && ctx->db != NULL)
        e = mysql_errno(ctx->db);
    if (e != 0)
        snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", e,
                 st != NULL ? mysql_stmt_error(st) : mysql_error(ctx->db));
    return e;
}

/* Classifies a MariaDB error in the middle of the transaction: rolls back,
 * drops a lost connection, and says whether another attempt may help. */
static cb_txn_status cb_fail(app_ctx *ctx, unsigned int e)
{
    if (ctx->db != NULL && !db_conn_lost(e))
        (void)db_exec_simple(ctx->db, "ROLLBACK");
    int dropped = app_ctx_db_error(ctx, e);
    if (db_conn_retryable(e) || dropped)
        return CB_TXN_RETRY;
    return CB_TXN_DOWN;
}

static cb_txn_status cb_rollback(app_ctx *ctx)
{
    if (db_exec_simple(ctx->db, "ROLLBACK") != 0) {
        unsigned int e = mysql_errno(ctx->db);
        (void)app_ctx_db_error(ctx, e);
    }
    return CB_TXN_DONE;
}

/* Order lookup for the amount check (a plain read: an order's amount never
 * changes once it exists, and nothing is written yet). */
static cb_txn_status cb_check_order(app_ctx *ctx, callback_notification *n,
                                    callback_verdict *verdict)
{
    char amount[MONEY_STR_MAX + 8] = "";
    MYSQL_STMT *st = app_ctx_stmt(ctx, CB_STMT_ORDER_AMOUNT, SQL_ORDER_AMOUNT);
    if (st == NULL)
        return CB_TXN_DOWN;
    if (db_stmt_exec(st, "s", n->order_no) != 0)
        return cb_fail(ctx, cb_errno(ctx, st));
    int found = db_stmt_fetch(st, "s", amount, sizeof(amount));
    if (found < 0)
        return cb_fail(ctx, cb_errno(ctx, st));
    db_stmt_done(st);
    *verdict = callback_check_order(n, found, amount);
    return CB_TXN_DONE;
}

/* The record INSERT met 1062: a committed transaction recorded this
 * transaction_id before. Rolls back, makes sure that record is about this
 * order, and changes nothing. The rollback may lose the connection, which
 * closes every prepared statement: statements are fetched after it. */
static cb_txn_status cb_recorded_before(app_ctx *ctx, callback_notification *n, cb_effect *effect,
                                        callback_verdict *verdict)
{
    char rec_order[ORDER_NO_MAX + 8] = "";
    MYSQL_STMT *rec;
    int got;

    cb_rollback(ctx);
    if (ctx->db == NULL)
        return CB_TXN_RETRY; /* the rollback lost the connection: start over */
    rec = app_ctx_stmt(ctx, CB_STMT_RECORD_ORDER, SQL_RECORD_ORDER);
    if (rec == NULL)
        return CB_TXN_DOWN;
    if (db_stmt_exec(rec, "s", n->transaction_id) != 0)
        return cb_fail(ctx, cb_errno(ctx, rec));
    got = db_stmt_fetch(rec, "s", rec_order, sizeof(rec_order));
    if (got < 0)
        return cb_fail(ctx, cb_errno(ctx, rec));
    db_stmt_done(rec);
    if (got == 0)
        return CB_TXN_RETRY; /* the record vanished: cannot happen, try again */
    if (strcmp(rec_order, n->order_no) != 0) {
        *effect = CB_REJECTED;
        *verdict = CB_VERDICT_UNKNOWN_ORDER;
        callback_set_reason(n, "transaction_id belongs to another order");
        return CB_TXN_DONE;
    }
    *effect = CB_ALREADY_APPLIED;
    return CB_TXN_DONE;
}

/* The CAS changed nothing: the order is PAID already, or FAILED for good
 * (closed at the gateway). Re-read it under lock; the same charge confirms,
 * any other charge is recorded as a duplicate and queued for refund in the
 * same transaction (a charge of a closed order too: it can never be paid). */
static cb_txn_status cb_not_payable(app_ctx *ctx, callback_notification *n, cb_effect *effect,
                                    callback_verdict *verdict)
{
    MYSQL_STMT *lock = app_ctx_stmt(ctx, CB_STMT_ORDER_LOCK, SQL_ORDER_LOCK);
    MYSQL_STMT *dup = app_ctx_stmt(ctx, CB_STMT_RECORD_DUPLICATE, SQL_RECORD_DUPLICATE);
    long long status = -1, final_reason = 0;
    char paid_txn[CALLBACK_TXN_MAX + 8] = "";
    unsigned int e;
    int got, q;

    if (lock == NULL || dup == NULL)
        return cb_fail(ctx, cb_errno(ctx, NULL));
    if (db_stmt_exec(lock, "s", n->order_no) != 0)
        return cb_fail(ctx, cb_errno(ctx, lock));
    got = db_stmt_fetch(lock, "lsl", &status, paid_txn, sizeof(paid_txn), &final_reason);
    if (got < 0)
        return cb_fail(ctx, cb_errno(ctx, lock));
    db_stmt_done(lock);
    if (got == 0) {
        cb_rollback(ctx);
        *effect = CB_REJECTED;
        *verdict = CB_VERDICT_UNKNOWN_ORDER;
        callback_set_reason(n, "unknown order");
        return CB_TXN_DONE;
    }
    bool paid = status == ORDER_PAID && paid_txn[0] != '\0';
    if (!paid && !(status == ORDER_FAILED && final_reason != ORDER_RETRYABLE)) {
        /* The CAS covers every other state; seeing this means the row
         * changed under us. */
        log_msg(LOG_ERROR, "callback: order %s in status %lld (transaction '%s') after the CAS",
                n->order_no, status, paid_txn);
        cb_rollback(ctx);
        return CB_TXN_RETRY;
    }
    if (paid && strcmp(paid_txn, n->transaction_id) == 0) {
        /* PAID by the synchronous pay flow with this very charge: keep the
         * record (it is the first notification of it) and confirm. */
        if (db_exec_simple(ctx->db, "COMMIT") != 0)
            return cb_fail(ctx, cb_errno(ctx, NULL));
        *effect = CB_ALREADY_APPLIED;
        return CB_TXN_DONE;
    }
    /* A second charge of a PAID order, or a charge of a closed one: record
     * it as such and queue its refund, atomically. */
    if (db_stmt_exec(dup, "s", n->transaction_id) != 0)
        return cb_fail(ctx, cb_errno(ctx, dup));
    q = refund_queue_enqueue(ctx, n->transaction_id, n->order_no, n->total_fee, &e);
    if (q < 0)
        return cb_fail(ctx, e);
    if (db_exec_simple(ctx->db, "COMMIT") != 0)
        return cb_fail(ctx, cb_errno(ctx, NULL));
    log_msg(LOG_ERROR, "%s: order %s %s %s; charge %s (%lld fen) %s",
            paid ? "double charge detected" : "charge of a closed order", n->order_no,
            paid ? "is PAID by transaction" : "can no longer be paid", paid_txn, n->transaction_id,
            n->total_fee, q == 1 ? "queued for refund" : "was already queued for refund");
    if (q == 1)
        metrics_inc(MET_REFUND_QUEUED);
    *effect = q != 1 ? CB_DOUBLE_CHARGE_KNOWN : paid ? CB_DOUBLE_CHARGE : CB_STRAY_CHARGE;
    return CB_TXN_DONE;
}

/* One attempt of the whole transaction. On CB_TXN_DONE, *effect (and for
 * CB_REJECTED *verdict and n->reason) tell the outcome; anything else means
 * the transaction was rolled back (or the connection is gone). */
static cb_txn_status cb_apply_once(app_ctx *ctx, callback_notification *n, const char *raw,
                                   cb_effect *effect, callback_verdict *verdict)
{
    unsigned int e;

    *verdict = CB_VERDICT_OK;

    /* The first statements are prepared before the transaction starts (the
     * others may prepare inside it: a failure there drops the connection,
     * which rolls the transaction back). */
    MYSQL_STMT *ins = app_ctx_stmt(ctx, CB_STMT_RECORD_INSERT, SQL_RECORD_INSERT);
    MYSQL_STMT *cas = app_ctx_stmt(ctx, CB_STMT_ORDER_CAS, SQL_ORDER_CAS);
    if (ins == NULL || cas == NULL)
        return CB_TXN_DOWN;

    if (db_exec_simple(ctx->db, "START TRANSACTION") != 0)
        return cb_fail(ctx, cb_errno(ctx, NULL));

    /* 1. Record first (the seed updated the order, then recorded: a crash or
     *    a concurrent copy in between applied the notification twice). */
    if (db_stmt_exec(ins, "slssl", n->transaction_id, n->total_fee, raw, n->order_no,
                     n->total_fee) != 0) {
        e = cb_errno(ctx, ins);
        if (e != 1062)
            return cb_fail(ctx, e);
        return cb_recorded_before(ctx, n, effect, verdict);
    }

    if (mysql_stmt_affected_rows(ins) != 1) {
        /* No order with this number and amount: say which (a plain read;
         * an order's amount never changes once it exists). */
        cb_rollback(ctx);
        cb_txn_status s = cb_check_order(ctx, n, verdict);
        if (s != CB_TXN_DONE)
            return s;
        if (*verdict == CB_VERDICT_OK)
            return CB_TXN_RETRY; /* created meanwhile: try again */
        *effect = CB_REJECTED;
        return CB_TXN_DONE;
    }

    /* 2. CAS the order to PAID with this transaction_id. */
    if (db_stmt_exec(cas, "ss", n->transaction_id, n->order_no) != 0) {
        e = cb_errno(ctx, cas);
        if (e != 1062)
            return cb_fail(ctx, e);
        /* uk_transaction_id: another order already holds this charge. */
        cb_rollback(ctx);
        *effect = CB_REJECTED;
        *verdict = CB_VERDICT_UNKNOWN_ORDER;
        callback_set_reason(n, "transaction_id belongs to another order");
        return CB_TXN_DONE;
    }
    if (mysql_stmt_affected_rows(cas) == 1) {
        if (db_exec_simple(ctx->db, "COMMIT") != 0)
            return cb_fail(ctx, cb_errno(ctx, NULL));
        *effect = CB_APPLIED;
        return CB_TXN_DONE;
    }

    /* 3. Not changed: PAID already, or closed for good. */
    return cb_not_payable(ctx, n, effect, verdict);
}

/* Up to CB_TXN_ATTEMPTS tries of the whole transaction (a deadlock, a lock
 * wait timeout, a dropped connection, or data that moved under it), with a
 * short randomised pause before each: 2 ms * the try's number + 0..4 ms. */
static const db_retry_policy cb_retry = {
    .max_tries = CB_TXN_ATTEMPTS,
    .max_lost_tries = CB_TXN_ATTEMPTS,
    .pause_base_ms = 2,
    .pause_step_ms = 2,
    .pause_jitter_ms = 5,
};

typedef struct {
    app_ctx *ctx;
    callback_notification *n;
    char *raw;
    cb_effect effect;
    callback_verdict verdict;
} cb_try_arg;

/* One try of callback_apply: cb_apply_once's CB_TXN_RETRY (already judged
 * worth another try by cb_fail) is DB_TRY_AGAIN, CB_TXN_DOWN a failure no
 * try cures. */
static db_try_status cb_try(void *arg, db_try_report *r)
{
    cb_try_arg *a = arg;

    (void)r;
    switch (cb_apply_once(a->ctx, a->n, a->raw, &a->effect, &a->verdict)) {
    case CB_TXN_DONE:
        return DB_TRY_DONE;
    case CB_TXN_RETRY:
        return DB_TRY_AGAIN;
    case CB_TXN_DOWN:
        break;
    }
    return DB_TRY_FAILED;
}

callback_verdict callback_apply(app_ctx *ctx, callback_notification *n, const char *body,
                                size_t len)
{
    cb_try_arg a = { ctx, n, cb_raw_copy(body, len), CB_REJECTED, CB_VERDICT_OK };

    if (a.raw == NULL) {
        callback_set_reason(n, "out of memory");
        return CB_VERDICT_UNAVAILABLE;
    }
    int rc = db_run(&cb_retry, cb_try, &a, NULL);
    free(a.raw);
    cb_effect effect = a.effect;
    callback_verdict v = a.verdict;
    if (rc != 0) {
        log_msg(LOG_WARN, "callback: order %s transaction %s not applied, database unavailable: %s",
                n->order_no, n->transaction_id, ctx->err);
        callback_set_reason(n, "unavailable");
        return CB_VERDICT_UNAVAILABLE;
    }
    if (v != CB_VERDICT_OK)
        return v;
    switch (effect) {
    case CB_APPLIED:
        metrics_inc(MET_CB_APPLIED);
        break;
    case CB_DOUBLE_CHARGE:
        metrics_inc(MET_DOUBLE_CHARGE_DETECTED);
        break;
    case CB_STRAY_CHARGE:
    case CB_ALREADY_APPLIED:
    case CB_DOUBLE_CHARGE_KNOWN:
    case CB_REJECTED:
        metrics_inc(MET_CB_ALREADY_APPLIED);
        break;
    }
    return CB_VERDICT_OK;
}

void callback_refused(callback_verdict v, const callback_notification *n)
{
    metrics_inc((metric_counter)callback_verdict_metric(v));
    if (v != CB_VERDICT_UNAVAILABLE)
        log_msg(LOG_WARN, "callback rejected: order '%s': %s", n->order_no, n->reason);
}

void callback_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    callback_notification n;
    callback_verdict v;

    v = callback_verify(ctx->cfg, req->body, req->body_len, req->body_too_large, &n);
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", n.order_no);
    if (v == CB_VERDICT_OK)
        v = callback_apply(ctx, &n, req->body, req->body_len);
    if (v != CB_VERDICT_OK) {
        callback_refused(v, &n);
        callback_reply(resp, 0, n.reason);
    } else {
        callback_reply(resp, 1, "OK");
    }
}
