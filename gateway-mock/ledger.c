/* ledger.c - the mock's MariaDB ledger through prepared statements only.
 * Dedupe is decided by primary keys (INSERT, then a conditional UPDATE on a
 * duplicate), so concurrent duplicates lose atomically in any process; a
 * close is one more conditional write on the same mock_trade row. */
#include "ledger.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_conn.h"
#include "db_retry.h"
#include "env.h"
#include "log.h"

#define LEDGER_MAX_TRIES 20
#define LEDGER_ERR_LOGIC 1   /* err_no for a failure that is not MariaDB's */

/* ---- statements ---------------------------------------------------------- */

enum {
    S_TRADE_INSERT,
    S_TRADE_CAS_CHARGE,
    S_TRADE_CAS_DECLINE,
    S_TRADE_GET,
    S_TRADE_UPSERT_CHARGE,
    S_TRADE_UPSERT_DECLINE,
    S_TRADE_UPSERT_UNPAID,
    S_TRADE_LOCK_CLOSED,
    S_CLOSE_INSERT,
    S_CLOSE_CAS,
    S_CHARGE_INSERT,
    S_CHARGE_BY_TXID,
    S_CHARGE_BY_OTN,
    S_CHARGE_LOCK,
    S_CHARGE_ADD_REFUND,
    S_REFUND_GET,
    S_REFUND_INSERT,
    S_LIST_ALL,
    S_LIST_OTN,
    S_CLOSED_ALL,
    S_CLOSED_OTN,
    S_BILL,
    S_COUNTER_GET,
    S_COUNTER_ADD,
    S_COUNTER_ZERO,
    S_DEL_REFUNDS,
    S_DEL_CHARGES,
    S_DEL_TRADES,
    S_DEL_JOURNAL,
    S_CONFIG_GET,
    S_CONFIG_PUT,
    S_COUNT
};

#define CHARGE_COLS \
    "transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, trade_type, " \
    "DATE_FORMAT(charged_at + INTERVAL 8 HOUR, '%Y%m%d%H%i%s')"

