/* reconciler.c - the background settle loop: expired PROCESSING leases are
 * taken by CAS, resolved with orderquery, and moved to PAID or FAILED;
 * FAILED orders are asked about once more after IDEMPAY_FAILED_RECHECK_MS;
 * the Idempotency-Key table is purged in bounded batches. */
#include "reconciler.h"

#include <errno.h>
#include <mysql.h>
#include <pthread.h>
#include <stdbool.h>
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

/* true when the charge orderquery found is of the order's amount (or the
 * reply did not say); otherwise logs it as an error, with what happens to
 * the order, and counts an unknown outcome. */
static bool reconciler_amount_matches(const char *order_no, const gw_result *gw,
                                      const order_row *row, const char *what_now)
{
    if (gw->total_fee < 0 || gw->total_fee == row->amount_fen)
        return true;
    log_msg(LOG_ERROR, "reconciler order=%s: charge of %lld fen, order is %lld fen; %s", order_no,
            gw->total_fee, (long long)row->amount_fen, what_now);
    metrics_inc(MET_RECON_UNKNOWN);
    return false;
}

/* Resolves an order this thread holds at attempt `fence` (PROCESSING,
 * leased) with orderquery: a charge of the order's amount -> PAID; not
 * charged -> FAILED, due for one recheck after recheck_ms (0: final);
 * unknown -> left PROCESSING until the lease runs out. 1 settled, 0 not,
 * -1 database failure. */
static int reconciler_resolve(app_ctx *ctx, const char *order_no, long long fence,
                              long recheck_ms)
{
    order_row row;
    gw_result gw;
    order_store_result r = order_store_get(ctx, order_no, &row);

    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;

    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        if (!reconciler_amount_matches(order_no, &gw, &row, "left PROCESSING"))
            return 0;
        r = order_store_mark_paid(ctx, order_no, gw.transaction_id);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_INFO, "reconciler order=%s: PAID (%s)", order_no, gw.transaction_id);
            metrics_inc(MET_RECON_PAID);
            return 1;
        }
        break;
    case GW_NOT_CHARGED:
        r = order_store_mark_failed(ctx, order_no, fence, recheck_ms);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_INFO, "reconciler order=%s: FAILED (%s)%s", order_no, gw.err_code,
                    recheck_ms > 0 ? "; will ask again" : "; final");
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

/* Settles one expired PROCESSING order at attempts: takes its lease by CAS
 * and resolves it. "Not charged" is not final yet: the expired attempt's
 * own unifiedorder may still be queued at the gateway and charge after
 * this orderquery, so the order is asked about once more later. */
static int reconciler_settle(app_ctx *ctx, const char *order_no, long long attempts)
{
    order_store_result r = order_store_take_expired(ctx, order_no, attempts, ctx->cfg->lease_ms);

    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;
    return reconciler_resolve(ctx, order_no, attempts + 1, ctx->cfg->failed_recheck_ms);
}

/* The recheck of a FAILED order whose recheck is due: taken by CAS on its
 * lease (the order stays FAILED), then one orderquery. A charge of the
 * order's amount that landed after the order failed makes it PAID, even
 * when that charge's notification never arrives; still not charged is
 * final; unknown is asked again when the lease runs out. */
static int reconciler_recheck(app_ctx *ctx, const char *order_no, long long attempts)
{
    order_row row;
    gw_result gw;
    order_store_result r = order_store_recheck_take(ctx, order_no, attempts, ctx->cfg->lease_ms);

    if (r == ORDER_STORE_OK)
        r = order_store_get(ctx, order_no, &row);
    if (r != ORDER_STORE_OK)
        return r == ORDER_STORE_MISS ? 0 : -1;

    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        if (!reconciler_amount_matches(order_no, &gw, &row, "left FAILED, asked again later"))
            return 0;
        r = order_store_recheck_paid(ctx, order_no, attempts, gw.transaction_id);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_WARN, "reconciler recheck order=%s: charged after it FAILED; PAID (%s)",
                    order_no, gw.transaction_id);
            metrics_inc(MET_RECON_PAID);
            return 1;
        }
        break;
    case GW_NOT_CHARGED:
        r = order_store_recheck_done(ctx, order_no, attempts);
        if (r == ORDER_STORE_OK) {
            log_msg(LOG_INFO, "reconciler recheck order=%s: still not charged (%s); final",
                    order_no, gw.err_code);
            return 0;
        }
        break;
    case GW_ORDERPAID:
    case GW_UNKNOWN:
        metrics_inc(MET_RECON_UNKNOWN);
        return 0;
    }
    return r == ORDER_STORE_ERROR ? -1 : 0;
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
