/* driver.c - the worker pool and the client behaviour. Workers wait on a
 * generation counter; a job is (fn, n): workers take indices from an atomic
 * counter until n is reached, and the caller waits until all of them are
 * idle again. Tasks are sorted by release time, so a worker that takes task
 * i sleeps until its release, and copies of one double-click meant to be
 * concurrent are taken by different workers within microseconds. */
#include "driver.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_client.h"
#include "money.h"
#include "profile.h"
#include "rng.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define DRV_CONNECT_TIMEOUT_MS 2000
#define DRV_SESSION_MAX_MS 60000   /* no client waits longer for one order */
#define DRV_MAX_POLLS 40
#define DRV_RETRY_AFTER_CAP_MS 1000
#define DRV_BACKOFF_CAP_MS 2000
#define DRV_URL_MAX 512

typedef struct worker worker;
typedef void (*drv_job_fn)(worker *w, size_t i, void *arg);

typedef struct {
    char txn[SIM_TXN_MAX];
    uint8_t saw_paid;
    uint8_t saw_declined;
} order_rt;

typedef struct {
    char token[160];
    int64_t issued_us;
    long expires_in;
    int ok;
} token_rt;

struct worker {
    driver *d;
    int index;
    pthread_t thread;
    int started;
    http_client *http;
    sim_history hist;
    sim_hist lat[OP_KIND_COUNT];
    uint64_t req[SC_COUNT][OP_KIND_COUNT][OUT_COUNT];
    rng_t rng;                 /* the current task's jitter */
    char url[DRV_URL_MAX];
};

struct driver {
    driver_config cfg;
    int nworkers;
    worker *w;
    struct timespec t0;
    int64_t origin_epoch_us;   /* CLOCK_REALTIME at t0 */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    unsigned long gen;
    int quit;
    drv_job_fn fn;
    void *arg;
    size_t n;
    atomic_size_t next;
    int active;
    int64_t *phase_start_us;   /* per phase, -1 until it starts */
    long phase_ready;          /* the latest phase whose tasks may run (under ready_mu) */
    pthread_mutex_t ready_mu;
    pthread_cond_t ready_cv;
    size_t *task_phase;        /* task index -> phase */
    size_t seg_first_task;
    size_t seg_first, seg_last;
    driver_phase_fn on_phase;
    void *on_phase_arg;
    volatile int aborted;      /* on_phase failed: skip what is left */
    worker phaser;             /* the phase thread's own client and history */
    order_rt *ort;
    token_rt *trt;
    pthread_mutex_t rt_mu;
    atomic_uint_fast64_t tasks_done, tasks_total;
    atomic_uint_fast64_t outcome[OUT_COUNT];
    uint64_t salt;             /* run-unique: made-up tokens and transaction ids */
};

int64_t driver_now_us(const driver *d)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - d->t0.tv_sec) * 1000000 +
           (int64_t)(now.tv_nsec - d->t0.tv_nsec) / 1000;
}

int64_t driver_origin_epoch_us(const driver *d)
{
    return d->origin_epoch_us;
}

static int drv_stopped(const driver *d)
{
    return d->aborted || (d->cfg.stop != NULL && *d->cfg.stop);
}