static const char *const ledger_sql[S_COUNT] = {
    [S_TRADE_INSERT] =
        "INSERT INTO mock_trade (out_trade_no, total_fee, transaction_id, last_result, attempts, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
    [S_TRADE_CAS_CHARGE] =
        "UPDATE mock_trade SET transaction_id = ?, last_result = 'SUCCESS', attempts = attempts + 1, "
        "updated_at = UTC_TIMESTAMP(6) WHERE out_trade_no = ? AND total_fee = ? AND transaction_id IS NULL "
        "AND closed_at IS NULL",
    [S_TRADE_CAS_DECLINE] =
        "UPDATE mock_trade SET last_result = 'PAYERROR', attempts = attempts + 1, "
        "updated_at = UTC_TIMESTAMP(6) WHERE out_trade_no = ? AND total_fee = ? AND transaction_id IS NULL "
        "AND closed_at IS NULL",
    [S_TRADE_GET] =
        "SELECT total_fee, transaction_id, last_result, closed_at IS NOT NULL FROM mock_trade "
        "WHERE out_trade_no = ?",
    [S_TRADE_UPSERT_CHARGE] =
        "INSERT INTO mock_trade (out_trade_no, total_fee, transaction_id, last_result, attempts, "
        "created_at, updated_at) VALUES (?, ?, ?, 'SUCCESS', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)) "
        "ON DUPLICATE KEY UPDATE last_result = 'SUCCESS', "
        "transaction_id = COALESCE(transaction_id, VALUES(transaction_id)), "
        "attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)",
    [S_TRADE_UPSERT_DECLINE] =
        "INSERT INTO mock_trade (out_trade_no, total_fee, transaction_id, last_result, attempts, "
        "created_at, updated_at) VALUES (?, ?, NULL, 'PAYERROR', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)) "
        "ON DUPLICATE KEY UPDATE last_result = IF(transaction_id IS NULL, 'PAYERROR', last_result), "
        "attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)",
    [S_TRADE_UPSERT_UNPAID] =
        "INSERT INTO mock_trade (out_trade_no, total_fee, transaction_id, last_result, attempts, "
        "created_at, updated_at) VALUES (?, ?, NULL, 'NOTPAY', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)) "
        "ON DUPLICATE KEY UPDATE attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)",
    /* Read under the row lock the caller's upsert took: the latest state. */
    [S_TRADE_LOCK_CLOSED] =
        "SELECT closed_at IS NOT NULL FROM mock_trade WHERE out_trade_no = ? FOR UPDATE",
    [S_CLOSE_INSERT] =
        "INSERT INTO mock_trade (out_trade_no, total_fee, transaction_id, last_result, attempts, "
        "created_at, updated_at, closed_at) VALUES (?, 0, NULL, 'CLOSED', 0, UTC_TIMESTAMP(6), "
        "UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
    [S_CLOSE_CAS] =
        "UPDATE mock_trade SET closed_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6) "
        "WHERE out_trade_no = ? AND transaction_id IS NULL AND closed_at IS NULL",
    [S_CHARGE_INSERT] =
        "INSERT INTO mock_charge (transaction_id, out_trade_no, total_fee, trade_type, charged_at, openid) "
        "VALUES (?, ?, ?, ?, ?, ?)",
    [S_CHARGE_BY_TXID] =
        "SELECT " CHARGE_COLS " FROM mock_charge WHERE transaction_id = ?",
    [S_CHARGE_BY_OTN] =
        "SELECT " CHARGE_COLS " FROM mock_charge WHERE out_trade_no = ? "
        "ORDER BY refund_count > 0, seq LIMIT 1",
    [S_CHARGE_LOCK] =
        "SELECT out_trade_no, total_fee, refunded_fee + pending_fee FROM mock_charge WHERE transaction_id = ? FOR UPDATE",
    [S_CHARGE_ADD_REFUND] =
        "UPDATE mock_charge SET refunded_fee = refunded_fee + ?, refund_count = refund_count + 1 "
        "WHERE transaction_id = ?",
    [S_REFUND_GET] =
        "SELECT transaction_id, out_trade_no, refund_id, total_fee, refund_fee FROM mock_refund "
        "WHERE out_refund_no = ?",
    [S_REFUND_INSERT] =
        "INSERT INTO mock_refund (out_refund_no, refund_id, transaction_id, out_trade_no, total_fee, "
        "refund_fee, refunded_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6))",
    [S_LIST_ALL] =
        "SELECT transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, "
        "DATE_FORMAT(charged_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM mock_charge ORDER BY seq",
    [S_LIST_OTN] =
        "SELECT transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, "
        "DATE_FORMAT(charged_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM mock_charge "
        "WHERE out_trade_no = ? ORDER BY seq",
    [S_CLOSED_ALL] =
        "SELECT out_trade_no, DATE_FORMAT(closed_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM mock_trade "
        "WHERE closed_at IS NOT NULL ORDER BY closed_at, out_trade_no",
    [S_CLOSED_OTN] =
        "SELECT out_trade_no, DATE_FORMAT(closed_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM mock_trade "
        "WHERE out_trade_no = ? AND closed_at IS NOT NULL",
    /* Charges and refunds in [from, to) (UTC), by the time shown (China
     * time, to the second), transaction_id, charges first, refund_id. */
    [S_BILL] =
        "SELECT 0 AS kind, DATE_FORMAT(c.charged_at + INTERVAL 8 HOUR, '%Y-%m-%d %H:%i:%s') AS cst, "
        "c.transaction_id AS txid, c.out_trade_no, c.total_fee, c.trade_type, "
        "COALESCE(c.openid, '') AS openid, '' AS refund_id, '' AS out_refund_no, 0 AS refund_fee "
        "FROM mock_charge c WHERE ? <> 0 AND c.charged_at >= ? AND c.charged_at < ? "
        "UNION ALL "
        "SELECT 1, DATE_FORMAT(r.refunded_at + INTERVAL 8 HOUR, '%Y-%m-%d %H:%i:%s'), "
        "r.transaction_id, r.out_trade_no, r.total_fee, COALESCE(c.trade_type, ''), "
        "COALESCE(c.openid, ''), r.refund_id, r.out_refund_no, r.refund_fee "
        "FROM mock_refund r LEFT JOIN mock_charge c ON c.transaction_id = r.transaction_id "
        "WHERE ? <> 0 AND r.refunded_at >= ? AND r.refunded_at < ? "
        "ORDER BY cst, txid, kind, refund_id",
    [S_COUNTER_GET] = "SELECT value FROM mock_counter WHERE name = 'notifications_sent'",
    [S_COUNTER_ADD] =
        "INSERT INTO mock_counter (name, value) VALUES ('notifications_sent', ?) "
        "ON DUPLICATE KEY UPDATE value = value + VALUES(value)",
    [S_COUNTER_ZERO] =
        "INSERT INTO mock_counter (name, value) VALUES ('notifications_sent', 0) "
        "ON DUPLICATE KEY UPDATE value = 0",
    [S_DEL_REFUNDS] = "DELETE FROM mock_refund",
    [S_DEL_CHARGES] = "DELETE FROM mock_charge",
    [S_DEL_TRADES] = "DELETE FROM mock_trade",
    [S_DEL_JOURNAL] = "DELETE FROM mock_journal",
    [S_CONFIG_GET] = "SELECT config FROM mock_config WHERE id = 1",
    [S_CONFIG_PUT] =
        "INSERT INTO mock_config (id, config, updated_at) VALUES (1, ?, UTC_TIMESTAMP(6)) "
        "ON DUPLICATE KEY UPDATE config = VALUES(config), updated_at = VALUES(updated_at)",
};

struct ledger {
    MYSQL *db;
    MYSQL_STMT *stmt[S_COUNT];
    unsigned int err_no;     /* last MariaDB error number, 0 when none */
    bool write_sent;         /* COMMIT was sent: after a lost connection its fate is unknown */
    char err[256];
};

static void ledger_set_err(ledger *l, unsigned int no, const char *what, const char *msg)
{
    l->err_no = no;
    snprintf(l->err, sizeof(l->err), "%s: %s (%u)", what, msg, no);
}

static void ledger_disconnect(ledger *l)
{
    db_conn_close(&l->db, l->stmt, S_COUNT);
}

ledger *ledger_new(void)
{
    return calloc(1, sizeof(ledger));
}

void ledger_free(ledger *l)
{
    if (l == NULL)
        return;
    ledger_disconnect(l);
    free(l);
}

const char *ledger_error(const ledger *l)
{
    return l->err;
}

static int ledger_connect(ledger *l)
{
    char err[200];
    if (l->db != NULL)
        return 0;
    l->db = db_conn_open_as(DB_ACCOUNT_MOCK, env_str("IDEMPAY_MOCK_DB", LEDGER_DB), err,
                            sizeof(err));
    if (l->db == NULL) {
        ledger_set_err(l, 2003, "connect", err);
        return -1;
    }
    return 0;
}

