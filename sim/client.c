/* client.c - the client behaviour of client.h: recording, one POST, one
 * poll, the session loop that acts on answers, and the pay / burst /
 * mismatch / ping tasks. Requests are built, and answers read, through the
 * run's target profile (profile.h). */
#include "client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "payer.h"

#define CLIENT_CONNECT_TIMEOUT_MS 2000
#define CLIENT_SESSION_MAX_MS 60000 /* no client waits longer for one order */
#define CLIENT_MAX_POLLS 40
#define CLIENT_RETRY_AFTER_CAP_MS 1000
#define CLIENT_BACKOFF_CAP_MS 2000

/* ---- the world and the clock ---- */

int client_world_init(client_world *w, const sim_schedule *s)
{
    clock_gettime(CLOCK_MONOTONIC, &w->t0);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    w->origin_epoch_us = (int64_t)wall.tv_sec * 1000000 + wall.tv_nsec / 1000;
    uint64_t st = (uint64_t)wall.tv_nsec ^ ((uint64_t)wall.tv_sec << 20) ^ (uint64_t)(uintptr_t)w;
    w->salt = rng_splitmix64(&st);
    w->sched = s;
    pthread_mutex_init(&w->mu, NULL);
    w->orders = calloc(s->norders ? s->norders : 1, sizeof(*w->orders));
    w->tokens = calloc(s->ntokens ? s->ntokens : 1, sizeof(*w->tokens));
    return w->orders != NULL && w->tokens != NULL ? 0 : -1;
}

void client_world_free(client_world *w)
{
    free(w->orders);
    free(w->tokens);
    w->orders = NULL;
    w->tokens = NULL;
    pthread_mutex_destroy(&w->mu);
}

int64_t client_now_us(const client_world *w)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - w->t0.tv_sec) * 1000000 +
           (int64_t)(now.tv_nsec - w->t0.tv_nsec) / 1000;
}

int client_stopped(const client_world *w)
{
    return w->aborted || (w->stop != NULL && *w->stop);
}