/* Sleeps ms milliseconds in slices, returning early when the run is stopped. */
static void drv_sleep_ms(const driver *d, int64_t ms)
{
    while (ms > 0 && !drv_stopped(d)) {
        int64_t slice = ms > 100 ? 100 : ms;
        struct timespec ts = {.tv_sec = (time_t)(slice / 1000),
                              .tv_nsec = (long)(slice % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        ms -= slice;
    }
}

static void drv_sleep_until_us(const driver *d, int64_t at_us)
{
    int64_t now = driver_now_us(d);
    if (at_us > now)
        drv_sleep_ms(d, (at_us - now + 999) / 1000);
}

/* ---- the pool ---- */

static void *drv_worker_main(void *arg)
{
    worker *w = arg;
    driver *d = w->d;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&d->mu);
        while (d->gen == seen && !d->quit)
            pthread_cond_wait(&d->work_cv, &d->mu);
        if (d->quit) {
            pthread_mutex_unlock(&d->mu);
            break;
        }
        seen = d->gen;
        drv_job_fn fn = d->fn;
        void *fnarg = d->arg;
        size_t n = d->n;
        pthread_mutex_unlock(&d->mu);
        for (;;) {
            size_t i = atomic_fetch_add(&d->next, 1);
            if (i >= n)
                break;
            fn(w, i, fnarg);
        }
        pthread_mutex_lock(&d->mu);
        if (--d->active == 0)
            pthread_cond_signal(&d->done_cv);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

static void drv_job(driver *d, size_t n, drv_job_fn fn, void *arg)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&d->mu);
    d->fn = fn;
    d->arg = arg;
    d->n = n;
    atomic_store(&d->next, 0);
    d->active = d->nworkers;
    d->gen++;
    pthread_cond_broadcast(&d->work_cv);
    while (d->active > 0)
        pthread_cond_wait(&d->done_cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

driver *driver_new(const driver_config *cfg, char *err, size_t errlen)
{
    driver *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->cfg = *cfg;
    if (d->cfg.profile == NULL)
        d->cfg.profile = profile_builtin();
    d->nworkers = cfg->workers > 0 ? cfg->workers : 1;
    clock_gettime(CLOCK_MONOTONIC, &d->t0);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    d->origin_epoch_us = (int64_t)wall.tv_sec * 1000000 + wall.tv_nsec / 1000;
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->rt_mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->done_cv, NULL);
    pthread_mutex_init(&d->ready_mu, NULL);
    pthread_cond_init(&d->ready_cv, NULL);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t st = (uint64_t)rt.tv_nsec ^ ((uint64_t)rt.tv_sec << 20) ^ (uint64_t)(uintptr_t)d;
    d->salt = rng_splitmix64(&st);
    const sim_schedule *s = cfg->sched;
    d->ort = calloc(s->norders ? s->norders : 1, sizeof(order_rt));
    d->trt = calloc(s->ntokens ? s->ntokens : 1, sizeof(token_rt));
    d->w = calloc((size_t)d->nworkers, sizeof(worker));
    d->phase_start_us = malloc((s->nphases ? s->nphases : 1) * sizeof(int64_t));
    d->task_phase = malloc((s->ntasks ? s->ntasks : 1) * sizeof(size_t));
    if (d->ort == NULL || d->trt == NULL || d->w == NULL || d->phase_start_us == NULL ||
        d->task_phase == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t p = 0; p < s->nphases; p++) {
        d->phase_start_us[p] = -1;
        for (size_t t = s->phases[p].first_task; t < s->phases[p].first_task + s->phases[p].ntasks; t++)
            d->task_phase[t] = p;
    }
    d->phaser.d = d;
    d->phaser.index = -1;
    history_init(&d->phaser.hist);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        hist_init(&d->phaser.lat[k]);
    d->phaser.http = http_client_new(DRV_CONNECT_TIMEOUT_MS, 10000);
    if (d->phaser.http == NULL) {
        snprintf(err, errlen, "out of memory (http client)");
        goto fail;
    }
    for (int i = 0; i < d->nworkers; i++) {
        worker *w = &d->w[i];
        w->d = d;
        w->index = i;
        history_init(&w->hist);
        for (int k = 0; k < OP_KIND_COUNT; k++)
            hist_init(&w->lat[k]);
        w->http = http_client_new(DRV_CONNECT_TIMEOUT_MS, 10000);
        if (w->http == NULL) {
            snprintf(err, errlen, "out of memory (http client)");
            goto fail;
        }
    }
    for (int i = 0; i < d->nworkers; i++) {
        if (pthread_create(&d->w[i].thread, NULL, drv_worker_main, &d->w[i]) != 0) {
            snprintf(err, errlen, "cannot start worker thread %d", i);
            goto fail;
        }
        d->w[i].started = 1;
    }
    return d;
fail:
    driver_free(d);
    return NULL;
}

void driver_free(driver *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->quit = 1;
    pthread_cond_broadcast(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; d->w != NULL && i < d->nworkers; i++) {
        if (d->w[i].started)
            pthread_join(d->w[i].thread, NULL);
        http_client_free(d->w[i].http);
        history_free(&d->w[i].hist);
    }
    free(d->w);
    free(d->ort);
    free(d->trt);
    free(d->phase_start_us);
    free(d->task_phase);
    http_client_free(d->phaser.http);
    history_free(&d->phaser.hist);
    pthread_mutex_destroy(&d->ready_mu);
    pthread_cond_destroy(&d->ready_cv);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->rt_mu);
    pthread_cond_destroy(&d->work_cv);
    pthread_cond_destroy(&d->done_cv);
    free(d);
}

void driver_progress(driver *d, driver_progress_t *out)
{
    out->tasks_done = atomic_load(&d->tasks_done);
    out->tasks_total = atomic_load(&d->tasks_total);
    for (int o = 0; o < OUT_COUNT; o++)
        out->outcome[o] = atomic_load(&d->outcome[o]);
}

int driver_collect(driver *d, sim_history *out, sim_report *rep)
{
    int rc = 0;
    for (int i = -1; i < d->nworkers; i++) {
        worker *w = i < 0 ? &d->phaser : &d->w[i];
        if (history_take(out, &w->hist) < 0)
            rc = -1;
        for (int k = 0; k < OP_KIND_COUNT; k++) {
            hist_merge(&rep->latency[k], &w->lat[k]);
            hist_init(&w->lat[k]);
        }
        for (int s = 0; s < SC_COUNT; s++)
            for (int k = 0; k < OP_KIND_COUNT; k++)
                for (int o = 0; o < OUT_COUNT; o++) {
                    rep->requests[s][k][o] += w->req[s][k][o];
                    w->req[s][k][o] = 0;
                }
    }
    return rc;
}

/* ---- recording ---- */

static void drv_op_begin(worker *w, sim_op *op, int kind, int scenario, long order, long task)
{
    memset(op, 0, sizeof(*op));
    op->kind = (uint8_t)kind;
    op->scenario = (uint8_t)scenario;
    op->order = (int32_t)order;
    op->task = (int32_t)task;
    op->token = -1;
    op->amount_fen = -1;
    op->status = OST_NONE;
    op->outcome = OUT_UNKNOWN;
    op->start_us = driver_now_us(w->d);
}

static void drv_op_end(worker *w, sim_op *op, int keep)
{
    op->end_us = driver_now_us(w->d);
    int64_t us = op->end_us - op->start_us;
    hist_record(&w->lat[op->kind], (uint64_t)(us > 0 ? us : 0));
    if (op->scenario < SC_COUNT)
        w->req[op->scenario][op->kind][op->outcome]++;
    atomic_fetch_add_explicit(&w->d->outcome[op->outcome], 1, memory_order_relaxed);
    if (keep)
        history_append(&w->hist, op);
}

static void drv_copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

/* Reads an answer to pop through the target profile into a and op (status,
 * transaction id, error); rep->code becomes the answer's meaning in
 * idempay's own codes (profile.h), which is what the client behaviour and
 * the checker go by. Call before drv_transport. */
static void drv_read_answer(const driver *d, profile_op pop, http_reply *rep, sim_op *op,
                            profile_answer *a)
{
    profile_answer_read(d->cfg.profile, pop, rep->code, rep->body, rep->body_len, a);
    rep->code = a->code;
    op->status = a->status;
    if (a->txn[0])
        drv_copy_str(op->txn, sizeof(op->txn), a->txn);
    if (a->error[0])
        drv_copy_str(op->error, sizeof(op->error), a->error);
}

