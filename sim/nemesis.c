/* nemesis.c - the timing nemesis' generator (see nemesis.h). An episode is
 * drawn first (nm_episode: its holds, nets, faults, chaos), then emitted as
 * two phases with their orders and tasks. Times are in ms; T, L, I, C are
 * the service's gateway timeout, lease, reconciler period and key claim. */
#include "nemesis.h"

#include <stdio.h>
#include <string.h>

#include "scenario_payer.h"

#define NM_MAX_EPISODES 6
#define NM_ONSET_MS 1200 /* the onset: held orders are first sent in it */
#define NM_ONSET_SPREAD_MS 1000
#define NM_TAIL_MS 1500 /* after the last held call lands */
#define NM_HELD_MIN 8   /* held orders per episode (each holds a mock thread) */
#define NM_HELD_MAX 12
#define NM_AFTER_MIN 6
#define NM_AFTER_MAX 2000
#define NM_RETURNS_MAX (2 * NM_HELD_MAX)
#define NM_STRAYS_PER_EPISODE 2
#define NM_STRAY_PHASE_MS 2000

typedef enum {
    NM_HOLD_UNDER_TIMEOUT = 0,
    NM_HOLD_STRADDLE_TIMEOUT,
    NM_HOLD_TIMEOUT_TO_LEASE,
    NM_HOLD_PAST_LEASE,
    NM_HOLD_SPREAD,
    NM_HOLD_PAST_RECHECK,
    NM_HOLD_COUNT
} nm_hold;

static const char *const nm_hold_words[NM_HOLD_COUNT] = {
    "under the gateway timeout",
    "straddling the gateway timeout",
    "between the gateway timeout and the lease",
    "past the lease and a reconciler tick",
    "spread from 0 to past the lease",
    "past the FAILED recheck",
};

typedef enum {
    NM_NOTIFY_NORMAL = 0,
    NM_NOTIFY_DELAYED,    /* first delivery after the timeout or after the lease */
    NM_NOTIFY_STORM,      /* duplicated, concurrent, reordered */
    NM_NOTIFY_SLOW_RETRY, /* a failed delivery is retried only after the lease */
    NM_NOTIFY_DROPPED,    /* notify_enabled false: none are sent */
    NM_NOTIFY_COUNT
} nm_notify;

static const char *const nm_behaviour_words[NM_CLIENT_COUNT] = {
    "-",
    "patient (honours Retry-After, stays past the lease)",
    "retries at once",
    "times out before the gateway does",
    "gives up after one POST",
    "gives up, comes back after the lease",
    "gives up, comes back after the key's claim",
    "gives up, comes back after the held charge landed",
    "comes back (second visit)",
    "pays a second time at the gateway",
};

const char *nemesis_behaviour_name(int behaviour)
{
    return (behaviour >= 0 && behaviour < NM_CLIENT_COUNT) ? nm_behaviour_words[behaviour] : "?";
}

typedef struct {
    int hold; /* nm_hold of the onset */
    long hold_lo, hold_hi;
    int dedupe;
    int notify; /* nm_notify */
    long notify_delay_ms, notify_retry_ms, notify_copies, notify_concurrency;
    long after_latency_ms, after_jitter_ms;
    double reset, error, decline, tac; /* the aftermath's unifiedorder faults */
    long tac_hold_ms;                  /* hold_max_ms: how long a withheld reply is held */
    sim_endpoint_faults ep[EP_COUNT];  /* the aftermath's other endpoints */
    int chaos;                         /* sched_chaos_action, -1 none */
    uint32_t chaos_at_ms;              /* from the onset's start */
    int kill_after;                    /* a second kill -9, while aftermath replies are withheld */
    uint32_t kill_after_ms;            /* from the aftermath's start */
    int pause;                         /* SIGSTOP a service process past its lease, then SIGCONT */
    uint32_t pause_at_ms;              /* from the onset's start: while the held calls wait */
    uint32_t onset_ms, after_ms;
    int nets_off;    /* forced: dedupe off, notifications dropped */
    int lease_aimed; /* forced: holds past the lease, dedupe off (nets_off too) */
} nm_episode;

/* A second visit to add once the aftermath phase has begun. */
typedef struct {
    int order, token, idem;
    uint32_t at_ms; /* from the onset's start */
} nm_return;

