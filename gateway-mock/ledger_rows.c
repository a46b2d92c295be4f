/* ledger_rows.c - rows read out in bulk: the admin API's listings of charges
 * and closes (JSON), and the statement's rows (downloadbill), streamed. */
#include "ledger.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db_conn.h"
#include "ledger_db.h"

/* ---- the ledger listing ---------------------------------------------------- */

/* A listing: all rows by sid_all, or those of out_trade_no by sid_otn,
 * each row made a JSON object by next. */
typedef struct {
    const char *out_trade_no; /* NULL: all */
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
    mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, what, "out of memory");
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

static int ledger_list_op(void *owner, void *arg)
{
    ledger *l = owner;
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
    char from[32], to[32]; /* UTC DATETIME text */
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
    int rc = db_stmt_fetch(st, "lssslssssl", &kind, r->time, sizeof(r->time), r->transaction_id,
                           sizeof(r->transaction_id), r->out_trade_no, sizeof(r->out_trade_no),
                           &r->total_fee, r->trade_type, sizeof(r->trade_type), r->openid,
                           sizeof(r->openid), r->refund_id, sizeof(r->refund_id), r->out_refund_no,
                           sizeof(r->out_refund_no), &r->refund_fee);
    r->refund = kind != 0;
    return rc;
}

static int ledger_bill_op(void *owner, void *arg)
{
    ledger *l = owner;
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
        mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, "bill", "time out of range");
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