/* Builds operation pop of the target profile from v and sends it. A
 * request that cannot be built is not sent: HTTP_ERR_OTHER. */
static http_status drv_send(worker *w, profile_op pop, const profile_values *v, long timeout_ms,
                            http_reply *rep)
{
    profile_request req;
    char err[160];
    if (profile_request_build(w->d->cfg.profile, pop, w->d->cfg.target, v, &req, err,
                              sizeof(err)) < 0) {
        memset(rep, 0, sizeof(*rep));
        drv_copy_str(rep->error, sizeof(rep->error), err);
        return HTTP_ERR_OTHER;
    }
    return http_client_request(w->http, req.method, req.url, req.content_type,
                               req.body_len ? req.body : NULL, req.body_len, req.headers,
                               timeout_ms, rep);
}

static void drv_transport(sim_op *op, http_status hs, const http_reply *rep)
{
    op->transport = (uint8_t)hs;
    op->http_code = (uint16_t)(hs == HTTP_OK ? rep->code : 0);
    if (hs != HTTP_OK)
        drv_copy_str(op->error, sizeof(op->error), http_status_name(hs));
    if (rep->replayed[0] && strcasecmp(rep->replayed, "true") == 0)
        op->flags |= OPF_REPLAYED;
}

/* Retry-After in ms, capped; fallback when absent. */
static int64_t drv_retry_after_ms(const http_reply *rep, int64_t fallback)
{
    if (rep->retry_after[0] == '\0')
        return fallback;
    char *end = NULL;
    long s = strtol(rep->retry_after, &end, 10);
    if (end == rep->retry_after || s < 0)
        return fallback;
    int64_t ms = (int64_t)s * 1000;
    if (ms < 50)
        ms = 50;
    return ms > DRV_RETRY_AFTER_CAP_MS ? DRV_RETRY_AFTER_CAP_MS : ms;
}

static int64_t drv_backoff_ms(worker *w, const sched_task *t, int retry)
{
    int64_t base = t->backoff_ms ? t->backoff_ms : 100;
    int64_t ms = base;
    for (int i = 1; i < retry && ms < DRV_BACKOFF_CAP_MS; i++)
        ms *= 2;
    if (ms > DRV_BACKOFF_CAP_MS)
        ms = DRV_BACKOFF_CAP_MS;
    return ms + (int64_t)rng_below(&w->rng, (uint64_t)base);
}

/* ---- tokens ---- */

static void drv_issue_token(worker *w, size_t slot)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    token_rt *tr = &d->trt[slot];
    profile_values v = {.user_id = s->tokens[slot].user_id};
    if (!profile_has(d->cfg.profile, PROF_FEAT_TOKENS))
        return; /* the target has no tokens: none is sent with any payment */
    for (int attempt = 1; attempt <= 3 && !drv_stopped(d); attempt++) {
        sim_op op;
        http_reply rep;
        profile_answer a;
        drv_op_begin(w, &op, OP_TOKEN, s->tokens[slot].scenario, -1, -1);
        op.token = (int32_t)slot;
        op.user_id = s->tokens[slot].user_id;
        op.attempt = (uint8_t)attempt;
        http_status hs = drv_send(w, PROF_OP_TOKEN, &v, 5000, &rep);
        if (hs == HTTP_OK)
            drv_read_answer(d, PROF_OP_TOKEN, &rep, &op, &a);
        drv_transport(&op, hs, &rep);
        if (hs == HTTP_OK && rep.code == 200) {
            if (a.token[0]) {
                drv_copy_str(tr->token, sizeof(tr->token), a.token);
                tr->expires_in = a.expires_in;
                tr->issued_us = op.start_us;
                tr->ok = 1;
                op.outcome = OUT_OK;
            } else {
                drv_copy_str(op.error, sizeof(op.error), "no token in reply");
            }
        } else if (hs == HTTP_OK && rep.code >= 400 && rep.code < 500) {
            op.outcome = OUT_FAIL;
        }
        drv_op_end(w, &op, 1);
        if (tr->ok || op.outcome == OUT_FAIL)
            break;
        drv_sleep_ms(d, 200 * attempt);
    }
}

/* ---- payments ---- */

typedef struct {
    int64_t user_id;
    int64_t fen;
    int style;
    int token_use;     /* sched_token_use actually sent */
    int token;         /* slot */
    int idem;
    uint8_t flags;     /* OPF_MISMATCH ... */
} drv_pay;

