/* order_archive.c - the order retention batch (pick, lock, re-check the
 * refunds, copy and delete each owned table, compare the counts, commit)
 * and the reads of archived orders; see order_archive.h. */
#include "order_archive.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "log.h"
#include "money.h"
#include "order_state.h"

/* The row's times as UTC text with milliseconds (as order_store.c). */
#define ARCHIVE_TIME_SQL(col)                                                                      \
    "CONCAT(LEFT(DATE_FORMAT(CONVERT_TZ(" col ", @@session.time_zone, '+00:00'), "                 \
    "'%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')"

enum {
    ARC_PICK = 0, /* candidates, a consistent read */
    ARC_LOCK,     /* the candidates still final and old, locked (SKIP LOCKED) */
    ARC_EXCLUDE,  /* locked orders with a refund not finished or recent */
    ARC_TRADE_COPY,
    ARC_TRADE_DEL,
    ARC_REFUND_COPY,
    ARC_REFUND_DEL,
    ARC_CB_COPY,
    ARC_CB_DEL,
    ARC_ORDER_COPY,
    ARC_ORDER_DEL,
    ARC_LEFT, /* refund rows of the batch still live: must be none */
    ARC_GET,
    ARC_FORGET_TRADE,
    ARC_COUNT
};

#define ARC_LIST "@LIST@" /* replaced by ORDER_ARCHIVE_BATCH placeholders */

/* The column lists the copies name (sql/015_order_archive.sql). */
#define ARC_TRADE_COLS                                                                             \
    "order_no, trade_type, openid, time_expire, expires_ms, prepay_id, code_url, sent_at,"         \
    " answered, last_query_at, create_time"
#define ARC_REFUND_COLS                                                                            \
    "id, transaction_id, order_no, kind, out_refund_no, total_fee, refund_fee, reason,"            \
    " refund_id, state, attempts, lease_until, last_error, create_time, update_time"
#define ARC_CB_COLS "id, third_party_no, order_no, total_fee, outcome, raw_xml, create_time"
#define ARC_ORDER_COLS                                                                             \
    "id, order_no, caller_id, user_id, amount, status, transaction_id, lease_until, attempts,"     \
    " final_reason, create_time, update_time"

/* A final order with no lease (PAID; FAILED without a recheck due) whose
 * last change is older than ? days. */
#define ARC_FINAL_OLD                                                                              \
    " status IN (2, 3) AND lease_until IS NULL AND update_time < NOW(3) - INTERVAL ? DAY"
/* A refund that keeps its order live: not SUCCESS, or changed recently. */
#define ARC_REFUND_OPEN "(state <> 1 OR update_time >= NOW(3) - INTERVAL ? DAY)"