void client_sleep_ms(const client_world *w, int64_t ms)
{
    while (ms > 0 && !client_stopped(w)) {
        int64_t slice = ms > 100 ? 100 : ms;
        struct timespec ts = { .tv_sec = (time_t)(slice / 1000),
                               .tv_nsec = (long)(slice % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        ms -= slice;
    }
}

void client_sleep_until_us(const client_world *w, int64_t at_us)
{
    int64_t now = client_now_us(w);
    if (at_us > now)
        client_sleep_ms(w, (at_us - now + 999) / 1000);
}

/* ---- a worker's client ---- */

int client_init(sim_client *c, client_world *w)
{
    memset(c, 0, sizeof(*c));
    c->world = w;
    history_init(&c->hist);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        hist_init(&c->lat[k]);
    c->http = http_client_new(CLIENT_CONNECT_TIMEOUT_MS, 10000);
    return c->http != NULL ? 0 : -1;
}

void client_free(sim_client *c)
{
    http_client_free(c->http);
    c->http = NULL;
    history_free(&c->hist);
}

void client_policy_of(const sched_task *t, client_policy *pol)
{
    int pays = t->kind == TASK_PAY || t->kind == TASK_BURST || t->kind == TASK_MISMATCH;
    pol->timeout_ms = t->timeout_ms ? (long)t->timeout_ms : (pays ? 10000 : 5000);
    pol->patience_ms = t->patience_ms ? t->patience_ms : CLIENT_SESSION_MAX_MS;
    if (pol->patience_ms > CLIENT_SESSION_MAX_MS)
        pol->patience_ms = CLIENT_SESSION_MAX_MS;
    pol->max_posts = t->max_attempts ? t->max_attempts : 1;
    pol->backoff_ms = t->backoff_ms ? t->backoff_ms : 100;
    pol->hasty_jitter_ms = t->backoff_ms ? t->backoff_ms : 20;
}

/* ---- recording ---- */

void client_op_begin(sim_client *c, sim_op *op, int kind, int scenario, long order, long task)
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
    op->start_us = client_now_us(c->world);
}

void client_op_end(sim_client *c, sim_op *op, int keep)
{
    op->end_us = client_now_us(c->world);
    int64_t us = op->end_us - op->start_us;
    hist_record(&c->lat[op->kind], (uint64_t)(us > 0 ? us : 0));
    if (op->scenario < SC_COUNT)
        c->req[op->scenario][op->kind][op->outcome]++;
    atomic_fetch_add_explicit(&c->world->outcome[op->outcome], 1, memory_order_relaxed);
    if (keep)
        history_append(&c->hist, op);
}

void client_copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

void client_op_transport(sim_op *op, http_status hs, const http_reply *rep)
{
    op->transport = (uint8_t)hs;
    op->http_code = (uint16_t)(hs == HTTP_OK ? rep->code : 0);
    if (hs != HTTP_OK)
        client_copy_str(op->error, sizeof(op->error), http_status_name(hs));
    if (rep->replayed[0] && strcasecmp(rep->replayed, "true") == 0)
        op->flags |= OPF_REPLAYED;
}

/* Reads an answer to pop through the target profile into a and op (status,
 * transaction id, error); rep->code becomes the answer's meaning in
 * idempay's own codes (profile.h), which is what the client behaviour and
 * the checker go by. Call before client_op_transport. */
static void client_read_answer(const client_world *w, profile_op pop, http_reply *rep, sim_op *op,
                               profile_answer *a)
{
    profile_answer_read(w->profile, pop, rep->code, rep->body, rep->body_len, a);
    rep->code = a->code;
    op->status = a->status;
    if (a->txn[0])
        client_copy_str(op->txn, sizeof(op->txn), a->txn);
    if (a->error[0])
        client_copy_str(op->error, sizeof(op->error), a->error);
}

http_status client_send(sim_client *c, profile_op pop, const profile_values *v, long timeout_ms,
                        http_reply *rep)
{
    profile_request req;
    char err[160];
    if (profile_request_build(c->world->profile, pop, c->world->target, v, &req, err, sizeof(err)) <
        0) {
        memset(rep, 0, sizeof(*rep));
        client_copy_str(rep->error, sizeof(rep->error), err);
        return HTTP_ERR_OTHER;
    }
    return http_client_request(c->http, req.method, req.url, req.content_type,
                               req.body_len ? req.body : NULL, req.body_len, req.headers,
                               timeout_ms, rep);
}

/* The outcome of an answered request: 200 ok, 4xx fail, else unknown. */
static int client_outcome_of(long code)
{
    if (code == 200)
        return OUT_OK;
    return code >= 400 && code < 500 ? OUT_FAIL : OUT_UNKNOWN;
}

/* Retry-After in ms (at least 50, capped); fallback when absent. */
static int64_t client_retry_after_ms(const http_reply *rep, int64_t fallback)
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
    return ms > CLIENT_RETRY_AFTER_CAP_MS ? CLIENT_RETRY_AFTER_CAP_MS : ms;
}

static int64_t client_backoff_ms(sim_client *c, const client_policy *pol, int retry)
{
    int64_t ms = pol->backoff_ms;
    for (int i = 1; i < retry && ms < CLIENT_BACKOFF_CAP_MS; i++)
        ms *= 2;
    if (ms > CLIENT_BACKOFF_CAP_MS)
        ms = CLIENT_BACKOFF_CAP_MS;
    return ms + (int64_t)rng_below(&c->rng, (uint64_t)pol->backoff_ms);
}

/* The policy's request timeout, but none reaching more than a second past
 * the client's deadline. */
static long client_timeout_within(const client_world *w, const client_policy *pol,
                                  int64_t deadline_us)
{
    int64_t left_ms = (deadline_us - client_now_us(w)) / 1000 + 1000;
    return left_ms < pol->timeout_ms ? (long)left_ms : pol->timeout_ms;
}

/* ---- tokens ---- */