/* One POST /api/pay. Fills op (recorded by the caller through drv_op_end). */
static void drv_post_pay(worker *w, const sched_task *t, long task, const drv_pay *p, int attempt,
                         long timeout_ms, sim_op *op, http_reply *rep)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    char no[64], amt[16], made_up[80], key[128];
    const char *token = NULL;
    profile_answer a;
    sched_order_no(s, d->cfg.prefix, (size_t)t->order, no, sizeof(no));
    sched_amount_text(p->fen, p->style, amt);

    drv_op_begin(w, op, OP_PAY, s->orders[t->order].scenario, t->order, task);
    op->user_id = p->user_id;
    op->amount_fen = p->fen;
    op->attempt = (uint8_t)(attempt > 255 ? 255 : attempt);
    op->idem = (uint8_t)p->idem;
    op->flags = p->flags;
    op->token_use = (uint8_t)p->token_use;
    if (p->token_use == TOK_SLOT && p->token >= 0 && d->trt[p->token].ok) {
        token = d->trt[p->token].token;
        op->token = p->token;
        if (s->tokens[p->token].user_id != p->user_id)
            op->flags |= OPF_FOREIGN;
    } else if (p->token_use == TOK_UNKNOWN) {
        snprintf(made_up, sizeof(made_up), "simfake%016llx%016llx",
                 (unsigned long long)t->jitter_seed, (unsigned long long)d->salt);
        token = made_up;
    } else {
        op->token_use = TOK_NONE;
    }
    if (token != NULL && !profile_has(d->cfg.profile, PROF_FEAT_TOKENS)) {
        token = NULL; /* not sent: the target has no tokens */
        op->token = -1;
        op->token_use = TOK_NONE;
        op->flags &= (uint8_t)~OPF_FOREIGN;
    }
    if (!profile_has(d->cfg.profile, PROF_FEAT_IDEM_KEY))
        op->idem = 0;
    snprintf(key, sizeof(key), "%s%s-k%d", d->cfg.prefix, s->orders[t->order].suffix, op->idem);
    profile_values v = {.order_no = no, .user_id = p->user_id, .amount = amt,
                        .amount_fen = p->fen, .token = token,
                        .idem_key = op->idem ? key : NULL};
    http_status hs = drv_send(w, PROF_OP_PAY, &v, timeout_ms, rep);
    if (hs == HTTP_OK)
        drv_read_answer(d, PROF_OP_PAY, rep, op, &a);
    drv_transport(op, hs, rep);
    if (hs == HTTP_OK) {
        if (rep->code == 200)
            op->outcome = OUT_OK;
        else if (rep->code >= 400 && rep->code < 500)
            op->outcome = OUT_FAIL;
        else
            op->outcome = OUT_UNKNOWN;
    }
    if (hs == HTTP_OK && !(p->flags & OPF_MISMATCH)) {
        pthread_mutex_lock(&d->rt_mu);
        order_rt *r = &d->ort[t->order];
        if (rep->code == 200 && op->status == OST_PAID && op->txn[0]) {
            drv_copy_str(r->txn, sizeof(r->txn), op->txn);
            r->saw_paid = 1;
        } else if (rep->code == 402) {
            r->saw_declined = 1;
        }
        pthread_mutex_unlock(&d->rt_mu);
    }
}

/* One GET /api/pay/orders/{no} by a client (recorded). Returns the status,
 * OST_NONE when not found, -1 when unknown. */
static int drv_client_query_within(worker *w, const sched_task *t, long task, int attempt,
                                   long timeout_ms)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    char no[64];
    sim_op op;
    http_reply rep;
    profile_answer a;
    sched_order_no(s, d->cfg.prefix, (size_t)t->order, no, sizeof(no));
    drv_op_begin(w, &op, OP_QUERY, s->orders[t->order].scenario, t->order, task);
    op.attempt = (uint8_t)(attempt > 255 ? 255 : attempt);
    profile_values v = {.order_no = no};
    http_status hs = drv_send(w, PROF_OP_READ, &v, timeout_ms, &rep);
    if (hs == HTTP_OK)
        drv_read_answer(d, PROF_OP_READ, &rep, &op, &a);
    drv_transport(&op, hs, &rep);
    int status = -1; /* -1 unknown, OST_NONE not found */
    if (hs == HTTP_OK) {
        if (rep.code == 200) {
            op.outcome = OUT_OK;
            status = op.status;
        } else if (rep.code == 404) {
            op.outcome = OUT_OK;
            status = OST_NONE;
        } else if (rep.code >= 400 && rep.code < 500) {
            op.outcome = OUT_FAIL;
        }
        if (rep.code == 200 && op.status == OST_PAID && op.txn[0]) {
            pthread_mutex_lock(&d->rt_mu);
            drv_copy_str(d->ort[t->order].txn, sizeof(d->ort[t->order].txn), op.txn);
            d->ort[t->order].saw_paid = 1;
            pthread_mutex_unlock(&d->rt_mu);
        }
    }
    drv_op_end(w, &op, 1);
    return status;
}

/* The same with the task's own request timeout. */
static int drv_client_query(worker *w, const sched_task *t, long task, int attempt)
{
    return drv_client_query_within(w, t, task, attempt, t->timeout_ms ? t->timeout_ms : 10000);
}

typedef enum { SESS_PAID, SESS_DECLINED, SESS_REFUSED, SESS_GAVE_UP } drv_session_end;

/* The task's request timeout, but no later than the client's deadline (plus
 * a second: a request is never sent with less than that). */
static long drv_timeout_within(const driver *d, const sched_task *t, int64_t deadline_us)
{
    long to = t->timeout_ms ? (long)t->timeout_ms : 10000;
    int64_t left_ms = (deadline_us - driver_now_us(d)) / 1000 + 1000;
    return left_ms < to ? (long)left_ms : to;
}

/* A client that wants the order paid: POST, then act on the answer until a
 * definite one, max_attempts POSTs, or the session time is up. The first
 * POST is attempt number first_attempt. */