static const char *const arc_template[ARC_COUNT] = {
    /* Unqualified columns: the outer ones are o's, the subquery's r's. */
    [ARC_PICK] = "SELECT o.order_no FROM payment_order o WHERE" ARC_FINAL_OLD
                 " AND NOT EXISTS (SELECT 1 FROM payment_refund r WHERE r.order_no = o.order_no"
                 " AND " ARC_REFUND_OPEN ") LIMIT ?",
    [ARC_LOCK] = "SELECT order_no FROM payment_order WHERE order_no IN (" ARC_LIST
                 ") AND" ARC_FINAL_OLD " FOR UPDATE SKIP LOCKED",
    [ARC_EXCLUDE] = "SELECT DISTINCT order_no FROM payment_refund WHERE order_no IN (" ARC_LIST
                    ") AND " ARC_REFUND_OPEN,
    [ARC_TRADE_COPY] = "INSERT INTO payment_trade_archive (" ARC_TRADE_COLS
                       ") SELECT " ARC_TRADE_COLS " FROM payment_trade WHERE order_no IN (" ARC_LIST
                       ")",
    [ARC_TRADE_DEL] = "DELETE FROM payment_trade WHERE order_no IN (" ARC_LIST ")",
    [ARC_REFUND_COPY] = "INSERT INTO payment_refund_archive (" ARC_REFUND_COLS
                        ") SELECT " ARC_REFUND_COLS
                        " FROM payment_refund WHERE order_no IN (" ARC_LIST ") AND state = 1",
    [ARC_REFUND_DEL] = "DELETE FROM payment_refund WHERE order_no IN (" ARC_LIST ") AND state = 1",
    [ARC_CB_COPY] = "INSERT INTO payment_callback_record_archive (" ARC_CB_COLS
                    ") SELECT " ARC_CB_COLS
                    " FROM payment_callback_record WHERE order_no IN (" ARC_LIST ")",
    [ARC_CB_DEL] = "DELETE FROM payment_callback_record WHERE order_no IN (" ARC_LIST ")",
    [ARC_ORDER_COPY] = "INSERT INTO payment_order_archive (" ARC_ORDER_COLS ", archived_at)"
                       " SELECT " ARC_ORDER_COLS
                       ", NOW(3) FROM payment_order WHERE order_no IN (" ARC_LIST ")",
    [ARC_ORDER_DEL] = "DELETE FROM payment_order WHERE order_no IN (" ARC_LIST ")",
    [ARC_LEFT] = "SELECT COUNT(*) FROM payment_refund WHERE order_no IN (" ARC_LIST ")",
    /* clang-format off */
    [ARC_GET] = "SELECT order_no, caller_id, user_id, CAST(amount * 100 AS SIGNED), status, transaction_id,"
                " attempts, final_reason, " ARCHIVE_TIME_SQL("create_time") ", "
                ARCHIVE_TIME_SQL("update_time") ", " ARCHIVE_TIME_SQL("archived_at")
                " FROM payment_order_archive WHERE order_no = ?",
    /* clang-format on */
    [ARC_FORGET_TRADE] = "DELETE FROM payment_trade WHERE order_no = ?"
                         " AND NOT EXISTS (SELECT 1 FROM payment_order WHERE order_no = ?)"
                         " AND EXISTS (SELECT 1 FROM payment_order_archive WHERE order_no = ?)",
};

/* The statements with ARC_LIST expanded, built once. */
static char *arc_sql[ARC_COUNT];
static pthread_once_t arc_once = PTHREAD_ONCE_INIT;

/* "?, ?, ..., ?" (ORDER_ARCHIVE_BATCH of them) in place of ARC_LIST. */
static char *arc_expand(const char *tpl)
{
    const char *at = strstr(tpl, ARC_LIST);
    size_t list = 3 * ORDER_ARCHIVE_BATCH, len = strlen(tpl) + list + 1;
    char *out, *p;

    if (at == NULL)
        return strdup(tpl);
    out = malloc(len);
    if (out == NULL)
        return NULL;
    p = out;
    memcpy(p, tpl, (size_t)(at - tpl));
    p += at - tpl;
    for (int i = 0; i < ORDER_ARCHIVE_BATCH; i++) {
        memcpy(p, i == 0 ? "?" : ", ?", i == 0 ? 1 : 3);
        p += i == 0 ? 1 : 3;
    }
    snprintf(p, len - (size_t)(p - out), "%s", at + strlen(ARC_LIST));
    return out;
}

static void arc_build(void)
{
    for (int i = 0; i < ARC_COUNT; i++)
        arc_sql[i] = arc_expand(arc_template[i]);
}

static MYSQL_STMT *arc_stmt(app_ctx *ctx, int which)
{
    pthread_once(&arc_once, arc_build);
    if (arc_sql[which] == NULL) {
        snprintf(ctx->err, sizeof(ctx->err), "order_archive: out of memory");
        return NULL;
    }
    return app_ctx_stmt(ctx, STMT_ARCHIVE_BASE + which, arc_sql[which]);
}

/* A batch's order numbers. */
typedef struct {
    char no[ORDER_ARCHIVE_BATCH][ORDER_NO_MAX + 1];
    int n;
} arc_list;

/* Executes the list statement which with l's numbers bound to its
 * placeholders (unused ones repeat the first number), then `days` when
 * days >= 0. A result set is stored. *st is the statement (NULL when it
 * could not be prepared). 0, or -1 (ctx->err set). */
