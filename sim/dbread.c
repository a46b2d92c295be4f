/* dbread.c - one prepared SELECT over the run's order-number prefix, bound
 * and fetched through common/db_conn's type letters. */
#include "dbread.h"

#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "money.h"

static const char dbread_sql[] =
    "SELECT order_no, user_id, CAST(amount AS CHAR), status, transaction_id, "
    "DATE_FORMAT(update_time, '%Y-%m-%d %H:%i:%s.%f') "
    "FROM payment_order WHERE order_no LIKE CONCAT(?, '%')";

static void dbread_mark(const sim_schedule *s, sim_row *rows, int state)
{
    for (size_t i = 0; i < s->norders; i++)
        history_row_blank(&rows[i], state);
}

/* One fetched row: the columns as text and numbers. */
typedef struct {
    char no[64], amount[32], txn[SIM_TXN_MAX], upd[40];
    long long user, status;
} dbread_row;

/* Puts a fetched row into rows when it is one of the schedule's orders. */
static void dbread_keep(const sim_schedule *s, const char *prefix, const dbread_row *r,
                        sim_row *rows)
{
    long idx = sched_order_lookup(s, prefix, r->no);
    if (idx < 0)
        return;
    sim_row *row = &rows[idx];
    int64_t fen;
    row->state = ROW_PRESENT;
    row->user_id = r->user;
    row->status = (r->status >= 0 && r->status <= OST_FAILED) ? (uint8_t)r->status : OST_NONE;
    if (money_parse_yuan(r->amount, &fen) == 0)
        row->amount_fen = fen;
    snprintf(row->transaction_id, sizeof(row->transaction_id), "%s", r->txn);
    snprintf(row->updated_at, sizeof(row->updated_at), "%s", r->upd);
}

/* Executes the SELECT on db and reads its rows. 0 or -1 (err). */
static int dbread_select(MYSQL *db, MYSQL_STMT **st, const sim_schedule *s, const char *prefix,
                         sim_row *rows, char *err, size_t errlen)
{
    unsigned int no_err = 0;
    dbread_row r;
    int f = -1;
    if (db_stmt_slot(db, st, dbread_sql, &no_err, err, errlen) == NULL)
        return -1;
    if (db_stmt_exec(*st, "s", prefix) == 0) {
        dbread_mark(s, rows, ROW_ABSENT);
        while ((f = db_stmt_fetch(*st, "slslss", r.no, sizeof(r.no), &r.user, r.amount,
                                  sizeof(r.amount), &r.status, r.txn, sizeof(r.txn), r.upd,
                                  sizeof(r.upd))) == 1)
            dbread_keep(s, prefix, &r, rows);
    }
    if (f < 0) {
        snprintf(err, errlen, "select: %s", mysql_stmt_error(*st));
        dbread_mark(s, rows, ROW_ERROR);
    }
    return f < 0 ? -1 : 0;
}

int dbread_orders(const sim_schedule *s, const char *prefix, sim_row *rows, char *err,
                  size_t errlen)
{
    MYSQL_STMT *st = NULL;
    MYSQL *db = db_conn_open_as(DB_ACCOUNT_SIM, "idempay", err, errlen);
    dbread_mark(s, rows, ROW_ERROR);
    if (db == NULL)
        return -1;
    int rc = dbread_select(db, &st, s, prefix, rows, err, errlen);
    db_conn_close(&db, &st, 1);
    return rc;
}
