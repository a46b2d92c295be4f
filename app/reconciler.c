/* reconciler.c - the background settle loop: expired PROCESSING leases are
 * taken by CAS and their attempt ended with orderquery, then closeorder
 * (settle.c): PAID, or FAILED for good once closed; retryable FAILED orders
 * (a gateway without closeorder) are asked about once more after
 * IDEMPAY_FAILED_RECHECK_MS;
 * the Idempotency-Key table is purged in bounded batches, and old final
 * orders are archived in bounded batches (order_archive.c). */
#include "reconciler.h"

#include <mysql.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "clocks.h"
#include "gateway.h"
#include "idem_key.h"
#include "log.h"
#include "metrics.h"
#include "order_archive.h"
#include "order_store.h"
#include "settle.h"

enum {
    RECON_SQL_PURGE = STMT_RECON_BASE + 0,
};

/* The thread's index in logs and app_ctx (FastCGI workers are 0..N-1). */
#define RECONCILER_THREAD_INDEX 1000

/* Counts where settle left an order the reconciler worked; 1 settled, 0
 * not (ask again later), -1 MariaDB failed. */
static int reconciler_count(settle_result s)
{
    switch (s) {
    case SETTLE_PAID:
        metrics_inc(MET_RECON_PAID);
        return 1;
    case SETTLE_CLOSED:
    case SETTLE_FAILED:
        metrics_inc(MET_RECON_FAILED);
        return 1;
    case SETTLE_ERROR:
        return -1;
    default:
        metrics_inc(MET_RECON_UNKNOWN);
        return 0;
    }
}

/* Settles one expired PROCESSING order at attempts: takes its lease by CAS
 * (attempt attempts+1) and ends the expired attempt with settle_resolve:
 * orderquery, then closeorder, so that an attempt still queued at the
 * gateway can never charge after the order moved on (docs/FENCE.md). */
static int reconciler_settle(app_ctx *ctx, const char *order_no, long long attempts)
{
    order_row row;
    order_store_result r = order_store_take_expired(ctx, order_no, attempts, ctx->cfg->lease_ms);

    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;
    return reconciler_count(settle_resolve(ctx, order_no, attempts + 1, ctx->cfg->failed_recheck_ms,
                                           "reconciler", &row));
}

/* The recheck of a retryable FAILED order whose recheck is due (after a
 * failure without a close: a gateway without closeorder): taken by CAS on
 * its lease (the order stays FAILED), then one orderquery. A charge that
 * landed after the order failed is settled (PAID, or refunded when it is
 * not the order's), even when its notification never arrives; still not
 * charged is final; unknown is asked again when the lease runs out. */
static int reconciler_recheck(app_ctx *ctx, const char *order_no, long long attempts)
{
    order_row row;
    gw_result gw;
    order_store_result r = order_store_recheck_take(ctx, order_no, attempts, ctx->cfg->lease_ms);

    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;

    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        return reconciler_count(
            settle_charge(ctx, order_no, gw.transaction_id, gw.total_fee, "recheck", &row));
    case GW_NOT_CHARGED:
    case GW_CLOSED:
        r = order_store_recheck_done(ctx, order_no, attempts);
        if (r == ORDER_STORE_OK)
            log_msg(LOG_INFO, "reconciler recheck order=%s: still not charged (%s); final",
                    order_no, gw.err_code);
        return r == ORDER_STORE_ERROR ? -1 : 0;
    default:
        metrics_inc(MET_RECON_UNKNOWN);
        return 0;
    }
}

typedef int (*recon_list_fn)(app_ctx *, char (*)[ORDER_NO_MAX + 1], long long *, int);
typedef int (*recon_work_fn)(app_ctx *, const char *, long long);

/* Lists up to RECONCILER_BATCH orders with list and works each with work.
 * Adds the orders settled to *settled; 0, or -1 when MariaDB failed. */
static int reconciler_batch(app_ctx *ctx, recon_list_fn list, recon_work_fn work, int *settled)
{
    char order_nos[RECONCILER_BATCH][ORDER_NO_MAX + 1];
    long long attempts[RECONCILER_BATCH];
    int n = list(ctx, order_nos, attempts, RECONCILER_BATCH);

    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int rc = work(ctx, order_nos[i], attempts[i]);
        if (rc < 0)
            return -1;
        *settled += rc;
    }
    return 0;
}

int reconciler_run_once(app_ctx *ctx)
{
    int settled = 0;

    if (reconciler_batch(ctx, order_store_expired, reconciler_settle, &settled) < 0 ||
        reconciler_batch(ctx, order_store_recheck_due, reconciler_recheck, &settled) < 0)
        return -1;
    if (idem_key_purge(ctx, RECON_SQL_PURGE, RECONCILER_PURGE_BATCH) < 0)
        return -1;
    if (ctx->cfg->limits.order_retention_days > 0 &&
        order_archive_run(ctx, ctx->cfg->limits.order_retention_days, ORDER_ARCHIVE_BATCH) < 0)
        return -1;
    return settled;
}

static void *reconciler_main(void *arg)
{
    app_ctx *ctx = arg;
    long interval = ctx->cfg->reconcile_interval_ms > 0 ? ctx->cfg->reconcile_interval_ms : 2000;
    bool down = false;

    mysql_thread_init();
    log_msg(LOG_INFO, "reconciler started: every %ld ms", interval);
    for (;;) {
        clocks_sleep_ms(interval);
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
