/* run_settle.c - a run's end (run_int.h): the gateway healed, the orders
 * waited for until nothing is pending or the settle time is up (the mock's
 * clock at tomorrow's bill meanwhile), then the final reads the checker
 * judges: the rows, the ledger, the refunds, the database and the mock's
 * journal. */
#include "run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dbread.h"
#include "gateway_calls.h"
#include "mock_admin.h"
#include "pending.h"
#include "readback.h"
#include "scenarios.h"

#define RUN_SETTLE_POLL_NS 500000000L

/* Heal: the gateway back to its defaults, so pending work can finish. */
static void run_heal(run_ctx *c)
{
    sim_mock_knobs k;
    char cfg[SCHED_MOCK_CONFIG_MAX], err[512];
    scenarios_mock_defaults(&k);
    if (scenarios_mock_json(&k, NULL, cfg, sizeof(cfg), err, sizeof(err)) < 0 ||
        run_configure(c, cfg, err, sizeof(err)) < 0) {
        if (c->error == NULL) {
            snprintf(c->errbuf, sizeof(c->errbuf), "cannot heal the mock gateway: %s", err);
            c->error = c->errbuf;
        }
    }
}

/* ---- settling and the final reads ---- */

static int run_read_ledger(run_ctx *c)
{
    char err[512];
    free(c->charges);
    c->charges = NULL;
    if (mock_admin_ledger(c->a->gateway, &c->s, c->a->prefix, &c->charges, &c->ncharges,
                          &c->notifications, err, sizeof(err)) < 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "cannot read the mock ledger: %s", err);
        return -1;
    }
    history_charge_times(c->charges, c->ncharges, driver_origin_epoch_us(c->d));
    return 0;
}

/* How long to wait for orders to settle: --settle, or long enough for the
 * service's own windows: an order failed without a fence reads PROCESSING
 * until its recheck (a lease, the recheck, two reconciler periods), the
 * nemesis' silent second charges wait for the statement job, the refund
 * scenarios for one read of the bill. The wait ends as soon as nothing is
 * pending. */
static double run_settle_s(const run_ctx *c)
{
    if (c->a->settle_given)
        return c->a->settle_s;
    double least = (double)windows_recheck_settle_ms(&c->w) / 1000.0 + 5.0;
    double more = 0.0;
    if (c->mask & (1u << SC_NEMESIS))
        more = (double)windows_settle_ms(&c->w) / 1000.0 + 5.0;
    else if (run_wants_refunds(c))
        more = (double)c->w.statement_ms / 1000.0 + 8.0; /* one read of the bill */
    if (more > least)
        least = more;
    return least > c->a->settle_s ? least : c->a->settle_s;
}

static int run_settle_wait(run_ctx *c);

/* The statement job reads whole days and the gateway serves day D's bill
 * only from D+1 10:00 China time (WeChat's rule, the mock's
 * bill_ready_hour): while orders settle the mock's clock (knob
 * clock_offset_ms) stands at tomorrow 10:05, so today's bill exists and a
 * second charge no notification reported is found; set back to 0 after. */
static void run_bills_ready(run_ctx *c, int ready)
{
    char cfg[96], err[256];
    long long offset = 0;

    if (!c->need_gateway)
        return;
    if (ready) {
        long long now = (long long)time(NULL), china = 8 * 3600;
        long long target = ((now + china) / 86400 + 1) * 86400 + 10 * 3600 + 300 - china;
        offset = (target - now) * 1000;
    }
    /* With the refund scenarios the bill also carries a forged copy of every
     * charge line (the mock's bill_forge): the service must not trust it. */
    snprintf(cfg, sizeof(cfg), "{\"clock_offset_ms\":%lld%s}", offset,
             !run_wants_refunds(c) ? ""
             : ready               ? ",\"bill_forge\":true"
                                   : ",\"bill_forge\":false");
    if (run_configure(c, cfg, err, sizeof(err)) < 0 && !c->a->quiet)
        fprintf(stderr, "settling: cannot move the mock's clock: %s\n", err);
}

static int run_settle(run_ctx *c)
{
    int rc;

    run_bills_ready(c, 1);
    rc = run_settle_wait(c);
    run_bills_ready(c, 0);
    return rc;
}