void client_issue_token(sim_client *c, size_t slot)
{
    client_world *w = c->world;
    const sim_schedule *s = w->sched;
    client_token *tr = &w->tokens[slot];
    profile_values v = { .user_id = s->tokens[slot].user_id };
    if (!profile_has(w->profile, PROF_FEAT_TOKENS))
        return; /* the target has no tokens: none is sent with any payment */
    for (int attempt = 1; attempt <= 3 && !client_stopped(w); attempt++) {
        sim_op op;
        http_reply rep;
        profile_answer a;
        client_op_begin(c, &op, OP_TOKEN, s->tokens[slot].scenario, -1, -1);
        op.token = (int32_t)slot;
        op.user_id = s->tokens[slot].user_id;
        op.attempt = (uint8_t)attempt;
        http_status hs = client_send(c, PROF_OP_TOKEN, &v, 5000, &rep);
        if (hs == HTTP_OK)
            client_read_answer(w, PROF_OP_TOKEN, &rep, &op, &a);
        client_op_transport(&op, hs, &rep);
        if (hs == HTTP_OK && rep.code == 200 && a.token[0] && strlen(a.token) < sizeof(tr->token)) {
            client_copy_str(tr->token, sizeof(tr->token), a.token);
            tr->expires_in = a.expires_in;
            tr->issued_us = op.start_us;
            tr->ok = 1;
            op.outcome = OUT_OK;
        } else if (hs == HTTP_OK && rep.code == 200) {
            client_copy_str(op.error, sizeof(op.error), "no token in reply");
        } else if (hs == HTTP_OK) {
            op.outcome = rep.code >= 400 && rep.code < 500 ? OUT_FAIL : OUT_UNKNOWN;
        }
        client_op_end(c, &op, 1);
        if (tr->ok || op.outcome == OUT_FAIL)
            break;
        client_sleep_ms(w, 200 * attempt);
    }
}

/* ---- payments ---- */

void client_pay_of(const sim_schedule *s, const sched_task *t, client_pay *p)
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

/* The token p presents (NULL: none), noted in op; made_up holds a made-up one. */
static const char *client_pay_token(const client_world *w, const sched_task *t, const client_pay *p,
                                    sim_op *op, char made_up[80])
{
    if (p->token_use == TOK_SLOT && p->token >= 0 && w->tokens[p->token].ok) {
        op->token = p->token;
        if (w->sched->tokens[p->token].user_id != p->user_id)
            op->flags |= OPF_FOREIGN;
        return w->tokens[p->token].token;
    }
    if (p->token_use == TOK_UNKNOWN) {
        snprintf(made_up, 80, "simfake%016llx%016llx", (unsigned long long)t->jitter_seed,
                 (unsigned long long)w->salt);
        return made_up;
    }
    op->token_use = TOK_NONE;
    return NULL;
}

/* Notes what a client saw of the order: PAID with its transaction id, or 402. */
static void client_saw(client_world *w, long order, const sim_op *op)
{
    pthread_mutex_lock(&w->mu);
    client_order_seen *r = &w->orders[order];
    if (op->http_code == 200 && op->status == OST_PAID && op->txn[0]) {
        client_copy_str(r->txn, sizeof(r->txn), op->txn);
        r->saw_paid = 1;
    } else if (op->kind == OP_PAY && op->http_code == 402) {
        r->saw_declined = 1;
    }
    pthread_mutex_unlock(&w->mu);
}

/* Fills op with what a POST /api/pay of p would record (the caller sends). */
static void client_pay_op(sim_client *c, const sched_task *t, long task, const client_pay *p,
                          int attempt, sim_op *op)
{
    client_op_begin(c, op, OP_PAY, c->world->sched->orders[t->order].scenario, t->order, task);
    op->user_id = p->user_id;
    op->amount_fen = p->fen;
    op->attempt = (uint8_t)(attempt > 255 ? 255 : attempt);
    op->idem = (uint8_t)p->idem;
    op->flags = p->flags;
    op->token_use = (uint8_t)p->token_use;
}

