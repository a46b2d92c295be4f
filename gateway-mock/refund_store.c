/* refund_store.c - asynchronous refunds through prepared statements only.
 * Lock order everywhere: the charge row (mock_charge, FOR UPDATE), then the
 * refund row; so acceptance and settlement of one charge serialize. */
#include "refund_store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_conn.h"
#include "ledger.h"
#include "mock_store.h"

enum {
    S_BY_ORN,
    S_BY_RID,
    S_BY_TXID,
    S_BY_OTN,
    S_LIST_ALL,
    S_LIST_OTN,
    S_CHARGE_OF_OTN,
    S_CHARGE_LOCK,
    S_INSERT,
    S_PENDING_ADD,
    S_DUE,
    S_END,
    S_CHARGE_SUCCESS,
    S_CHARGE_RELEASE,
    S_COUNT
};

#define CST(col) "DATE_FORMAT(" col " + INTERVAL 8 HOUR, '%Y-%m-%d %H:%i:%s')"
/* clang-format off */
#define REFUND_COLS                                                                     \
    "SELECT out_refund_no, refund_id, transaction_id, out_trade_no, total_fee, refund_fee, " \
    "status, " CST("refunded_at") ", COALESCE(" CST("ended_at") ", ''), "               \
    "COALESCE(notify_url, ''), api_version FROM mock_refund "
/* clang-format on */
#define REFUND_ORDER " ORDER BY refunded_at, refund_id"

static const char *const store_sql[S_COUNT] = {
    [S_BY_ORN] = REFUND_COLS "WHERE out_refund_no = ?",
    [S_BY_RID] = REFUND_COLS "WHERE refund_id = ?",
    [S_BY_TXID] = REFUND_COLS "WHERE transaction_id = ?" REFUND_ORDER,
    [S_BY_OTN] = REFUND_COLS "WHERE out_trade_no = ?" REFUND_ORDER,
    [S_LIST_ALL] = REFUND_COLS REFUND_ORDER,
    [S_LIST_OTN] = REFUND_COLS "WHERE out_trade_no = ?" REFUND_ORDER,
    /* As ledger_refund picks the charge of an out_trade_no. */
    [S_CHARGE_OF_OTN] = "SELECT transaction_id FROM mock_charge WHERE out_trade_no = ? "
                        "ORDER BY refund_count > 0, seq LIMIT 1",
    [S_CHARGE_LOCK] = "SELECT out_trade_no, total_fee, refunded_fee + pending_fee FROM mock_charge "
                      "WHERE transaction_id = ? FOR UPDATE",
    [S_INSERT] =
        "INSERT INTO mock_refund (out_refund_no, refund_id, transaction_id, out_trade_no, total_fee, "
        "refund_fee, refunded_at, status, outcome, due_at, notify_url, api_version) VALUES (?, ?, ?, ?, "
        "?, ?, UTC_TIMESTAMP(6), 'PROCESSING', ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?, ?)",
    [S_PENDING_ADD] =
        "UPDATE mock_charge SET pending_fee = pending_fee + ? WHERE transaction_id = ?",
    [S_DUE] = "SELECT out_refund_no, transaction_id FROM mock_refund WHERE status = 'PROCESSING' "
              "AND due_at <= UTC_TIMESTAMP(6) ORDER BY due_at LIMIT ?",
    [S_END] = "UPDATE mock_refund SET status = outcome, ended_at = UTC_TIMESTAMP(6) "
              "WHERE out_refund_no = ? AND status = 'PROCESSING'",
    [S_CHARGE_SUCCESS] =
        "UPDATE mock_charge SET refunded_fee = refunded_fee + ?, refund_count = refund_count + 1, "
        "pending_fee = pending_fee - ? WHERE transaction_id = ?",
    [S_CHARGE_RELEASE] =
        "UPDATE mock_charge SET pending_fee = pending_fee - ? WHERE transaction_id = ?",
};

struct refund_store {
    mock_store m; /* the connection, the last error (refund_store_error) */
    MYSQL_STMT *stmt[S_COUNT];
};

refund_store *refund_store_new(void)
{
    refund_store *s = calloc(1, sizeof(refund_store));

    if (s != NULL)
        mock_store_init(&s->m, s->stmt, S_COUNT, "refunds");
    return s;
}

void refund_store_free(refund_store *s)
{
    if (s == NULL)
        return;
    mock_store_close(&s->m);
    free(s);
}

const char *refund_store_error(const refund_store *s)
{
    return s->m.err;
}

/* Executes statement sid with parameters by db_conn's letters; the
 * statement (for its rows or affected rows) or NULL (err set). */
