/* db_conn - opening MariaDB connections from the environment, and telling
 * which errors mean "the connection is gone" (reconnect and re-prepare) or
 * "retry the transaction" (deadlock, lock wait timeout).
 *
 * IDEMPAY_DB_SOCKET (unix socket; used when set), IDEMPAY_DB_HOST (127.0.0.1),
 * IDEMPAY_DB_PORT (13306), and the account of the program that connects
 * (least privilege, docs/SECURITY.md): each program has its own user and
 * password settings (db_account below), never another program's.
 * Connections set CLIENT_FOUND_ROWS off (affected rows = changed rows),
 * utf8mb4, autocommit on, and bounded connect/read/write timeouts.
 *
 * On a MariaDB Galera node (wsrep_on=ON; docs/CLUSTER.md) a connection is
 * refused unless the node is Synced, and the session sets wsrep_sync_wait
 * to IDEMPAY_DB_SYNC_WAIT (default 1: reads are causal across nodes; 0 turns
 * it off). A certification failure (a write-write conflict with another
 * node, found at COMMIT or on an autocommit statement) is reported as 1213
 * and is retryable like a deadlock; nothing of the failed transaction was
 * committed anywhere. */
#ifndef IDEMPAY_DB_CONN_H
#define IDEMPAY_DB_CONN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <mysql.h>

/* Whose account a connection uses; each has its own settings and grants
 * (idempay-migrate --create-users makes them, docs/DEPLOY.md):
 *   SERVICE  IDEMPAY_DB_USER / IDEMPAY_DB_PASSWORD (idempay / idempay):
 *            SELECT, INSERT, UPDATE, DELETE on idempay.*, nothing else
 *   MOCK     IDEMPAY_MOCK_DB_USER / IDEMPAY_MOCK_DB_PASSWORD (idempay_mock /
 *            idempay_mock): the same on the mock's ledger database only
 *   SIM      IDEMPAY_SIM_DB_USER / IDEMPAY_SIM_DB_PASSWORD (idempay_sim /
 *            idempay_sim): SELECT on idempay.payment_order only
 *   MIGRATE  IDEMPAY_MIGRATE_DB_USER / IDEMPAY_MIGRATE_DB_PASSWORD (root, by
 *            unix-socket authentication): the schema (DDL) of the idempay
 *            databases; also the bench and the seed fixture, which make or
 *            use tables of their own */
typedef enum {
    DB_ACCOUNT_SERVICE = 0,
    DB_ACCOUNT_MOCK,
    DB_ACCOUNT_SIM,
    DB_ACCOUNT_MIGRATE
} db_account;

/* Where and how db_conn_open connects (pointers into the environment or
 * the config file: valid for the life of the process). */
typedef struct {
    const char *socket;             /* IDEMPAY_DB_SOCKET, NULL: TCP */
    const char *host;               /* IDEMPAY_DB_HOST, 127.0.0.1 */
    unsigned int port;              /* IDEMPAY_DB_PORT, 13306 */
    const char *user;               /* the account's user (IDEMPAY_DB_USER, idempay, ...) */
    const char *password;           /* its password (IDEMPAY_DB_PASSWORD, ...); NULL: none
                                     * (socket authentication) - never log */
    unsigned int connect_timeout_s; /* IDEMPAY_DB_CONNECT_TIMEOUT, 2 */
    unsigned int rw_timeout_s;      /* IDEMPAY_DB_RW_TIMEOUT, 10 */
} db_conn_params;

/* The effective connection settings of the service's account (defaults
 * above). */
void db_conn_params_get(db_conn_params *p);
/* The same for account a. */
void db_conn_params_of(db_account a, db_conn_params *p);

/* A new connection to database dbname with the service's account, or NULL
 * with the reason in err. */
MYSQL *db_conn_open(const char *dbname, char *err, size_t errlen);
/* The same with account a (the mock's modules: DB_ACCOUNT_MOCK, ...). The
 * reason of a refused login names the user, never the password. */
