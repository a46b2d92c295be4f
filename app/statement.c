/* statement.c - the statement job: claim the run, read each ready China
 * day's bill, confirm and judge every charge in it, keep the day's progress
 * (see statement.h). */
#include "statement.h"

#include <errno.h>
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "db_conn.h"
#include "gateway.h"
#include "log.h"
#include "metrics.h"
#include "order_store.h"
#include "settle.h"

#define STATEMENT_THREAD_INDEX 1002
#define STATEMENT_MAX_TEXT (256L * 1024 * 1024) /* a statement larger than this fails the day */
#define STATEMENT_MAX_AGE_DAYS 90               /* WeChat serves bills of the last 3 months */
#define STATEMENT_MAX_OPEN 31                   /* older open days read in one run */
#define STATEMENT_BAD_TEXT 2048                 /* a set-aside line is kept up to this */
#define CHINA_OFFSET_MS (8 * 3600 * 1000LL)     /* bills are in China Standard Time */
#define DAY_MS 86400000LL

enum {
    STMT_SQL_CLAIM = STMT_STATEMENT_BASE,
    STMT_SQL_DAY_SAVE,
    STMT_SQL_DAYS_OPEN,
    STMT_SQL_BAD_LINE,
};

enum { DAY_WAITING = 0, DAY_OPEN = 1, DAY_DONE = 2 };

/* The claim: the job's lease (also when the next run is due) has passed. */
static const char SQL_CLAIM[] =
    "UPDATE payment_statement_job SET lease_until = NOW(3) + INTERVAL ? MICROSECOND,"
    " runs = runs + 1 WHERE name = 'statement' AND (lease_until IS NULL OR lease_until <= NOW(3))";
/* A day's outcome; reads 0 (nothing read: not ready, download failed) keeps
 * its state and counts. */
static const char SQL_DAY_SAVE[] =
    "INSERT INTO payment_statement_day (day, state, `reads`, bad_lines, last_read_at, last_error)"
    " VALUES (?, ?, ?, ?, IF(? > 0, NOW(3), NULL), ?) ON DUPLICATE KEY UPDATE"
    " state = IF(VALUES(`reads`) > 0, VALUES(state), state),"
    " bad_lines = IF(VALUES(`reads`) > 0, VALUES(bad_lines), bad_lines),"
    " last_read_at = IF(VALUES(`reads`) > 0, NOW(3), last_read_at),"
    " `reads` = `reads` + VALUES(`reads`), last_error = VALUES(last_error)";
static const char SQL_DAYS_OPEN[] =
    "SELECT DATE_FORMAT(day, '%Y%m%d') FROM payment_statement_day"
    " WHERE state <> 2 AND day >= ? AND day < ? ORDER BY day LIMIT 31";
static const char SQL_BAD_LINE[] =
    "INSERT INTO payment_statement_bad_line (day, line_no, reason, line_text, seen_at)"
    " VALUES (?, ?, ?, ?, NOW(3)) ON DUPLICATE KEY UPDATE reason = VALUES(reason),"
    " line_text = VALUES(line_text), seen_at = NOW(3)";

/* Orders records by transaction_id, charges before their refunds. */
static int statement_cmp(const void *pa, const void *pb)
{
    const bill_record *a = pa, *b = pb;
    int c = strcmp(a->transaction_id, b->transaction_id);

    return c != 0 ? c : (int)a->refund - (int)b->refund;
}

gw_outcome statement_confirm_gateway(app_ctx *ctx, const bill_record *line, gw_result *out)
{
    return gateway_orderquery_charge(ctx, line->out_trade_no, line->transaction_id, out);
}

/* The ledger agrees with the line already (nothing to change: 1), or the
 * order is its lease holder's (1, counted open), else 0. */
static int statement_nothing_to_do(app_ctx *ctx, const bill_record *c, statement_tally *t)
{
    order_row row;

    if (order_store_get(ctx, c->out_trade_no, &row) != ORDER_STORE_OK)
        return 0;
    if (row.status == ORDER_PAID && strcmp(row.transaction_id, c->transaction_id) == 0 &&
        row.amount_fen == c->total_fee) {
        t->matched++;
        metrics_inc(MET_STMT_MATCHED);
        return 1;
    }
    if (row.status == ORDER_PROCESSING && row.lease_live) {
        /* Its holder is at the gateway now and settles it (or the
         * reconciler, once the lease runs out); the day stays open. */
        t->in_flight++;
        t->open++;
        metrics_inc(MET_STMT_IN_FLIGHT);
        return 1;
    }
    return 0;
}

/* settle_charge on the gateway's signed answer about the line. 0, or -1
 * (MariaDB). */