static MYSQL_STMT *ledger_stmt(ledger *l, int sid)
{
    return db_stmt_slot(l->db, &l->stmt[sid], ledger_sql[sid], &l->err_no, l->err, sizeof(l->err));
}

/* A statement that failed: its error into l, its result freed, itself
 * reset for the next use. */
static void ledger_stmt_fail(ledger *l, MYSQL_STMT *st, const char *what)
{
    unsigned int no = mysql_stmt_errno(st);
    if (no != 0)
        ledger_set_err(l, no, what, mysql_stmt_error(st));
    else
        ledger_set_err(l, LEDGER_ERR_LOGIC, what, "out of memory or a bad binding");
    db_stmt_done(st);
    mysql_stmt_reset(st);
}

static void ledger_ok(ledger *l)
{
    l->err_no = 0;
    l->err[0] = '\0';
}

/* Executes statement sid with parameters by db_conn's letters (db_stmt_exec;
 * a result set is buffered). Returns the statement, for its affected rows
 * or its rows (ledger_first, db_stmt_fetch), or NULL (err_no / err set). */
static MYSQL_STMT *ledger_exec(ledger *l, int sid, const char *types, ...)
{
    va_list ap;
    int rc;
    MYSQL_STMT *st = ledger_stmt(l, sid);

    if (st == NULL)
        return NULL;
    va_start(ap, types);
    rc = db_stmt_vexec(st, types, ap);
    va_end(ap);
    if (rc != 0) {
        ledger_stmt_fail(l, st, "execute");
        return NULL;
    }
    ledger_ok(l);
    return st;
}

/* Fetches the first row of st's result by db_conn's letters into the
 * targets (*found says whether there was one) and drops the rest.
 * Returns 0 or -1 (err_no / err set). */
static int ledger_first(ledger *l, MYSQL_STMT *st, bool *found, const char *types, ...)
{
    va_list ap;
    int rc;

    va_start(ap, types);
    rc = db_stmt_vfetch(st, types, ap);
    va_end(ap);
    if (rc < 0) {
        ledger_stmt_fail(l, st, "fetch");
        return -1;
    }
    *found = rc == 1;
    db_stmt_done(st);
    ledger_ok(l);
    return 0;
}

static int ledger_sql_plain(ledger *l, const char *sql)
{
    if (mysql_query(l->db, sql) != 0) {
        ledger_set_err(l, mysql_errno(l->db), sql, mysql_error(l->db));
        return -1;
    }
    return 0;
}

static int ledger_begin(ledger *l)
{
    return ledger_sql_plain(l, "START TRANSACTION");
}

static int ledger_commit(ledger *l)
{
    l->write_sent = true;
    if (mysql_commit(l->db) != 0) {
        ledger_set_err(l, mysql_errno(l->db), "commit", mysql_error(l->db));
        return -1;
    }
    return 0;
}

/* Rolls back, ignoring errors (a lost connection rolls back by itself). */
static void ledger_rollback(ledger *l)
{
    if (l->db != NULL)
        (void)mysql_rollback(l->db);
}

/* One write in its own transaction, so a connection found dead before
 * COMMIT leaves nothing done and the write can be retried safely. */
static int ledger_write1(ledger *l, int sid, const char *types, ...)
{
    va_list ap;
    int rc;
    MYSQL_STMT *st;

    if (ledger_begin(l) != 0 || (st = ledger_stmt(l, sid)) == NULL)
        return -1;
    va_start(ap, types);
    rc = db_stmt_vexec(st, types, ap);
    va_end(ap);
    if (rc != 0) {
        ledger_stmt_fail(l, st, "execute");
        return -1;
    }
    ledger_ok(l);
    return ledger_commit(l);
}

/* The current UTC time as DATETIME(6) text and as seconds. */
static void ledger_now(char out[32], time_t *secs)
{
    struct timespec ts;
    struct tm tm;
    mock_clock_now_ts(&ts);   /* the mock's clock (clock_offset_ms) */
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm);
    unsigned long us = (unsigned long)(ts.tv_nsec / 1000) % 1000000UL;
    if (n == 0 || snprintf(out + n, 32 - n, ".%06lu", us) >= (int)(32 - n))
        out[0] = '\0';
    *secs = ts.tv_sec;
}

/* ---- the retry loop -------------------------------------------------------- */

/* One try of an operation: 0 done, -1 failed (err_no set). */
typedef int (*ledger_op)(ledger *l, void *arg);

/* Deadlocks, lock wait timeouts and lost connections (while no write can
 * have been committed): up to LEDGER_MAX_TRIES tries in all, 2 ms more of
 * a pause before each. */
static const db_retry_policy ledger_retry = {
    .max_tries = LEDGER_MAX_TRIES,
    .max_lost_tries = LEDGER_MAX_TRIES,
    .pause_step_ms = 2,
};

typedef struct {
    ledger *l;
    ledger_op op;
    void *arg;
} ledger_try_arg;

/* One try of ledger_run: connects, runs the op, and after a failure drops a
 * lost connection or rolls back what the op left open. A failed connect is
 * not retried (reported as no MariaDB error). */
static db_try_status ledger_try(void *arg, db_try_report *r)
{
    ledger_try_arg *t = arg;
    ledger *l = t->l;

    if (ledger_connect(l) != 0)
        return DB_TRY_FAILED;
    l->write_sent = false;
    if (t->op(l, t->arg) == 0)
        return DB_TRY_DONE;
    r->err_no = l->err_no;
    r->write_sent = l->write_sent;
    if (db_conn_lost(l->err_no)) {
        log_msg(LOG_WARN, "ledger: connection lost (%s); reconnecting", l->err);
        ledger_disconnect(l);
    } else {
        ledger_rollback(l);
    }
    return DB_TRY_FAILED;
}

