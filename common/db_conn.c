/* db_conn - MariaDB connections from the environment, error classes, and
 * the one binding layer for prepared statements (parameters and result
 * columns by type letters), used by the service, the mock's ledger and the
 * tools. */
#include "db_conn.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

#define DB_MAX_BINDS 24

void db_conn_params_of(db_account a, db_conn_params *p)
{
    p->socket = env_str("IDEMPAY_DB_SOCKET", NULL);
    p->host = env_str("IDEMPAY_DB_HOST", "127.0.0.1");
    p->port = (unsigned int)env_int("IDEMPAY_DB_PORT", 13306);
    p->connect_timeout_s = (unsigned int)env_int("IDEMPAY_DB_CONNECT_TIMEOUT", 2);
    p->rw_timeout_s = (unsigned int)env_int("IDEMPAY_DB_RW_TIMEOUT", 10);
    switch (a) {
    case DB_ACCOUNT_MOCK:
        p->user = env_str("IDEMPAY_MOCK_DB_USER", "idempay_mock");
        p->password = env_str("IDEMPAY_MOCK_DB_PASSWORD", "idempay_mock");
        break;
    case DB_ACCOUNT_SIM:
        p->user = env_str("IDEMPAY_SIM_DB_USER", "idempay_sim");
        p->password = env_str("IDEMPAY_SIM_DB_PASSWORD", "idempay_sim");
        break;
    case DB_ACCOUNT_MIGRATE:
        p->user = env_str("IDEMPAY_MIGRATE_DB_USER", "root");
        p->password = env_str("IDEMPAY_MIGRATE_DB_PASSWORD", NULL);
        break;
    case DB_ACCOUNT_SERVICE:
    default:
        p->user = env_str("IDEMPAY_DB_USER", "idempay");
        p->password = env_str("IDEMPAY_DB_PASSWORD", "idempay");
        break;
    }
}

void db_conn_params_get(db_conn_params *p)
{
    db_conn_params_of(DB_ACCOUNT_SERVICE, p);
}

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
        snprintf(err, errlen, "mariadb: this Galera node is not Synced (wsrep_local_state %d)",
                 state);
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
    return db_conn_open_as(DB_ACCOUNT_SERVICE, dbname, err, errlen);
}

