/* db_conn - MariaDB connections from the environment, error classes, and
 * compact binding helpers for prepared statements. */
#include "db_conn.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

#define DB_MAX_BINDS 24

/* wsrep_local_state of a node that may serve: 4 (Synced). */
#define DB_WSREP_SYNCED 4
/* MariaDB: "WSREP has not yet prepared node for application use". */
#define DB_ER_WSREP_NOT_READY 1047
/* MariaDB: unknown system variable (a server built without wsrep). */
#define DB_ER_UNKNOWN_SYSTEM_VARIABLE 1193

/* The Galera part of a new session (docs/CLUSTER.md). On a server without
 * wsrep, or with wsrep_on=OFF, nothing. On a Galera node: refuses a node that
 * is not Synced (a joiner, a donor, a node outside the primary component
 * accepts connections but must not serve), then sets the session's
 * wsrep_sync_wait (IDEMPAY_DB_SYNC_WAIT, default 1: every read first waits
 * until the node has applied every write set the cluster had committed when
 * the read began, so a read on one node sees a commit acknowledged on
 * another). Returns 0, or -1 with the reason in err. */
static int db_conn_galera_session(MYSQL *db, char *err, size_t errlen)
{
    static const char probe[] =
        "SELECT @@wsrep_on, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
        " WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE')";
    long long sync_wait = env_int("IDEMPAY_DB_SYNC_WAIT", 1);
    MYSQL_RES *res;
    MYSQL_ROW row;
    int wsrep_on, state;
    char sql[64];

    if (mysql_real_query(db, probe, (unsigned long)strlen(probe)) != 0) {
        if (mysql_errno(db) == DB_ER_UNKNOWN_SYSTEM_VARIABLE)
            return 0;
        snprintf(err, errlen, "mariadb wsrep probe: %s", mysql_error(db));
        return -1;
    }
    res = mysql_store_result(db);
    if (res == NULL) {
        snprintf(err, errlen, "mariadb wsrep probe: %s", mysql_error(db));
        return -1;
    }
    row = mysql_fetch_row(res);
    wsrep_on = row != NULL && row[0] != NULL && atoi(row[0]) == 1;
    state = row != NULL && row[1] != NULL ? atoi(row[1]) : -1;
    mysql_free_result(res);
    if (!wsrep_on)
        return 0;
    if (state != DB_WSREP_SYNCED) {
        snprintf(err, errlen, "mariadb: this Galera node is not Synced (wsrep_local_state %d)", state);
        return -1;
    }
    if (sync_wait < 0 || sync_wait > 15)
        sync_wait = 1;
    snprintf(sql, sizeof(sql), "SET SESSION wsrep_sync_wait = %lld", sync_wait);
    if (mysql_real_query(db, sql, (unsigned long)strlen(sql)) != 0) {
        snprintf(err, errlen, "mariadb %s: %s", sql, mysql_error(db));
        return -1;
    }
    return 0;
}