static drv_session_end drv_session(worker *w, const sched_task *t, long task, const drv_pay *p,
                                   int first_attempt, int max_posts)
{
    driver *d = w->d;
    int64_t patience = t->patience_ms ? t->patience_ms : DRV_SESSION_MAX_MS;
    if (patience > DRV_SESSION_MAX_MS)
        patience = DRV_SESSION_MAX_MS;
    int64_t deadline = driver_now_us(d) + patience * 1000;
    int queries = 0;
    for (int i = 0; i < max_posts && !drv_stopped(d); i++) {
        sim_op op;
        http_reply rep;
        int attempt = first_attempt + i;
        drv_post_pay(w, t, task, p, attempt, drv_timeout_within(d, t, deadline), &op, &rep);
        drv_op_end(w, &op, 1);
        int64_t wait;
        if (op.transport == HTTP_OK) {
            long code = op.http_code;
            if (code == 200)
                return SESS_PAID;
            if (code == 402) {
                if (!t->retry_declined)
                    return SESS_DECLINED;
                wait = drv_backoff_ms(w, t, i + 1);
            } else if (code == 202) {
                wait = drv_retry_after_ms(&rep, drv_backoff_ms(w, t, 1));
                if (t->poll && !t->hasty) {
                    int st = -1;
                    while (queries < DRV_MAX_POLLS && driver_now_us(d) < deadline &&
                           !drv_stopped(d)) {
                        drv_sleep_ms(d, wait);
                        st = drv_client_query_within(w, t, task, ++queries,
                                                     drv_timeout_within(d, t, deadline));
                        if (st != OST_PROCESSING && st != -1)
                            break;
                        wait = wait < 500 ? wait + 100 : 500;
                    }
                    if (st == OST_PAID)
                        return SESS_PAID;
                    if (st == OST_FAILED && !t->retry_declined)
                        return SESS_DECLINED;
                    wait = 0; /* PENDING / not found / FAILED with retry: POST again */
                }
            } else if (code == 409 || code == 429) {
                wait = drv_retry_after_ms(&rep, drv_backoff_ms(w, t, 1));
            } else if (code >= 400 && code < 500) {
                return SESS_REFUSED;
            } else {
                wait = drv_retry_after_ms(&rep, drv_backoff_ms(w, t, i + 1));
            }
        } else {
            wait = drv_backoff_ms(w, t, i + 1);
        }
        if (t->hasty) /* at once: no Retry-After, no backoff, a few ms of jitter */
            wait = (int64_t)rng_below(&w->rng, t->backoff_ms ? t->backoff_ms : 20);
        if (driver_now_us(d) + wait * 1000 > deadline)
            break;
        drv_sleep_ms(d, wait);
    }
    return SESS_GAVE_UP;
}

static void drv_pay_of(const sim_schedule *s, const sched_task *t, drv_pay *p)
{
    const sched_order *o = &s->orders[t->order];
    memset(p, 0, sizeof(*p));
    p->user_id = o->user_id;
    p->fen = o->amount_fen;
    p->style = t->style;
    p->token_use = t->token_use;
    p->token = t->token;
    p->idem = t->idem;
}

static void drv_task_pay(worker *w, const sched_task *t, long task)
{
    driver *d = w->d;
    drv_pay p;
    drv_pay_of(d->cfg.sched, t, &p);
    if (t->expect_expired) {
        token_rt *tr = t->token >= 0 ? &d->trt[t->token] : NULL;
        /* Only with a short TTL: wait it out, then present the token. */
        if (tr == NULL || !tr->ok || tr->expires_in <= 0 || tr->expires_in > 5)
            return;
        drv_sleep_until_us(d, tr->issued_us + (int64_t)tr->expires_in * 1000000 + 1500000);
        p.flags |= OPF_EXPIRED;
    }
    drv_session(w, t, task, &p, 1, t->max_attempts ? t->max_attempts : 1);
}

static void drv_task_burst(worker *w, const sched_task *t, long task)
{
    driver *d = w->d;
    drv_pay p;
    drv_pay_of(d->cfg.sched, t, &p);
    int definite = 0;
    for (int c = 0; c < t->copies && !drv_stopped(d); c++) {
        sim_op op;
        http_reply rep;
        if (c > 0 && t->gap_ms)
            drv_sleep_ms(d, t->gap_ms);
        drv_post_pay(w, t, task, &p, c + 1, t->timeout_ms ? t->timeout_ms : 10000, &op, &rep);
        drv_op_end(w, &op, 1);
        if (op.transport == HTTP_OK && (op.http_code == 200 ||
                                        (op.http_code >= 400 && op.http_code < 500 &&
                                         op.http_code != 409 && op.http_code != 429)))
            definite = 1;
    }
    if (!definite)
        drv_session(w, t, task, &p, t->copies + 1, t->max_attempts ? t->max_attempts : 1);
}

static void drv_task_mismatch(worker *w, const sched_task *t, long task)
{
    driver *d = w->d;
    drv_pay p;
    drv_pay_of(d->cfg.sched, t, &p);
    drv_session(w, t, task, &p, 1, t->max_attempts ? t->max_attempts : 1);
    /* Variants only against an order that exists: otherwise a variant would
     * legitimately create it. */
    int st = -1;
    for (int i = 0; i < 3 && st == -1 && !drv_stopped(d); i++)
        st = drv_client_query(w, t, task, i + 1);
    if (st == -1 || st == OST_NONE)
        return;
    for (int v = 0; v < t->copies && !drv_stopped(d); v++) {
        drv_pay q = p;
        q.flags = OPF_MISMATCH;
        switch (v % 3) {
        case 0:
            q.fen = t->variant_fen;
            break;
        case 1:
            q.user_id = t->variant_user;
            q.token_use = TOK_NONE;
            break;
        default:
            q.fen = t->variant_fen;
            q.user_id = t->variant_user;
            q.token_use = TOK_NONE;
        }
        q.style = (t->style + v) % 2;
        for (int attempt = 1; attempt <= 3; attempt++) {
            sim_op op;
            http_reply rep;
            drv_post_pay(w, t, task, &q, attempt, t->timeout_ms ? t->timeout_ms : 10000, &op, &rep);
            drv_op_end(w, &op, 1);
            if (op.outcome != OUT_UNKNOWN)
                break;
            drv_sleep_ms(d, drv_backoff_ms(w, t, attempt));
        }
    }
}

/* ---- forged callbacks ---- */

/* A transaction id nobody issued: 28 digits, unique to this run. */
static void drv_made_up_txn(const driver *d, const sched_task *t, char out[SIM_TXN_MAX])
{
    uint64_t st = t->jitter_seed ^ d->salt;
    uint64_t a = rng_splitmix64(&st), b = rng_splitmix64(&st);
    snprintf(out, SIM_TXN_MAX, "4299%012llu%012llu", (unsigned long long)(a % 1000000000000ULL),
             (unsigned long long)(b % 1000000000000ULL));
}

