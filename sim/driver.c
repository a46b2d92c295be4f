/* driver.c - the phase sequencer (driver.h). A segment is phases [first,
 * last): the phase thread walks them (tokens, mock config, start time,
 * "ready"), while the pool runs the segment's tasks; a worker that takes a
 * task waits until the task's phase is ready, then until its release. */
#include "driver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_payer.h"
#include "env.h"
#include "client_refund.h"
#include "forge.h"
#include "forge_v3.h"
#include "pool.h"

struct driver {
    driver_config cfg;
    client_world world;
    forge_v3_keys *v3;       /* the platform's material (cfg.v3_forgeries), or NULL */
    char notify_url_v3[600]; /* where the v3 forgeries go (driver.h) */
    sim_pool *pool;
    sim_client *clients; /* one per worker */
    int nclients;
    sim_client phaser;                 /* the phase thread's own client (tokens) */
    int64_t *phase_start_us;           /* per phase, -1 until it starts */
    atomic_size_t *phase_began;        /* per phase, its tasks past their release */
    atomic_int_fast64_t *phase_lag_us; /* per phase, the latest task's release lag */
    size_t *task_phase;                /* task index -> phase */
    long phase_ready;                  /* the latest phase whose tasks may run (under ready_mu) */
    pthread_mutex_t ready_mu;
    pthread_cond_t ready_cv;
    size_t seg_first_task, seg_first, seg_last;
    driver_phase_fn on_phase;
    void *on_phase_arg;
    atomic_uint_fast64_t tasks_done, tasks_total;
};

int64_t driver_now_us(const driver *d)
{
    return client_now_us(&d->world);
}

int64_t driver_origin_epoch_us(const driver *d)
{
    return d->world.origin_epoch_us;
}

/* The run-wide state and the task -> phase map. Returns 0 or -1 (OOM). */
static int driver_setup(driver *d, const driver_config *cfg)
{
    const sim_schedule *s = cfg->sched;
    client_world *w = &d->world;
    if (client_world_init(w, s) < 0)
        return -1;
    w->target = cfg->target;
    w->profile = cfg->profile != NULL ? cfg->profile : profile_builtin();
    w->prefix = cfg->prefix;
    w->stop = cfg->stop;
    w->merchant = (client_merchant){ .appid = cfg->appid,
                                     .mch_id = cfg->mch_id,
                                     .key = cfg->key,
                                     .gateway = cfg->gateway,
                                     .notify_url = cfg->notify_url,
                                     .notify_url_v3 = d->notify_url_v3 };
    snprintf(d->notify_url_v3, sizeof(d->notify_url_v3), "%s",
             env_str("IDEMPAY_WX_V3_NOTIFY_URL", ""));
    if (d->notify_url_v3[0] == '\0')
        snprintf(d->notify_url_v3, sizeof(d->notify_url_v3), "%s/v3",
                 cfg->notify_url != NULL ? cfg->notify_url : "");
    d->phase_start_us = malloc((s->nphases ? s->nphases : 1) * sizeof(int64_t));
    d->task_phase = malloc((s->ntasks ? s->ntasks : 1) * sizeof(size_t));
    d->phase_began = calloc(s->nphases ? s->nphases : 1, sizeof(atomic_size_t));
    d->phase_lag_us = calloc(s->nphases ? s->nphases : 1, sizeof(atomic_int_fast64_t));
    if (d->phase_start_us == NULL || d->task_phase == NULL || d->phase_began == NULL ||
        d->phase_lag_us == NULL)
        return -1;
    for (size_t p = 0; p < s->nphases; p++) {
        d->phase_start_us[p] = -1;
        for (size_t t = s->phases[p].first_task; t < s->phases[p].first_task + s->phases[p].ntasks;
             t++)
            d->task_phase[t] = p;
    }
    return 0;
}

/* The phase thread's client and one client per worker. 0 or -1 (OOM). */
static int driver_clients(driver *d)
{
    d->nclients = d->cfg.workers > 0 ? d->cfg.workers : 1;
    d->clients = calloc((size_t)d->nclients, sizeof(*d->clients));
    if (d->clients == NULL || client_init(&d->phaser, &d->world) < 0)
        return -1;
    for (int i = 0; i < d->nclients; i++)
        if (client_init(&d->clients[i], &d->world) < 0)
            return -1;
    return 0;
}

