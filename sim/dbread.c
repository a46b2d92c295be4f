/* dbread.c - one prepared SELECT over the run's order-number prefix. */
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
    for (size_t i = 0; i < s->norders; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        rows[i].state = (uint8_t)state;
        rows[i].status = OST_NONE;
        rows[i].amount_fen = -1;
    }
}

int dbread_orders(const sim_schedule *s, const char *prefix, sim_row *rows, char *err,
                  size_t errlen)
{
    int rc = -1;
    MYSQL_STMT *st = NULL;
    MYSQL *db = db_conn_open("idempay", err, errlen);
    dbread_mark(s, rows, ROW_ERROR);
    if (db == NULL)
        return -1;
    st = mysql_stmt_init(db);
    if (st == NULL || mysql_stmt_prepare(st, dbread_sql, sizeof(dbread_sql) - 1) != 0) {
        snprintf(err, errlen, "prepare: %s", st ? mysql_stmt_error(st) : mysql_error(db));
        goto done;
    }
    MYSQL_BIND in;
    unsigned long plen = (unsigned long)strlen(prefix);
    memset(&in, 0, sizeof(in));
    in.buffer_type = MYSQL_TYPE_STRING;
    in.buffer = (void *)prefix;
    in.buffer_length = plen;
    in.length = &plen;
    if (mysql_stmt_bind_param(st, &in) != 0 || mysql_stmt_execute(st) != 0) {
        snprintf(err, errlen, "select: %s", mysql_stmt_error(st));
        goto done;
    }

    char no[64], amount[32], txn[SIM_TXN_MAX], upd[40];
    long long user = 0;
    signed char status = 0;
    unsigned long lens[6] = {0};
    my_bool nulls[6] = {0};
    MYSQL_BIND out[6];
    memset(out, 0, sizeof(out));
    out[0].buffer_type = MYSQL_TYPE_STRING;
    out[0].buffer = no;
    out[0].buffer_length = sizeof(no);
    out[1].buffer_type = MYSQL_TYPE_LONGLONG;
    out[1].buffer = &user;
    out[2].buffer_type = MYSQL_TYPE_STRING;
    out[2].buffer = amount;
    out[2].buffer_length = sizeof(amount);
    out[3].buffer_type = MYSQL_TYPE_TINY;
    out[3].buffer = &status;
    out[4].buffer_type = MYSQL_TYPE_STRING;
    out[4].buffer = txn;
    out[4].buffer_length = sizeof(txn);
    out[5].buffer_type = MYSQL_TYPE_STRING;
    out[5].buffer = upd;
    out[5].buffer_length = sizeof(upd);
    for (int i = 0; i < 6; i++) {
        out[i].length = &lens[i];
        out[i].is_null = &nulls[i];
    }
    if (mysql_stmt_bind_result(st, out) != 0 || mysql_stmt_store_result(st) != 0) {
        snprintf(err, errlen, "select: %s", mysql_stmt_error(st));
        goto done;
    }
    dbread_mark(s, rows, ROW_ABSENT);
    for (;;) {
        int f = mysql_stmt_fetch(st);
        if (f == MYSQL_NO_DATA)
            break;
        if (f != 0 && f != MYSQL_DATA_TRUNCATED) {
            snprintf(err, errlen, "fetch: %s", mysql_stmt_error(st));
            dbread_mark(s, rows, ROW_ERROR);
            goto done;
        }
        if (lens[0] >= sizeof(no))
            continue;
        no[lens[0]] = '\0';
        long idx = sched_order_lookup(s, prefix, no);
        if (idx < 0)
            continue;
        sim_row *row = &rows[idx];
        row->state = ROW_PRESENT;
        row->user_id = user;
        row->status = (status >= 0 && status <= OST_FAILED) ? (uint8_t)status : OST_NONE;
        int64_t fen;
        if (!nulls[2] && lens[2] < sizeof(amount)) {
            amount[lens[2]] = '\0';
            if (money_parse_yuan(amount, &fen) == 0)
                row->amount_fen = fen;
        }
        if (!nulls[4] && lens[4] < sizeof(txn)) {
            txn[lens[4]] = '\0';
            snprintf(row->transaction_id, sizeof(row->transaction_id), "%s", txn);
        }
        if (!nulls[5] && lens[5] < sizeof(upd)) {
            upd[lens[5]] = '\0';
            snprintf(row->updated_at, sizeof(row->updated_at), "%s", upd);
        }
    }
    rc = 0;
done:
    if (st != NULL)
        mysql_stmt_close(st);
    mysql_close(db);
    return rc;
}