static int statement_settle(app_ctx *ctx, const bill_record *c, const gw_result *gw,
                            statement_tally *t)
{
    order_row row;
    bool unqueued = false;
    settle_result s = settle_charge_noting(ctx, c->out_trade_no, gw->transaction_id, gw->total_fee,
                                           "statement", &row, &unqueued);

    switch (s) {
    case SETTLE_ERROR:
        return -1;
    case SETTLE_PENDING:
        t->open++;
        return 0;
    case SETTLE_NO_ORDER:
        t->unmatched++;
        metrics_inc(MET_STMT_UNMATCHED);
        log_msg(LOG_WARN, "statement: charge %s of out_trade_no %s (%lld fen) has no order",
                gw->transaction_id, c->out_trade_no, gw->total_fee);
        return 0;
    default:
        break;
    }
    if (unqueued) {
        t->open++; /* not settled, not queued: the day stays open */
    } else if (s == SETTLE_PAID && strcmp(row.transaction_id, gw->transaction_id) == 0) {
        t->made_paid++;
        metrics_inc(MET_STMT_PAID);
    } else {
        t->refunds++;
        metrics_inc(MET_STMT_REFUND);
    }
    return 0;
}

/* One charge line. 0, or -1 (MariaDB). */
static int statement_judge_charge(app_ctx *ctx, const bill_record *c, statement_confirm_fn confirm,
                                  statement_tally *t)
{
    gw_result gw;

    t->charges++;
    if (statement_nothing_to_do(ctx, c, t))
        return 0;
    switch (confirm(ctx, c, &gw)) {
    case GW_CHARGED:
        return statement_settle(ctx, c, &gw, t);
    case GW_NOT_CHARGED:
    case GW_CLOSED:
        t->unconfirmed++;
        metrics_inc(MET_STMT_UNCONFIRMED);
        log_msg(LOG_ERROR,
                "statement: bill line %s of out_trade_no %s (%lld fen) is not confirmed"
                " by orderquery (%s): ignored",
                c->transaction_id, c->out_trade_no, c->total_fee,
                gw.err_code[0] != '\0' ? gw.err_code : gw.trade_state);
        return 0;
    default:
        t->open++; /* not known now: asked again at the next read */
        return 0;
    }
}

int statement_judge(app_ctx *ctx, bill_record *records, size_t n, statement_confirm_fn confirm,
                    statement_tally *tally)
{
    if (n == 0)
        return 0; /* records is NULL then */
    qsort(records, n, sizeof(*records), statement_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        long long refunded = 0;

        while (j < n && strcmp(records[j].transaction_id, records[i].transaction_id) == 0) {
            if (records[j].refund)
                refunded += records[j].refund_fee;
            j++;
        }
        if (!records[i].refund) {
            if (refunded >= records[i].total_fee) {
                tally->already_refunded++;
                metrics_inc(MET_STMT_REFUNDED);
            } else if (statement_judge_charge(ctx, &records[i], confirm, tally) != 0) {
                return -1;
            }
        }
        i = j;
    }
    return 0;
}

/* ---- days ------------------------------------------------------------------ */

long long statement_china_day(long long ms)
{
    long long v = ms + CHINA_OFFSET_MS;

    return v >= 0 ? v / DAY_MS : -((-v + DAY_MS - 1) / DAY_MS);
}

void statement_day_name(long long day, char out[9])
{
    time_t t = (time_t)(day * 86400);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(out, 9, "%Y%m%d", &tm);
}

statement_day_phase statement_day_phase_at(long long day, long long now_ms, long ready_hour,
                                           long reread_days)
{
    long long ready = (day + 1) * DAY_MS - CHINA_OFFSET_MS + ready_hour * 3600000LL;

    if (now_ms < ready)
        return STATEMENT_DAY_NOT_READY;
    return now_ms < ready + reread_days * DAY_MS ? STATEMENT_DAY_REREAD : STATEMENT_DAY_PAST;
}

static int statement_db_fail(app_ctx *ctx)
{
    snprintf(ctx->err, sizeof(ctx->err), "mariadb: %s", mysql_error(ctx->db));
    app_ctx_db_error(ctx, mysql_errno(ctx->db));
    return -1;
}

/* Records day's outcome (reads 0: nothing was read). 0, or -1 (MariaDB). */
static int statement_day_save(app_ctx *ctx, const char *day, int state, int reads, size_t bad,
                              const char *error)
{
    MYSQL_STMT *st = app_ctx_stmt(ctx, STMT_SQL_DAY_SAVE, SQL_DAY_SAVE);

    if (st == NULL)
        return -1;
    if (db_stmt_exec(st, "slllls", day, (long long)state, (long long)reads, (long long)bad,
                     (long long)reads, error) != 0)
        return statement_db_fail(ctx);
    return 0;
}

