/* statement.c - the statement job: claim the run, download the gateway's
 * statement for the window not yet judged, judge every charge in it (see
 * statement.h). */
#include "statement.h"

#include <errno.h>
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "gateway.h"
#include "log.h"
#include "metrics.h"
#include "order_store.h"
#include "settle.h"

#define STATEMENT_THREAD_INDEX 1002
#define STATEMENT_MAX_TEXT (256L * 1024 * 1024)  /* a statement larger than this fails the run */
#define STATEMENT_MAX_DAYS 3                      /* how far back a run may reach */
#define CHINA_OFFSET_S (8 * 3600)                 /* bills are in China Standard Time */

enum {
    STMT_SQL_CLAIM = STMT_STATEMENT_BASE,
    STMT_SQL_COVERED,
    STMT_SQL_DONE,
};

/* The claim: the job's lease (also when the next run is due) has passed. */
static const char SQL_CLAIM[] =
    "UPDATE payment_statement_job SET lease_until = NOW(3) + INTERVAL ? MICROSECOND"
    " WHERE name = 'statement' AND (lease_until IS NULL OR lease_until <= NOW(3))";
static const char SQL_COVERED[] =
    "SELECT covered_until_ms FROM payment_statement_job WHERE name = 'statement'";
static const char SQL_DONE[] =
    "UPDATE payment_statement_job SET covered_until_ms = ?, runs = runs + 1,"
    " lease_until = NOW(3) + INTERVAL ? MICROSECOND WHERE name = 'statement'";

/* ---- judging ------------------------------------------------------------ */

/* Orders records by transaction_id, charges before their refunds. */
static int statement_cmp(const void *pa, const void *pb)
{
    const bill_record *a = pa, *b = pb;
    int c = strcmp(a->transaction_id, b->transaction_id);

    return c != 0 ? c : (int)a->refund - (int)b->refund;
}

/* One charge: settle_charge, counted by what it found. 0, or -1 (MariaDB). */
static int statement_judge_charge(app_ctx *ctx, const bill_record *c, statement_tally *t)
{
    order_row row;
    settle_result s;

    t->charges++;
    if (order_store_get(ctx, c->out_trade_no, &row) == ORDER_STORE_OK) {
        if (row.status == ORDER_PAID && strcmp(row.transaction_id, c->transaction_id) == 0 &&
            row.amount_fen == c->total_fee) {
            t->matched++;
            metrics_inc(MET_STMT_MATCHED);
            return 0;
        }
        if (row.status == ORDER_PROCESSING && row.lease_live) {
            /* Its holder is at the gateway now and settles it (or the
             * reconciler, once the lease runs out); the next run, which
             * re-reads more than a lease of this one, looks again. */
            t->in_flight++;
            metrics_inc(MET_STMT_IN_FLIGHT);
            return 0;
        }
    }
    s = settle_charge(ctx, c->out_trade_no, c->transaction_id, c->total_fee, "statement", &row);
    switch (s) {
    case SETTLE_PENDING:
        snprintf(ctx->err, sizeof(ctx->err), "order %s kept moving; judged at the next run",
                 c->out_trade_no);
        return -1;
    case SETTLE_ERROR:
        return -1;
    case SETTLE_NO_ORDER:
        t->unmatched++;
        metrics_inc(MET_STMT_UNMATCHED);
        log_msg(LOG_WARN, "statement: charge %s of out_trade_no %s (%lld fen) has no order",
                c->transaction_id, c->out_trade_no, c->total_fee);
        return 0;
    default:
        break;
    }
    if (s == SETTLE_PAID && strcmp(row.transaction_id, c->transaction_id) == 0) {
        t->made_paid++;
        metrics_inc(MET_STMT_PAID);
    } else {
        t->refunds++;
        metrics_inc(MET_STMT_REFUND);
    }
    return 0;
}

int statement_judge(app_ctx *ctx, bill_record *records, size_t n, statement_tally *tally)
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
            } else if (statement_judge_charge(ctx, &records[i], tally) != 0) {
                return -1;
            }
        }
        i = j;
    }
    return 0;
}

/* ---- one run -------------------------------------------------------------- */

/* Formats Unix ms as China time: "yyyyMMdd" into date, "yyyyMMddHHmmss"
 * into stamp. */
static void statement_china_time(long long ms, char date[9], char stamp[15])
{
    time_t t = (time_t)(ms / 1000) + CHINA_OFFSET_S;
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(date, 9, "%Y%m%d", &tm);
    strftime(stamp, 15, "%Y%m%d%H%M%S", &tm);
}

/* The start of the China-time day after the one holding ms, in Unix ms. */
static long long statement_next_china_midnight(long long ms)
{
    const long long day = 86400000LL, off = CHINA_OFFSET_S * 1000LL;

    return ((ms + off) / day + 1) * day - off;
}