void nemesis_defaults(nm_params *p, size_t orders, double duration_s, int chaos,
                      const sim_windows *windows)
{
    memset(p, 0, sizeof(*p));
    p->orders = orders;
    int e = 2 + (int)(duration_s / 15.0);
    p->episodes = e < 2 ? 2 : e > NM_MAX_EPISODES ? NM_MAX_EPISODES : e;
    p->chaos = chaos;
    if (windows != NULL)
        p->w = *windows;
    else
        windows_defaults(&p->w);
}

static long nm_range(gen_ctx *g, double lo, double hi)
{
    return (long)rng_range(&g->rng, (int64_t)lo, (int64_t)hi);
}

/* The hold range of a class; -1 when the mock cannot hold that long. */
static int nm_hold_range(const sim_windows *w, int hold, long *lo, long *hi)
{
    double T = (double)w->gateway_timeout_ms, L = (double)w->lease_ms, I = (double)w->reconcile_ms;
    double R = (double)w->failed_recheck_ms;
    double a, b;
    switch (hold) {
    case NM_HOLD_UNDER_TIMEOUT:
        a = 0.3 * T;
        b = 0.9 * T;
        break;
    case NM_HOLD_STRADDLE_TIMEOUT:
        a = 0.7 * T;
        b = 1.4 * T;
        break;
    case NM_HOLD_TIMEOUT_TO_LEASE:
        a = 1.2 * T;
        b = L - I > 1.3 * T ? L - I : 1.3 * T;
        break;
    case NM_HOLD_PAST_LEASE:
        a = L + 1.2 * I;
        b = L + 3.5 * I;
        break;
    case NM_HOLD_SPREAD:
        a = 0;
        b = L + 3.5 * I;
        break;
    default:
        a = L + R + 1.5 * I;
        b = L + R + 3.0 * I;
        break;
    }
    if (b > (double)MOCK_MAX_LATENCY_MS)
        return -1;
    *lo = (long)a;
    *hi = (long)b;
    return 0;
}

static void nm_draw_hold(gen_ctx *g, const nm_params *p, nm_episode *ep)
{
    static const unsigned weight[NM_HOLD_COUNT] = { 10, 20, 20, 30, 10, 15 };
    if (!ep->lease_aimed) {
        unsigned sum = 0;
        for (int h = 0; h < NM_HOLD_COUNT; h++)
            sum += weight[h];
        uint64_t x = rng_below(&g->rng, sum);
        ep->hold = 0;
        while (x >= weight[ep->hold])
            x -= weight[ep->hold++];
    } else {
        ep->hold = NM_HOLD_PAST_LEASE;
    }
    if (nm_hold_range(&p->w, ep->hold, &ep->hold_lo, &ep->hold_hi) < 0) {
        ep->hold = NM_HOLD_PAST_LEASE; /* the mock cannot hold past the recheck */
        if (nm_hold_range(&p->w, ep->hold, &ep->hold_lo, &ep->hold_hi) < 0) {
            ep->hold = NM_HOLD_TIMEOUT_TO_LEASE;
            nm_hold_range(&p->w, ep->hold, &ep->hold_lo, &ep->hold_hi);
        }
    }
}

static void nm_draw_nets(gen_ctx *g, const nm_params *p, nm_episode *ep)
{
    const sim_windows *w = &p->w;
    ep->dedupe = ep->lease_aimed ? 0 : rng_chance(&g->rng, 0.5);
    ep->notify = ep->nets_off ? NM_NOTIFY_DROPPED : (int)rng_below(&g->rng, NM_NOTIFY_COUNT);
    mock_config d; /* the mock's notifications unless the draw changes them */
    mock_config_defaults(&d);
    ep->notify_copies = (long)d.notify_copies;
    ep->notify_concurrency = (long)d.notify_concurrency;
    ep->notify_delay_ms = (long)d.notify_delay_ms;
    ep->notify_retry_ms = (long)d.notify_retry_ms;
    switch (ep->notify) {
    case NM_NOTIFY_DELAYED:
        ep->notify_delay_ms = rng_chance(&g->rng, 0.5)
                                  ? nm_range(g, 0.5 * w->gateway_timeout_ms,
                                             1.5 * w->gateway_timeout_ms)
                                  : nm_range(g, w->lease_ms, w->lease_ms + 2 * w->reconcile_ms);
        ep->notify_copies = nm_range(g, 1, 2);
        break;
    case NM_NOTIFY_STORM:
        ep->notify_copies = nm_range(g, 2, 8);
        ep->notify_concurrency = nm_range(g, 16, 64);
        ep->notify_delay_ms = nm_range(g, 0, 10);
        ep->notify_retry_ms = nm_range(g, 50, 300);
        break;
    case NM_NOTIFY_SLOW_RETRY:
        ep->notify_retry_ms = nm_range(g, w->lease_ms / 2, w->lease_ms);
        break;
    default:
        break;
    }
}