void client_post_pay(sim_client *c, const sched_task *t, long task, const client_pay *p,
                     int attempt, long timeout_ms, sim_op *op, http_reply *rep,
                     profile_answer *answer)
{
    client_world *w = c->world;
    const sim_schedule *s = w->sched;
    char no[64], amt[16], made_up[80], key[128], auth[PAYER_AUTH_CODE_LEN + 1], openid[40];
    profile_answer own, *ap = answer != NULL ? answer : &own;
    sched_order_no(s, w->prefix, (size_t)t->order, no, sizeof(no));
    sched_amount_text(p->fen, p->style, amt);
    client_pay_op(c, t, task, p, attempt, op);
    const char *token = client_pay_token(w, t, p, op, made_up);
    if (token != NULL && !profile_has(w->profile, PROF_FEAT_TOKENS)) {
        token = NULL; /* not sent: the target has no tokens */
        op->token = -1;
        op->token_use = TOK_NONE;
        op->flags &= (uint8_t)~OPF_FOREIGN;
    }
    if (!profile_has(w->profile, PROF_FEAT_IDEM_KEY))
        op->idem = 0;
    snprintf(key, sizeof(key), "%s%s-k%d", w->prefix, s->orders[t->order].suffix, op->idem);
    profile_values v = { .order_no = no,
                         .user_id = p->user_id,
                         .amount = amt,
                         .amount_fen = p->fen,
                         .token = token,
                         .idem_key = op->idem ? key : NULL,
                         .trade_type = payer_flow_name(t->flow),
                         .auth_code = t->flow == FLOW_MICROPAY ? payer_auth_code(no, auth) : NULL,
                         .openid = t->flow == FLOW_JSAPI
                                       ? payer_openid(p->user_id, openid, sizeof(openid))
                                       : NULL };
    memset(ap, 0, sizeof(*ap));
    http_status hs = client_send(c, PROF_OP_PAY, &v, timeout_ms, rep);
    if (hs == HTTP_OK)
        client_read_answer(w, PROF_OP_PAY, rep, op, ap);
    client_op_transport(op, hs, rep);
    if (hs == HTTP_OK) {
        op->outcome = (uint8_t)client_outcome_of(rep->code);
        if (!(p->flags & OPF_MISMATCH))
            client_saw(w, t->order, op);
    }
    client_op_end(c, op, 1);
}

int client_query(sim_client *c, const sched_task *t, long task, int attempt, long timeout_ms)
{
    client_world *w = c->world;
    const sim_schedule *s = w->sched;
    char no[64];
    sim_op op;
    http_reply rep;
    sched_order_no(s, w->prefix, (size_t)t->order, no, sizeof(no));
    client_op_begin(c, &op, OP_QUERY, s->orders[t->order].scenario, t->order, task);
    op.attempt = (uint8_t)(attempt > 255 ? 255 : attempt);
    profile_values v = { .order_no = no };
    profile_answer a;
    http_status hs = client_send(c, PROF_OP_READ, &v, timeout_ms, &rep);
    if (hs == HTTP_OK)
        client_read_answer(w, PROF_OP_READ, &rep, &op, &a);
    client_op_transport(&op, hs, &rep);
    int status = -1; /* -1 unknown, OST_NONE not found */
    if (hs == HTTP_OK) {
        op.outcome = (uint8_t)(rep.code == 404 ? OUT_OK : client_outcome_of(rep.code));
        if (rep.code == 200 || rep.code == 404)
            status = rep.code == 200 ? op.status : OST_NONE;
        client_saw(w, t->order, &op);
    }
    client_op_end(c, &op, 1);
    return status;
}

/* ---- the session: act on answers until a definite one ---- */

typedef enum { SESS_PAID, SESS_DECLINED, SESS_REFUSED, SESS_GAVE_UP } client_session_end;