static void drv_task_forge(worker *w, const sched_task *t, long task)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    const sched_order *target = &s->orders[t->order];
    char no[64], txn[SIM_TXN_MAX], timebuf[32], nonce[33];
    sched_order_no(s, d->cfg.prefix, (size_t)t->order, no, sizeof(no));
    if (!profile_has(d->cfg.profile, PROF_FEAT_CALLBACKS))
        return;

    /* A declined target is forged against only when its client really saw
     * the decline (402): otherwise it may have been charged legitimately. */
    if (!(target->flags & ORD_NEVER_SUBMITTED)) {
        pthread_mutex_lock(&d->rt_mu);
        int declined = d->ort[t->order].saw_declined && !d->ort[t->order].saw_paid;
        pthread_mutex_unlock(&d->rt_mu);
        if (!declined)
            return;
    }

    txn[0] = '\0';
    if (t->forge == FORGE_REPLAY_TXN && t->aux_order >= 0) {
        pthread_mutex_lock(&d->rt_mu);
        drv_copy_str(txn, sizeof(txn), d->ort[t->aux_order].txn);
        pthread_mutex_unlock(&d->rt_mu);
        if (txn[0] == '\0') {
            /* Learn the paid order's transaction id as anyone could. */
            sched_task q = *t;
            q.order = t->aux_order;
            drv_client_query(w, &q, task, 1);
            pthread_mutex_lock(&d->rt_mu);
            drv_copy_str(txn, sizeof(txn), d->ort[t->aux_order].txn);
            pthread_mutex_unlock(&d->rt_mu);
        }
    }
    if (txn[0] == '\0') {
        /* A properly signed notification with the right fee and a fresh
         * transaction id is indistinguishable from a real one: only send
         * that kind when a real, already used transaction id is at hand. */
        if (t->forge == FORGE_REPLAY_TXN)
            return;
        drv_made_up_txn(d, t, txn);
    }

    int64_t fee = t->forge == FORGE_WRONG_FEE ? t->variant_fen : target->amount_fen;
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(timebuf, sizeof(timebuf), "%Y%m%d%H%M%S", &tmv);
    if (wx_nonce(nonce) < 0)
        snprintf(nonce, sizeof(nonce), "%016llx", (unsigned long long)t->jitter_seed);

    wx_msg m;
    wx_msg_init(&m);
    char *xml = NULL;
    int ok = wx_msg_set(&m, "return_code", "SUCCESS") == 0 &&
             wx_msg_set(&m, "result_code", "SUCCESS") == 0 &&
             wx_msg_set(&m, "appid", d->cfg.appid) == 0 &&
             wx_msg_set(&m, "mch_id", t->forge == FORGE_WRONG_MCH ? "1900000999" : d->cfg.mch_id) == 0 &&
             wx_msg_set(&m, "nonce_str", nonce) == 0 &&
             wx_msg_set(&m, "openid", "oSimulatorForgedPayer000000") == 0 &&
             wx_msg_set(&m, "trade_type", "NATIVE") == 0 &&
             wx_msg_set(&m, "bank_type", "OTHERS") == 0 &&
             wx_msg_set(&m, "fee_type", "CNY") == 0 &&
             wx_msg_set_int(&m, "total_fee", (long long)fee) == 0 &&
             wx_msg_set_int(&m, "cash_fee", (long long)fee) == 0 &&
             wx_msg_set(&m, "transaction_id", txn) == 0 &&
             wx_msg_set(&m, "out_trade_no", no) == 0 &&
             wx_msg_set(&m, "time_end", timebuf) == 0;
    if (ok) {
        const char *key = t->forge == FORGE_BAD_SIGN ? "NotTheMerchantKey000000000000000" : d->cfg.key;
        /* Both signature types WeChat Pay v2 uses, chosen by the schedule. */
        int hmac = (t->jitter_seed >> 7) & 1;
        ok = wx_sign_msg(&m, key, hmac ? WX_SIGN_HMAC_SHA256 : WX_SIGN_MD5, hmac) == 0;
    }
    if (ok)
        xml = wx_xml_build(&m);
    wx_msg_free(&m);

    sim_op op;
    http_reply rep;
    drv_op_begin(w, &op, OP_CALLBACK, target->scenario, t->order, task);
    op.forge = t->forge;
    op.amount_fen = fee;
    op.attempt = 1;
    drv_copy_str(op.txn, sizeof(op.txn), txn);
    if (xml == NULL) {
        drv_copy_str(op.error, sizeof(op.error), "could not build XML");
        drv_op_end(w, &op, 1);
        return;
    }
    snprintf(w->url, sizeof(w->url), "%s%s", d->cfg.target,
             d->cfg.profile->ep[PROF_OP_CALLBACK].path);
    http_status hs = http_client_request(w->http, "POST", w->url, "text/xml", xml, strlen(xml),
                                         NULL, t->timeout_ms ? t->timeout_ms : 5000, &rep);
    free(xml);
    drv_transport(&op, hs, &rep);
    if (hs == HTTP_OK && rep.code == 200) {
        wx_msg r;
        char perr[64];
        wx_msg_init(&r);
        if (wx_xml_parse(rep.body, rep.body_len, &r, perr, sizeof(perr)) == 0) {
            const char *rc = wx_msg_get(&r, "return_code");
            const char *msg = wx_msg_get(&r, "return_msg");
            if (rc != NULL && strcmp(rc, "SUCCESS") == 0) {
                op.flags |= OPF_CALLBACK_SUCCESS;
                op.outcome = OUT_OK;
            } else {
                op.outcome = OUT_FAIL;
            }
            drv_copy_str(op.error, sizeof(op.error), msg ? msg : "");
        } else {
            drv_copy_str(op.error, sizeof(op.error), "unparseable reply");
        }
        wx_msg_free(&r);
    } else if (hs == HTTP_OK && rep.code >= 400 && rep.code < 500) {
        op.outcome = OUT_FAIL;
    }
    drv_op_end(w, &op, 1);
}