/* Runs op as db_run and ledger_retry say. 0, or -1 (err_no, err set). */
static int ledger_run(ledger *l, ledger_op op, void *arg)
{
    ledger_try_arg t = { l, op, arg };
    return db_run(&ledger_retry, ledger_try, &t, NULL);
}

/* What ledger_trade_get reads of a mock_trade row. */
typedef struct {
    bool found;               /* false: no row (the other fields are 0) */
    long long total_fee;
    bool charged;             /* it has a transaction_id */
    char last_result[16];
    bool closed;
} trade_row;

/* The mock_trade row of out_trade_no into t. 0 or -1. */
static int ledger_trade_get(ledger *l, const char *out_trade_no, trade_row *t)
{
    char txid[TXID_BUF];
    int txid_null = 1;
    long long closed = 0;
    MYSQL_STMT *st = ledger_exec(l, S_TRADE_GET, "s", out_trade_no);

    memset(t, 0, sizeof(*t));
    if (st == NULL || ledger_first(l, st, &t->found, "lSsl", &t->total_fee, txid, sizeof(txid),
                                   &txid_null, t->last_result, sizeof(t->last_result),
                                   &closed) != 0)
        return -1;
    t->charged = t->found && !txid_null;
    t->closed = t->found && closed != 0;
    return 0;
}

/* ---- attempts ----------------------------------------------------------- */

typedef struct {
    const char *out_trade_no;
    long long total_fee;
    const char *trade_type;
    const char *openid;            /* NULL: none */
    bool charge;
    bool dedupe;
    char when[32];                 /* charged_at as DATETIME(6) text */
    ledger_attempt_result *out;
} attempt_arg;

/* Draws the time and transaction_id of the charge about to be recorded. */
static void ledger_draw_charge(attempt_arg *a)
{
    time_t secs;
    ledger_now(a->when, &secs);
    txid_transaction(secs, a->out->transaction_id);
    a->out->charged_at = secs;
}

/* Inserts the charge row drawn by ledger_draw_charge. A clash of
 * transaction_id (1062) is left to the caller, who draws again. */
static int ledger_insert_charge(ledger *l, attempt_arg *a)
{
    const char *openid = a->openid != NULL && a->openid[0] != '\0' ? a->openid : NULL;
    return ledger_exec(l, S_CHARGE_INSERT, "sslsss", a->out->transaction_id, a->out_trade_no,
                       a->total_fee, a->trade_type, a->when, openid) != NULL ? 0 : -1;
}

/* Once the out_trade_no exists and the conditional update missed: why?
 * Returns 0 with out->outcome ORDERCLOSED / ORDERPAID / MISMATCH, 1 when the
 * row changed under us (try again), -1 on failure. */
static int ledger_explain_miss(ledger *l, attempt_arg *a)
{
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (!t.found)
        return 1;  /* reset meanwhile */
    if (t.closed) {
        a->out->outcome = LEDGER_ORDERCLOSED;
        return 0;
    }
    if (t.total_fee != a->total_fee) {
        a->out->outcome = LEDGER_MISMATCH;
        return 0;
    }
    if (t.charged) {
        a->out->outcome = LEDGER_ORDERPAID;
        return 0;
    }
    return 1;
}

/* Inserts the charge (when charging) and commits. Returns 0, 1 when the
 * transaction_id clashed (rolled back: draw again), -1 on failure. */
static int ledger_finish_attempt(ledger *l, attempt_arg *a)
{
    if (a->charge && ledger_insert_charge(l, a) != 0) {
        if (l->err_no != 1062)
            return -1;
        ledger_rollback(l);
        return 1;
    }
    if (ledger_commit(l) != 0)
        return -1;
    a->out->outcome = a->charge ? LEDGER_CHARGED : LEDGER_DECLINED;
    return 0;
}

static int ledger_attempt_dedupe(ledger *l, void *arg)
{
    attempt_arg *a = arg;
    unsigned long long n = 0;
    int rc;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (a->charge)
            ledger_draw_charge(a);
        /* The first attempt of this out_trade_no? The primary key decides. */
        if (ledger_begin(l) != 0)
            return -1;
        if (ledger_exec(l, S_TRADE_INSERT, "slss", a->out_trade_no, a->total_fee,
                        a->charge ? a->out->transaction_id : NULL,
                        a->charge ? "SUCCESS" : "PAYERROR") != NULL) {
            rc = ledger_finish_attempt(l, a);
            if (rc <= 0)
                return rc;
            continue;
        }
        if (l->err_no != 1062)
            return -1;
        /* Seen before. Drop the shared lock the duplicate check took, then
         * claim the row with one conditional UPDATE: no lock upgrade, so
         * concurrent duplicates queue instead of deadlocking. */
        ledger_rollback(l);
        if (ledger_begin(l) != 0)
            return -1;
        MYSQL_STMT *cas =
            a->charge ? ledger_exec(l, S_TRADE_CAS_CHARGE, "ssl", a->out->transaction_id,
                                    a->out_trade_no, a->total_fee)
                      : ledger_exec(l, S_TRADE_CAS_DECLINE, "sl", a->out_trade_no, a->total_fee);
        if (cas == NULL)
            return -1;
        n = (unsigned long long)mysql_stmt_affected_rows(cas);
        if (n == 1) {
            rc = ledger_finish_attempt(l, a);
            if (rc <= 0)
                return rc;
            continue;
        }
        ledger_rollback(l);
        rc = ledger_explain_miss(l, a);
        if (rc <= 0)
            return rc;
    }
    ledger_set_err(l, LEDGER_ERR_LOGIC, "attempt", "the order kept changing");
    return -1;
}