/* One client's session over a task. */
typedef struct {
    sim_client *c;
    const sched_task *t;
    long task;
    const client_policy *pol;
    int64_t deadline_us;
    int queries;
} client_session;

/* After a 202 a polling client reads the order until it is no longer
 * PROCESSING. Returns the status read (-1 unknown). */
static int client_poll(client_session *ss, int64_t wait)
{
    client_world *w = ss->c->world;
    int st = -1;
    while (ss->queries < CLIENT_MAX_POLLS && client_now_us(w) < ss->deadline_us &&
           !client_stopped(w)) {
        client_sleep_ms(w, wait);
        st = client_query(ss->c, ss->t, ss->task, ++ss->queries,
                          client_timeout_within(w, ss->pol, ss->deadline_us));
        if (st != OST_PROCESSING && st != -1)
            break;
        wait = wait < 500 ? wait + 100 : 500;
    }
    return st;
}

/* What to do after POST number i (0-based) was answered op: a session end
 * (returned), or -1 with the wait before the next POST in *wait. */
static int client_next(client_session *ss, int i, const sim_op *op, const http_reply *rep,
                       int64_t *wait)
{
    sim_client *c = ss->c;
    const sched_task *t = ss->t;
    long code = op->transport == HTTP_OK ? op->http_code : 0;
    if (op->transport != HTTP_OK) {
        *wait = client_backoff_ms(c, ss->pol, i + 1);
    } else if (code == 200) {
        return SESS_PAID;
    } else if (code == 402) {
        if (!t->retry_declined)
            return SESS_DECLINED;
        *wait = client_backoff_ms(c, ss->pol, i + 1);
    } else if (code == 202) {
        *wait = client_retry_after_ms(rep, client_backoff_ms(c, ss->pol, 1));
        if (t->poll && !t->hasty) {
            int st = client_poll(ss, *wait);
            if (st == OST_PAID)
                return SESS_PAID;
            if (st == OST_FAILED && !t->retry_declined)
                return SESS_DECLINED;
            *wait = 0; /* PENDING / not found / FAILED with retry: POST again */
        }
    } else if (code == 409 || code == 429) {
        *wait = client_retry_after_ms(rep, client_backoff_ms(c, ss->pol, 1));
    } else if (code >= 400 && code < 500) {
        return SESS_REFUSED;
    } else {
        *wait = client_retry_after_ms(rep, client_backoff_ms(c, ss->pol, i + 1));
    }
    return -1;
}

/* POSTs p until a definite answer, max_posts POSTs, or the patience is up.
 * The first POST is attempt number first_attempt. */
static client_session_end client_session_run(sim_client *c, const sched_task *t, long task,
                                             const client_policy *pol, const client_pay *p,
                                             int first_attempt, int max_posts)
{
    client_world *w = c->world;
    client_session ss = { .c = c,
                          .t = t,
                          .task = task,
                          .pol = pol,
                          .deadline_us = client_now_us(w) + pol->patience_ms * 1000 };
    for (int i = 0; i < max_posts && !client_stopped(w); i++) {
        sim_op op;
        http_reply rep;
        int64_t wait = 0;
        client_post_pay(c, t, task, p, first_attempt + i,
                        client_timeout_within(w, pol, ss.deadline_us), &op, &rep, NULL);
        int end = client_next(&ss, i, &op, &rep, &wait);
        if (end >= 0)
            return (client_session_end)end;
        if (t->hasty) /* at once: no Retry-After, no backoff, a few ms of jitter */
            wait = (int64_t)rng_below(&c->rng, (uint64_t)pol->hasty_jitter_ms);
        if (client_now_us(w) + wait * 1000 > ss.deadline_us)
            break;
        client_sleep_ms(w, wait);
    }
    return SESS_GAVE_UP;
}

/* ---- the tasks ---- */

/* What every paying task starts from: its policy and its order's POST. */
static void client_task_start(const client_world *w, const sched_task *t, client_policy *pol,
                              client_pay *p)
{
    client_policy_of(t, pol);
    client_pay_of(w->sched, t, p);
}