driver *driver_new(const driver_config *cfg, char *err, size_t errlen)
{
    driver *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->cfg = *cfg;
    pthread_mutex_init(&d->ready_mu, NULL);
    pthread_cond_init(&d->ready_cv, NULL);
    if (driver_setup(d, cfg) < 0 || driver_clients(d) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (cfg->v3_forgeries) {
        char why[256];
        if ((d->v3 = forge_v3_load(why, sizeof(why))) == NULL) {
            snprintf(err, errlen, "v3-attacks: %s", why);
            goto fail;
        }
        d->world.merchant.v3 = d->v3;
    }
    d->pool = pool_new(d->nclients, err, errlen);
    if (d->pool == NULL)
        goto fail;
    return d;
fail:
    driver_free(d);
    return NULL;
}

void driver_free(driver *d)
{
    if (d == NULL)
        return;
    pool_free(d->pool);
    for (int i = 0; d->clients != NULL && i < d->nclients; i++)
        client_free(&d->clients[i]);
    free(d->clients);
    client_free(&d->phaser);
    free(d->phase_start_us);
    free(d->task_phase);
    free(d->phase_began);
    free(d->phase_lag_us);
    client_world_free(&d->world);
    forge_v3_free(d->v3);
    pthread_mutex_destroy(&d->ready_mu);
    pthread_cond_destroy(&d->ready_cv);
    free(d);
}

void driver_progress(driver *d, driver_progress_t *out)
{
    out->tasks_done = atomic_load(&d->tasks_done);
    out->tasks_total = atomic_load(&d->tasks_total);
    for (int o = 0; o < OUT_COUNT; o++)
        out->outcome[o] = atomic_load(&d->world.outcome[o]);
}

/* Moves one client's records into out and rep. */
static int driver_collect_one(sim_client *c, sim_history *out, sim_report *rep)
{
    int rc = history_take(out, &c->hist);
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        hist_merge(&rep->latency[k], &c->lat[k]);
        hist_init(&c->lat[k]);
    }
    for (int s = 0; s < SC_COUNT; s++)
        for (int k = 0; k < OP_KIND_COUNT; k++)
            for (int o = 0; o < OUT_COUNT; o++) {
                rep->requests[s][k][o] += c->req[s][k][o];
                c->req[s][k][o] = 0;
            }
    return rc < 0 ? -1 : 0;
}

int driver_collect(driver *d, sim_history *out, sim_report *rep)
{
    int rc = driver_collect_one(&d->phaser, out, rep);
    for (int i = 0; i < d->nclients; i++)
        if (driver_collect_one(&d->clients[i], out, rep) < 0)
            rc = -1;
    return rc;
}

/* ---- running tasks on the pool ---- */

typedef struct {
    driver *d;
    void (*fn)(sim_client *c, size_t i, void *arg);
    void *arg;
} driver_each_job;

static void driver_each_one(int worker, size_t i, void *arg)
{
    driver_each_job *job = arg;
    job->fn(&job->d->clients[worker], i, job->arg);
}

void driver_each(driver *d, size_t n, void (*fn)(sim_client *c, size_t i, void *arg), void *arg)
{
    driver_each_job job = { .d = d, .fn = fn, .arg = arg };
    pool_run(d->pool, n, driver_each_one, &job);
}

/* Blocks until phase p may run (its tokens issued, its mock config set). */
static void driver_wait_phase(driver *d, size_t p)
{
    pthread_mutex_lock(&d->ready_mu);
    while (d->phase_ready < (long)p)
        pthread_cond_wait(&d->ready_cv, &d->ready_mu);
    pthread_mutex_unlock(&d->ready_mu);
}

static void driver_set_ready(driver *d, long p)
{
    pthread_mutex_lock(&d->ready_mu);
    d->phase_ready = p;
    pthread_cond_broadcast(&d->ready_cv);
    pthread_mutex_unlock(&d->ready_mu);
}

/* A task of phase p is past its release, lag_us after it: counted, and the
 * phase's latest lag kept (driver_phase_outlast). */
static void driver_note_began(driver *d, size_t p, int64_t lag_us)
{
    int_fast64_t seen = atomic_load(&d->phase_lag_us[p]);
    while (lag_us > seen && !atomic_compare_exchange_weak(&d->phase_lag_us[p], &seen, lag_us))
        ;
    atomic_fetch_add(&d->phase_began[p], 1);
}