/* In the transaction of a trusting attempt, after its upsert locked the
 * mock_trade row: is the order closed? 0 open, 1 closed (rolled back,
 * outcome ORDERCLOSED), -1 failure. */
static int ledger_closed_under_lock(ledger *l, attempt_arg *a)
{
    long long closed = 0;
    bool found = false;
    MYSQL_STMT *st = ledger_exec(l, S_TRADE_LOCK_CLOSED, "s", a->out_trade_no);
    if (st == NULL || ledger_first(l, st, &found, "l", &closed) != 0)
        return -1;
    if (!found || !closed)
        return 0;
    ledger_rollback(l);
    a->out->outcome = LEDGER_ORDERCLOSED;
    return 1;
}

/* Without dedupe: every attempt is recorded, unless the order is closed.
 * The upsert takes the row's lock first, so a close either committed before
 * (seen here) or waits for this transaction (and then sees the charge). */
static int ledger_attempt_trusting(ledger *l, void *arg)
{
    attempt_arg *a = arg;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (a->charge)
            ledger_draw_charge(a);
        if (ledger_begin(l) != 0)
            return -1;
        MYSQL_STMT *up =
            a->charge ? ledger_exec(l, S_TRADE_UPSERT_CHARGE, "sls", a->out_trade_no, a->total_fee,
                                    a->out->transaction_id)
                      : ledger_exec(l, S_TRADE_UPSERT_DECLINE, "sl", a->out_trade_no, a->total_fee);
        if (up == NULL)
            return -1;
        int rc = ledger_closed_under_lock(l, a);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        rc = ledger_finish_attempt(l, a);
        if (rc <= 0)
            return rc;
    }
    ledger_set_err(l, LEDGER_ERR_LOGIC, "attempt", "no free transaction_id");
    return -1;
}

int ledger_attempt(ledger *l, const char *out_trade_no, long long total_fee,
                   const char *trade_type, const char *openid, bool charge, bool dedupe,
                   ledger_attempt_result *out)
{
    attempt_arg a = { out_trade_no, total_fee, trade_type, openid, charge, dedupe, "", out };
    memset(out, 0, sizeof(*out));
    return ledger_run(l, dedupe ? ledger_attempt_dedupe : ledger_attempt_trusting, &a);
}

typedef struct {
    const char *out_trade_no;
    long long total_fee;
} unpaid_arg;

static int ledger_unpaid_op(ledger *l, void *arg)
{
    unpaid_arg *a = arg;
    return ledger_write1(l, S_TRADE_UPSERT_UNPAID, "sl", a->out_trade_no, a->total_fee);
}

int ledger_note_unpaid(ledger *l, const char *out_trade_no, long long total_fee)
{
    unpaid_arg a = { out_trade_no, total_fee };
    return ledger_run(l, ledger_unpaid_op, &a);
}

/* ---- closes ------------------------------------------------------------ */

typedef struct {
    const char *out_trade_no;
    ledger_close_outcome *out;
} close_arg;

/* Why did the close's conditional update miss? 0 with *out set, 1 when the
 * row is gone (a reset: try again), -1 on failure. */
static int ledger_close_explain(ledger *l, close_arg *a)
{
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (!t.found)
        return 1;
    if (t.charged) {
        *a->out = CLOSE_PAID;
        return 0;
    }
    if (t.closed) {
        *a->out = CLOSE_ALREADY;
        return 0;
    }
    return 1;
}

/* The first sight of an out_trade_no creates its row closed; otherwise one
 * conditional UPDATE closes it only while it has no charge. Either write
 * waits for the row lock a charging transaction holds, then sees its
 * outcome, so a close and a charge never both succeed. */
static int ledger_close_op(ledger *l, void *arg)
{
    close_arg *a = arg;
    MYSQL_STMT *cas;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (ledger_begin(l) != 0)
            return -1;
        if (ledger_exec(l, S_CLOSE_INSERT, "s", a->out_trade_no) != NULL) {
            if (ledger_commit(l) != 0)
                return -1;
            *a->out = CLOSE_DONE;
            return 0;
        }
        if (l->err_no != 1062)
            return -1;
        ledger_rollback(l);
        if (ledger_begin(l) != 0 || (cas = ledger_exec(l, S_CLOSE_CAS, "s", a->out_trade_no)) == NULL)
            return -1;
        if (mysql_stmt_affected_rows(cas) == 1) {
            if (ledger_commit(l) != 0)
                return -1;
            *a->out = CLOSE_DONE;
            return 0;
        }
        ledger_rollback(l);
        int rc = ledger_close_explain(l, a);
        if (rc <= 0)
            return rc;
    }
    ledger_set_err(l, LEDGER_ERR_LOGIC, "close", "the order kept changing");
    return -1;
}

int ledger_close(ledger *l, const char *out_trade_no, ledger_close_outcome *out)
{
    close_arg a = { out_trade_no, out };
    return ledger_run(l, ledger_close_op, &a);
}

/* ---- queries ----------------------------------------------------------- */

typedef struct {
    const char *out_trade_no;
    const char *transaction_id;
    ledger_order *out;
} query_arg;