static MYSQL_STMT *store_exec(refund_store *s, int sid, const char *types, ...)
{
    va_list ap;
    MYSQL_STMT *st = db_stmt_slot(s->m.db, &s->stmt[sid], store_sql[sid], &s->m.err_no, s->m.err,
                                  sizeof(s->m.err));
    if (st == NULL)
        return NULL;
    va_start(ap, types);
    int rc = db_stmt_vexec(st, types, ap);
    va_end(ap);
    if (rc != 0) {
        mock_store_set_err(&s->m, mysql_stmt_errno(st), "execute", mysql_stmt_error(st));
        db_stmt_done(st);
        mysql_stmt_reset(st);
        return NULL;
    }
    s->m.err_no = 0;
    s->m.err[0] = '\0';
    return st;
}

/* A fetch failure of st: its error into s, its result dropped. */
static int store_fetch_fail(refund_store *s, MYSQL_STMT *st)
{
    unsigned int no = mysql_stmt_errno(st);
    mock_store_set_err(&s->m, no != 0 ? no : MOCK_STORE_ERR_LOGIC, "fetch",
                       no != 0 ? mysql_stmt_error(st) : "a bad binding or out of memory");
    db_stmt_done(st);
    mysql_stmt_reset(st);
    return -1;
}

/* Runs op(s, arg) on s's connection as mock_store_run says. 0, or -1
 * (error set). */
static int store_run(refund_store *s, mock_store_op op, void *arg)
{
    return mock_store_run(&s->m, op, s, arg);
}

/* The next row of a REFUND_COLS query into r: 1, 0 (no more), -1 (err set). */
static int store_next(refund_store *s, MYSQL_STMT *st, refund_record *r)
{
    long long api_version = 2;
    memset(r, 0, sizeof(*r));
    int f = db_stmt_fetch(st, "ssssllssssl", r->out_refund_no, sizeof(r->out_refund_no),
                          r->refund_id, sizeof(r->refund_id), r->transaction_id,
                          sizeof(r->transaction_id), r->out_trade_no, sizeof(r->out_trade_no),
                          &r->total_fee, &r->refund_fee, r->status, sizeof(r->status),
                          r->accepted_at, sizeof(r->accepted_at), r->ended_at, sizeof(r->ended_at),
                          r->notify_url, sizeof(r->notify_url), &api_version);
    r->api_version = (int)api_version;
    return f < 0 ? store_fetch_fail(s, st) : f;
}

/* The refund out_refund_no into r: 1 found, 0 none, -1. */
static int store_get(refund_store *s, const char *out_refund_no, refund_record *r)
{
    MYSQL_STMT *st = store_exec(s, S_BY_ORN, "s", out_refund_no);
    if (st == NULL)
        return -1;
    int f = store_next(s, st, r);
    db_stmt_done(st);
    return f;
}

/* ---- acceptance ------------------------------------------------------------ */

typedef struct {
    const refund_request *req;
    refund_accept_outcome *outcome;
    refund_record *rec;
} accept_arg;

/* Which charge the request names: 1 (txid filled), 0 none, -1. */
static int store_charge_of(refund_store *s, const refund_request *q, char txid[TXID_BUF])
{
    if (q->transaction_id != NULL && q->transaction_id[0] != '\0') {
        snprintf(txid, TXID_BUF, "%s", q->transaction_id);
        return 1;
    }
    MYSQL_STMT *st = store_exec(s, S_CHARGE_OF_OTN, "s", q->out_trade_no);
    if (st == NULL)
        return -1;
    int f = db_stmt_fetch(st, "s", txid, (size_t)TXID_BUF);
    if (f < 0)
        return store_fetch_fail(s, st);
    db_stmt_done(st);
    return f;
}

/* Under the charge's lock: the checks, then the PROCESSING refund. 0 with
 * *a->outcome set (committed or rolled back), -1. */