typedef struct {
    app_ctx *ctx;
    const char *day;
    size_t count;
    int failed; /* a line could not be kept: the day stays open */
} statement_bad_sink;

/* Sets one unreadable line aside: kept, counted, logged. */
static void statement_bad_line(void *arg, const bill_bad_line *bad)
{
    statement_bad_sink *s = arg;
    char text[STATEMENT_BAD_TEXT + 1];
    size_t n = bad->len < STATEMENT_BAD_TEXT ? bad->len : STATEMENT_BAD_TEXT;
    MYSQL_STMT *st = app_ctx_stmt(s->ctx, STMT_SQL_BAD_LINE, SQL_BAD_LINE);

    memcpy(text, bad->text, n);
    text[n] = '\0';
    s->count++;
    metrics_inc(MET_STMT_BAD_LINE);
    log_msg(LOG_ERROR, "statement %s: line %zu set aside (%s): %.200s", s->day, bad->line_no,
            bad->reason, text);
    if (st == NULL ||
        db_stmt_exec(st, "slss", s->day, (long long)bad->line_no, bad->reason, text) != 0) {
        s->failed = 1;
        if (st != NULL)
            statement_db_fail(s->ctx);
    }
}

/* Reads and judges one day's bill. 0 (the day's state saved), or -1 (the
 * download or MariaDB failed; ctx->err). */
static int statement_read_day(app_ctx *ctx, const char *day, statement_tally *tally)
{
    char *text = NULL, err[160];
    size_t len = 0, n = 0;
    bill_record *records = NULL;
    statement_bad_sink bad = { ctx, day, 0, 0 };
    statement_tally t;
    gw_result gw;
    int rc = gateway_downloadbill(ctx, day, &text, &len, &gw);

    if (rc == 1) /* Bill Creating: not generated yet */
        return statement_day_save(ctx, day, DAY_WAITING, 0, 0, "Bill Creating");
    if (rc != 0) {
        snprintf(ctx->err, sizeof(ctx->err), "downloadbill %s: %s %s", day, gw.err_code,
                 gw.message);
        statement_day_save(ctx, day, DAY_WAITING, 0, 0, ctx->err);
        return -1;
    }
    rc = bill_parse_lines(text, len, &records, &n, statement_bad_line, &bad, err, sizeof(err));
    free(text);
    if (rc != 0) {
        snprintf(ctx->err, sizeof(ctx->err), "statement %s: %s", day, err);
        statement_day_save(ctx, day, DAY_OPEN, 1, bad.count, ctx->err);
        return -1;
    }
    memset(&t, 0, sizeof(t));
    rc = statement_judge(ctx, records, n, statement_confirm_gateway, &t);
    free(records);
    t.bad_lines = bad.count;
    if (rc != 0)
        return -1;
    bool open = t.open > 0 || bad.failed;
    if (statement_day_save(ctx, day, open ? DAY_OPEN : DAY_DONE, 1, bad.count,
                           open ? "charges not settled or queued yet" : NULL) != 0)
        return -1;
    tally->charges += t.charges;
    tally->matched += t.matched;
    tally->made_paid += t.made_paid;
    tally->refunds += t.refunds;
    tally->already_refunded += t.already_refunded;
    tally->in_flight += t.in_flight;
    tally->unmatched += t.unmatched;
    tally->unconfirmed += t.unconfirmed;
    tally->open += t.open;
    tally->bad_lines += t.bad_lines;
    return 0;
}

/* Claims the run: 1 won, 0 not due or taken, -1 MariaDB. */
static int statement_claim(app_ctx *ctx)
{
    long long lease_us = (long long)ctx->cfg->statement_interval_ms * 1000;
    MYSQL_STMT *claim = app_ctx_stmt(ctx, STMT_SQL_CLAIM, SQL_CLAIM);

    if (claim == NULL)
        return -1;
    if (db_stmt_exec(claim, "l", lease_us) != 0)
        return statement_db_fail(ctx);
    return mysql_stmt_affected_rows(claim) == 1 ? 1 : 0;
}

/* The days not done yet, the oldest STATEMENT_MAX_OPEN of the last
 * STATEMENT_MAX_AGE_DAYS (day numbers into days). Returns their count, or
 * -1 (MariaDB). */
