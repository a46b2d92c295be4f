/* refund_queue.c - the refund queue: rows are claimed by a lease CAS,
 * submitted to the gateway under their out_refund_no (fixed when the row was
 * written), retried with backoff until the gateway accepts, then polled with
 * refundquery until a result; every step is the refund_state machine's and
 * every write is fenced by the claim's attempt count and the state read. */
#include "refund_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "clocks.h"
#include "db_conn.h"
#include "gateway_refund.h"
#include "log.h"
#include "metrics.h"
#include "refund_state.h"
#include "text_token.h"

#define REFUND_POLL_MS 250        /* idle poll of the queue */
#define REFUND_DOWN_SLEEP_MS 1000 /* MariaDB unavailable: wait before trying again */
#define REFUND_BATCH 16           /* rows looked at per poll */
#define REFUND_WORKER_INDEX 1000  /* app_ctx thread index of the worker (not a FastCGI thread) */

enum {
    RQ_STMT_ENQUEUE = STMT_REFUND_BASE,
    RQ_STMT_DUE,
    RQ_STMT_CLAIM,
    RQ_STMT_MOVE /* STMT_REFUND_BASE + 3; + 5.. are refund_notify's and refund_api's */
};

/* Plain INSERT, not INSERT IGNORE: only a duplicate of uk_out_refund_no (the
 * charge's 'RF' refund exists) may be ignored, every other error must roll
 * the caller back. */
static const char SQL_ENQUEUE[] =
    "INSERT INTO payment_refund (transaction_id, order_no, kind, out_refund_no, total_fee, "
    "refund_fee, state) VALUES (?, ?, 0, ?, ?, ?, 0)";
/* Due: pending rows to submit, accepted rows to ask about (lease_until is
 * then the time of the next refundquery). LIMIT is REFUND_BATCH. */
static const char SQL_DUE[] =
    "SELECT id, transaction_id, order_no, out_refund_no, total_fee, refund_fee, "
    "COALESCE(reason, ''), state, attempts FROM payment_refund "
    "WHERE state IN (0, 2) AND (lease_until IS NULL OR lease_until <= NOW(3)) ORDER BY id LIMIT 16";
/* The claim: a CAS on the lease, the state and the attempt count read with
 * the row. Two workers reading the same due row both try it; the row lock
 * serialises them and the second sees a lease in the future or a bumped
 * count (0 rows). The new count fences this worker's later update. */
static const char SQL_CLAIM[] =
    "UPDATE payment_refund SET lease_until = NOW(3) + INTERVAL ? MICROSECOND, "
    "attempts = attempts + 1 "
    "WHERE id = ? AND state = ? AND attempts = ? "
    "AND (lease_until IS NULL OR lease_until <= NOW(3))";
/* A step's write: the new state (the same one for a retry or a poll), when
 * the row is due again, and the reason. Fenced: only while the row is still
 * in the state this claim read and no later claim was taken (a refund
 * notification that moved it meanwhile wins). */
static const char SQL_MOVE[] =
    "UPDATE payment_refund SET state = ?, lease_until = NOW(3) + INTERVAL ? MICROSECOND, "
    "last_error = NULLIF(?, '') WHERE id = ? AND state = ? AND attempts = ?";

typedef struct {
    long long id;
    char transaction_id[48];
    char order_no[48];
    char out_refund_no[REFUND_NO_MAX + 8];
    long long total_fee;
    long long refund_fee;
    char reason[96];
    long long state;    /* refund_status */
    long long attempts; /* as read; the claim makes it attempts + 1 */
} rq_row;

