/* reconciler.c - the background settle loop: expired PROCESSING leases are
 * taken by CAS, resolved with orderquery, and moved to PAID or FAILED; the
 * Idempotency-Key table is purged in bounded batches. */
#include "reconciler.h"

#include <errno.h>
#include <mysql.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "gateway.h"
#include "idem_key.h"
#include "log.h"
#include "metrics.h"
#include "order_store.h"

enum {
    RECON_SQL_PURGE = STMT_RECON_BASE + 0,
};

/* The thread's index in logs and app_ctx (FastCGI workers are 0..N-1). */
#define RECONCILER_THREAD_INDEX 1000

/* Settles one expired order at attempts. 1 settled, 0 not (lost the lease
 * or outcome unknown), -1 database failure. */
static int reconciler_settle(app_ctx *ctx, const char *order_no, long long attempts)
{
    order_row row;
    gw_result gw;
    long long fence = attempts + 1;
    order_store_result r;

    r = order_store_take_expired(ctx, order_no, attempts, ctx->cfg->lease_ms);
    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;
    r = order_store_get(ctx, order_no, &row);
    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;

    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        if (gw.total_fee >= 0 && gw.total_fee != row.amount_fen) {
            log_msg(LOG_ERROR, "reconciler order=%s: charge of %lld fen, order is %lld fen;"
                    " left PROCESSING", order_no, gw.total_fee, (long long)row.amount_fen);
            metrics_inc(MET_RECON_UNKNOWN);
            return 0;
        }
        r = order_store_mark_paid(ctx, order_no, gw.transaction_id);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_INFO, "reconciler order=%s: PAID (%s)", order_no, gw.transaction_id);
            metrics_inc(MET_RECON_PAID);
            return 1;
        }
        break;
    case GW_NOT_CHARGED:
        r = order_store_mark_failed(ctx, order_no, fence);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_INFO, "reconciler order=%s: FAILED (%s)", order_no, gw.err_code);
            metrics_inc(MET_RECON_FAILED);
            return 1;
        }
        break;
    case GW_ORDERPAID:
    case GW_UNKNOWN:
        metrics_inc(MET_RECON_UNKNOWN);
        return 0; /* our lease runs out; the next round asks again */
    }
    return r == ORDER_STORE_ERROR ? -1 : 0;
}

int reconciler_run_once(app_ctx *ctx)
{
    char order_nos[RECONCILER_BATCH][ORDER_NO_MAX + 1];
    long long attempts[RECONCILER_BATCH];
    int n, settled = 0, rc;

    n = order_store_expired(ctx, order_nos, attempts, RECONCILER_BATCH);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        rc = reconciler_settle(ctx, order_nos[i], attempts[i]);
        if (rc < 0)
            return -1;
        settled += rc;
    }
    if (idem_key_purge(ctx, RECON_SQL_PURGE, RECONCILER_PURGE_BATCH) < 0)
        return -1;
    return settled;
}

static void reconciler_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *reconciler_main(void *arg)
{
    app_ctx *ctx = arg;
    long interval = ctx->cfg->reconcile_interval_ms > 0 ? ctx->cfg->reconcile_interval_ms : 2000;
    bool down = false;

    mysql_thread_init();
    log_msg(LOG_INFO, "reconciler started: every %ld ms", interval);
    for (;;) {
        reconciler_sleep_ms(interval);
        if (reconciler_run_once(ctx) < 0) {
            if (!down)
                log_msg(LOG_WARN, "reconciler: database unavailable: %s", ctx->err);
            down = true;
        } else {
            if (down)
                log_msg(LOG_INFO, "reconciler: database back");
            down = false;
        }
    }
    return NULL;
}

int reconciler_start(const app_config *cfg)
{
    pthread_attr_t attr;
    pthread_t tid;
    app_ctx *ctx = app_ctx_new(cfg, RECONCILER_THREAD_INDEX);
    int rc;

    if (ctx == NULL) {
        log_msg(LOG_ERROR, "reconciler: out of memory");
        return -1;
    }
    if (pthread_attr_init(&attr) != 0) {
        app_ctx_free(ctx);
        return -1;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&tid, &attr, reconciler_main, ctx);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_msg(LOG_ERROR, "reconciler: cannot start its thread (error %d)", rc);
        app_ctx_free(ctx);
        return -1;
    }
    return 0;
}