/* Task i of the segment, on client c: waits for its phase and release. */
static void driver_run_task(sim_client *c, size_t i, void *arg)
{
    driver *d = arg;
    const sim_schedule *s = d->cfg.sched;
    size_t ti = d->seg_first_task + i;
    const sched_task *t = &s->tasks[ti];
    size_t phase = d->task_phase[ti];
    driver_wait_phase(d, phase);
    if (!client_stopped(&d->world)) {
        int64_t release_us = d->phase_start_us[phase] + (int64_t)t->start_ms * 1000;
        client_sleep_until_us(&d->world, release_us);
        driver_note_began(d, phase, driver_now_us(d) - release_us);
        rng_seed(&c->rng, t->jitter_seed);
        switch (t->kind) {
        case TASK_PAY:
            client_task_pay(c, t, (long)ti);
            break;
        case TASK_BURST:
            client_task_burst(c, t, (long)ti);
            break;
        case TASK_MISMATCH:
            client_task_mismatch(c, t, (long)ti);
            break;
        case TASK_FORGE:
            forge_task_callback(c, t, (long)ti);
            break;
        case TASK_STRAY:
            forge_task_second_charge(c, t, (long)ti);
            break;
        case TASK_PAYER:
            client_task_payer(c, t, (long)ti);
            break;
        case TASK_REFUND:
            client_task_refund(c, t, (long)ti);
            break;
        case TASK_PING:
            client_task_ping(c, t, (long)ti, s->phases[phase].scenario,
                             d->phase_start_us[phase] + (int64_t)s->phases[phase].budget_ms * 1000);
            break;
        default:
            break;
        }
    } else {
        driver_note_began(d, phase, 0);
    }
    atomic_fetch_add(&d->tasks_done, 1);
}

/* ---- the phase thread ---- */

/* Waits out phase p's budget; for a phase marked outlast, also until every
 * one of its tasks has begun, and as long again as the latest began after
 * its release: its mock config (its faults, its rules) then covers each of
 * its tasks for the time its schedule planned, even when busy workers start
 * some late (slow-close: a customer task 14 s late behind long customer
 * tasks would otherwise meet the next phase's rules). Tasks are taken in
 * order, so every task of p begins without any later phase being ready. */
static void driver_phase_outlast(driver *d, size_t p)
{
    const sched_phase *ph = &d->cfg.sched->phases[p];
    client_world *w = &d->world;
    int64_t end_us = d->phase_start_us[p] + (int64_t)ph->budget_ms * 1000;
    client_sleep_until_us(w, end_us);
    if (!ph->outlast)
        return;
    while (!client_stopped(w) && atomic_load(&d->phase_began[p]) < ph->ntasks)
        client_sleep_ms(w, 10);
    client_sleep_until_us(w, end_us + (int64_t)atomic_load(&d->phase_lag_us[p]));
}

/* Issues each phase's tokens, applies its config, marks it ready, then
 * waits out its budget (driver_phase_outlast) before the next one. */
static void *driver_phaser_main(void *arg)
{
    driver *d = arg;
    const sim_schedule *s = d->cfg.sched;
    client_world *w = &d->world;
    for (size_t p = d->seg_first; p < d->seg_last; p++) {
        const sched_phase *ph = &s->phases[p];
        if (!client_stopped(w)) {
            for (size_t k = ph->first_token;
                 k < ph->first_token + ph->ntokens && !client_stopped(w); k++)
                client_issue_token(&d->phaser, k);
            if (p > d->seg_first)
                driver_phase_outlast(d, p - 1);
            if (!client_stopped(w) && d->on_phase != NULL && d->on_phase(d->on_phase_arg, p) < 0)
                w->aborted = 1;
        }
        d->phase_start_us[p] = driver_now_us(d);
        driver_set_ready(d, (long)p);
    }
    return NULL;
}

void driver_run_segment(driver *d, size_t first, size_t last, driver_phase_fn on_phase, void *arg)
{
    const sim_schedule *s = d->cfg.sched;
    if (first >= last || last > s->nphases)
        return;
    d->seg_first = first;
    d->seg_last = last;
    d->seg_first_task = s->phases[first].first_task;
    size_t ntasks = 0;
    for (size_t p = first; p < last; p++)
        ntasks += s->phases[p].ntasks;
    d->on_phase = on_phase;
    d->on_phase_arg = arg;
    driver_set_ready(d, (long)first - 1);
    atomic_fetch_add(&d->tasks_total, ntasks);
    pthread_t phaser;
    int threaded = pthread_create(&phaser, NULL, driver_phaser_main, d) == 0;
    if (!threaded) {
        d->world.aborted = 1;
        for (size_t p = first; p < last; p++)
            d->phase_start_us[p] = driver_now_us(d);
        driver_set_ready(d, (long)last);
    }
    driver_each(d, ntasks, driver_run_task, d);
    if (threaded)
        pthread_join(phaser, NULL);
}

int64_t driver_phase_start_us(const driver *d, size_t p)
{
    return p < d->cfg.sched->nphases ? d->phase_start_us[p] : -1;
}