static int run_settle_wait(run_ctx *c)
{
    const sim_schedule *s = &c->s;
    double settle_s = run_settle_s(c);
    int64_t t0 = driver_now_us(c->d), deadline = t0 + (int64_t)(settle_s * 1e6);
    c->api_rows = calloc(s->norders, sizeof(*c->api_rows));
    c->pending = malloc(s->norders * sizeof(*c->pending));
    if (c->api_rows == NULL || c->pending == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "out of memory");
        return -1;
    }
    size_t n = s->norders;
    for (size_t i = 0; i < n; i++)
        c->pending[i] = i;
    if (!c->a->quiet)
        fprintf(stderr, "settling: up to %.0f s\n", settle_s);
    int64_t said = t0;
    for (;;) {
        readback_orders(c->d, c->pending, n, c->api_rows);
        if (run_read_ledger(c) < 0)
            return -1;
        n = pending_orders(s, c->api_rows, c->charges, c->ncharges, c->strays, c->nstrays,
                           c->pending);
        /* the refund scenarios: the statement job reads the (forged) bill once */
        int64_t least = run_wants_refunds(c) ? ((int64_t)c->w.statement_ms + 3000) * 1000 : 0;
        if ((n == 0 && driver_now_us(c->d) - t0 >= least) || driver_now_us(c->d) >= deadline ||
            sim_stop)
            break;
        if (!c->a->quiet && driver_now_us(c->d) - said >= (int64_t)(PROGRESS_LOG_EVERY_S * 1e6)) {
            said = driver_now_us(c->d);
            progress_settling(stderr, (double)(said - t0) / 1e6, settle_s, n);
        }
        struct timespec ts = { .tv_sec = 0, .tv_nsec = RUN_SETTLE_POLL_NS };
        nanosleep(&ts, NULL);
    }
    /* The final read: every order, then the ledger. */
    for (size_t i = 0; i < s->norders; i++)
        c->pending[i] = i;
    readback_orders(c->d, c->pending, s->norders, c->api_rows);
    if (run_read_ledger(c) < 0)
        return -1;
    if (run_wants_refunds(c)) {
        char err[512];
        if (refund_obs_read(&c->refunds, c->a->target, c->a->gateway, s, c->a->prefix, 10.0, err,
                            sizeof(err)) < 0) {
            snprintf(c->errbuf, sizeof(c->errbuf), "cannot read the refunds: %s", err);
            return -1;
        }
    }
    c->rep.settle_s = (double)(driver_now_us(c->d) - t0) / 1e6;
    return 0;
}

static int run_read_db(run_ctx *c)
{
    char err[512];
    c->db_rows = calloc(c->s.norders ? c->s.norders : 1, sizeof(*c->db_rows));
    if (c->db_rows == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "out of memory");
        return -1;
    }
    if (dbread_orders(&c->s, c->a->prefix, c->db_rows, err, sizeof(err)) < 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "cannot read MariaDB (--db): %s", err);
        return -1;
    }
    return 0;
}

/* The service's payment calls and fences from the mock's journal
 * (no_fence_within_call), for idempay's own profile (the windows are its).
 * 0, or -1 (errbuf set); a mock without the journal's prefix= is no error:
 * the invariant has nothing to judge. */
static int run_read_calls(run_ctx *c)
{
    if (strcmp(run_profile(c)->name, profile_builtin()->name) != 0)
        return 0;
    char err[512];
    int rc = gateway_calls_read(c->a->gateway, &c->s, c->a->prefix, driver_origin_epoch_us(c->d),
                                &c->calls, &c->ncalls, err, sizeof(err));
    if (rc < 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "cannot read the mock's journal: %s", err);
        return -1;
    }
    c->calls_read = rc == 0;
    return 0;
}

/* Heal, settle and the final reads (sets c->error when one fails). */
void run_settle_all(run_ctx *c)
{
    if (!c->need_gateway || c->s.norders == 0) {
        c->api_rows = calloc(c->s.norders ? c->s.norders : 1, sizeof(*c->api_rows));
        return;
    }
    run_heal(c);
    if (run_settle(c) < 0 || (c->a->db && run_read_db(c) < 0) || run_read_calls(c) < 0)
        c->error = c->errbuf;
    c->rep.total_s = (double)driver_now_us(c->d) / 1e6;
}