static void nm_draw_endpoint(gen_ctx *g, const sim_windows *w, sim_endpoint_faults *f,
                             double straddle_share, double max_error, double max_reset)
{
    memset(f, 0, sizeof(*f));
    if (rng_chance(&g->rng, straddle_share)) {
        f->latency_ms = nm_range(g, 0.5 * w->gateway_timeout_ms, 1.1 * w->gateway_timeout_ms);
        f->jitter_ms = nm_range(g, 0, 0.5 * w->gateway_timeout_ms);
    } else {
        f->latency_ms = nm_range(g, 0, 20);
        f->jitter_ms = nm_range(g, 0, 40);
    }
    f->error_rate = rng_chance(&g->rng, 0.5) ? rng_unit(&g->rng) * max_error : 0.0;
    f->reset_rate = rng_chance(&g->rng, 0.5) ? rng_unit(&g->rng) * max_reset : 0.0;
}

/* The aftermath's unifiedorder faults and the other endpoints' faults. */
static void nm_draw_faults(gen_ctx *g, const nm_params *p, nm_episode *ep)
{
    const sim_windows *w = &p->w;
    ep->after_latency_ms = nm_range(g, 0, 30);
    ep->after_jitter_ms = nm_range(g, 0, 80);
    ep->reset = rng_unit(&g->rng) * 0.12;
    ep->error = rng_unit(&g->rng) * 0.12;
    ep->decline = rng_unit(&g->rng) * 0.08;
    ep->tac = rng_unit(&g->rng) * 0.08;
    ep->tac_hold_ms = rng_chance(&g->rng, 0.5)
                          ? nm_range(g, 0.8 * w->gateway_timeout_ms, 1.5 * w->gateway_timeout_ms)
                          : nm_range(g, 1.5 * w->gateway_timeout_ms, 0.8 * w->lease_ms);
    nm_draw_endpoint(g, w, &ep->ep[EP_ORDERQUERY], 0.3, 0.2, 0.1);
    nm_draw_endpoint(g, w, &ep->ep[EP_CLOSEORDER], 0.3, 0.2, 0.1);
    nm_draw_endpoint(g, w, &ep->ep[EP_REFUND], 0.2, 0.3, 0.1);
    nm_draw_endpoint(g, w, &ep->ep[EP_DOWNLOADBILL], 0.1, 0.3, 0.1);
}

static void nm_draw_chaos(gen_ctx *g, const nm_params *p, nm_episode *ep, int *mariadb_used)
{
    const sim_windows *w = &p->w;
    /* kill-worker .. restart-mariadb, then none (the pause is drawn apart) */
    enum { NM_DRAWN = CHAOS_RESTART_MARIADB + 1 };
    static const unsigned weight[NM_DRAWN + 1] = { 35, 15, 15, 10, 25 };
    uint64_t x = rng_below(&g->rng, 100);
    int a = 0;
    while (a < NM_DRAWN && x >= weight[a])
        x -= weight[a++];
    ep->chaos = a < NM_DRAWN && p->chaos ? a : -1;
    if (ep->chaos == CHAOS_RESTART_MARIADB) {
        if (*mariadb_used)
            ep->chaos = CHAOS_KILL_WORKER;
        *mariadb_used = 1;
    }
    long lo = (long)(0.2 * w->gateway_timeout_ms), hi = w->lease_ms;
    if (ep->chaos == CHAOS_RESTART_MOCK) /* while the held calls wait inside the mock */
        hi = ep->hold_lo > lo + 100 ? (ep->hold_lo < w->lease_ms ? ep->hold_lo : w->lease_ms)
                                    : lo + 100;
    ep->chaos_at_ms = (uint32_t)nm_range(g, (double)lo, (double)hi);
    ep->kill_after = rng_chance(&g->rng, 0.5) && p->chaos;
    ep->kill_after_ms = (uint32_t)nm_range(g, (double)w->gateway_timeout_ms, 2.0 * w->lease_ms / 3);
}

/* The process pause (with a chaos command): one service process stopped
 * while the held calls of the lease-aimed episode wait, for longer than
 * its lease (the command's business: ./stack chaos pause-worker), then
 * continued — a holder that outlives its lease. Drawn from a stream of its
 * own, after every other draw, so the schedule of a run without a chaos
 * command is what it was before pauses existed. */