static int arc_exec_list(app_ctx *ctx, int which, const arc_list *l, long long days,
                         MYSQL_STMT **out)
{
    MYSQL_BIND b[ORDER_ARCHIVE_BATCH + 1];
    unsigned long len[ORDER_ARCHIVE_BATCH];
    MYSQL_STMT *st = arc_stmt(ctx, which);
    int k;

    *out = st;
    if (st == NULL)
        return -1;
    mysql_stmt_free_result(st);
    memset(b, 0, sizeof(b));
    for (k = 0; k < ORDER_ARCHIVE_BATCH; k++) {
        const char *s = l->no[k < l->n ? k : 0];
        len[k] = (unsigned long)strlen(s);
        b[k].buffer_type = MYSQL_TYPE_STRING;
        b[k].buffer = (void *)s;
        b[k].buffer_length = len[k];
        b[k].length = &len[k];
    }
    if (days >= 0) {
        b[k].buffer_type = MYSQL_TYPE_LONGLONG;
        b[k].buffer = &days;
    }
    if (mysql_stmt_bind_param(st, b) != 0 || mysql_stmt_execute(st) != 0 ||
        (mysql_stmt_field_count(st) > 0 && mysql_stmt_store_result(st) != 0)) {
        snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", mysql_stmt_errno(st),
                 mysql_stmt_error(st));
        return -1;
    }
    return 0;
}

/* Reads a result of order numbers into *out (at most ORDER_ARCHIVE_BATCH).
 * 0, or -1. */
static int arc_fetch_list(MYSQL_STMT *st, arc_list *out)
{
    char no[ORDER_NO_MAX + 1];
    int rc;

    out->n = 0;
    while ((rc = db_stmt_fetch(st, "s", no, sizeof(no))) == 1) {
        if (out->n < ORDER_ARCHIVE_BATCH)
            snprintf(out->no[out->n++], sizeof(out->no[0]), "%s", no);
    }
    return rc;
}

/* The batch failed at st (NULL: the connection or BEGIN/COMMIT): rolls
 * back, drops a lost connection, says why in ctx->err. 0 for a deadlock or
 * a lock wait timeout (the next round tries again), -1 otherwise. */
static int arc_fail(app_ctx *ctx, MYSQL_STMT *st, const char *step)
{
    unsigned int e = st != NULL ? mysql_stmt_errno(st) : 0;

    if (e == 0 && ctx->db != NULL)
        e = mysql_errno(ctx->db);
    if (st != NULL || ctx->err[0] == '\0')
        snprintf(ctx->err, sizeof(ctx->err), "order_archive %s: mariadb %u: %s", step, e,
                 st != NULL ? mysql_stmt_error(st)
                 : ctx->db  ? mysql_error(ctx->db)
                            : "down");
    if (ctx->db != NULL && !db_conn_lost(e))
        (void)db_exec_simple(ctx->db, "ROLLBACK");
    (void)app_ctx_db_error(ctx, e);
    /* Not logged here: the reconciler logs ctx->err when its round fails
     * (once, until a round succeeds again), so a lasting failure is one
     * line, not one per round. */
    return db_conn_retryable(e) ? 0 : -1;
}

/* l minus the numbers in drop. */
static void arc_remove(arc_list *l, const arc_list *drop)
{
    int kept = 0;

    for (int i = 0; i < l->n; i++) {
        bool gone = false;
        for (int j = 0; j < drop->n && !gone; j++)
            gone = strcmp(l->no[i], drop->no[j]) == 0;
        if (!gone && kept != i)
            memcpy(l->no[kept], l->no[i], sizeof(l->no[0]));
        kept += !gone;
    }
    l->n = kept;
}

/* Candidates, then the ones this batch holds: locked, still final and old,
 * every refund finished. 1 (a transaction is open; l filled, maybe empty),
 * 0 (no candidate; no transaction), or -1 with *failed. */