static int store_accept_locked(refund_store *s, accept_arg *a, const char *txid)
{
    const refund_request *q = a->req;
    refund_record *r = a->rec;
    long long taken = 0;

    MYSQL_STMT *st = store_exec(s, S_CHARGE_LOCK, "s", txid);
    if (st == NULL)
        return -1;
    int f = db_stmt_fetch(st, "sll", r->out_trade_no, sizeof(r->out_trade_no), &r->total_fee,
                          &taken);
    if (f < 0)
        return store_fetch_fail(s, st);
    db_stmt_done(st);
    snprintf(r->transaction_id, sizeof(r->transaction_id), "%s", txid);
    r->refund_fee = q->refund_fee;
    /* The refund may have arrived meanwhile (same out_refund_no, racing). */
    refund_record earlier;
    int e = f == 1 ? store_get(s, q->out_refund_no, &earlier) : 0;
    if (e < 0)
        return -1;
    if (f == 0 || e == 1) {
        mock_store_rollback(&s->m);
        if (e == 1)
            *r = earlier;
        *a->outcome = f == 0                                      ? REFUND_UNKNOWN_CHARGE
                      : strcmp(earlier.transaction_id, txid) == 0 ? REFUND_AGAIN
                                                                  : REFUND_OTHER_CHARGE;
        return 0;
    }
    if (r->total_fee != q->total_fee || q->refund_fee > r->total_fee - taken || q->refuse != NULL) {
        mock_store_rollback(&s->m);
        *a->outcome = r->total_fee != q->total_fee ? REFUND_TOTAL_MISMATCH
                      : q->refuse != NULL          ? REFUND_REFUSED
                                                   : REFUND_OVER;
        return 0;
    }
    txid_refund(time(NULL), r->refund_id);
    snprintf(r->out_refund_no, sizeof(r->out_refund_no), "%s", q->out_refund_no);
    snprintf(r->status, sizeof(r->status), "PROCESSING");
    if (store_exec(s, S_INSERT, "ssssllslsl", q->out_refund_no, r->refund_id, txid, r->out_trade_no,
                   r->total_fee, q->refund_fee, q->outcome, q->delay_ms * 1000,
                   q->notify_url != NULL && q->notify_url[0] != '\0' ? q->notify_url : NULL,
                   (long long)(q->api_version == 3 ? 3 : 2)) == NULL ||
        store_exec(s, S_PENDING_ADD, "ls", q->refund_fee, txid) == NULL ||
        mock_store_commit(&s->m) != 0)
        return -1;
    *a->outcome = REFUND_ACCEPTED;
    return 0;
}

/* One try of the acceptance: 0, 1 (a duplicate key: the same out_refund_no
 * committed concurrently, or a refund_id clash; try again), -1. */
static int store_accept_try(refund_store *s, accept_arg *a)
{
    char txid[TXID_BUF] = "";

    memset(a->rec, 0, sizeof(*a->rec));
    int e = store_get(s, a->req->out_refund_no, a->rec);
    if (e != 0) {
        if (e == 1) {
            bool same = a->req->transaction_id != NULL && a->req->transaction_id[0] != '\0'
                            ? strcmp(a->rec->transaction_id, a->req->transaction_id) == 0
                            : strcmp(a->rec->out_trade_no, a->req->out_trade_no) == 0;
            *a->outcome = same ? REFUND_AGAIN : REFUND_OTHER_CHARGE;
        }
        return e < 0 ? -1 : 0;
    }
    int f = store_charge_of(s, a->req, txid);
    if (f <= 0) {
        *a->outcome = REFUND_UNKNOWN_CHARGE;
        return f;
    }
    if (mock_store_begin(&s->m) != 0)
        return -1;
    if (store_accept_locked(s, a, txid) == 0)
        return 0;
    if (s->m.err_no != 1062 || s->m.write_sent)
        return -1;
    mock_store_rollback(&s->m);
    return 1;
}

static int store_accept_op(void *owner, void *arg)
{
    refund_store *s = owner;
    for (int round = 0; round < MOCK_STORE_TRIES; round++) {
        int rc = store_accept_try(s, arg);
        if (rc <= 0)
            return rc;
    }
    mock_store_set_err(&s->m, MOCK_STORE_ERR_LOGIC, "refund", "the refund kept changing");
    return -1;
}

int refund_store_accept(refund_store *s, const refund_request *req, refund_accept_outcome *outcome,
                        refund_record *rec)
{
    accept_arg a = { req, outcome, rec };
    return store_run(s, store_accept_op, &a);
}

/* ---- settlement ------------------------------------------------------------ */

typedef struct {
    const char *out_refund_no;
    const char *transaction_id;
    refund_record *rec;
    bool ended; /* this call ended it */
} end_arg;

static int store_end_op(void *owner, void *arg)
{
    refund_store *s = owner;
    end_arg *a = arg;
    long long taken = 0, fee = 0;
    char otn[33];

    a->ended = false;
    if (mock_store_begin(&s->m) != 0)
        return -1;
    MYSQL_STMT *st = store_exec(s, S_CHARGE_LOCK, "s", a->transaction_id);
    if (st == NULL)
        return -1;
    if (db_stmt_fetch(st, "sll", otn, sizeof(otn), &fee, &taken) < 0)
        return store_fetch_fail(s, st);
    db_stmt_done(st);
    st = store_exec(s, S_END, "s", a->out_refund_no);
    if (st == NULL)
        return -1;
    if (mysql_stmt_affected_rows(st) != 1) {
        mock_store_rollback(&s->m); /* another thread ended it */
        return 0;
    }
    if (store_get(s, a->out_refund_no, a->rec) != 1)
        return -1;
    const refund_record *r = a->rec;
    if (strcmp(r->status, "SUCCESS") == 0)
        st = store_exec(s, S_CHARGE_SUCCESS, "lls", r->refund_fee, r->refund_fee,
                        r->transaction_id);
    else if (strcmp(r->status, "REFUNDCLOSE") == 0)
        st = store_exec(s, S_CHARGE_RELEASE, "ls", r->refund_fee, r->transaction_id);
    if (st == NULL || mock_store_commit(&s->m) != 0)
        return -1;
    a->ended = true;
    return 0;
}