/* ---- the payer's second charge ---- */

/* The signed unifiedorder of a second charge of order no (fee fen), or NULL. */
static char *drv_stray_xml(const driver *d, const char *no, int64_t fen)
{
    char nonce[33];
    wx_msg m;
    char *xml = NULL;
    if (wx_nonce(nonce) < 0)
        return NULL;
    wx_msg_init(&m);
    int ok = wx_msg_set(&m, "appid", d->cfg.appid) == 0 &&
             wx_msg_set(&m, "mch_id", d->cfg.mch_id) == 0 &&
             wx_msg_set(&m, "nonce_str", nonce) == 0 &&
             wx_msg_set(&m, "body", "idempay-sim: the payer pays again") == 0 &&
             wx_msg_set(&m, "out_trade_no", no) == 0 &&
             wx_msg_set_int(&m, "total_fee", (long long)fen) == 0 &&
             wx_msg_set(&m, "spbill_create_ip", "127.0.0.1") == 0 &&
             wx_msg_set(&m, "notify_url", d->cfg.notify_url) == 0 &&
             wx_msg_set(&m, "trade_type", "NATIVE") == 0 &&
             wx_sign_msg(&m, d->cfg.key, WX_SIGN_MD5, 0) == 0;
    if (ok)
        xml = wx_xml_build(&m);
    wx_msg_free(&m);
    return xml;
}

/* Reads the unifiedorder reply into op: ok with the transaction id when it
 * charged, fail when it says it did not, unknown otherwise. */
static void drv_stray_reply(const http_reply *rep, sim_op *op)
{
    wx_msg r;
    char perr[64];
    wx_msg_init(&r);
    if (rep->code == 200 && wx_xml_parse(rep->body, rep->body_len, &r, perr, sizeof(perr)) == 0) {
        const char *rc = wx_msg_get(&r, "return_code"), *res = wx_msg_get(&r, "result_code");
        const char *txn = wx_msg_get(&r, "transaction_id"), *ec = wx_msg_get(&r, "err_code");
        if (rc != NULL && strcmp(rc, "SUCCESS") == 0 && res != NULL && strcmp(res, "SUCCESS") == 0 &&
            txn != NULL && txn[0]) {
            op->outcome = OUT_OK;
            drv_copy_str(op->txn, sizeof(op->txn), txn);
        } else if (rc != NULL) {
            op->outcome = OUT_FAIL; /* return_code FAIL or result_code FAIL: nothing charged */
            drv_copy_str(op->error, sizeof(op->error), ec ? ec : wx_msg_get(&r, "return_msg"));
        }
    } else if (op->error[0] == '\0') {
        drv_copy_str(op->error, sizeof(op->error), "unparseable reply");
    }
    wx_msg_free(&r);
}

/* The payer pays an order a second time, straight at the gateway, once a
 * client has seen it PAID (the service never charges a PAID order again,
 * so this charge is the payer's doing; the service must refund it). */
static void drv_task_stray(worker *w, const sched_task *t, long task)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    char no[64];
    pthread_mutex_lock(&d->rt_mu);
    int paid = d->ort[t->order].saw_paid;
    pthread_mutex_unlock(&d->rt_mu);
    if (!paid || d->cfg.gateway == NULL)
        return;
    sched_order_no(s, d->cfg.prefix, (size_t)t->order, no, sizeof(no));
    char *xml = drv_stray_xml(d, no, s->orders[t->order].amount_fen);
    sim_op op;
    http_reply rep;
    drv_op_begin(w, &op, OP_STRAY, s->orders[t->order].scenario, t->order, task);
    op.amount_fen = s->orders[t->order].amount_fen;
    op.attempt = 1;
    if (xml == NULL) {
        drv_copy_str(op.error, sizeof(op.error), "could not build XML");
        op.outcome = OUT_FAIL;
        drv_op_end(w, &op, 1);
        return;
    }
    snprintf(w->url, sizeof(w->url), "%s/pay/unifiedorder", d->cfg.gateway);
    http_status hs = http_client_request(w->http, "POST", w->url, "text/xml", xml, strlen(xml),
                                         NULL, t->timeout_ms ? t->timeout_ms : 5000, &rep);
    free(xml);
    drv_transport(&op, hs, &rep);
    if (hs == HTTP_OK)
        drv_stray_reply(&rep, &op);
    drv_op_end(w, &op, 1);
}

/* ---- ping ---- */

static void drv_task_ping(worker *w, const sched_task *t, long task, size_t phase)
{
    driver *d = w->d;
    const sched_phase *ph = &d->cfg.sched->phases[phase];
    int64_t end_us = d->phase_start_us[phase] + (int64_t)ph->budget_ms * 1000;
    const profile_endpoint *ping = &d->cfg.profile->ep[PROF_OP_PING];
    if (!ping->present)
        return;
    snprintf(w->url, sizeof(w->url), "%s%s", d->cfg.target, ping->path);
    while (!drv_stopped(d) && driver_now_us(d) < end_us) {
        sim_op op;
        http_reply rep;
        drv_op_begin(w, &op, OP_PING, ph->scenario, -1, task);
        http_status hs = http_client_request(w->http, ping->method, w->url, NULL, NULL, 0, NULL,
                                             t->timeout_ms ? t->timeout_ms : 5000, &rep);
        op.transport = (uint8_t)hs;
        if (hs == HTTP_OK && rep.code == 200)
            op.outcome = OUT_OK;
        else if (hs == HTTP_OK && rep.code >= 400 && rep.code < 500)
            op.outcome = OUT_FAIL;
        drv_op_end(w, &op, 0);
        if (hs == HTTP_ERR_CONNECT)
            drv_sleep_ms(d, 10);
    }
}