static int arc_select(app_ctx *ctx, long days, int max, arc_list *l, arc_list *tmp,
                      MYSQL_STMT **failed)
{
    MYSQL_STMT *st = arc_stmt(ctx, ARC_PICK);

    *failed = st;
    if (st == NULL ||
        db_stmt_exec(st, "lll", (long long)days, (long long)days, (long long)max) != 0 ||
        arc_fetch_list(st, tmp) < 0)
        return -1;
    if (tmp->n == 0)
        return 0;
    *failed = NULL;
    if (db_exec_simple(ctx->db, "START TRANSACTION") != 0)
        return -1;
    if (arc_exec_list(ctx, ARC_LOCK, tmp, days, failed) != 0 || arc_fetch_list(*failed, l) < 0)
        return -1;
    /* Under the order locks no refund can be added (refund_api and the
     * callback lock the order first); a refund that changed since the
     * pick keeps its order live. */
    if (l->n > 0) {
        if (arc_exec_list(ctx, ARC_EXCLUDE, l, days, failed) != 0 ||
            arc_fetch_list(*failed, tmp) < 0)
            return -1;
        arc_remove(l, tmp);
    }
    return 1;
}

/* Copies then deletes one table's rows of the batch; the two counts must
 * match (else a row changed in between: the caller rolls back).
 * 1 match, 0 mismatch, -1 error (*failed). *moved gets the count. */
static int arc_move(app_ctx *ctx, int copy, int del, const arc_list *l, long long *moved,
                    MYSQL_STMT **failed)
{
    long long copied;

    if (arc_exec_list(ctx, copy, l, -1, failed) != 0)
        return -1;
    copied = (long long)mysql_stmt_affected_rows(*failed);
    if (arc_exec_list(ctx, del, l, -1, failed) != 0)
        return -1;
    *moved = (long long)mysql_stmt_affected_rows(*failed);
    return *moved == copied ? 1 : 0;
}

/* The moves of a locked batch, orders last. 1 (all counts agree and no
 * refund row is left), 0 (lost a race), -1 (*failed). */
static int arc_move_all(app_ctx *ctx, const arc_list *l, MYSQL_STMT **failed)
{
    static const int pairs[][2] = { { ARC_TRADE_COPY, ARC_TRADE_DEL },
                                    { ARC_REFUND_COPY, ARC_REFUND_DEL },
                                    { ARC_CB_COPY, ARC_CB_DEL },
                                    { ARC_ORDER_COPY, ARC_ORDER_DEL } };
    long long moved = 0, left = -1;

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        int rc = arc_move(ctx, pairs[i][0], pairs[i][1], l, &moved, failed);
        if (rc <= 0)
            return rc;
    }
    if (moved != l->n)
        return 0;
    if (arc_exec_list(ctx, ARC_LEFT, l, -1, failed) != 0 || db_stmt_fetch(*failed, "l", &left) != 1)
        return -1;
    db_stmt_done(*failed);
    return left == 0 ? 1 : 0;
}

int order_archive_run(app_ctx *ctx, long retention_days, int max)
{
    arc_list *l = malloc(sizeof(*l)), *tmp = malloc(sizeof(*tmp));
    MYSQL_STMT *failed = NULL;
    int rc = -1, moved;

    ctx->err[0] = '\0';
    if (l == NULL || tmp == NULL || retention_days < 1 || max < 1 || max > ORDER_ARCHIVE_BATCH) {
        snprintf(ctx->err, sizeof(ctx->err), "order_archive: bad arguments or out of memory");
        goto out;
    }
    if (app_ctx_db(ctx) != 0)
        goto out;
    rc = arc_select(ctx, retention_days, max, l, tmp, &failed);
    if (rc <= 0) { /* no candidate (no transaction), or failed */
        if (rc < 0)
            rc = arc_fail(ctx, failed, "select");
        goto out;
    }
    moved = l->n > 0 ? arc_move_all(ctx, l, &failed) : 0;
    if (moved < 0) {
        rc = arc_fail(ctx, failed, "move");
        goto out;
    }
    if (moved == 0) {
        if (l->n > 0)
            log_msg(LOG_INFO,
                    "order_archive: a batch of %d orders changed while it moved;"
                    " rolled back, next round",
                    l->n);
        if (db_exec_simple(ctx->db, "ROLLBACK") != 0)
            (void)app_ctx_db_error(ctx, mysql_errno(ctx->db));
        rc = 0;
        goto out;
    }
    if (db_exec_simple(ctx->db, "COMMIT") != 0) {
        rc = arc_fail(ctx, NULL, "commit");
        goto out;
    }
    log_msg(LOG_INFO, "order_archive: %d orders archived (final, unchanged for %ld days)", l->n,
            retention_days);
    rc = l->n;
out:
    free(l);
    free(tmp);
    return rc;
}