/* Downloads and judges [begin_ms, end_ms), one China-time day at a time. */
static int statement_window(app_ctx *ctx, long long begin_ms, long long end_ms,
                            statement_tally *tally)
{
    while (begin_ms < end_ms) {
        long long stop = statement_next_china_midnight(begin_ms);
        char date[9], end_date[9], begin[15], end[15], err[160];
        char *text = NULL;
        size_t len = 0, n = 0;
        bill_record *records = NULL;
        gw_result gw;
        int rc;

        if (stop > end_ms)
            stop = end_ms;
        statement_china_time(begin_ms, date, begin);
        statement_china_time(stop, end_date, end);
        if (gateway_downloadbill(ctx, date, begin, end, &text, &len, &gw) != 0) {
            snprintf(ctx->err, sizeof(ctx->err), "downloadbill %s: %s %s", date, gw.err_code,
                     gw.message);
            return -1;
        }
        rc = bill_parse(text, len, &records, &n, err, sizeof(err));
        free(text);
        if (rc != 0) {
            snprintf(ctx->err, sizeof(ctx->err), "statement %s: %s", date, err);
            return -1;
        }
        rc = statement_judge(ctx, records, n, tally);
        free(records);
        if (rc != 0)
            return -1;
        begin_ms = stop;
    }
    return 0;
}

/* Claims the run: 1 won, 0 not due or taken, -1 MariaDB. */
static int statement_claim(app_ctx *ctx, long long *covered_ms, int *covered_null)
{
    long long lease_us = (long long)ctx->cfg->statement_interval_ms * 1000;
    MYSQL_STMT *claim = app_ctx_stmt(ctx, STMT_SQL_CLAIM, SQL_CLAIM);
    MYSQL_STMT *covered = app_ctx_stmt(ctx, STMT_SQL_COVERED, SQL_COVERED);
    int got;

    if (claim == NULL || covered == NULL)
        return -1;
    if (db_stmt_exec(claim, "l", lease_us) != 0)
        goto db_fail;
    if (mysql_stmt_affected_rows(claim) != 1)
        return 0;
    if (db_stmt_exec(covered, "") != 0 ||
        (got = db_stmt_fetch(covered, "L", covered_ms, covered_null)) < 0)
        goto db_fail;
    if (got == 1)
        db_stmt_done(covered);
    return 1;

db_fail:
    snprintf(ctx->err, sizeof(ctx->err), "mariadb: %s", mysql_error(ctx->db));
    app_ctx_db_error(ctx, mysql_errno(ctx->db));
    return -1;
}

int statement_run_once(app_ctx *ctx, long long now_ms, statement_tally *tally)
{
    const app_config *cfg = ctx->cfg;
    long long covered = 0, begin;
    int covered_null = 1;
    int c = statement_claim(ctx, &covered, &covered_null);
    MYSQL_STMT *done;

    memset(tally, 0, sizeof(*tally));
    if (c <= 0)
        return c;
    begin = covered_null ? now_ms - cfg->statement_interval_ms - cfg->statement_overlap_ms
                         : covered - cfg->statement_overlap_ms;
    if (begin < now_ms - STATEMENT_MAX_DAYS * 86400000LL)
        begin = now_ms - STATEMENT_MAX_DAYS * 86400000LL;
    if (statement_window(ctx, begin, now_ms + 1000, tally) != 0) {
        metrics_inc(MET_STMT_RUN_FAILED);
        return -1;
    }
    done = app_ctx_stmt(ctx, STMT_SQL_DONE, SQL_DONE);
    if (done == NULL ||
        db_stmt_exec(done, "ll", now_ms, (long long)cfg->statement_interval_ms * 1000) != 0) {
        metrics_inc(MET_STMT_RUN_FAILED);
        return -1;
    }
    metrics_inc(MET_STMT_RUN_OK);
    return 1;
}

/* ---- the thread ----------------------------------------------------------- */

static long long statement_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void statement_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

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
    log_msg(LOG_INFO, "statement job: every %ld ms", ctx->cfg->statement_interval_ms);
    for (;;) {
        statement_sleep_ms(poll);
        int rc = statement_run_once(ctx, statement_now_ms(), &t);
        if (rc < 0)
            log_msg(LOG_WARN, "statement job: run failed: %s", ctx->err);
        else if (rc > 0)
            log_msg(t.refunds || t.made_paid || t.unmatched ? LOG_WARN : LOG_INFO,
                    "statement job: %zu charges: %zu matched, %zu made PAID, %zu refunds,"
                    " %zu refunded before, %zu in flight, %zu without an order", t.charges,
                    t.matched, t.made_paid, t.refunds, t.already_refunded, t.in_flight,
                    t.unmatched);
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