/* A charge by S_CHARGE_BY_TXID or S_CHARGE_BY_OTN (key: the transaction_id
 * or the out_trade_no) into o's charge fields and *refund_count; *found
 * says whether there is one. 0 or -1. */
static int ledger_charge_get(ledger *l, int sid, const char *key, bool *found, ledger_order *o,
                             long long *refund_count)
{
    MYSQL_STMT *st = ledger_exec(l, sid, "s", key);
    if (st == NULL)
        return -1;
    return ledger_first(l, st, found, "sslllss", o->transaction_id, sizeof(o->transaction_id),
                        o->out_trade_no, sizeof(o->out_trade_no), &o->total_fee,
                        &o->refunded_fee, refund_count, o->trade_type, sizeof(o->trade_type),
                        o->time_end, sizeof(o->time_end));
}

static int ledger_query_op(ledger *l, void *arg)
{
    query_arg *a = arg;
    ledger_order *o = a->out;
    long long refund_count = 0;
    bool found = false;
    bool by_txid = a->transaction_id != NULL && a->transaction_id[0] != '\0';

    memset(o, 0, sizeof(*o));
    if (ledger_charge_get(l, by_txid ? S_CHARGE_BY_TXID : S_CHARGE_BY_OTN,
                          by_txid ? a->transaction_id : a->out_trade_no, &found, o,
                          &refund_count) != 0)
        return -1;
    if (found) {
        o->found = true;
        o->refund_count = (int)refund_count;
        snprintf(o->trade_state, sizeof(o->trade_state), "%s", refund_count > 0 ? "REFUND" : "SUCCESS");
        return 0;
    }
    memset(o, 0, sizeof(*o));
    if (by_txid)
        return 0;
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (t.found) {
        o->found = true;
        o->total_fee = t.total_fee;
        snprintf(o->out_trade_no, sizeof(o->out_trade_no), "%s", a->out_trade_no);
        /* A charge row always exists when the trade has a transaction_id,
         * and a closed trade never has one. */
        snprintf(o->trade_state, sizeof(o->trade_state), "%s",
                 t.closed                                 ? "CLOSED"
                 : strcmp(t.last_result, "PAYERROR") == 0 ? "PAYERROR"
                                                          : "NOTPAY");
    }
    return 0;
}

int ledger_query(ledger *l, const char *out_trade_no, const char *transaction_id,
                 ledger_order *out)
{
    query_arg a = { out_trade_no, transaction_id, out };
    return ledger_run(l, ledger_query_op, &a);
}

/* ---- refunds ----------------------------------------------------------- */

typedef struct {
    const char *transaction_id;
    const char *out_trade_no;
    const char *out_refund_no;
    long long total_fee;
    long long refund_fee;
    ledger_refund_result *out;
} refund_arg;

/* An earlier refund with this out_refund_no: 0 none, 1 found (out filled,
 * outcome REPEAT or CONFLICT), -1 failure. */
static int ledger_refund_earlier(ledger *l, refund_arg *a)
{
    ledger_refund_result *o = a->out;
    bool found = false;
    MYSQL_STMT *st = ledger_exec(l, S_REFUND_GET, "s", a->out_refund_no);
    if (st == NULL ||
        ledger_first(l, st, &found, "sssll", o->transaction_id, sizeof(o->transaction_id),
                     o->out_trade_no, sizeof(o->out_trade_no), o->refund_id,
                     sizeof(o->refund_id), &o->total_fee, &o->refund_fee) != 0)
        return -1;
    if (!found)
        return 0;
    bool same = (a->transaction_id != NULL && a->transaction_id[0] != '\0')
                    ? strcmp(o->transaction_id, a->transaction_id) == 0
                    : strcmp(o->out_trade_no, a->out_trade_no) == 0;
    o->outcome = same ? REFUND_REPEAT : REFUND_CONFLICT;
    return 1;
}

static int ledger_refund_op(ledger *l, void *arg)
{
    refund_arg *a = arg;
    ledger_refund_result *o = a->out;
    bool found = false;
    int rc;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        memset(o, 0, sizeof(*o));
        rc = ledger_refund_earlier(l, a);
        if (rc != 0)
            return rc < 0 ? -1 : 0;

        /* Which charge? */
        char txid[TXID_BUF] = "";
        if (a->transaction_id != NULL && a->transaction_id[0] != '\0') {
            snprintf(txid, sizeof(txid), "%s", a->transaction_id);
        } else {
            ledger_order charge;
            long long count;
            if (ledger_charge_get(l, S_CHARGE_BY_OTN, a->out_trade_no, &found, &charge,
                                  &count) != 0)
                return -1;
            if (!found) {
                o->outcome = REFUND_NO_CHARGE;
                return 0;
            }
            snprintf(txid, sizeof(txid), "%s", charge.transaction_id);
        }

        if (ledger_begin(l) != 0)
            return -1;
        long long refunded = 0;
        MYSQL_STMT *lock = ledger_exec(l, S_CHARGE_LOCK, "s", txid);
        if (lock == NULL ||
            ledger_first(l, lock, &found, "sll", o->out_trade_no, sizeof(o->out_trade_no),
                         &o->total_fee, &refunded) != 0)
            return -1;
        snprintf(o->transaction_id, sizeof(o->transaction_id), "%s", txid);
        o->refund_fee = a->refund_fee;
        if (!found) {
            ledger_rollback(l);
            o->outcome = REFUND_NO_CHARGE;
            return 0;
        }
        if (o->total_fee != a->total_fee) {
            ledger_rollback(l);
            o->outcome = REFUND_FEE_MISMATCH;
            return 0;
        }
        if (a->refund_fee > o->total_fee - refunded) {
            ledger_rollback(l);
            o->outcome = REFUND_TOO_MUCH;
            return 0;
        }
        time_t now = time(NULL);
        txid_refund(now, o->refund_id);
        if (ledger_exec(l, S_REFUND_INSERT, "ssssll", a->out_refund_no, o->refund_id, txid,
                        o->out_trade_no, o->total_fee, a->refund_fee) == NULL) {
            if (l->err_no != 1062)
                return -1;
            /* Same out_refund_no concurrently (or a refund_id clash): look again. */
            ledger_rollback(l);
            continue;
        }
        if (ledger_exec(l, S_CHARGE_ADD_REFUND, "ls", a->refund_fee, txid) == NULL)
            return -1;
        if (ledger_commit(l) != 0)
            return -1;
        o->outcome = REFUND_DONE;
        return 0;
    }
    ledger_set_err(l, LEDGER_ERR_LOGIC, "refund", "the refund kept changing");
    return -1;
}