void client_task_pay(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    client_policy pol;
    client_pay p;
    client_task_start(w, t, &pol, &p);
    if (t->expect_expired) {
        client_token *tr = t->token >= 0 ? &w->tokens[t->token] : NULL;
        /* Only with a short TTL: wait it out, then present the token. */
        if (tr == NULL || !tr->ok || tr->expires_in <= 0 || tr->expires_in > 5)
            return;
        client_sleep_until_us(w, tr->issued_us + (int64_t)tr->expires_in * 1000000 + 1500000);
        p.flags |= OPF_EXPIRED;
    }
    client_session_run(c, t, task, &pol, &p, 1, pol.max_posts);
}

void client_task_burst(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    client_policy pol;
    client_pay p;
    client_task_start(w, t, &pol, &p);
    int definite = 0;
    for (int i = 0; i < t->copies && !client_stopped(w); i++) {
        sim_op op;
        http_reply rep;
        if (i > 0 && t->gap_ms)
            client_sleep_ms(w, t->gap_ms);
        client_post_pay(c, t, task, &p, i + 1, pol.timeout_ms, &op, &rep, NULL);
        long code = op.transport == HTTP_OK ? op.http_code : 0;
        if (code == 200 || (code >= 400 && code < 500 && code != 409 && code != 429))
            definite = 1;
    }
    if (!definite)
        client_session_run(c, t, task, &pol, &p, t->copies + 1, pol.max_posts);
}

/* Variant v of the order: another amount, another user, or both. */
static void client_variant(const sched_task *t, const client_pay *p, int v, client_pay *q)
{
    *q = *p;
    q->flags = OPF_MISMATCH;
    if (v % 3 != 1)
        q->fen = t->variant_fen;
    if (v % 3 != 0) {
        q->user_id = t->variant_user;
        q->token_use = TOK_NONE;
    }
    q->style = (t->style + v) % 2;
}

void client_task_mismatch(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    client_policy pol;
    client_pay p;
    client_task_start(w, t, &pol, &p);
    client_session_run(c, t, task, &pol, &p, 1, pol.max_posts);
    /* Variants only against an order that exists: otherwise a variant would
     * legitimately create it. */
    int st = -1;
    for (int i = 0; i < 3 && st == -1 && !client_stopped(w); i++)
        st = client_query(c, t, task, i + 1, pol.timeout_ms);
    if (st == -1 || st == OST_NONE)
        return;
    for (int v = 0; v < t->copies && !client_stopped(w); v++) {
        client_pay q;
        client_variant(t, &p, v, &q);
        for (int attempt = 1; attempt <= 3; attempt++) {
            sim_op op;
            http_reply rep;
            client_post_pay(c, t, task, &q, attempt, pol.timeout_ms, &op, &rep, NULL);
            if (op.outcome != OUT_UNKNOWN)
                break;
            client_sleep_ms(w, client_backoff_ms(c, &pol, attempt));
        }
    }
}

void client_task_ping(sim_client *c, const sched_task *t, long task, int scenario, int64_t end_us)
{
    client_world *w = c->world;
    client_policy pol;
    client_policy_of(t, &pol);
    const profile_endpoint *ping = &w->profile->ep[PROF_OP_PING];
    if (!ping->present)
        return;
    snprintf(c->url, sizeof(c->url), "%s%s", w->target, ping->path);
    while (!client_stopped(w) && client_now_us(w) < end_us) {
        sim_op op;
        http_reply rep;
        client_op_begin(c, &op, OP_PING, scenario, -1, task);
        http_status hs = http_client_request(c->http, ping->method, c->url, NULL, NULL, 0, NULL,
                                             pol.timeout_ms, &rep);
        op.transport = (uint8_t)hs;
        if (hs == HTTP_OK)
            op.outcome = (uint8_t)client_outcome_of(rep.code);
        client_op_end(c, &op, 0);
        if (hs == HTTP_ERR_CONNECT)
            client_sleep_ms(w, 10);
    }
}
