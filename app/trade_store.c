/* trade_store.c - payment_trade through prepared statements (see
 * trade_store.h). */
#include "trade_store.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db_conn.h"
#include "log.h"

enum {
    TRADE_SQL_INSERT = 0,
    TRADE_SQL_GET,
    TRADE_SQL_PREPAY,
    TRADE_SQL_SENT,
    TRADE_SQL_QUERY_TAKE,
    TRADE_SQL_ANSWERED,
    TRADE_SQL_COUNT
};

static const char *const trade_sql[TRADE_SQL_COUNT] = {
    [TRADE_SQL_INSERT] =
        "INSERT INTO payment_trade (order_no, trade_type, openid, time_expire, expires_ms,"
        " sent_at) VALUES (?, ?, ?, ?, ?, IF(? = 2, NOW(3), NULL))",
    [TRADE_SQL_GET] =
        "SELECT trade_type, openid, time_expire, COALESCE(expires_ms, 0), prepay_id, code_url,"
        " IFNULL(TIMESTAMPDIFF(MICROSECOND, sent_at, NOW(3)) DIV 1000, -1),"
        " TIMESTAMPDIFF(MICROSECOND, create_time, NOW(3)) DIV 1000, answered"
        " FROM payment_trade WHERE order_no = ?",
    [TRADE_SQL_PREPAY] = "UPDATE payment_trade SET prepay_id = ?, code_url = ?"
                         " WHERE order_no = ? AND prepay_id IS NULL",
    [TRADE_SQL_SENT] = "UPDATE payment_trade SET sent_at = NOW(3), answered = 0 WHERE order_no = ?",
    [TRADE_SQL_ANSWERED] = "UPDATE payment_trade SET answered = 1 WHERE order_no = ?",
    [TRADE_SQL_QUERY_TAKE] =
        "UPDATE payment_trade SET last_query_at = NOW(3) WHERE order_no = ?"
        " AND (last_query_at IS NULL OR last_query_at <= NOW(3) - INTERVAL ? MICROSECOND)",
};

void trade_row_new(trade_row *r, trade_type type, const char *openid, long long now_ms, long ttl_ms)
{
    struct tm tm;
    time_t t;

    memset(r, 0, sizeof(*r));
    r->type = type;
    r->sent_age_ms = -1;
    snprintf(r->openid, sizeof(r->openid), "%s", openid != NULL ? openid : "");
    if (type == TRADE_MICROPAY)
        return;
    t = (time_t)((now_ms + ttl_ms + 999) / 1000);
    r->expires_ms = (long long)t * 1000;
    t += 8 * 3600; /* China time, UTC+8, no daylight saving */
    gmtime_r(&t, &tm);
    strftime(r->time_expire, sizeof(r->time_expire), "%Y%m%d%H%M%S", &tm);
}

static MYSQL_STMT *trade_stmt(app_ctx *ctx, int which)
{
    return app_ctx_stmt(ctx, STMT_TRADE_BASE + which, trade_sql[which]);
}

/* Runs statement which with parameters by types; retried as
 * order_store_should_retry says. 0 with *st the executed statement, or -1
 * (logged as `what` of order_no), *dup set when it failed on 1062. */
static int trade_exec(app_ctx *ctx, int which, const char *what, const char *order_no,
                      MYSQL_STMT **st, bool *dup, const char *types, ...)
{
    int tries = 0, rc;
    unsigned int err = 0;
    va_list ap;

    *dup = false;
    for (;;) {
        *st = trade_stmt(ctx, which);
        if (*st != NULL) {
            va_start(ap, types);
            rc = db_stmt_vexec(*st, types, ap);
            va_end(ap);
        } else {
            rc = -1;
        }
        if (rc == 0)
            return 0;
        if (*st != NULL && mysql_stmt_errno(*st) == 1062) {
            *dup = true;
            return -1;
        }
        if (!order_store_should_retry(ctx, *st, &tries, &err))
            break;
    }
    log_msg(LOG_ERROR, "trade_store %s order=%s: %s", what, order_no, ctx->err);
    return -1;
}