/* The due refunds: (out_refund_no, transaction_id) pairs into keys. */
typedef struct {
    int max, n;
    char (*keys)[2][65];
} due_arg;

static int store_due_op(void *owner, void *arg)
{
    refund_store *s = owner;
    due_arg *a = arg;
    MYSQL_STMT *st = store_exec(s, S_DUE, "l", (long long)a->max);
    int f = 0;

    a->n = 0;
    if (st == NULL)
        return -1;
    while (a->n < a->max && (f = db_stmt_fetch(st, "ss", a->keys[a->n][0], sizeof(a->keys[0][0]),
                                               a->keys[a->n][1], sizeof(a->keys[0][1]))) == 1)
        a->n++;
    if (f < 0)
        return store_fetch_fail(s, st);
    db_stmt_done(st);
    return 0;
}

int refund_store_settle(refund_store *s, int max,
                        void (*ended)(void *arg, const refund_record *rec), void *arg)
{
    due_arg d = { max > 0 ? max : 1, 0, NULL };
    int count = 0;

    d.keys = calloc((size_t)d.max, sizeof(*d.keys));
    if (d.keys == NULL) {
        mock_store_set_err(&s->m, MOCK_STORE_ERR_LOGIC, "settle", "out of memory");
        return -1;
    }
    if (store_run(s, store_due_op, &d) != 0) {
        free(d.keys);
        return -1;
    }
    for (int i = 0; i < d.n; i++) {
        refund_record rec;
        end_arg e = { d.keys[i][0], d.keys[i][1], &rec, false };
        if (store_run(s, store_end_op, &e) != 0) {
            count = -1;
            break;
        }
        if (e.ended) {
            count++;
            if (ended != NULL)
                ended(arg, &rec);
        }
    }
    free(d.keys);
    return count;
}

/* ---- reading --------------------------------------------------------------- */

typedef struct {
    int sid;
    const char *value; /* NULL: no parameter */
    refund_record *recs;
    int cap, n;
    json_t *rows; /* non-NULL: append JSON objects instead */
} find_arg;

static json_t *store_record_json(const refund_record *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s}", "out_refund_no", r->out_refund_no,
                     "refund_id", r->refund_id, "transaction_id", r->transaction_id, "out_trade_no",
                     r->out_trade_no, "refund_fee", (json_int_t)r->refund_fee, "status", r->status,
                     "accepted_at", r->accepted_at, "ended_at", r->ended_at);
}

static int store_find_op(void *owner, void *arg)
{
    refund_store *s = owner;
    find_arg *a = arg;
    refund_record r;
    int f;
    MYSQL_STMT *st = a->value != NULL ? store_exec(s, a->sid, "s", a->value)
                                      : store_exec(s, a->sid, "");
    a->n = 0;
    if (a->rows != NULL)
        json_array_clear(a->rows);
    if (st == NULL)
        return -1;
    while ((f = store_next(s, st, &r)) == 1) {
        if (a->rows != NULL) {
            if (json_array_append_new(a->rows, store_record_json(&r)) != 0) {
                db_stmt_done(st);
                mock_store_set_err(&s->m, MOCK_STORE_ERR_LOGIC, "list", "out of memory");
                return -1;
            }
        } else if (a->n < a->cap) {
            a->recs[a->n++] = r;
        }
    }
    return f < 0 ? -1 : 0;
}

int refund_store_find(refund_store *s, refund_key key, const char *value, refund_record *recs,
                      int cap, int *n)
{
    static const int sid[] = {
        [REFUND_BY_REFUND_ID] = S_BY_RID,
        [REFUND_BY_OUT_REFUND_NO] = S_BY_ORN,
        [REFUND_BY_TRANSACTION_ID] = S_BY_TXID,
        [REFUND_BY_OUT_TRADE_NO] = S_BY_OTN,
    };
    find_arg a = { sid[key], value, recs, cap, 0, NULL };
    int rc = store_run(s, store_find_op, &a);
    *n = a.n;
    return rc;
}

json_t *refund_store_json(refund_store *s, const char *out_trade_no)
{
    find_arg a = {
        out_trade_no != NULL ? S_LIST_OTN : S_LIST_ALL, out_trade_no, NULL, 0, 0, json_array()
    };
    if (a.rows == NULL)
        return NULL;
    if (store_run(s, store_find_op, &a) != 0) {
        json_decref(a.rows);
        return NULL;
    }
    return a.rows;
}