/* Blocks until phase p may run (its tokens issued, its mock config set). */
static void drv_wait_phase(driver *d, size_t p)
{
    pthread_mutex_lock(&d->ready_mu);
    while (d->phase_ready < (long)p)
        pthread_cond_wait(&d->ready_cv, &d->ready_mu);
    pthread_mutex_unlock(&d->ready_mu);
}

static void drv_run_one(worker *w, size_t i, void *arg)
{
    driver *d = w->d;
    const sim_schedule *s = d->cfg.sched;
    size_t ti = d->seg_first_task + i;
    const sched_task *t = &s->tasks[ti];
    size_t phase = d->task_phase[ti];
    (void)arg;
    drv_wait_phase(d, phase);
    if (!drv_stopped(d)) {
        drv_sleep_until_us(d, d->phase_start_us[phase] + (int64_t)t->start_ms * 1000);
        rng_seed(&w->rng, t->jitter_seed);
        switch (t->kind) {
        case TASK_PAY:
            drv_task_pay(w, t, (long)ti);
            break;
        case TASK_BURST:
            drv_task_burst(w, t, (long)ti);
            break;
        case TASK_MISMATCH:
            drv_task_mismatch(w, t, (long)ti);
            break;
        case TASK_FORGE:
            drv_task_forge(w, t, (long)ti);
            break;
        case TASK_STRAY:
            drv_task_stray(w, t, (long)ti);
            break;
        case TASK_PING:
            drv_task_ping(w, t, (long)ti, phase);
            break;
        default:
            break;
        }
    }
    atomic_fetch_add(&d->tasks_done, 1);
}

static void drv_set_ready(driver *d, long p)
{
    pthread_mutex_lock(&d->ready_mu);
    d->phase_ready = p;
    pthread_cond_broadcast(&d->ready_cv);
    pthread_mutex_unlock(&d->ready_mu);
}

/* The phase thread: issues each phase's tokens, applies its config, marks it
 * ready, then waits out its budget before the next one. */
static void *drv_phaser_main(void *arg)
{
    driver *d = arg;
    const sim_schedule *s = d->cfg.sched;
    for (size_t p = d->seg_first; p < d->seg_last; p++) {
        const sched_phase *ph = &s->phases[p];
        if (!drv_stopped(d)) {
            for (size_t k = ph->first_token; k < ph->first_token + ph->ntokens && !drv_stopped(d); k++)
                drv_issue_token(&d->phaser, k);
            if (p > d->seg_first)
                drv_sleep_until_us(d, d->phase_start_us[p - 1] +
                                          (int64_t)s->phases[p - 1].budget_ms * 1000);
            if (!drv_stopped(d) && d->on_phase != NULL && d->on_phase(d->on_phase_arg, p) < 0)
                d->aborted = 1;
        }
        d->phase_start_us[p] = driver_now_us(d);
        drv_set_ready(d, (long)p);
    }
    return NULL;
}

void driver_run_segment(driver *d, size_t first, size_t last, driver_phase_fn on_phase,
                        void *arg)
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
    drv_set_ready(d, (long)first - 1);
    atomic_fetch_add(&d->tasks_total, ntasks);
    pthread_t phaser;
    int threaded = pthread_create(&phaser, NULL, drv_phaser_main, d) == 0;
    if (!threaded) {
        d->aborted = 1;
        for (size_t p = first; p < last; p++)
            d->phase_start_us[p] = driver_now_us(d);
        drv_set_ready(d, (long)last);
    }
    drv_job(d, ntasks, drv_run_one, NULL);
    if (threaded)
        pthread_join(phaser, NULL);
}

int64_t driver_phase_start_us(const driver *d, size_t p)
{
    return p < d->cfg.sched->nphases ? d->phase_start_us[p] : -1;
}

/* ---- final reads ---- */

int driver_parse_order(const char *body, size_t len, sim_row *row)
{
    profile_answer a;
    profile_answer_read(profile_builtin(), PROF_OP_READ, 200, body, len, &a);
    return profile_answer_row(&a, row) == 1 ? 0 : -1;
}

typedef struct {
    const size_t *idx;
    sim_row *rows;
    atomic_size_t errors;
} drv_read_job;

static void drv_read_one(worker *w, size_t i, void *arg)
{
    drv_read_job *job = arg;
    driver *d = w->d;
    size_t order = job->idx[i];
    sim_row *row = &job->rows[order];
    char no[64];
    sched_order_no(d->cfg.sched, d->cfg.prefix, order, no, sizeof(no));
    profile_values v = {.order_no = no};
    for (int attempt = 0; attempt < 4; attempt++) {
        http_reply rep;
        profile_answer a;
        if (attempt > 0)
            drv_sleep_ms(d, 250 * attempt);
        http_status hs = drv_send(w, PROF_OP_READ, &v, 5000, &rep);
        if (hs != HTTP_OK)
            continue;
        profile_answer_read(d->cfg.profile, PROF_OP_READ, rep.code, rep.body, rep.body_len, &a);
        if (profile_answer_row(&a, row) >= 0)
            return;
    }
    memset(row, 0, sizeof(*row));
    row->state = ROW_ERROR;
    row->status = OST_NONE;
    row->amount_fen = -1;
    atomic_fetch_add(&job->errors, 1);
}

size_t driver_read_orders(driver *d, const size_t *idx, size_t n, sim_row *rows)
{
    drv_read_job job = {.idx = idx, .rows = rows};
    atomic_store(&job.errors, 0);
    drv_job(d, n, drv_read_one, &job);
    return atomic_load(&job.errors);
}