static int statement_open_days(app_ctx *ctx, long long today, long long days[])
{
    char oldest[9], until[9], d[9];
    MYSQL_STMT *st = app_ctx_stmt(ctx, STMT_SQL_DAYS_OPEN, SQL_DAYS_OPEN);
    int n = 0, got;

    if (st == NULL)
        return -1;
    statement_day_name(today - STATEMENT_MAX_AGE_DAYS, oldest);
    statement_day_name(today + 1, until);
    if (db_stmt_exec(st, "ss", oldest, until) != 0)
        return statement_db_fail(ctx);
    while ((got = db_stmt_fetch(st, "s", d, sizeof(d))) == 1) {
        time_t t;
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        if (n < STATEMENT_MAX_OPEN &&
            sscanf(d, "%4d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) == 3) {
            tm.tm_year -= 1900;
            tm.tm_mon -= 1;
            t = timegm(&tm);
            days[n++] = (long long)(t / 86400);
        }
    }
    db_stmt_done(st);
    return got < 0 ? statement_db_fail(ctx) : n;
}

int statement_run_once(app_ctx *ctx, long long now_ms, statement_tally *tally)
{
    const app_config *cfg = ctx->cfg;
    long long today = statement_china_day(now_ms);
    long long open[STATEMENT_MAX_OPEN];
    char name[9];
    int c, failed = 0, n;

    memset(tally, 0, sizeof(*tally));
    if ((c = statement_claim(ctx)) <= 0)
        return c;
    /* Past their re-read days but not done: read until they are. */
    n = statement_open_days(ctx, today, open);
    failed = n < 0;
    for (int i = 0; i < n; i++) {
        statement_day_name(open[i], name);
        if (statement_day_phase_at(open[i], now_ms, cfg->statement_ready_hour,
                                   cfg->statement_reread_days) == STATEMENT_DAY_PAST &&
            statement_read_day(ctx, name, tally) != 0)
            failed = 1;
    }
    /* Every ready day within its re-read days, on every run. */
    for (long long d = today - cfg->statement_reread_days - 2; d <= today; d++) {
        if (statement_day_phase_at(d, now_ms, cfg->statement_ready_hour,
                                   cfg->statement_reread_days) != STATEMENT_DAY_REREAD)
            continue;
        statement_day_name(d, name);
        if (statement_read_day(ctx, name, tally) != 0)
            failed = 1;
    }
    metrics_inc(failed ? MET_STMT_RUN_FAILED : MET_STMT_RUN_OK);
    return failed ? -1 : 1;
}

/* ---- the thread ----------------------------------------------------------- */

static void *statement_main(void *arg)
{
    app_ctx *ctx = arg;
    long poll = ctx->cfg->statement_interval_ms / 4;
    statement_tally t;

    if (poll > 5000)
        poll = 5000;
    if (poll < 100)
        poll = 100;
    mysql_thread_init();
    http_client_set_max_reply(ctx->gateway, (size_t)STATEMENT_MAX_TEXT);
    log_msg(LOG_INFO,
            "statement job: every %ld ms; day D read from D+1 %ld:00 China time,"
            " again for %ld days",
            ctx->cfg->statement_interval_ms, ctx->cfg->statement_ready_hour,
            ctx->cfg->statement_reread_days);
    for (;;) {
        clocks_sleep_ms(poll);
        int rc = statement_run_once(ctx, clocks_real_ms(), &t);
        if (rc < 0)
            log_msg(LOG_WARN, "statement job: run failed: %s", ctx->err);
        else if (rc > 0)
            log_msg(t.refunds || t.made_paid || t.unmatched || t.unconfirmed || t.bad_lines
                        ? LOG_WARN
                        : LOG_INFO,
                    "statement job: %zu charges: %zu matched, %zu made PAID, %zu refunds,"
                    " %zu refunded before, %zu in flight, %zu without an order, %zu not"
                    " confirmed, %zu open; %zu lines set aside",
                    t.charges, t.matched, t.made_paid, t.refunds, t.already_refunded, t.in_flight,
                    t.unmatched, t.unconfirmed, t.open, t.bad_lines);
    }
    return NULL;
}

int statement_start(const app_config *cfg)
{
    pthread_attr_t attr;
    pthread_t tid;
    app_ctx *ctx = app_ctx_new(cfg, STATEMENT_THREAD_INDEX);
    int rc;

    if (ctx == NULL) {
        log_msg(LOG_ERROR, "statement job: out of memory");
        return -1;
    }
    if (pthread_attr_init(&attr) != 0) {
        app_ctx_free(ctx);
        return -1;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&tid, &attr, statement_main, ctx);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_msg(LOG_ERROR, "statement job: cannot start its thread (error %d)", rc);
        app_ctx_free(ctx);
        return -1;
    }
    return 0;
}