order_store_result order_archive_get(app_ctx *ctx, const char *order_no, order_row *row,
                                     char archived_at[ORDER_TIME_MAX])
{
    MYSQL_STMT *st;
    long long fen = 0, status = 0, final_reason = 0;
    int txid_null = 1, tries = 0, rc;
    unsigned int err;

    for (;;) {
        st = arc_stmt(ctx, ARC_GET);
        rc = st != NULL ? db_stmt_exec(st, "s", order_no) : -1;
        if (rc == 0) {
            memset(row, 0, sizeof(*row));
            rc = db_stmt_fetch(st, "sllllSllsss", row->order_no, sizeof(row->order_no),
                               &row->caller_id, &row->user_id, &fen, &status, row->transaction_id,
                               sizeof(row->transaction_id), &txid_null, &row->attempts,
                               &final_reason, row->created_at, sizeof(row->created_at),
                               row->updated_at, sizeof(row->updated_at), archived_at,
                               (size_t)ORDER_TIME_MAX);
        }
        if (rc >= 0)
            break;
        if (!order_store_should_retry(ctx, st, &tries, &err)) {
            log_msg(LOG_ERROR, "order_archive read order=%s: %s", order_no, ctx->err);
            return ORDER_STORE_ERROR;
        }
    }
    db_stmt_done(st);
    if (rc == 0)
        return ORDER_STORE_MISS;
    if (!order_state_from_int(status, &row->status)) {
        snprintf(ctx->err, sizeof(ctx->err), "archived status %lld outside the state table",
                 status);
        return ORDER_STORE_ERROR;
    }
    row->amount_fen = fen;
    row->lease_live = false;
    row->final_reason = final_reason == ORDER_FINAL_CLOSED         ? ORDER_FINAL_CLOSED
                        : final_reason == ORDER_FINAL_WRONG_AMOUNT ? ORDER_FINAL_WRONG_AMOUNT
                                                                   : ORDER_RETRYABLE;
    if (txid_null)
        row->transaction_id[0] = '\0';
    return ORDER_STORE_OK;
}

int order_archive_forget_trade(app_ctx *ctx, const char *order_no)
{
    MYSQL_STMT *st;
    int tries = 0;
    unsigned int err;

    for (;;) {
        st = arc_stmt(ctx, ARC_FORGET_TRADE);
        if (st != NULL && db_stmt_exec(st, "sss", order_no, order_no, order_no) == 0)
            return 0;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    log_msg(LOG_WARN,
            "order_archive: the trade row a refused request wrote for archived"
            " order=%s stays: %s",
            order_no, ctx->err);
    return -1;
}

char *order_archive_body(const order_row *row, const char *archived_at)
{
    char amount[MONEY_STR_MAX];
    json_t *txid = row->transaction_id[0] != '\0' ? json_string(row->transaction_id) : json_null();
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:o, s:s, s:s, s:b, s:s}", "order_no",
                          row->order_no, "user_id", (json_int_t)row->user_id, "amount",
                          money_format(row->amount_fen, amount), "status",
                          order_state_name(row->status), "transaction_id", txid, "created_at",
                          row->created_at, "updated_at", row->updated_at, "archived", 1,
                          "archived_at", archived_at);
    char *body;

    if (o == NULL)
        return NULL;
    body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return body;
}