MYSQL *db_conn_open(const char *dbname, char *err, size_t errlen)
{
    const char *sock = env_str("IDEMPAY_DB_SOCKET", NULL);
    const char *host = env_str("IDEMPAY_DB_HOST", "127.0.0.1");
    unsigned int port = (unsigned int)env_int("IDEMPAY_DB_PORT", 13306);
    const char *user = env_str("IDEMPAY_DB_USER", "idempay");
    const char *pass = env_str("IDEMPAY_DB_PASSWORD", "idempay");
    unsigned int connect_timeout = (unsigned int)env_int("IDEMPAY_DB_CONNECT_TIMEOUT", 2);
    unsigned int rw_timeout = (unsigned int)env_int("IDEMPAY_DB_RW_TIMEOUT", 10);
    my_bool off = 0;
    MYSQL *db = mysql_init(NULL);

    if (!db) {
        snprintf(err, errlen, "mysql_init: out of memory");
        return NULL;
    }
    mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
    mysql_options(db, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
    mysql_options(db, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
    mysql_options(db, MYSQL_OPT_RECONNECT, &off);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (!mysql_real_connect(db, sock ? NULL : host, user, pass, dbname, sock ? 0 : port, sock, 0)) {
        snprintf(err, errlen, "mariadb connect: %s", mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    if (mysql_autocommit(db, 1) != 0) {
        snprintf(err, errlen, "mariadb autocommit: %s", mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    if (db_conn_galera_session(db, err, errlen) != 0) {
        mysql_close(db);
        return NULL;
    }
    return db;
}

bool db_conn_lost(unsigned int e)
{
    switch (e) {
    case CR_SERVER_GONE_ERROR:   /* 2006 */
    case CR_SERVER_LOST:         /* 2013 */
    case CR_CONNECTION_ERROR:    /* 2002 */
    case CR_CONN_HOST_ERROR:     /* 2003 */
    case CR_SERVER_LOST_EXTENDED:/* 2055 */
    case CR_COMMANDS_OUT_OF_SYNC:/* 2014: the connection state is unknown */
    case ER_CONNECTION_KILLED:   /* 1927 */
    case ER_SERVER_SHUTDOWN:     /* 1053 */
    case 4031:                   /* client disconnected by server for inactivity */
    case DB_ER_WSREP_NOT_READY:  /* 1047: this Galera node left the primary component
                                  * (or is not synced): reconnect, HAProxy routes the
                                  * new connection to a node that serves */
        return true;
    default:
        return false;
    }
}

bool db_conn_retryable(unsigned int e)
{
    return e == ER_LOCK_DEADLOCK || e == ER_LOCK_WAIT_TIMEOUT;
}

int db_stmt_exec(MYSQL_STMT *st, const char *types, ...)
{
    va_list ap;
    int rc;

    va_start(ap, types);
    rc = db_stmt_vexec(st, types, ap);
    va_end(ap);
    return rc;
}

int db_stmt_vexec(MYSQL_STMT *st, const char *types, va_list ap)
{
    MYSQL_BIND b[DB_MAX_BINDS];
    long long ints[DB_MAX_BINDS];
    unsigned long lens[DB_MAX_BINDS];
    my_bool nulls[DB_MAX_BINDS];
    size_t n = strlen(types);

    if (n > DB_MAX_BINDS)
        return -1;
    mysql_stmt_free_result(st);
    memset(b, 0, sizeof b);
    for (size_t i = 0; i < n; i++) {
        if (types[i] == 's') {
            const char *s = va_arg(ap, const char *);
            nulls[i] = s == NULL;
            lens[i] = s ? (unsigned long)strlen(s) : 0;
            b[i].buffer_type = MYSQL_TYPE_STRING;
            b[i].buffer = (void *)(s ? s : "");
            b[i].buffer_length = lens[i];
            b[i].length = &lens[i];
            b[i].is_null = &nulls[i];
        } else if (types[i] == 'l') {
            ints[i] = va_arg(ap, long long);
            nulls[i] = 0;
            b[i].buffer_type = MYSQL_TYPE_LONGLONG;
            b[i].buffer = &ints[i];
            b[i].is_null = &nulls[i];
        } else {
            return -1;
        }
    }
    if (n && mysql_stmt_bind_param(st, b))
        return -1;
    if (mysql_stmt_execute(st))
        return -1;
    /* Buffer a result set client-side, so a caller that reads only the
     * first row never leaves the connection out of sync. */
    if (mysql_stmt_field_count(st) > 0 && mysql_stmt_store_result(st))
        return -1;
    return 0;
}

int db_stmt_fetch(MYSQL_STMT *st, const char *types, ...)
{
    MYSQL_BIND b[DB_MAX_BINDS];
    unsigned long lens[DB_MAX_BINDS];
    my_bool nulls[DB_MAX_BINDS];
    my_bool errs[DB_MAX_BINDS];
    char *bufs[DB_MAX_BINDS];
    size_t caps[DB_MAX_BINDS];
    int *nullouts[DB_MAX_BINDS];
    size_t n = strlen(types);
    va_list ap;
    int rc;

    if (n > DB_MAX_BINDS)
        return -1;
    memset(b, 0, sizeof b);
    va_start(ap, types);
    for (size_t i = 0; i < n; i++) {
        nullouts[i] = NULL;
        bufs[i] = NULL;
        switch (types[i]) {
        case 's':
        case 'S':
            bufs[i] = va_arg(ap, char *);
            caps[i] = va_arg(ap, size_t);
            if (types[i] == 'S')
                nullouts[i] = va_arg(ap, int *);
            b[i].buffer_type = MYSQL_TYPE_STRING;
            b[i].buffer = bufs[i];
            b[i].buffer_length = caps[i] ? caps[i] - 1 : 0;
            break;
        case 'l':
        case 'L':
            b[i].buffer_type = MYSQL_TYPE_LONGLONG;
            b[i].buffer = va_arg(ap, long long *);
            if (types[i] == 'L')
                nullouts[i] = va_arg(ap, int *);
            break;
        default:
            va_end(ap);
            return -1;
        }
        b[i].length = &lens[i];
        b[i].is_null = &nulls[i];
        b[i].error = &errs[i];
    }
    va_end(ap);
    if (n && mysql_stmt_bind_result(st, b))
        return -1;
    rc = mysql_stmt_fetch(st);
    if (rc == MYSQL_NO_DATA) {
        mysql_stmt_free_result(st);
        return 0;
    }
    if (rc == 1)
        return -1;
    /* rc 0 or MYSQL_DATA_TRUNCATED: truncated text is cut at its buffer. */
    for (size_t i = 0; i < n; i++) {
        if (nullouts[i])
            *nullouts[i] = nulls[i] ? 1 : 0;
        if (bufs[i] && caps[i]) {
            size_t len = nulls[i] ? 0 : lens[i];
            if (len > caps[i] - 1)
                len = caps[i] - 1;
            bufs[i][len] = '\0';
        } else if (!bufs[i] && nulls[i]) {
            *(long long *)b[i].buffer = 0;
        }
    }
    return 1;
}

void db_stmt_done(MYSQL_STMT *st)
{
    if (st)
        mysql_stmt_free_result(st);
}

int db_exec_simple(MYSQL *db, const char *sql)
{
    return mysql_real_query(db, sql, (unsigned long)strlen(sql)) ? -1 : 0;
}

MYSQL_STMT *db_stmt_slot(MYSQL *db, MYSQL_STMT **slot, const char *sql, unsigned int *err_no,
                         char *err, size_t errlen)
{
    MYSQL_STMT *st;

    *err_no = 0;
    if (*slot != NULL)
        return *slot;
    st = mysql_stmt_init(db);
    if (st == NULL) {
        *err_no = mysql_errno(db) ? mysql_errno(db) : CR_OUT_OF_MEMORY;
        snprintf(err, errlen, "mysql_stmt_init: %s (%u)", mysql_error(db), *err_no);
        return NULL;
    }
    if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0) {
        *err_no = mysql_stmt_errno(st);
        snprintf(err, errlen, "prepare: %s (%u)", mysql_stmt_error(st), *err_no);
        mysql_stmt_close(st);
        return NULL;
    }
    *slot = st;
    return st;
}

void db_conn_close(MYSQL **db, MYSQL_STMT **slots, int n)
{
    for (int i = 0; i < n; i++) {
        if (slots[i] != NULL)
            mysql_stmt_close(slots[i]);
        slots[i] = NULL;
    }
    if (*db != NULL)
        mysql_close(*db);
    *db = NULL;
}