order_store_result trade_store_get(app_ctx *ctx, const char *order_no, trade_row *r)
{
    MYSQL_STMT *st;
    bool dup;
    long long type = 0, answered = 0;
    int rc;

    if (trade_exec(ctx, TRADE_SQL_GET, "read", order_no, &st, &dup, "s", order_no) != 0)
        return ORDER_STORE_ERROR;
    memset(r, 0, sizeof(*r));
    rc = db_stmt_fetch(st, "lsslsslll", &type, r->openid, sizeof(r->openid), r->time_expire,
                       sizeof(r->time_expire), &r->expires_ms, r->prepay_id, sizeof(r->prepay_id),
                       r->code_url, sizeof(r->code_url), &r->sent_age_ms, &r->age_ms, &answered);
    r->answered = answered != 0;
    if (rc < 0) {
        log_msg(LOG_ERROR, "trade_store read order=%s: fetch failed", order_no);
        return ORDER_STORE_ERROR;
    }
    db_stmt_done(st);
    r->type = type >= 0 && type <= 2 ? (trade_type)type : TRADE_NATIVE;
    return rc == 1 ? ORDER_STORE_OK : ORDER_STORE_MISS;
}

order_store_result trade_store_insert(app_ctx *ctx, const char *order_no, trade_row *r)
{
    MYSQL_STMT *st;
    bool dup;
    const bool prepay = r->type != TRADE_MICROPAY;

    if (trade_exec(ctx, TRADE_SQL_INSERT, "insert", order_no, &st, &dup, "slssll", order_no,
                   (long long)r->type, r->type == TRADE_JSAPI ? r->openid : NULL,
                   prepay ? r->time_expire : NULL, r->expires_ms, (long long)r->type) == 0)
        return ORDER_STORE_OK;
    if (!dup)
        return ORDER_STORE_ERROR;
    return trade_store_get(ctx, order_no, r) == ORDER_STORE_OK ? ORDER_STORE_DUPLICATE
                                                               : ORDER_STORE_ERROR;
}

static order_store_result trade_cas(MYSQL_STMT *st)
{
    return mysql_stmt_affected_rows(st) == 1 ? ORDER_STORE_OK : ORDER_STORE_MISS;
}

order_store_result trade_store_set_prepay(app_ctx *ctx, const char *order_no, const char *prepay_id,
                                          const char *code_url)
{
    MYSQL_STMT *st;
    bool dup;

    if (trade_exec(ctx, TRADE_SQL_PREPAY, "prepay", order_no, &st, &dup, "sss", prepay_id,
                   code_url[0] != '\0' ? code_url : NULL, order_no) != 0)
        return ORDER_STORE_ERROR;
    return trade_cas(st);
}

order_store_result trade_store_mark_sent(app_ctx *ctx, const char *order_no)
{
    MYSQL_STMT *st;
    bool dup;

    if (trade_exec(ctx, TRADE_SQL_SENT, "sent", order_no, &st, &dup, "s", order_no) != 0)
        return ORDER_STORE_ERROR;
    return trade_cas(st);
}

order_store_result trade_store_query_take(app_ctx *ctx, const char *order_no, long min_interval_ms)
{
    MYSQL_STMT *st;
    bool dup;

    if (trade_exec(ctx, TRADE_SQL_QUERY_TAKE, "query_take", order_no, &st, &dup, "sl", order_no,
                   (long long)min_interval_ms * 1000) != 0)
        return ORDER_STORE_ERROR;
    return trade_cas(st);
}

order_store_result trade_store_mark_answered(app_ctx *ctx, const char *order_no)
{
    MYSQL_STMT *st;
    bool dup;

    if (trade_exec(ctx, TRADE_SQL_ANSWERED, "answered", order_no, &st, &dup, "s", order_no) != 0)
        return ORDER_STORE_ERROR;
    return trade_cas(st);
}