MYSQL *db_conn_open_as(db_account a, const char *dbname, char *err, size_t errlen)
{
    db_conn_params dp;
    const char *sock, *host, *user, *pass;
    unsigned int port, connect_timeout, rw_timeout;
    my_bool off = 0;

    db_conn_params_of(a, &dp);
    sock = dp.socket;
    host = dp.host;
    port = dp.port;
    user = dp.user;
    pass = dp.password;
    connect_timeout = dp.connect_timeout_s;
    rw_timeout = dp.rw_timeout_s;
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
    case CR_SERVER_GONE_ERROR:    /* 2006 */
    case CR_SERVER_LOST:          /* 2013 */
    case CR_CONNECTION_ERROR:     /* 2002 */
    case CR_CONN_HOST_ERROR:      /* 2003 */
    case CR_SERVER_LOST_EXTENDED: /* 2055 */
    case CR_COMMANDS_OUT_OF_SYNC: /* 2014: the connection state is unknown */
    case ER_CONNECTION_KILLED:    /* 1927 */
    case ER_SERVER_SHUTDOWN:      /* 1053 */
    case 4031:                    /* client disconnected by server for inactivity */
    case DB_ER_WSREP_NOT_READY:   /* 1047: this Galera node left the primary component
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

static int db_stmt_bind_execute(MYSQL_STMT *st, const char *types, va_list ap, bool buffer);

int db_stmt_vexec(MYSQL_STMT *st, const char *types, va_list ap)
{
    return db_stmt_bind_execute(st, types, ap, true);
}

int db_stmt_exec_stream(MYSQL_STMT *st, const char *types, ...)
{
    va_list ap;
    int rc;

    va_start(ap, types);
    rc = db_stmt_bind_execute(st, types, ap, false);
    va_end(ap);
    return rc;
}

/* Binds the parameters by letters and executes st; with buffer, a result
 * set is stored client-side. */
static int db_stmt_bind_execute(MYSQL_STMT *st, const char *types, va_list ap, bool buffer)
{
    MYSQL_BIND b[DB_MAX_BINDS];
    long long ints[DB_MAX_BINDS];
    unsigned long lens[DB_MAX_BINDS];
    my_bool nulls[DB_MAX_BINDS];
    size_t n = strlen(types);

    if (n > DB_MAX_BINDS)
        return -1;
    mysql_stmt_free_result(st);
    memset(b, 0, sizeof(b));
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
    if (buffer && mysql_stmt_field_count(st) > 0 && mysql_stmt_store_result(st))
        return -1;
    return 0;
}

int db_stmt_fetch(MYSQL_STMT *st, const char *types, ...)
{
    va_list ap;
    int rc;

    va_start(ap, types);
    rc = db_stmt_vfetch(st, types, ap);
    va_end(ap);
    return rc;
}

/* One result column of db_stmt_vfetch: where its value goes, and what
 * MariaDB said of it. */
typedef struct {
    char type; /* the letter */
    char *buf; /* 's' 'S' */
    size_t cap;
    long long *num; /* 'l' 'L' */
    char **text;    /* 'm' */
    int *null_out;  /* 'S' 'L' */
    unsigned long len;
    my_bool is_null;
    my_bool error;
} db_column;

/* Takes the arguments of letter type from ap into c and binds b to them.
 * 0, or -1 for an unknown letter. */
static int db_column_bind(db_column *c, char type, MYSQL_BIND *b, va_list *ap)
{
    memset(c, 0, sizeof(*c));
    c->type = type;
    switch (type) {
    case 's':
    case 'S':
        c->buf = va_arg(*ap, char *);
        c->cap = va_arg(*ap, size_t);
        if (type == 'S')
            c->null_out = va_arg(*ap, int *);
        b->buffer_type = MYSQL_TYPE_STRING;
        b->buffer = c->buf;
        b->buffer_length = c->cap ? c->cap - 1 : 0;
        break;
    case 'l':
    case 'L':
        c->num = va_arg(*ap, long long *);
        if (type == 'L')
            c->null_out = va_arg(*ap, int *);
        b->buffer_type = MYSQL_TYPE_LONGLONG;
        b->buffer = c->num;
        break;
    case 'm':
        /* No buffer: the fetch only learns the length (data truncated);
         * db_column_text then reads the whole value. */
        c->text = va_arg(*ap, char **);
        *c->text = NULL;
        b->buffer_type = MYSQL_TYPE_STRING;
        break;
    default:
        return -1;
    }
    b->length = &c->len;
    b->is_null = &c->is_null;
    b->error = &c->error;
    return 0;
}

/* Reads column i of the current row, c->len bytes long, into a new
 * NUL-terminated string in *c->text. 0, or -1 (too long, out of memory,
 * MariaDB error). */
static int db_column_text(MYSQL_STMT *st, unsigned int i, db_column *c)
{
    MYSQL_BIND b;
    unsigned long len = 0;
    char *text;

    if (c->len > DB_STMT_TEXT_MAX)
        return -1;
    text = malloc((size_t)c->len + 1);
    if (text == NULL)
        return -1;
    memset(&b, 0, sizeof(b));
    b.buffer_type = MYSQL_TYPE_STRING;
    b.buffer = text;
    b.buffer_length = c->len + 1;
    b.length = &len;
    if (c->len > 0 && mysql_stmt_fetch_column(st, &b, i, 0) != 0) {
        free(text);
        return -1;
    }
    text[c->len] = '\0';
    *c->text = text;
    return 0;
}

/* Puts column i of the fetched row where c says: text cut at its buffer
 * and NUL-terminated, NULL numbers as 0, NULL text as "" ('m': NULL). */
static int db_column_finish(MYSQL_STMT *st, unsigned int i, db_column *c)
{
    if (c->null_out)
        *c->null_out = c->is_null ? 1 : 0;
    switch (c->type) {
    case 's':
    case 'S':
        if (c->cap) {
            size_t len = c->is_null ? 0 : c->len;
            if (len > c->cap - 1)
                len = c->cap - 1;
            c->buf[len] = '\0';
        }
        return 0;
    case 'l':
    case 'L':
        if (c->is_null)
            *c->num = 0;
        return 0;
    default: /* 'm' */
        return c->is_null ? 0 : db_column_text(st, i, c);
    }
}

int db_stmt_vfetch(MYSQL_STMT *st, const char *types, va_list ap)
{
    MYSQL_BIND b[DB_MAX_BINDS];
    db_column cols[DB_MAX_BINDS];
    size_t n = strlen(types);
    va_list args;
    int rc = 0;

    if (n > DB_MAX_BINDS)
        return -1;
    memset(b, 0, sizeof(b));
    va_copy(args, ap);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = db_column_bind(&cols[i], types[i], &b[i], &args);
    va_end(args);
    if (rc != 0 || (n && mysql_stmt_bind_result(st, b)))
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
        if (db_column_finish(st, (unsigned int)i, &cols[i]) != 0) {
            for (size_t j = 0; j < i; j++) {
                if (cols[j].text != NULL) {
                    free(*cols[j].text);
                    *cols[j].text = NULL;
                }
            }
            return -1;
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
