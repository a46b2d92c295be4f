/* ledger.c - the mock's MariaDB ledger through prepared statements only:
 * its statements, the helpers every ledger file runs them with (on a
 * mock_store: the connection and the retry loop), and the small rows (the
 * notification counter, reset, the persisted config). Charges, closes,
 * refunds and the rows read out in bulk are ledger_charge.c,
 * ledger_close.c, ledger_refund.c and ledger_rows.c. */
#include "ledger.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "ledger_db.h"
#include "mock_store.h"

/* ---- statements ---------------------------------------------------------- */

#define CHARGE_COLS                                                                                \
    "transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, trade_type, "            \
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
    [S_CHARGE_BY_TXID] = "SELECT " CHARGE_COLS " FROM mock_charge WHERE transaction_id = ?",
    [S_CHARGE_BY_OTN] = "SELECT " CHARGE_COLS " FROM mock_charge WHERE out_trade_no = ? "
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
    [S_LIST_ALL] = "SELECT transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, "
                   "DATE_FORMAT(charged_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM mock_charge ORDER BY seq",
    [S_LIST_OTN] = "SELECT transaction_id, out_trade_no, total_fee, refunded_fee, refund_count, "
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
    [S_COUNTER_ADD] = "INSERT INTO mock_counter (name, value) VALUES ('notifications_sent', ?) "
                      "ON DUPLICATE KEY UPDATE value = value + VALUES(value)",
    [S_COUNTER_ZERO] = "INSERT INTO mock_counter (name, value) VALUES ('notifications_sent', 0) "
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

ledger *ledger_new(void)
{
    ledger *l = calloc(1, sizeof(ledger));

    if (l != NULL)
        mock_store_init(&l->m, l->stmt, S_COUNT, "ledger");
    return l;
}

void ledger_free(ledger *l)
{
    if (l == NULL)
        return;
    mock_store_close(&l->m);
    free(l);
}

const char *ledger_error(const ledger *l)
{
    return l->m.err;
}

MYSQL_STMT *ledger_stmt(ledger *l, int sid)
{
    return db_stmt_slot(l->m.db, &l->stmt[sid], ledger_sql[sid], &l->m.err_no, l->m.err,
                        sizeof(l->m.err));
}

/* A statement that failed: its error into l, its result freed, itself
 * reset for the next use. */
void ledger_stmt_fail(ledger *l, MYSQL_STMT *st, const char *what)
{
    unsigned int no = mysql_stmt_errno(st);
    if (no != 0)
        mock_store_set_err(&l->m, no, what, mysql_stmt_error(st));
    else
        mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, what, "out of memory or a bad binding");
    db_stmt_done(st);
    mysql_stmt_reset(st);
}

void ledger_ok(ledger *l)
{
    l->m.err_no = 0;
    l->m.err[0] = '\0';
}

/* Executes statement sid with parameters by db_conn's letters (db_stmt_exec;
 * a result set is buffered). Returns the statement, for its affected rows
 * or its rows (ledger_first, db_stmt_fetch), or NULL (err_no / err set). */
MYSQL_STMT *ledger_exec(ledger *l, int sid, const char *types, ...)
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
int ledger_first(ledger *l, MYSQL_STMT *st, bool *found, const char *types, ...)
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

/* One write in its own transaction, so a connection found dead before
 * COMMIT leaves nothing done and the write can be retried safely. */
int ledger_write1(ledger *l, int sid, const char *types, ...)
{
    va_list ap;
    int rc;
    MYSQL_STMT *st;

    if (mock_store_begin(&l->m) != 0 || (st = ledger_stmt(l, sid)) == NULL)
        return -1;
    va_start(ap, types);
    rc = db_stmt_vexec(st, types, ap);
    va_end(ap);
    if (rc != 0) {
        ledger_stmt_fail(l, st, "execute");
        return -1;
    }
    ledger_ok(l);
    return mock_store_commit(&l->m);
}

/* ---- the retry loop -------------------------------------------------------- */

int ledger_run(ledger *l, ledger_op op, void *arg)
{
    return mock_store_run(&l->m, op, l, arg);
}

/* The mock_trade row of out_trade_no into t. 0 or -1. */
int ledger_trade_get(ledger *l, const char *out_trade_no, trade_row *t)
{
    char txid[TXID_BUF];
    int txid_null = 1;
    long long closed = 0;
    MYSQL_STMT *st = ledger_exec(l, S_TRADE_GET, "s", out_trade_no);

    memset(t, 0, sizeof(*t));
    if (st == NULL ||
        ledger_first(l, st, &t->found, "lSsl", &t->total_fee, txid, sizeof(txid), &txid_null,
                     t->last_result, sizeof(t->last_result), &closed) != 0)
        return -1;
    t->charged = t->found && !txid_null;
    t->closed = t->found && closed != 0;
    return 0;
}

/* ---- counter, reset, config -------------------------------------------- */

static int ledger_counter_get_op(void *owner, void *arg)
{
    ledger *l = owner;
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

static int ledger_counter_add_op(void *owner, void *arg)
{
    ledger *l = owner;
    long long *n = arg;
    return ledger_write1(l, S_COUNTER_ADD, "l", *n);
}

int ledger_counter_add(ledger *l, long long n)
{
    return ledger_run(l, ledger_counter_add_op, &n);
}

static int ledger_reset_op(void *owner, void *arg)
{
    ledger *l = owner;
    const char *config_json = arg;
    if (mock_store_begin(&l->m) != 0)
        return -1;
    if (ledger_exec(l, S_DEL_REFUNDS, "") == NULL || ledger_exec(l, S_DEL_CHARGES, "") == NULL ||
        ledger_exec(l, S_DEL_TRADES, "") == NULL || ledger_exec(l, S_DEL_JOURNAL, "") == NULL ||
        ledger_exec(l, S_COUNTER_ZERO, "") == NULL ||
        ledger_exec(l, S_CONFIG_PUT, "s", config_json) == NULL)
        return -1;
    return mock_store_commit(&l->m);
}

int ledger_reset(ledger *l, const char *config_json)
{
    return ledger_run(l, ledger_reset_op, (void *)config_json);
}

typedef struct {
    char *json;
    int rc;
} config_arg;

static int ledger_config_load_op(void *owner, void *arg)
{
    ledger *l = owner;
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

static int ledger_config_save_op(void *owner, void *arg)
{
    ledger *l = owner;
    return ledger_write1(l, S_CONFIG_PUT, "s", (const char *)arg);
}

int ledger_config_save(ledger *l, const char *config_json)
{
    return ledger_run(l, ledger_config_save_op, (void *)config_json);
}