int refund_queue_refund_no(const char *transaction_id, char *out, size_t outlen)
{
    if (outlen > 0)
        out[0] = '\0';
    if (!text_token_valid(transaction_id, 1, REFUND_NO_MAX, "_-"))
        return -1;
    int n = snprintf(out, outlen, "RF%s", transaction_id);
    if (n < 0 || (size_t)n >= outlen || n > REFUND_NO_MAX) {
        if (outlen > 0)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

long refund_queue_backoff_ms(long attempts)
{
    long ms = REFUND_BACKOFF_MIN_MS;
    for (long i = 1; i < attempts && ms < REFUND_BACKOFF_MAX_MS; i++)
        ms *= 2;
    return ms > REFUND_BACKOFF_MAX_MS ? REFUND_BACKOFF_MAX_MS : ms;
}

int refund_queue_enqueue(app_ctx *ctx, const char *transaction_id, const char *order_no,
                         long long total_fee, unsigned int *db_errno)
{
    char refund_no[REFUND_NO_MAX + 1];

    *db_errno = 0;
    if (refund_queue_refund_no(transaction_id, refund_no, sizeof(refund_no)) != 0) {
        /* Callers pass a verified transaction_id; refuse loudly otherwise. */
        log_msg(LOG_ERROR, "refund_queue: cannot derive out_refund_no for order %s", order_no);
        *db_errno = 1366; /* ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: a non-retryable error */
        return -1;
    }
    MYSQL_STMT *st = app_ctx_stmt(ctx, RQ_STMT_ENQUEUE, SQL_ENQUEUE);
    if (st == NULL) {
        *db_errno = ctx->db != NULL ? mysql_errno(ctx->db) : 2006;
        if (*db_errno == 0)
            *db_errno = 2006;
        return -1;
    }
    if (db_stmt_exec(st, "sssll", transaction_id, order_no, refund_no, total_fee, total_fee) != 0) {
        unsigned int e = mysql_stmt_errno(st);
        if (e == 1062)
            return 0; /* that charge is queued already: never twice */
        snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", e, mysql_stmt_error(st));
        *db_errno = e;
        return -1;
    }
    return 1;
}

static long rq_lease_ms(const app_config *cfg)
{
    /* Longer than any gateway call, so a live worker never loses its lease
     * mid-call; even if it did, the same out_refund_no keeps it one refund. */
    long min = cfg->gateway_connect_timeout_ms + cfg->gateway_timeout_ms + 2000;
    return cfg->lease_ms > min ? cfg->lease_ms : min;
}

static int rq_db_error(app_ctx *ctx, MYSQL_STMT *st)
{
    unsigned int e = mysql_stmt_errno(st);
    snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", e, mysql_stmt_error(st));
    (void)app_ctx_db_error(ctx, e);
    return -1;
}

/* Claims row r. Returns 1 with *attempts set to this claim's number (this
 * worker owns the row until the lease ends), 0 when another worker has it,
 * -1 on a MariaDB error. */
static int rq_claim(app_ctx *ctx, const rq_row *r, long long *attempts)
{
    MYSQL_STMT *claim = app_ctx_stmt(ctx, RQ_STMT_CLAIM, SQL_CLAIM);
    if (claim == NULL)
        return -1;
    if (db_stmt_exec(claim, "llll", (long long)rq_lease_ms(ctx->cfg) * 1000LL, r->id, r->state,
                     r->attempts) != 0)
        return rq_db_error(ctx, claim);
    if (mysql_stmt_affected_rows(claim) != 1)
        return 0;
    *attempts = r->attempts + 1;
    return 1;
}

void refund_queue_report_stuck(const char *order_no, const char *out_refund_no,
                               long long refund_fee, refund_status state, const char *why)
{
    metrics_inc(state == REFUND_CLOSED   ? MET_REFUND_STUCK_CLOSE
                : state == REFUND_CHANGE ? MET_REFUND_STUCK_CHANGE
                                         : MET_REFUND_STUCK_ERROR);
    log_msg(LOG_ERROR,
            "refund stuck, an operator must act (idempay-fcgi --list-stuck-refunds): "
            "order %s refund %s (%lld fen) is %s: %s",
            order_no, out_refund_no, refund_fee, refund_state_name(state),
            why != NULL && why[0] ? why : "-");
}

/* Writes step st of claimed row r (see SQL_MOVE): due again after delay_ms. */
static int rq_write(app_ctx *ctx, const rq_row *r, long long attempts, refund_step st,
                    long delay_ms, const char *why)
{
    MYSQL_STMT *move = app_ctx_stmt(ctx, RQ_STMT_MOVE, SQL_MOVE);
    if (move == NULL)
        return -1;
    if (db_stmt_exec(move, "llslll", (long long)st.next, (long long)delay_ms * 1000LL,
                     why != NULL ? why : "", r->id, r->state, attempts) != 0)
        return rq_db_error(ctx, move);
    if (mysql_stmt_affected_rows(move) != 1)
        return 0; /* the notification (or an operator) moved it meanwhile */
    if (st.next == REFUND_SUCCESS) {
        metrics_inc(MET_REFUND_DONE);
        log_msg(LOG_INFO, "refund done (SUCCESS): order %s charge %s refund %s (%lld fen)",
                r->order_no, r->transaction_id, r->out_refund_no, r->refund_fee);
    } else if (st.action == REFUND_ACT_STUCK) {
        refund_queue_report_stuck(r->order_no, r->out_refund_no, r->refund_fee, st.next, why);
    }
    return 0;
}

/* The submission of a PENDING row: /secapi/pay/refund. */
static int rq_submit(app_ctx *ctx, const rq_row *r, long long attempts)
{
    gw_result res;
    gw_outcome o = gateway_refund(ctx, r->transaction_id, r->out_refund_no, r->total_fee,
                                  r->refund_fee, r->reason, &res);
    refund_step st = refund_state_on_submit(REFUND_PENDING, o == GW_CHARGED,
                                            o == GW_NOT_CHARGED ? res.err_code : NULL);
    long delay = refund_queue_backoff_ms(attempts);

    if (st.action == REFUND_ACT_MOVE) {
        metrics_inc(MET_REFUND_ACCEPTED);
        log_msg(LOG_INFO, "refund accepted: order %s charge %s refund %s (%lld fen), attempt %lld",
                r->order_no, r->transaction_id, r->out_refund_no, r->refund_fee, attempts);
        delay = ctx->cfg->refund.query_interval_ms;
    } else if (st.action == REFUND_ACT_RETRY) {
        metrics_inc(MET_REFUND_RETRY);
        log_msg(LOG_WARN,
                "refund not accepted: order %s charge %s refund %s attempt %lld: %s %s; "
                "retry in %ld ms",
                r->order_no, r->transaction_id, r->out_refund_no, attempts, res.err_code,
                res.message, delay);
    }
    return rq_write(ctx, r, attempts, st, delay, res.err_code);
}

/* The poll of an ACCEPTED row: /pay/refundquery. */
static int rq_poll(app_ctx *ctx, const rq_row *r, long long attempts)
{
    gw_result res;
    gw_outcome o = gateway_refundquery(ctx, r->out_refund_no, &res);
    const char *status = o == GW_UNKNOWN ? NULL : res.trade_state;

    if (o == GW_CHARGED && res.total_fee >= 0 && res.total_fee != r->refund_fee) {
        log_msg(LOG_ERROR,
                "refundquery of refund %s (order %s) says %lld fen, we asked %lld: "
                "not believed",
                r->out_refund_no, r->order_no, res.total_fee, r->refund_fee);
        status = NULL;
    }
    refund_step st = refund_state_on_result(REFUND_ACCEPTED, status);
    long delay = ctx->cfg->refund.query_interval_ms;
    if (st.next == REFUND_PENDING) {
        log_msg(LOG_WARN,
                "refund %s (order %s) accepted but unknown to refundquery: submitted "
                "again under the same out_refund_no",
                r->out_refund_no, r->order_no);
        delay = 0;
    }
    return rq_write(ctx, r, attempts, st, delay, status != NULL ? status : res.err_code);
}

int refund_queue_run_once(app_ctx *ctx)
{
    rq_row rows[REFUND_BATCH];
    int n = 0, claimed = 0;

    MYSQL_STMT *due = app_ctx_stmt(ctx, RQ_STMT_DUE, SQL_DUE);
    if (due == NULL)
        return -1;
    if (db_stmt_exec(due, "") != 0)
        return rq_db_error(ctx, due);
    /* Read every row before issuing other statements on this connection. */
    for (;;) {
        rq_row r;
        memset(&r, 0, sizeof(r));
        int got = db_stmt_fetch(due, "lsssllsll", &r.id, r.transaction_id, sizeof(r.transaction_id),
                                r.order_no, sizeof(r.order_no), r.out_refund_no,
                                sizeof(r.out_refund_no), &r.total_fee, &r.refund_fee, r.reason,
                                sizeof(r.reason), &r.state, &r.attempts);
        if (got < 0)
            return rq_db_error(ctx, due);
        if (got == 0)
            break;
        if (n < REFUND_BATCH)
            rows[n++] = r;
    }

    for (int i = 0; i < n; i++) {
        long long attempts = 0;
        int c = rq_claim(ctx, &rows[i], &attempts);
        if (c < 0)
            return -1;
        if (c == 0)
            continue;
        claimed++;
        int w = rows[i].state == REFUND_ACCEPTED ? rq_poll(ctx, &rows[i], attempts)
                                                 : rq_submit(ctx, &rows[i], attempts);
        if (w < 0)
            return -1;
    }
    return claimed;
}

static void *rq_main(void *arg)
{
    const app_config *cfg = arg;

    if (!cfg->refund.enabled) {
        log_msg(LOG_WARN, "refund_queue: IDEMPAY_REFUNDS=off: refunds are queued, never sent");
        return NULL;
    }
    mysql_thread_init();
    app_ctx *ctx = app_ctx_new(cfg, REFUND_WORKER_INDEX);
    if (ctx == NULL) {
        log_msg(LOG_ERROR, "refund_queue: out of memory, worker not running");
        mysql_thread_end();
        return NULL;
    }
    int was_down = 0;
    for (;;) {
        int r = refund_queue_run_once(ctx);
        if (r < 0) {
            if (!was_down)
                log_msg(LOG_WARN, "refund_queue: database unavailable: %s", ctx->err);
            was_down = 1;
            clocks_sleep_ms(REFUND_DOWN_SLEEP_MS);
            continue;
        }
        was_down = 0;
        if (r == 0)
            clocks_sleep_ms(REFUND_POLL_MS);
    }
    return NULL;
}

int refund_queue_start(const app_config *cfg)
{
    pthread_t t;
    pthread_attr_t attr;

    if (pthread_attr_init(&attr) != 0)
        return -1;
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, rq_main, (void *)cfg);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_msg(LOG_ERROR, "refund_queue: cannot start the worker: %s", strerror(rc));
        return -1;
    }
    return 0;
}