MYSQL *db_conn_open_as(db_account a, const char *dbname, char *err, size_t errlen);
/* true for 2006/2013/2002/2003/2055/1927 ... and 1047 (a Galera node that
 * does not serve): the connection must be replaced. */
bool db_conn_lost(unsigned int mysql_errno);
/* true for 1213 (deadlock, or a Galera certification failure) and 1205 (lock
 * wait timeout, or a wsrep_sync_wait timeout): retry the transaction. */
bool db_conn_retryable(unsigned int mysql_errno);

/* Executes a prepared statement with parameters bound by type letters:
 *   's' const char *  (NULL binds SQL NULL)
 *   'l' long long
 * e.g. db_stmt_exec(st, "sl", order_no, user_id). Any pending result of st
 * is freed first. Returns 0, or -1 (mysql_stmt_errno(st) tells why).
 * Affected rows: mysql_stmt_affected_rows(st). */
int db_stmt_exec(MYSQL_STMT *st, const char *types, ...);
/* The same with the parameters in ap (the caller va_starts and va_ends it). */
int db_stmt_vexec(MYSQL_STMT *st, const char *types, va_list ap);
/* The same, but a result set is not buffered: db_stmt_fetch reads its rows
 * from the server one by one, so a large result is never held whole. Until
 * the last row is fetched or db_stmt_done frees the result, the connection
 * runs nothing else. */
int db_stmt_exec_stream(MYSQL_STMT *st, const char *types, ...);

/* The longest column 'm' fetches (16 MiB); a longer one fails the fetch. */
#define DB_STMT_TEXT_MAX (16UL * 1024 * 1024)

/* Fetches the next row of an executed SELECT into variables by letters:
 *   's' char *buf, size_t cap       (NULL column gives "")
 *   'S' char *buf, size_t cap, int *is_null
 *   'l' long long *                 (NULL column gives 0)
 *   'L' long long *, int *is_null
 *   'm' char **text                 a malloc'd NUL-terminated copy of the
 *                                   whole column (NULL column gives NULL)
 * Text longer than cap-1 is truncated (always NUL-terminated). DECIMAL and
 * DATETIME columns can be fetched as 's'. Returns 1 (row), 0 (no more rows;
 * the result is freed), -1 (error; mysql_stmt_errno(st) is 0 when the
 * letters were wrong, memory ran out or an 'm' column exceeded
 * DB_STMT_TEXT_MAX). Every 'm' target is set: on 1 the caller owns and
 * frees the text, on 0 and -1 it is NULL. */
int db_stmt_fetch(MYSQL_STMT *st, const char *types, ...);
/* The same with the targets in ap (the caller va_starts and va_ends it). */
int db_stmt_vfetch(MYSQL_STMT *st, const char *types, va_list ap);

/* Frees st's pending result, if any. NULL accepted. */
void db_stmt_done(MYSQL_STMT *st);

/* A connection's prepared-statement cache is an array of slots, one per
 * statement, owned by one thread.
 * db_stmt_slot: the statement in *slot, preparing sql on db the first time
 * (a slot is always used with the same sql). NULL when that fails, with
 * "prepare: <reason> (<errno>)" in err and the MariaDB error number in
 * *err_no; the caller decides (db_conn_lost) whether to drop the
 * connection. */
MYSQL_STMT *db_stmt_slot(MYSQL *db, MYSQL_STMT **slot, const char *sql, unsigned int *err_no,
                         char *err, size_t errlen);
/* Closes the n statements in slots, then *db; all become NULL. Used to drop
 * a lost connection (the next use reconnects and prepares again). */
void db_conn_close(MYSQL **db, MYSQL_STMT **slots, int n);

/* Runs a statement without parameters or results (BEGIN, COMMIT, ROLLBACK).
 * Returns 0 or -1 (mysql_errno(db)). */
int db_exec_simple(MYSQL *db, const char *sql);

#endif