static void nm_draw_pause(gen_ctx *g, nm_episode *ep, int e)
{
    rng_t r;
    uint64_t st = g->s->seed ^ 0x70a05e5700000000ull;
    rng_seed(&r, rng_splitmix64(&st));
    ep[e].pause = 1;
    ep[e].pause_at_ms = (uint32_t)(300 + rng_below(&r, 700));
}

static void nm_episode_draw(gen_ctx *g, const nm_params *p, nm_episode *ep, int nets_off,
                            int lease_aimed, int *mariadb_used)
{
    const sim_windows *w = &p->w;
    memset(ep, 0, sizeof(*ep));
    ep->nets_off = nets_off;
    ep->lease_aimed = nets_off || lease_aimed;
    nm_draw_hold(g, p, ep);
    nm_draw_nets(g, p, ep);
    nm_draw_faults(g, p, ep);
    nm_draw_chaos(g, p, ep, mariadb_used);
    long end = ep->hold_hi;
    if (end < w->lease_ms + 2 * w->reconcile_ms)
        end = w->lease_ms + 2 * w->reconcile_ms;
    if (end < ep->tac_hold_ms)
        end = ep->tac_hold_ms;
    ep->onset_ms = NM_ONSET_MS;
    ep->after_ms = (uint32_t)(end + NM_TAIL_MS - NM_ONSET_MS);
}

/* ---- words ---- */

static const char *nm_notify_text(const nm_episode *ep, char *buf, size_t len)
{
    switch (ep->notify) {
    case NM_NOTIFY_DELAYED:
        snprintf(buf, len, "notifications delayed %ld ms x%ld", ep->notify_delay_ms,
                 ep->notify_copies);
        break;
    case NM_NOTIFY_STORM:
        snprintf(buf, len, "notifications x%ld, %ld at once, retried every %ld ms",
                 ep->notify_copies, ep->notify_concurrency, ep->notify_retry_ms);
        break;
    case NM_NOTIFY_SLOW_RETRY:
        snprintf(buf, len, "notification retries %ld ms apart", ep->notify_retry_ms);
        break;
    case NM_NOTIFY_DROPPED:
        snprintf(buf, len, "notifications dropped");
        break;
    default:
        snprintf(buf, len, "notifications normal");
    }
    return buf;
}

static void nm_describe_onset(const nm_episode *ep, char *out, size_t len)
{
    char nb[96];
    snprintf(out, len, "%sunifiedorder held %.1f-%.1f s (%s); dedupe %s; %s",
             ep->nets_off      ? "NETS REMOVED: "
             : ep->lease_aimed ? "AT THE LEASE: "
                               : "",
             ep->hold_lo / 1000.0, ep->hold_hi / 1000.0, nm_hold_words[ep->hold],
             ep->dedupe ? "on" : "off", nm_notify_text(ep, nb, sizeof(nb)));
}

static void nm_describe_after(const nm_episode *ep, char *out, size_t len)
{
    char nb[96];
    const sim_endpoint_faults *oq = &ep->ep[EP_ORDERQUERY], *cl = &ep->ep[EP_CLOSEORDER];
    const sim_endpoint_faults *rf = &ep->ep[EP_REFUND];
    snprintf(out, len,
             "reset %.0f%%, SYSTEMERROR %.0f%%, decline %.0f%%, charged+reply withheld %.0f%% "
             "for %.1f s; orderquery %lld+%lld ms err %.0f%% reset %.0f%%; closeorder %lld+%lld ms "
             "err %.0f%% reset %.0f%%; refund err %.0f%%; dedupe %s; %s",
             ep->reset * 100, ep->error * 100, ep->decline * 100, ep->tac * 100,
             ep->tac_hold_ms / 1000.0, oq->latency_ms, oq->jitter_ms, oq->error_rate * 100,
             oq->reset_rate * 100, cl->latency_ms, cl->jitter_ms, cl->error_rate * 100,
             cl->reset_rate * 100, rf->error_rate * 100, ep->dedupe ? "on" : "off",
             nm_notify_text(ep, nb, sizeof(nb)));
}

/* ---- phases ---- */

