/* mock_store.c - a mock store's connection, its transactions and its retry
 * loop (db_run with the stores' policy). */
#include "mock_store.h"

#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "db_retry.h"
#include "env.h"
#include "ledger.h"
#include "log.h"

/* Deadlocks, lock wait timeouts and lost connections (while no write can
 * have been committed): up to MOCK_STORE_TRIES tries in all, 2 ms more of a
 * pause before each. */
static const db_retry_policy mock_store_retry = {
    .max_tries = MOCK_STORE_TRIES,
    .max_lost_tries = MOCK_STORE_TRIES,
    .pause_step_ms = 2,
};

void mock_store_init(mock_store *m, MYSQL_STMT **stmt, int nstmt, const char *name)
{
    memset(m, 0, sizeof(*m));
    m->stmt = stmt;
    m->nstmt = nstmt;
    m->name = name;
}

void mock_store_set_err(mock_store *m, unsigned int no, const char *what, const char *msg)
{
    m->err_no = no;
    snprintf(m->err, sizeof(m->err), "%s: %s (%u)", what, msg, no);
}

void mock_store_close(mock_store *m)
{
    db_conn_close(&m->db, m->stmt, m->nstmt);
}

int mock_store_begin(mock_store *m)
{
    if (mysql_query(m->db, "START TRANSACTION") != 0) {
        mock_store_set_err(m, mysql_errno(m->db), "START TRANSACTION", mysql_error(m->db));
        return -1;
    }
    return 0;
}

int mock_store_commit(mock_store *m)
{
    m->write_sent = true;
    if (mysql_commit(m->db) != 0) {
        mock_store_set_err(m, mysql_errno(m->db), "commit", mysql_error(m->db));
        return -1;
    }
    return 0;
}

void mock_store_rollback(mock_store *m)
{
    if (m->db != NULL)
        (void)mysql_rollback(m->db);
}

typedef struct {
    mock_store *m;
    mock_store_op op;
    void *owner;
    void *arg;
} mock_store_call;

/* One try for db_run. A failed connect reports no MariaDB error: it ends
 * the run. */
static db_try_status mock_store_try(void *arg, db_try_report *r)
{
    mock_store_call *c = arg;
    mock_store *m = c->m;
    char err[200];

    if (m->db == NULL) {
        m->db = db_conn_open_as(DB_ACCOUNT_MOCK, env_str("IDEMPAY_MOCK_DB", LEDGER_DB), err,
                                sizeof(err));
        if (m->db == NULL) {
            mock_store_set_err(m, 2003, "connect", err);
            return DB_TRY_FAILED;
        }
    }
    m->write_sent = false;
    if (c->op(c->owner, c->arg) == 0)
        return DB_TRY_DONE;
    r->err_no = m->err_no;
    r->write_sent = m->write_sent;
    if (db_conn_lost(m->err_no)) {
        log_msg(LOG_WARN, "%s: connection lost (%s); reconnecting", m->name, m->err);
        mock_store_close(m);
    } else {
        mock_store_rollback(m);
    }
    return DB_TRY_FAILED;
}

int mock_store_run(mock_store *m, mock_store_op op, void *owner, void *arg)
{
    mock_store_call c = { m, op, owner, arg };
    return db_run(&mock_store_retry, mock_store_try, &c, NULL);
}