int ledger_refund(ledger *l, const char *transaction_id, const char *out_trade_no,
                  const char *out_refund_no, long long total_fee, long long refund_fee,
                  ledger_refund_result *out)
{
    refund_arg a = { transaction_id, out_trade_no, out_refund_no, total_fee, refund_fee, out };
    return ledger_run(l, ledger_refund_op, &a);
}

/* ---- the ledger listing ---------------------------------------------------- */

/* A listing: all rows by sid_all, or those of out_trade_no by sid_otn,
 * each row made a JSON object by next. */
typedef struct {
    const char *out_trade_no;        /* NULL: all */
    int sid_all, sid_otn;
    int (*next)(MYSQL_STMT *st, json_t **obj);
    const char *what;
    json_t *rows;
} list_arg;

/* Out of memory while listing: the statement's result dropped. */
static int ledger_list_oom(ledger *l, MYSQL_STMT *st, const char *what)
{
    db_stmt_done(st);
    mysql_stmt_reset(st);
    ledger_set_err(l, LEDGER_ERR_LOGIC, what, "out of memory");
    return -1;
}

/* A new JSON array in *array (the old one dropped) with one object per row
 * of st's executed query, made by next: it fetches st's next row as a new
 * object into *obj (NULL when out of memory) and returns 1 for a row, 0
 * after the last, -1 on error. 0, or -1 (err set). */
static int ledger_json_rows(ledger *l, MYSQL_STMT *st, int (*next)(MYSQL_STMT *st, json_t **obj),
                            const char *what, json_t **array)
{
    json_t *obj;
    int f;

    json_decref(*array);
    *array = json_array();
    if (*array == NULL)
        return ledger_list_oom(l, st, what);
    while ((f = next(st, &obj)) == 1)
        if (obj == NULL || json_array_append_new(*array, obj) != 0)
            return ledger_list_oom(l, st, what);
    if (f < 0) {
        ledger_stmt_fail(l, st, what);
        return -1;
    }
    return 0;
}

static int ledger_list_op(ledger *l, void *arg)
{
    list_arg *a = arg;
    MYSQL_STMT *st = a->out_trade_no != NULL ? ledger_exec(l, a->sid_otn, "s", a->out_trade_no)
                                             : ledger_exec(l, a->sid_all, "");
    if (st == NULL)
        return -1;
    return ledger_json_rows(l, st, a->next, a->what, &a->rows);
}

/* Runs the listing a; its new array, or NULL on failure. */
static json_t *ledger_list(ledger *l, list_arg *a)
{
    if (ledger_run(l, ledger_list_op, a) != 0) {
        json_decref(a->rows);
        return NULL;
    }
    return a->rows;
}

static int ledger_charge_json(MYSQL_STMT *st, json_t **obj)
{
    char txid[TXID_BUF], otn[33], at[40];
    long long fee = 0, refunded = 0, count = 0;
    int f = db_stmt_fetch(st, "ssllls", txid, sizeof(txid), otn, sizeof(otn), &fee, &refunded,
                          &count, at, sizeof(at));
    if (f == 1)
        *obj = json_pack("{s:s, s:s, s:I, s:b, s:I, s:I, s:s}", "transaction_id", txid,
                         "out_trade_no", otn, "total_fee", (json_int_t)fee, "refunded", count > 0,
                         "refund_count", (json_int_t)count, "refunded_fee", (json_int_t)refunded,
                         "charged_at", at);
    return f;
}

json_t *ledger_charges_json(ledger *l, const char *out_trade_no)
{
    list_arg a = { out_trade_no, S_LIST_ALL, S_LIST_OTN, ledger_charge_json, "list", NULL };
    return ledger_list(l, &a);
}

static int ledger_close_json(MYSQL_STMT *st, json_t **obj)
{
    char otn[33], at[40];
    int f = db_stmt_fetch(st, "ss", otn, sizeof(otn), at, sizeof(at));
    if (f == 1)
        *obj = json_pack("{s:s, s:s}", "out_trade_no", otn, "closed_at", at);
    return f;
}

json_t *ledger_closed_json(ledger *l, const char *out_trade_no)
{
    list_arg a = { out_trade_no, S_CLOSED_ALL, S_CLOSED_OTN, ledger_close_json, "closed", NULL };
    return ledger_list(l, &a);
}

/* ---- the statement ------------------------------------------------------- */

typedef struct {
    char from[32], to[32];     /* UTC DATETIME text */
    bool charges, refunds;
    void (*restart)(void *arg);
    int (*row)(void *arg, const ledger_bill_record *r);
    void *arg;
    bool stopped;
} bill_arg;

