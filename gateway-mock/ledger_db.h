/* ledger_db - what the ledger's files share (ledger.c, ledger_charge.c,
 * ledger_close.c, ledger_refund.c, ledger_rows.c): the connection and its
 * statement slots (on a mock_store), the helpers that run statements with
 * the ledger's error reporting, and the retry loop. Not for other modules: they use ledger.h.
 *
 * Every helper returning int returns 0, or -1 with l->m.err_no / l->m.err
 * set (ledger_error); one returning a statement returns NULL on failure the
 * same way. Transactions are mock_store_begin / _commit / _rollback on l->m.
 * A failure inside a transaction leaves it open: ledger_run (the caller of
 * every operation) rolls it back or drops the lost connection. */
#ifndef IDEMPAY_MOCK_LEDGER_DB_H
#define IDEMPAY_MOCK_LEDGER_DB_H

#include <stdbool.h>
#include <mysql.h>

#include "ledger.h"
#include "mock_store.h"

#define LEDGER_MAX_TRIES MOCK_STORE_TRIES /* also of a clash inside one operation */
#define LEDGER_ERR_LOGIC MOCK_STORE_ERR_LOGIC

/* The statements (ledger_sql in ledger.c), one slot each per connection. */
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

struct ledger {
    mock_store m; /* the connection, the last error (ledger_error) */
    MYSQL_STMT *stmt[S_COUNT];
};

/* Clears l's error. */
void ledger_ok(ledger *l);
/* Statement sid, prepared on first use on this connection; NULL on failure. */
MYSQL_STMT *ledger_stmt(ledger *l, int sid);
/* A statement that failed: its error into l, its result freed, itself
 * reset for the next use. */
void ledger_stmt_fail(ledger *l, MYSQL_STMT *st, const char *what);
/* Executes statement sid with parameters by db_conn's letters (db_stmt_exec;
 * a result set is buffered). Returns the statement, for its affected rows
 * or its rows (ledger_first, db_stmt_fetch), or NULL. */
MYSQL_STMT *ledger_exec(ledger *l, int sid, const char *types, ...);
/* Fetches the first row of st's result by db_conn's letters into the
 * targets (*found says whether there was one) and drops the rest. */
int ledger_first(ledger *l, MYSQL_STMT *st, bool *found, const char *types, ...);
/* One write (statement sid) in its own transaction, so a connection found
 * dead before COMMIT leaves nothing done and the write can be retried. */
int ledger_write1(ledger *l, int sid, const char *types, ...);

/* One try of an operation on the ledger `owner`: 0 done, -1 failed (err_no
 * set). */
typedef mock_store_op ledger_op;
/* Runs op on l's connection as mock_store_run says. 0, or -1. */
int ledger_run(ledger *l, ledger_op op, void *arg);

/* What ledger_trade_get reads of a mock_trade row. */
typedef struct {
    bool found; /* false: no row (the other fields are 0) */
    long long total_fee;
    bool charged; /* it has a transaction_id */
    char last_result[16];
    bool closed;
} trade_row;

/* The mock_trade row of out_trade_no into t. */
int ledger_trade_get(ledger *l, const char *out_trade_no, trade_row *t);
/* A charge by S_CHARGE_BY_TXID or S_CHARGE_BY_OTN (key: the transaction_id
 * or the out_trade_no) into o's charge fields and *refund_count; *found
 * says whether there is one (ledger_charge.c). */
int ledger_charge_get(ledger *l, int sid, const char *key, bool *found, ledger_order *o,
                      long long *refund_count);

#endif