static void nm_knobs_nets(const nm_episode *ep, sim_mock_knobs *k)
{
    k->dedupe = ep->dedupe;
    k->notify_enabled = ep->notify != NM_NOTIFY_DROPPED;
    k->notify_copies = ep->notify_copies;
    k->notify_concurrency = ep->notify_concurrency;
    k->notify_delay_ms = ep->notify_delay_ms;
    k->notify_retry_ms = ep->notify_retry_ms;
    k->hold_max_ms = ep->tac_hold_ms;
}

static int nm_onset_phase(gen_ctx *g, const nm_episode *ep, int e)
{
    sim_mock_knobs k;
    char label[32], faults[SCHED_FAULTS_MAX];
    scenarios_mock_defaults(&k);
    nm_knobs_nets(ep, &k);
    k.latency_ms = ep->hold_lo;
    k.jitter_ms = ep->hold_hi - ep->hold_lo;
    /* Only unifiedorder is held (a mock without per-endpoint knobs holds
     * every endpoint alike): orderquery, the close and refunds answer. */
    for (int i = 0; i < EP_COUNT; i++)
        k.endpoints[i].latency_ms = k.endpoints[i].jitter_ms = 0;
    snprintf(label, sizeof(label), "e%d-onset", e + 1);
    if (gen_phase(g, label, &k, ep->onset_ms, 0) < 0)
        return -1;
    nm_describe_onset(ep, faults, sizeof(faults));
    sched_set_faults(g->s, faults);
    if ((ep->chaos >= 0 &&
         sched_add_chaos(g->s, (sched_chaos_action)ep->chaos, ep->chaos_at_ms) < 0) ||
        (ep->pause && sched_add_chaos(g->s, CHAOS_PAUSE_WORKER, ep->pause_at_ms) < 0)) {
        snprintf(g->err, g->errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int nm_after_phase(gen_ctx *g, const nm_episode *ep, int e)
{
    sim_mock_knobs k;
    char label[32], faults[SCHED_FAULTS_MAX];
    scenarios_mock_defaults(&k);
    nm_knobs_nets(ep, &k);
    k.latency_ms = ep->after_latency_ms;
    k.jitter_ms = ep->after_jitter_ms;
    k.reset_rate = ep->reset;
    k.error_rate = ep->error;
    k.decline_rate = ep->decline;
    k.timeout_after_charge_rate = ep->tac;
    memcpy(k.endpoints, ep->ep, sizeof(ep->ep)); /* EP_COUNT of them: not reverse */
    snprintf(label, sizeof(label), "e%d-aftermath", e + 1);
    if (gen_phase(g, label, &k, ep->after_ms, 0) < 0)
        return -1;
    nm_describe_after(ep, faults, sizeof(faults));
    sched_set_faults(g->s, faults);
    if (ep->kill_after && sched_add_chaos(g->s, CHAOS_KILL_WORKER, ep->kill_after_ms) < 0) {
        snprintf(g->err, g->errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- clients ---- */

/* Fills t's client fields for behaviour; held: the order's first call is
 * held at the gateway (its clients stay past the lease). */
static void nm_client_fill(gen_ctx *g, const nm_params *p, sched_task *t, int behaviour, int held,
                           int token, int idem)
{
    const sim_windows *w = &p->w;
    double T = (double)w->gateway_timeout_ms, L = (double)w->lease_ms, I = (double)w->reconcile_ms;
    t->token = token;
    t->token_use = token >= 0 ? TOK_SLOT : TOK_NONE;
    t->idem = (uint8_t)idem;
    t->behaviour = (uint8_t)behaviour;
    t->poll = (uint8_t)rng_chance(&g->rng, 0.5);
    t->retry_declined = (uint8_t)rng_chance(&g->rng, 0.3);
    t->backoff_ms = (uint32_t)nm_range(g, 50, 300);
    t->timeout_ms = (uint32_t)nm_range(g, 1.3 * T, 2.0 * T);
    uint32_t stay = (uint32_t)(held ? nm_range(g, L + I, L + 3 * I) : nm_range(g, 2 * T, L));
    t->patience_ms = stay;
    switch (behaviour) {
    case NM_CLIENT_PATIENT:
        t->max_attempts = (uint8_t)nm_range(g, 6, 12);
        break;
    case NM_CLIENT_HASTY:
        t->hasty = 1;
        t->max_attempts = 255;
        t->backoff_ms = (uint32_t)nm_range(g, 20, 100);
        break;
    case NM_CLIENT_IMPATIENT:
        t->timeout_ms = (uint32_t)nm_range(g, 0.2 * T, 0.8 * T);
        t->max_attempts = (uint8_t)nm_range(g, 4, 10);
        break;
    case NM_CLIENT_RETURNING:
        t->max_attempts = (uint8_t)nm_range(g, 3, 8);
        t->patience_ms = (uint32_t)nm_range(g, 3 * T, L);
        break;
    default: /* gives up (and maybe comes back later) */
        t->max_attempts = behaviour == NM_CLIENT_GIVE_UP ? 1 : (uint8_t)nm_range(g, 1, 2);
        t->timeout_ms = (uint32_t)nm_range(g, 0.3 * T, 2.0 * T);
        t->patience_ms = (uint32_t)(2 * T);
    }
}

static int nm_pick(gen_ctx *g, const unsigned *weight, int n)
{
    unsigned sum = 0;
    for (int i = 0; i < n; i++)
        sum += weight[i];
    uint64_t x = rng_below(&g->rng, sum);
    int i = 0;
    while (i < n - 1 && x >= weight[i])
        x -= weight[i++];
    return i;
}

/* The behaviour of a held order's first client. */
static int nm_held_behaviour(gen_ctx *g, const nm_episode *ep)
{
    static const int kinds[7] = { NM_CLIENT_RETURN_LEASE, NM_CLIENT_PATIENT, NM_CLIENT_HASTY,
                                  NM_CLIENT_IMPATIENT,    NM_CLIENT_GIVE_UP, NM_CLIENT_RETURN_CLAIM,
                                  NM_CLIENT_RETURN_LATE };
    static const unsigned plain[7] = { 30, 15, 10, 10, 10, 10, 15 };
    static const unsigned at_lease[7] = { 35, 15, 25, 10, 5, 5, 5 };
    return kinds[nm_pick(g, ep->lease_aimed ? at_lease : plain, 7)];
}

/* When a returning client comes back, from the onset's start. */
static uint32_t nm_return_at(gen_ctx *g, const nm_params *p, const nm_episode *ep, int behaviour,
                             uint32_t first_ms)
{
    const sim_windows *w = &p->w;
    double I = (double)w->reconcile_ms;
    switch (behaviour) {
    case NM_CLIENT_RETURN_LEASE: /* from the moment the lease runs out, racing the reconciler */
        return first_ms + (uint32_t)nm_range(g, w->lease_ms, w->lease_ms + 2.5 * I);
    case NM_CLIENT_RETURN_CLAIM:
        return first_ms + (uint32_t)nm_range(g, w->claim_ms + 0.1 * I, w->claim_ms + I);
    default:
        return (uint32_t)(ep->hold_hi + nm_range(g, 200, 1000));
    }
}

/* A held order: sent during the onset, with one or two clients, and maybe
 * a second visit (queued in ret for the aftermath). */
static int nm_held_order(gen_ctx *g, const nm_params *p, const nm_episode *ep, uint32_t at,
                         nm_return *ret, size_t *nret)
{
    int o = gen_order(g, 0);
    if (o < 0)
        return -1;
    int token = -1, idem = rng_chance(&g->rng, 0.6) ? 1 : 0;
    if (rng_chance(&g->rng, 0.4) && (token = gen_token(g, g->s->orders[o].user_id)) < 0)
        return -1;
    int behaviour = nm_held_behaviour(g, ep);
    int clients = rng_chance(&g->rng, 0.2) ? 2 : 1;
    for (int c = 0; c < clients; c++) {
        sched_task *t = gen_task(g, TASK_PAY, o, at + (uint32_t)c * (uint32_t)nm_range(g, 0, 3));
        if (t == NULL)
            return -1;
        int b = c == 0 ? behaviour
                       : (rng_chance(&g->rng, 0.5) ? NM_CLIENT_HASTY : NM_CLIENT_IMPATIENT);
        nm_client_fill(g, p, t, b, 1, token, idem);
        t->copy_index = (uint8_t)c;
        t->copy_count = (uint8_t)clients;
    }
    if (behaviour >= NM_CLIENT_RETURN_LEASE && behaviour <= NM_CLIENT_RETURN_LATE &&
        *nret < NM_RETURNS_MAX) {
        nm_return *r = &ret[(*nret)++];
        r->order = o;
        r->token = token;
        /* the same key (or token) mostly; sometimes a new key, or none */
        uint64_t k = rng_below(&g->rng, 100);
        r->idem = k < 70 ? (idem ? idem : 1) : k < 85 ? 2 : 0;
        r->at_ms = nm_return_at(g, p, ep, behaviour, at);
    }
    return 0;
}

/* The second visits, as tasks of the aftermath phase. */
static int nm_returns(gen_ctx *g, const nm_params *p, const nm_episode *ep, const nm_return *ret,
                      size_t nret)
{
    for (size_t i = 0; i < nret; i++) {
        uint32_t at = ret[i].at_ms > ep->onset_ms ? ret[i].at_ms - ep->onset_ms : 0;
        sched_task *t = gen_task(g, TASK_PAY, ret[i].order, at);
        if (t == NULL)
            return -1;
        nm_client_fill(g, p, t, NM_CLIENT_RETURNING, 0, ret[i].token, ret[i].idem);
        t->retry_declined = (uint8_t)rng_chance(&g->rng, 0.5);
    }
    return 0;
}

/* One token, two or three new orders of its user, all sent at the same
 * moment: at most one may be accepted. */
static int nm_token_race(gen_ctx *g, const nm_params *p, uint32_t at)
{
    int64_t user = gen_user(g);
    int tok = gen_token(g, user);
    if (tok < 0)
        return -1;
    int n = (int)nm_range(g, 2, 3);
    for (int c = 0; c < n; c++) {
        int o = sched_add_order(g->s, &g->rng, g->scenario, user, gen_amount(g), gen_style(g), 0);
        if (o < 0) {
            snprintf(g->err, g->errlen, "out of memory or too many orders");
            return -1;
        }
        sched_task *t = gen_task(g, TASK_PAY, o, at);
        if (t == NULL)
            return -1;
        nm_client_fill(g, p, t, NM_CLIENT_PATIENT, 0, tok, 0);
        t->max_attempts = (uint8_t)nm_range(g, 1, 3);
    }
    return 0;
}

/* An ordinary order of the aftermath, under its faults. Its index (a
 * candidate for a second charge by the payer), or -1. */
static int nm_after_order(gen_ctx *g, const nm_params *p, uint32_t at)
{
    static const int kinds[5] = { NM_CLIENT_PATIENT, NM_CLIENT_HASTY, NM_CLIENT_IMPATIENT,
                                  NM_CLIENT_GIVE_UP, NM_CLIENT_RETURN_CLAIM };
    static const unsigned weight[5] = { 45, 10, 25, 10, 10 };
    int o = gen_order(g, 0);
    if (o < 0)
        return -1;
    int token = -1, idem = rng_chance(&g->rng, 0.5) ? 1 : 0;
    if (rng_chance(&g->rng, 0.4) && (token = gen_token(g, g->s->orders[o].user_id)) < 0)
        return -1;
    int clients = rng_chance(&g->rng, 0.15) ? 2 : 1;
    for (int c = 0; c < clients; c++) {
        int b = kinds[nm_pick(g, weight, 5)];
        if (b == NM_CLIENT_RETURN_CLAIM)
            b = NM_CLIENT_PATIENT; /* returns are for held orders */
        sched_task *t = gen_task(g, TASK_PAY, o, at + (uint32_t)c * (uint32_t)nm_range(g, 0, 3));
        if (t == NULL)
            return -1;
        nm_client_fill(g, p, t, b, 0, token, idem);
        t->copy_index = (uint8_t)c;
        t->copy_count = (uint8_t)clients;
    }
    return o;
}

/* ---- episodes ---- */

/* Orders for the aftermath of episode e: what is left of the nemesis'
 * share (made orders counted from first_order), spread over the episodes
 * still to come. */
static size_t nm_after_count(const gen_ctx *g, const nm_params *p, size_t first_order, int e,
                             int episodes)
{
    size_t made = g->s->norders - first_order;
    size_t left = p->orders > made ? p->orders - made : 0;
    size_t n = (left + (size_t)(episodes - e) - 1) / (size_t)(episodes - e);
    return n < NM_AFTER_MIN ? NM_AFTER_MIN : n > NM_AFTER_MAX ? NM_AFTER_MAX : n;
}

static int nm_episode_emit(gen_ctx *g, const nm_params *p, const nm_episode *ep, int e,
                           int episodes, size_t first_order, int *strays, size_t *nstrays)
{
    nm_return ret[NM_RETURNS_MAX];
    size_t nret = 0;
    if (nm_onset_phase(g, ep, e) < 0)
        return -1;
    int held = (int)nm_range(g, NM_HELD_MIN, NM_HELD_MAX);
    for (int i = 0; i < held; i++)
        if (nm_held_order(g, p, ep, gen_spread((size_t)i, (size_t)held, NM_ONSET_SPREAD_MS), ret,
                          &nret) < 0)
            return -1;
    if (nm_after_phase(g, ep, e) < 0 || nm_returns(g, p, ep, ret, nret) < 0)
        return -1;
    size_t after_orders = nm_after_count(g, p, first_order, e, episodes);
    /* The aftermath's own orders are sent in its first 60 %, so that they
     * settle before the episode ends. */
    uint32_t spread = (uint32_t)(ep->after_ms * 6 / 10);
    for (size_t i = 0; i < after_orders; i++) {
        uint32_t at = gen_spread(i, after_orders, spread);
        if (rng_chance(&g->rng, 0.1)) {
            if (nm_token_race(g, p, at) < 0)
                return -1;
            continue;
        }
        int o = nm_after_order(g, p, at);
        if (o < 0)
            return -1;
        if (i < NM_STRAYS_PER_EPISODE &&
            *nstrays < (size_t)(NM_MAX_EPISODES * NM_STRAYS_PER_EPISODE))
            strays[(*nstrays)++] = o;
    }
    return 0;
}

/* The last phases: payers pay some orders a second time at the gateway
 * (dedupe off, no other fault); the service must refund each second charge,
 * learning of it from its notification (silent: none is sent, so only the
 * statement job can find it). The second charge is a unifiedorder that
 * charges at once (`instant_charge`, the mock's old unifiedorder): with
 * the real prepay unifiedorder (the default since issue 22) it answered
 * ORDERPAID, no second charge was ever made, and the invariants about
 * second charges (second_charge_refunded, client_paid_is_final under a
 * notification of another charge) had nothing to judge. */
static int nm_stray_phase(gen_ctx *g, const int *strays, size_t n, int silent)
{
    sim_mock_knobs k;
    scenarios_mock_defaults(&k);
    k.dedupe = 0;
    k.notify_copies = nm_range(g, 1, 3);
    k.notify_enabled = !silent;
    if (gen_payer_phase(g, silent ? "second-charges-silent" : "second-charges",
                        "{\"instant_charge\":true}", &k, NM_STRAY_PHASE_MS) < 0)
        return -1;
    sched_set_faults(g->s, silent ? "the payer pays a second time at the gateway (dedupe off), "
                                    "no notification: only the statement shows it"
                                  : "the payer pays a second time at the gateway (dedupe off); "
                                    "the service must refund it");
    for (size_t i = 0; i < n; i++) {
        sched_task *t = gen_task(g, TASK_STRAY, strays[i], gen_spread(i, n, NM_STRAY_PHASE_MS / 2));
        if (t == NULL)
            return -1;
        t->behaviour = NM_CLIENT_STRAY;
        t->max_attempts = 1;
        t->timeout_ms = 5000;
        t->patience_ms = 5000;
    }
    return 0;
}

int nemesis_generate(gen_ctx *g, const nm_params *p)
{
    int episodes = p->episodes < 1                 ? 1
                   : p->episodes > NM_MAX_EPISODES ? NM_MAX_EPISODES
                                                   : p->episodes;
    /* One episode with the nets removed, and (with three episodes or more)
     * another aimed at the lease with the gateway's dedupe off. */
    int forced = (int)rng_below(&g->rng, (uint64_t)episodes);
    int aimed = episodes >= 3 ? (forced + 2) % episodes : -1;
    int mariadb_used = 0, kill_seen = 0;
    nm_episode ep[NM_MAX_EPISODES];
    for (int e = 0; e < episodes; e++) {
        nm_episode_draw(g, p, &ep[e], e == forced, e == aimed, &mariadb_used);
        kill_seen |= ep[e].chaos == CHAOS_KILL_WORKER;
    }
    if (p->chaos && !kill_seen) /* every run kills a service process once */
        ep[(forced + 1) % episodes].chaos = CHAOS_KILL_WORKER;
    if (p->chaos)
        nm_draw_pause(g, ep, aimed >= 0 ? aimed : forced);

    int strays[NM_MAX_EPISODES * NM_STRAYS_PER_EPISODE];
    size_t nstrays = 0, first_order = g->s->norders;
    for (int e = 0; e < episodes; e++)
        if (nm_episode_emit(g, p, &ep[e], e, episodes, first_order, strays, &nstrays) < 0)
            return -1;
    size_t half = nstrays / 2;
    if (nm_stray_phase(g, strays, half, 0) < 0)
        return -1;
    return nm_stray_phase(g, strays + half, nstrays - half, 1);
}