/* Fetches the next statement row into r: 1 row, 0 done, -1 error. */
static int ledger_bill_fetch(MYSQL_STMT *st, ledger_bill_record *r)
{
    long long kind = 0;
    int rc = db_stmt_fetch(st, "lssslssssl", &kind, r->time, sizeof(r->time),
                           r->transaction_id, sizeof(r->transaction_id), r->out_trade_no,
                           sizeof(r->out_trade_no), &r->total_fee, r->trade_type,
                           sizeof(r->trade_type), r->openid, sizeof(r->openid), r->refund_id,
                           sizeof(r->refund_id), r->out_refund_no, sizeof(r->out_refund_no),
                           &r->refund_fee);
    r->refund = kind != 0;
    return rc;
}

static int ledger_bill_op(ledger *l, void *arg)
{
    bill_arg *a = arg;
    ledger_bill_record r;
    int f;

    a->stopped = false;
    a->restart(a->arg);
    /* Streamed: a statement may be long, and rows go out as they come. */
    MYSQL_STMT *st = ledger_stmt(l, S_BILL);
    if (st == NULL)
        return -1;
    if (db_stmt_exec_stream(st, "lsslss", (long long)a->charges, a->from, a->to,
                            (long long)a->refunds, a->from, a->to) != 0) {
        ledger_stmt_fail(l, st, "bill");
        return -1;
    }
    ledger_ok(l);
    memset(&r, 0, sizeof(r));
    while ((f = ledger_bill_fetch(st, &r)) == 1) {
        if (a->row(a->arg, &r) != 0) {
            a->stopped = true;
            db_stmt_done(st);
            mysql_stmt_reset(st);
            return 0;
        }
    }
    if (f < 0) {
        ledger_stmt_fail(l, st, "bill");
        return -1;
    }
    return 0;
}

/* UTC seconds as DATETIME text; "" when t is out of range. */
static void ledger_datetime(time_t t, char out[32])
{
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        out[0] = '\0';
}

int ledger_bill(ledger *l, time_t from, time_t to, bool charges, bool refunds,
                void (*restart)(void *arg), int (*row)(void *arg, const ledger_bill_record *r),
                void *arg)
{
    bill_arg a;
    memset(&a, 0, sizeof(a));
    ledger_datetime(from, a.from);
    ledger_datetime(to, a.to);
    if (a.from[0] == '\0' || a.to[0] == '\0') {
        ledger_set_err(l, LEDGER_ERR_LOGIC, "bill", "time out of range");
        return -1;
    }
    a.charges = charges;
    a.refunds = refunds;
    a.restart = restart;
    a.row = row;
    a.arg = arg;
    if (ledger_run(l, ledger_bill_op, &a) != 0)
        return -1;
    return a.stopped ? 1 : 0;
}

/* ---- counter, reset, config -------------------------------------------- */

static int ledger_counter_get_op(ledger *l, void *arg)
{
    long long *v = arg;
    bool found = false;
    MYSQL_STMT *st = ledger_exec(l, S_COUNTER_GET, "");
    if (st == NULL || ledger_first(l, st, &found, "l", v) != 0)
        return -1;
    if (!found)
        *v = 0;
    return 0;
}

int ledger_counter_get(ledger *l, long long *value)
{
    return ledger_run(l, ledger_counter_get_op, value);
}

static int ledger_counter_add_op(ledger *l, void *arg)
{
    long long *n = arg;
    return ledger_write1(l, S_COUNTER_ADD, "l", *n);
}

int ledger_counter_add(ledger *l, long long n)
{
    return ledger_run(l, ledger_counter_add_op, &n);
}

static int ledger_reset_op(ledger *l, void *arg)
{
    const char *config_json = arg;
    if (ledger_begin(l) != 0)
        return -1;
    if (ledger_exec(l, S_DEL_REFUNDS, "") == NULL || ledger_exec(l, S_DEL_CHARGES, "") == NULL ||
        ledger_exec(l, S_DEL_TRADES, "") == NULL || ledger_exec(l, S_DEL_JOURNAL, "") == NULL ||
        ledger_exec(l, S_COUNTER_ZERO, "") == NULL ||
        ledger_exec(l, S_CONFIG_PUT, "s", config_json) == NULL)
        return -1;
    return ledger_commit(l);
}

int ledger_reset(ledger *l, const char *config_json)
{
    return ledger_run(l, ledger_reset_op, (void *)config_json);
}

typedef struct {
    char *json;
    int rc;
} config_arg;

static int ledger_config_load_op(ledger *l, void *arg)
{
    config_arg *a = arg;
    bool found = false;

    free(a->json);
    a->json = NULL;
    MYSQL_STMT *st = ledger_exec(l, S_CONFIG_GET, "");
    if (st == NULL || ledger_first(l, st, &found, "m", &a->json) != 0)
        return -1;
    a->rc = a->json != NULL ? 0 : 1;
    return 0;
}

int ledger_config_load(ledger *l, char **json_out)
{
    config_arg a = { NULL, 1 };
    *json_out = NULL;
    if (ledger_run(l, ledger_config_load_op, &a) != 0)
        return -1;
    *json_out = a.json;
    return a.rc;
}

static int ledger_config_save_op(ledger *l, void *arg)
{
    return ledger_write1(l, S_CONFIG_PUT, "s", (const char *)arg);
}

int ledger_config_save(ledger *l, const char *config_json)
{
    return ledger_run(l, ledger_config_save_op, (void *)config_json);
}
