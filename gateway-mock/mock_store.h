/* mock_store - the connection each store of the mock (the ledger, the
 * refund store) runs its operations on: opened lazily to the mock's
 * database (IDEMPAY_MOCK_DB, default LEDGER_DB) with the mock's account,
 * the owner's statement slots, the last error, and one operation run under
 * a retry policy (common/db_retry): deadlocks, lock wait timeouts and lost
 * connections are tried again, a lost connection only while no COMMIT was
 * sent. One per thread, never shared. */
#ifndef IDEMPAY_MOCK_STORE_H
#define IDEMPAY_MOCK_STORE_H

#include <stdbool.h>
#include <mysql.h>

#define MOCK_STORE_TRIES 20    /* tries of an operation (and of a clash inside one) */
#define MOCK_STORE_ERR_LOGIC 1 /* err_no for a failure that is not MariaDB's */

typedef struct {
    MYSQL *db;         /* NULL until the first run, and after a lost connection */
    MYSQL_STMT **stmt; /* the owner's nstmt statement slots */
    int nstmt;
    const char *name;    /* in log lines: "ledger", "refunds" */
    unsigned int err_no; /* last error: a MariaDB number, MOCK_STORE_ERR_LOGIC; 0 none */
    bool write_sent;     /* COMMIT was sent: after a lost connection its fate is unknown */
    char err[256];
} mock_store;

/* Makes m (not connected yet) the store of the owner's nstmt statement
 * slots stmt (all NULL), named name in log lines. */
void mock_store_init(mock_store *m, MYSQL_STMT **stmt, int nstmt, const char *name);
/* Sets err_no to no and err to "what: msg (no)". */
void mock_store_set_err(mock_store *m, unsigned int no, const char *what, const char *msg);
/* Closes the connection and its statements (m stays usable: the next run
 * connects again). */
void mock_store_close(mock_store *m);
/* START TRANSACTION: 0 or -1 (error set). */
int mock_store_begin(mock_store *m);
/* COMMIT, marking the write sent first: 0 or -1 (error set). */
int mock_store_commit(mock_store *m);
/* ROLLBACK, errors ignored (a lost connection rolls back by itself). */
void mock_store_rollback(mock_store *m);

/* One try of an operation on owner's store: 0 done, -1 failed (err_no of
 * the store set). */
typedef int (*mock_store_op)(void *owner, void *arg);

/* Runs op(owner, arg) on m until it succeeds or MOCK_STORE_TRIES tries
 * passed, 2 ms more of a pause before each: connects first (a failed
 * connect is not tried again), and after a failed try drops a lost
 * connection (logged with m->name) or rolls back what the try left open.
 * 0, or -1 with the error in m. */
int mock_store_run(mock_store *m, mock_store_op op, void *owner, void *arg);

#endif
