/* scenarios.c - one generator per scenario. A generator only draws from its
 * own PRNG, so adding a scenario to a run does not change another's draws
 * (only the order indices in the numbers). Times are in ms from the start of
 * the phase; a phase's releases are spread over its budget. */
#include "scenarios.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "gen.h"
#include "money.h"
#include "nemesis.h"
#include "rng.h"
#include "scenario_edge.h"
#include "scenario_payer.h"
#include "scenario_v3.h"

/* Weights of the scenarios in a mix: orders and time are shared by weight. */
static const unsigned sc_weight[SC_COUNT] = {
    [SC_DOUBLE_CLICK] = 22, [SC_RETRY_STORM] = 10,    [SC_CALLBACK_STORM] = 15,
    [SC_TOKEN_REPLAY] = 12, [SC_FORGED_CALLBACK] = 6, [SC_ORDER_MISMATCH] = 8,
    [SC_GATEWAY_CHAOS] = 17, [SC_CRASH] = 10,         [SC_NEMESIS] = 8,
    [SC_PING] = 10,                                   [SC_PAYER] = 10,
    [SC_PAYER_EDGE] = 8,                              [SC_REFUNDS] = 8,
    [SC_V3_ATTACKS] = 6,
};

unsigned scenarios_weight(int scenario)
{
    return scenario >= 0 && scenario < SC_COUNT ? sc_weight[scenario] : 0;
}

unsigned scenarios_all_mask(int chaos)
{
    unsigned m = 0;
    for (int i = 0; i < SC_COUNT; i++)
        if (i != SC_PING && i != SC_PAYER && i != SC_PAYER_EDGE && i != SC_REFUNDS &&
            i != SC_V3_ATTACKS && (i != SC_CRASH || chaos))
            m |= 1u << i;
    return m;
}

int scenarios_parse(const char *list, int chaos, unsigned *mask, char *err, size_t errlen)
{
    char name[64];
    unsigned m = 0;
    const char *p = list;
    if (list == NULL || *list == '\0') {
        snprintf(err, errlen, "--scenario needs a name");
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof(name)) {
            snprintf(err, errlen, "--scenario: empty or overlong name in '%s'", list);
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (strcmp(name, "all") == 0) {
            m |= scenarios_all_mask(chaos);
        } else {
            int sc = sched_scenario_parse(name);
            if (sc < 0) {
                snprintf(err, errlen,
                         "--scenario: unknown scenario '%s' (known: all, double-click, "
                         "retry-storm, callback-storm, token-replay, forged-callback, "
                         "order-mismatch, gateway-chaos, crash, nemesis, ping, payer, "
                         "payer-edge, refunds, v3-attacks)",
                         name);
                return -1;
            }
            if (sc == SC_CRASH && !chaos) {
                snprintf(err, errlen,
                         "--scenario crash needs --chaos-cmd CMD (and --chaos-every S): it "
                         "kills service processes while requests are in flight");
                return -1;
            }
            m |= 1u << sc;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    *mask = m;
    return 0;
}

static const char *const sc_endpoint_names[EP_COUNT] = {
    "orderquery", "closeorder", "refund", "downloadbill",
};

const char *scenarios_endpoint_name(int ep)
{
    return (ep >= 0 && ep < EP_COUNT) ? sc_endpoint_names[ep] : "?";
}

void scenarios_mock_defaults(sim_mock_knobs *k)
{
    memset(k, 0, sizeof(*k));
    k->dedupe = 1;
    k->notify_copies = 1;
    k->notify_concurrency = 8;
    k->notify_delay_ms = 0;
    k->notify_retry_ms = 1000;
    k->notify_enabled = 1;
    k->hold_max_ms = 30000;
    k->closeorder_enabled = 1;
    for (int e = 0; e < EP_COUNT; e++)
        k->endpoints[e].latency_ms = k->endpoints[e].jitter_ms = -1;
    k->seed = 1;
}

static json_t *sc_ms_json(long ms)
{
    return ms < 0 ? json_null() : json_integer(ms);
}

/* "endpoints": {"orderquery": {...}, ...}: every endpoint, every knob. */
static json_t *sc_endpoints_json(const sim_mock_knobs *k)
{
    json_t *eps = json_object();
    for (int e = 0; eps != NULL && e < EP_COUNT; e++) {
        const sim_endpoint_faults *f = &k->endpoints[e];
        json_t *o = json_pack("{s:o,s:o,s:f,s:f}", "latency_ms", sc_ms_json(f->latency_ms),
                              "jitter_ms", sc_ms_json(f->jitter_ms), "error_rate", f->error_rate,
                              "reset_rate", f->reset_rate);
        if (o == NULL || json_object_set_new(eps, sc_endpoint_names[e], o) != 0) {
            json_decref(eps);
            return NULL;
        }
    }
    return eps;
}

static json_t *sc_knobs_json(const sim_mock_knobs *k)
{
    json_t *o = json_pack("{s:I,s:I,s:f,s:f,s:f,s:f,s:b,s:I,s:I,s:I,s:I,s:b,s:I,s:b,s:I}",
                          "latency_ms", (json_int_t)k->latency_ms, "jitter_ms",
                          (json_int_t)k->jitter_ms, "error_rate", k->error_rate, "decline_rate",
                          k->decline_rate, "timeout_after_charge_rate",
                          k->timeout_after_charge_rate, "reset_rate", k->reset_rate, "dedupe",
                          k->dedupe != 0, "notify_copies", (json_int_t)k->notify_copies,
                          "notify_concurrency", (json_int_t)k->notify_concurrency,
                          "notify_delay_ms", (json_int_t)k->notify_delay_ms, "notify_retry_ms",
                          (json_int_t)k->notify_retry_ms, "notify_enabled",
                          k->notify_enabled != 0, "hold_max_ms", (json_int_t)k->hold_max_ms,
                          "closeorder_enabled", k->closeorder_enabled != 0, "seed",
                          (json_int_t)k->seed);
    json_t *eps = o != NULL ? sc_endpoints_json(k) : NULL;
    if (eps == NULL || json_object_set_new(o, "endpoints", eps) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int scenarios_mock_json(const sim_mock_knobs *k, const char *override, char *out, size_t outlen,
                        char *err, size_t errlen)
{
    int rc = -1;
    char *text = NULL;
    json_t *ov = NULL;
    json_t *o = sc_knobs_json(k);
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (override != NULL && *override != '\0') {
        json_error_t je;
        ov = json_loads(override, JSON_REJECT_DUPLICATES, &je);
        if (ov == NULL || !json_is_object(ov)) {
            snprintf(err, errlen, "--mock-config: not a JSON object (%s)",
                     ov == NULL ? je.text : "another JSON type");
            goto done;
        }
        if (json_object_update(o, ov) != 0) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
    }
    text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    if (text == NULL || strlen(text) >= outlen) {
        snprintf(err, errlen, "mock config too long");
        goto done;
    }
    snprintf(out, outlen, "%s", text);
    rc = 0;
done:
    free(text);
    json_decref(ov);
    json_decref(o);
    return rc;
}

/* ---- double-click ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    int min_copies, max_copies;
    double concurrent_share;   /* copies as separate concurrent clients (else back to back) */
    uint32_t max_offset_ms;    /* between concurrent copies */
    uint32_t max_gap_ms;       /* between back-to-back copies */
    gen_client client;
} dc_params;

static void dc_defaults(dc_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->min_copies = 2;
    p->max_copies = 10;
    p->concurrent_share = 0.6;
    p->max_offset_ms = 5;
    p->max_gap_ms = 5;
    p->client = (gen_client){.token_share = 0.5, .idem_share = 0.5, .poll_share = 0.5,
                             .retry_declined_share = 0.0, .min_attempts = 3, .max_attempts = 6,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 100, .max_backoff_ms = 300};
}

static int gen_double_click(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    dc_params params;
    dc_defaults(&params, orders, budget_ms);
    const dc_params *p = &params;
    static const char *const labels[2] = {"fast", "slow-nodedupe"};
    size_t per[2] = {p->orders / 2, p->orders - p->orders / 2};
    for (int ph = 0; ph < 2; ph++) {
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        if (ph == 0) {
            k.latency_ms = rng_range(&g->rng, 5, 30);
            k.jitter_ms = 20;
            k.timeout_after_charge_rate = 0.04;
        } else {
            k.latency_ms = rng_range(&g->rng, 60, 150);
            k.jitter_ms = 80;
            k.timeout_after_charge_rate = 0.06;
            k.dedupe = 0;
        }
        uint32_t budget = (uint32_t)((uint64_t)p->budget_ms * per[ph] / (p->orders ? p->orders : 1));
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        for (size_t i = 0; i < per[ph]; i++) {
            int o = gen_order(g, 0), tok, idem;
            if (o < 0 || gen_order_extras(g, &p->client, o, &tok, &idem) < 0)
                return -1;
            int copies = (int)rng_range(&g->rng, p->min_copies, p->max_copies);
            uint32_t start = gen_spread(i, per[ph], budget);
            if (rng_chance(&g->rng, p->concurrent_share)) {
                uint32_t at = start;
                for (int c = 0; c < copies; c++) {
                    sched_task *t = gen_task(g, TASK_PAY, o, at);
                    if (t == NULL)
                        return -1;
                    gen_client_fill(g, t, &p->client, tok, idem);
                    if (c > 0)
                        t->max_attempts = (uint8_t)rng_range(&g->rng, 1, 2);
                    t->style = (uint8_t)gen_style(g);
                    t->copy_index = (uint8_t)c;
                    t->copy_count = (uint8_t)copies;
                    at += (uint32_t)rng_range(&g->rng, 0, p->max_offset_ms);
                }
            } else {
                sched_task *t = gen_task(g, TASK_BURST, o, start);
                if (t == NULL)
                    return -1;
                gen_client_fill(g, t, &p->client, tok, idem);
                t->copies = (uint8_t)copies;
                t->copy_count = (uint8_t)copies;
                t->gap_ms = (uint32_t)rng_range(&g->rng, 0, p->max_gap_ms);
            }
        }
    }
    return 0;
}

/* ---- retry-storm ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    long min_latency_ms, max_latency_ms;  /* gateway latency per phase */
    double timeout_after_charge_rate;
    double dup_share;                     /* a second impatient client of the same order */
    gen_client client;                    /* timeouts below the latency are set per phase */
} rs_params;

static void rs_defaults(rs_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->min_latency_ms = 200;
    p->max_latency_ms = 400;
    p->timeout_after_charge_rate = 0.08;
    p->dup_share = 0.2;
    p->client = (gen_client){.token_share = 0.4, .idem_share = 0.5, .poll_share = 0.4,
                             .retry_declined_share = 0.0, .min_attempts = 4, .max_attempts = 10,
                             .min_timeout_ms = 50, .max_timeout_ms = 150,
                             .min_backoff_ms = 30, .max_backoff_ms = 200};
}

static int gen_retry_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    rs_params params;
    rs_defaults(&params, orders, budget_ms);
    const rs_params *p = &params;
    static const char *const labels[2] = {"dedupe", "nodedupe"};
    size_t per[2] = {p->orders / 2, p->orders - p->orders / 2};
    for (int ph = 0; ph < 2; ph++) {
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        k.latency_ms = rng_range(&g->rng, p->min_latency_ms, p->max_latency_ms);
        k.jitter_ms = 100;
        k.timeout_after_charge_rate = p->timeout_after_charge_rate;
        k.dedupe = ph == 0;
        uint32_t budget = (uint32_t)((uint64_t)p->budget_ms * per[ph] / (p->orders ? p->orders : 1));
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        gen_client c = p->client;
        if ((long)c.max_timeout_ms > k.latency_ms - 30)
            c.max_timeout_ms = (uint32_t)(k.latency_ms - 30);
        if (c.min_timeout_ms > c.max_timeout_ms)
            c.min_timeout_ms = c.max_timeout_ms;
        gen_orders_spec spec = {.client = &c, .dup_share = p->dup_share, .step_ms = 20};
        if (gen_orders_with_clients(g, per[ph], budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- callback-storm ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    int phases;
    long min_copies, max_copies;          /* notify_copies */
    long min_notify_concurrency, max_notify_concurrency;
    long max_notify_delay_ms;
    double timeout_after_charge_rate;     /* phases after the first */
    double dup_share;
    gen_client client;
} cs_params;

static void cs_defaults(cs_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->phases = 2;
    p->min_copies = 2;
    p->max_copies = 10;
    p->min_notify_concurrency = 16;
    p->max_notify_concurrency = 64;
    p->max_notify_delay_ms = 10;
    p->timeout_after_charge_rate = 0.05;
    p->dup_share = 0.25;
    p->client = (gen_client){.token_share = 0.3, .idem_share = 0.3, .poll_share = 0.6,
                             .retry_declined_share = 0.0, .min_attempts = 3, .max_attempts = 6,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 100, .max_backoff_ms = 300};
}

static int gen_callback_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    cs_params params;
    cs_defaults(&params, orders, budget_ms);
    const cs_params *p = &params;
    for (int ph = 0; ph < p->phases; ph++) {
        size_t n = p->orders / (size_t)p->phases + ((size_t)ph < p->orders % (size_t)p->phases);
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        k.latency_ms = rng_range(&g->rng, 0, 20);
        k.jitter_ms = 10;
        k.notify_copies = rng_range(&g->rng, p->min_copies, p->max_copies);
        k.notify_concurrency = rng_range(&g->rng, p->min_notify_concurrency, p->max_notify_concurrency);
        k.notify_delay_ms = rng_range(&g->rng, 0, p->max_notify_delay_ms);
        k.notify_retry_ms = rng_range(&g->rng, 50, 300);
        k.timeout_after_charge_rate = ph == 0 ? 0.0 : p->timeout_after_charge_rate;
        k.latency_ms = ph == 0 ? k.latency_ms : rng_range(&g->rng, 20, 60);
        char label[32];
        snprintf(label, sizeof(label), "copies-%ld", k.notify_copies);
        uint32_t budget = (uint32_t)((uint64_t)p->budget_ms * n / (p->orders ? p->orders : 1));
        if (gen_phase(g, label, &k, budget, 0) < 0)
            return -1;
        gen_orders_spec spec = {.client = &p->client, .dup_share = p->dup_share, .jitter_ms = 3};
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- token-replay ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    int min_copies, max_copies;     /* one token, many requests of one order */
    int min_orders, max_orders;     /* one token, many orders */
    int expiry_probe;               /* try a token after its TTL (only if short) */
    gen_client client;
} tr_params;

static void tr_defaults(tr_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->min_copies = 3;
    p->max_copies = 8;
    p->min_orders = 2;
    p->max_orders = 6;
    p->expiry_probe = 1;
    p->client = (gen_client){.token_share = 1.0, .idem_share = 0.3, .poll_share = 0.5,
                             .retry_declined_share = 0.0, .min_attempts = 2, .max_attempts = 5,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 100, .max_backoff_ms = 300};
}

static sched_task *tr_pay(gen_ctx *g, const tr_params *p, int order, int token, uint32_t at)
{
    sched_task *t = gen_task(g, TASK_PAY, order, at);
    if (t != NULL)
        gen_client_fill(g, t, &p->client, token, rng_chance(&g->rng, p->client.idem_share));
    return t;
}

/* A new order and a token of its user: the order's index, or -1. */
static int tr_order_with_token(gen_ctx *g, int *tok)
{
    int o = gen_order(g, 0);
    if (o < 0)
        return -1;
    *tok = gen_token(g, g->s->orders[o].user_id);
    return *tok < 0 ? -1 : o;
}

/* Each group below returns the orders it made, or -1. */

/* Expiry: a fresh token presented after its TTL (skipped at run time
 * unless the service's TTL is short). */
static int tr_expiry(gen_ctx *g, const tr_params *p)
{
    int tok, o = tr_order_with_token(g, &tok);
    sched_task *t = o < 0 ? NULL : tr_pay(g, p, o, tok, 0);
    if (t == NULL)
        return -1;
    t->expect_expired = 1;
    t->max_attempts = 1;
    return 1;
}

/* One token, many concurrent requests of one order. */
static int tr_one_order(gen_ctx *g, const tr_params *p, uint32_t start)
{
    int tok, o = tr_order_with_token(g, &tok);
    if (o < 0)
        return -1;
    int copies = (int)rng_range(&g->rng, p->min_copies, p->max_copies);
    for (int c = 0; c < copies; c++) {
        sched_task *t = tr_pay(g, p, o, tok, start + (uint32_t)rng_range(&g->rng, 0, 3));
        if (t == NULL)
            return -1;
        t->copy_index = (uint8_t)c;
        t->copy_count = (uint8_t)copies;
    }
    return 1;
}

/* One token, many orders of its user: concurrently or one by one. */
static int tr_many_orders(gen_ctx *g, const tr_params *p, uint32_t start)
{
    int n = (int)rng_range(&g->rng, p->min_orders, p->max_orders);
    int64_t user = gen_user(g);
    int tok = gen_token(g, user);
    if (tok < 0)
        return -1;
    int sequential = rng_chance(&g->rng, 0.4);
    for (int c = 0; c < n; c++) {
        int o = sched_add_order(g->s, &g->rng, g->scenario, user, gen_amount(g), gen_style(g), 0);
        if (o < 0) {
            snprintf(g->err, g->errlen, "out of memory or too many orders");
            return -1;
        }
        uint32_t at = start + (sequential ? (uint32_t)c * 150u : (uint32_t)rng_range(&g->rng, 0, 3));
        if (tr_pay(g, p, o, tok, at) == NULL)
            return -1;
    }
    return n;
}

/* Another user's token, then its owner uses it. */
static int tr_foreign(gen_ctx *g, const tr_params *p, uint32_t start)
{
    int victim = gen_order(g, 0), thief = gen_order(g, 0);
    if (victim < 0 || thief < 0)
        return -1;
    int tok = gen_token(g, g->s->orders[victim].user_id);
    sched_task *t = tok < 0 ? NULL : tr_pay(g, p, thief, tok, start);
    if (t == NULL)
        return -1;
    t->max_attempts = 1;
    return tr_pay(g, p, victim, tok, start + 200) == NULL ? -1 : 2;
}

/* A made-up token. */
static int tr_made_up(gen_ctx *g, const tr_params *p, uint32_t start)
{
    int o = gen_order(g, 0);
    sched_task *t = o < 0 ? NULL : tr_pay(g, p, o, -1, start);
    if (t == NULL)
        return -1;
    t->token_use = TOK_UNKNOWN;
    t->max_attempts = 1;
    return 1;
}

static int gen_token_replay(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    tr_params params;
    tr_defaults(&params, orders, budget_ms);
    const tr_params *p = &params;
    sim_mock_knobs k;
    scenarios_mock_defaults(&k);
    k.latency_ms = rng_range(&g->rng, 10, 60);
    k.jitter_ms = 30;
    k.timeout_after_charge_rate = 0.03;
    if (gen_phase(g, "replay", &k, p->budget_ms, 0) < 0)
        return -1;
    size_t made = 0, groups = 0;
    size_t est_groups = p->orders / 3 + 1;
    int expiry_done = !p->expiry_probe;
    while (made < p->orders) {
        uint32_t start = gen_spread(groups < est_groups ? groups : est_groups - 1, est_groups,
                                    p->budget_ms);
        groups++;
        uint64_t kind = rng_below(&g->rng, 100);
        int n;
        if (!expiry_done)
            n = tr_expiry(g, p);
        else if (kind < 35)
            n = tr_one_order(g, p, start);
        else if (kind < 70)
            n = tr_many_orders(g, p, start);
        else if (kind < 85)
            n = tr_foreign(g, p, start);
        else
            n = tr_made_up(g, p, start);
        if (n < 0)
            return -1;
        expiry_done = 1;
        made += (size_t)n;
    }
    return 0;
}

/* ---- forged-callback ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    int max_forgeries;     /* per target */
    gen_client client;
} fc_params;

static void fc_defaults(fc_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->max_forgeries = 3;
    p->client = (gen_client){.token_share = 0.3, .idem_share = 0.3, .poll_share = 0.5,
                             .retry_declined_share = 0.0, .min_attempts = 3, .max_attempts = 5,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 100, .max_backoff_ms = 300};
}

/* The declined phase's orders: one client each, one POST, declines final.
 * *first gets the first one's index. */
static int fc_declined(gen_ctx *g, const fc_params *p, size_t n, uint32_t b, int *first)
{
    *first = -1;
    for (size_t i = 0; i < n; i++) {
        int o = gen_order(g, ORD_DECLINE | ORD_FORGE_TARGET), tok, idem;
        if (o < 0 || gen_order_extras(g, &p->client, o, &tok, &idem) < 0)
            return -1;
        if (*first < 0)
            *first = o;
        sched_task *t = gen_task(g, TASK_PAY, o, gen_spread(i, n, b));
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, &p->client, tok, idem);
        t->max_attempts = 1;
        t->retry_declined = 0;
    }
    return 0;
}

/* One forgery against target: its kind drawn (never-submitted targets
 * have their own kinds), a real paid order whose transaction id it may
 * replay, and a wrong fee when the kind wants one. */
static int fc_forgery(gen_ctx *g, int target, int never, int first_paid, size_t npaid,
                      uint32_t at)
{
    static const uint8_t decl_kinds[4] = {FORGE_BAD_SIGN, FORGE_WRONG_FEE, FORGE_REPLAY_TXN,
                                          FORGE_WRONG_MCH};
    static const uint8_t never_kinds[3] = {FORGE_UNKNOWN_ORDER, FORGE_BAD_SIGN, FORGE_REPLAY_TXN};
    sched_task *t = gen_task(g, TASK_FORGE, target, at);
    if (t == NULL)
        return -1;
    t->forge = never ? never_kinds[rng_below(&g->rng, 3)] : decl_kinds[rng_below(&g->rng, 4)];
    t->aux_order = first_paid + (int)rng_below(&g->rng, npaid);
    int64_t fen = g->s->orders[target].amount_fen;
    t->variant_fen = fen;
    if (t->forge == FORGE_WRONG_FEE)
        t->variant_fen = fen > 1 && rng_chance(&g->rng, 0.5) ? fen - rng_range(&g->rng, 1, fen - 1)
                                                            : fen + rng_range(&g->rng, 1, 500);
    t->timeout_ms = 5000;
    t->max_attempts = 1;
    t->patience_ms = GEN_PATIENCE_MS;
    return 0;
}

static int gen_forged_callback(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    fc_params params;
    fc_defaults(&params, orders, budget_ms);
    const fc_params *p = &params;
    size_t npaid = p->orders / 4 ? p->orders / 4 : 1;
    size_t ndecl = p->orders / 4 ? p->orders / 4 : 1;
    size_t nnever = p->orders > npaid + ndecl ? p->orders - npaid - ndecl : 1;
    uint32_t b = p->budget_ms / 3;
    sim_mock_knobs k;
    int first_paid, first_decl;
    gen_orders_spec paid = {.client = &p->client, .dup_share = -1};

    scenarios_mock_defaults(&k);
    if (gen_phase(g, "paid", &k, b, 0) < 0 || gen_orders_with_clients(g, npaid, b, &paid, &first_paid) < 0)
        return -1;
    scenarios_mock_defaults(&k);
    k.decline_rate = 1.0;
    if (gen_phase(g, "declined", &k, b, 0) < 0)
        return -1;
    /* Alone: nobody else's request is declined by it, and the forgeries
     * start only once every target's decline is known. */
    g->s->phases[g->s->nphases - 1].exclusive = 1;
    if (fc_declined(g, p, ndecl, b, &first_decl) < 0)
        return -1;
    scenarios_mock_defaults(&k);
    if (gen_phase(g, "forge", &k, b, 0) < 0)
        return -1;
    size_t ntargets = ndecl + nnever;
    for (size_t i = 0; i < ntargets; i++) {
        int never = i >= ndecl;
        int target = never ? gen_order(g, ORD_NEVER_SUBMITTED | ORD_FORGE_TARGET) : first_decl + (int)i;
        if (target < 0)
            return -1;
        int n = (int)rng_range(&g->rng, 1, p->max_forgeries);
        uint32_t start = gen_spread(i, ntargets, b);
        for (int f = 0; f < n; f++)
            if (fc_forgery(g, target, never, first_paid, npaid, start + (uint32_t)f * 2u) < 0)
                return -1;
    }
    return 0;
}

/* ---- order-mismatch ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    int max_variants;
    gen_client client;
} om_params;

static void om_defaults(om_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->max_variants = 4;
    p->client = (gen_client){.token_share = 0.4, .idem_share = 0.4, .poll_share = 0.5,
                             .retry_declined_share = 0.0, .min_attempts = 3, .max_attempts = 5,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 100, .max_backoff_ms = 300};
}

static int gen_order_mismatch(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    om_params params;
    om_defaults(&params, orders, budget_ms);
    const om_params *p = &params;
    sim_mock_knobs k;
    scenarios_mock_defaults(&k);
    k.latency_ms = rng_range(&g->rng, 0, 10);
    if (gen_phase(g, "mismatch", &k, p->budget_ms, 0) < 0)
        return -1;
    for (size_t i = 0; i < p->orders; i++) {
        int o = gen_order(g, ORD_MISMATCH), tok, idem;
        if (o < 0 || gen_order_extras(g, &p->client, o, &tok, &idem) < 0)
            return -1;
        sched_task *t = gen_task(g, TASK_MISMATCH, o, gen_spread(i, p->orders, p->budget_ms));
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, &p->client, tok, idem);
        t->copies = (uint8_t)rng_range(&g->rng, 1, p->max_variants);
        const sched_order *so = &g->s->orders[o];
        do
            t->variant_user = gen_user(g);
        while (t->variant_user == so->user_id);
        t->variant_fen = so->amount_fen < MONEY_MAX_FEN - 1000
                             ? so->amount_fen + rng_range(&g->rng, 1, 1000)
                             : so->amount_fen - rng_range(&g->rng, 1, 1000);
    }
    return 0;
}

/* ---- gateway-chaos ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    double dup_share;
    gen_client client;
} gc_params;

static void gc_defaults(gc_params *p, size_t orders, uint32_t budget_ms)
{
    p->orders = orders;
    p->budget_ms = budget_ms;
    p->dup_share = 0.15;
    p->client = (gen_client){.token_share = 0.3, .idem_share = 0.4, .poll_share = 0.5,
                             .retry_declined_share = 0.3, .min_attempts = 3, .max_attempts = 8,
                             .min_timeout_ms = 8000, .max_timeout_ms = 10000,
                             .min_backoff_ms = 50, .max_backoff_ms = 300};
}

static int gen_gateway_chaos(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    gc_params params;
    gc_defaults(&params, orders, budget_ms);
    const gc_params *p = &params;
    static const char *const labels[3] = {"errors-declines", "resets-latency", "mix"};
    for (int ph = 0; ph < 3; ph++) {
        size_t n = p->orders / 3 + ((size_t)ph < p->orders % 3);
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        switch (ph) {
        case 0:
            k.error_rate = 0.25;
            k.decline_rate = 0.25;
            k.latency_ms = 5;
            break;
        case 1:
            k.reset_rate = 0.2;
            k.latency_ms = rng_range(&g->rng, 50, 200);
            k.jitter_ms = 200;
            break;
        default:
            k.error_rate = 0.1;
            k.decline_rate = 0.1;
            k.reset_rate = 0.1;
            k.timeout_after_charge_rate = 0.05;
            k.latency_ms = 20;
            k.jitter_ms = 60;
            k.dedupe = (int)rng_chance(&g->rng, 0.5);
        }
        uint32_t budget = (uint32_t)((uint64_t)p->budget_ms * n / (p->orders ? p->orders : 1));
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        gen_orders_spec spec = {.client = &p->client, .dup_share = p->dup_share, .step_ms = 2};
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- crash ---- */

typedef struct {
    size_t orders;
    uint32_t budget_ms;
    uint32_t chaos_every_ms;  /* the chaos command's period */
    double dup_share;
    gen_client client;
} cr_params;

static void cr_defaults(cr_params *p, size_t orders, uint32_t budget_ms, double chaos_every_s)
{
    p->orders = orders;
    p->chaos_every_ms = (uint32_t)(chaos_every_s * 1000.0);
    uint32_t min_budget = (uint32_t)(chaos_every_s * 2500.0);
    p->budget_ms = budget_ms > min_budget ? budget_ms : min_budget;
    p->dup_share = 0.2;
    p->client = (gen_client){.token_share = 0.3, .idem_share = 0.5, .poll_share = 0.5,
                             .retry_declined_share = 0.2, .min_attempts = 8, .max_attempts = 12,
                             .min_timeout_ms = 6000, .max_timeout_ms = 8000,
                             .min_backoff_ms = 200, .max_backoff_ms = 600,
                             .patience_ms = 20000};
}

/* The chaos command every chaos_every_ms, each run's action drawn (kill a
 * service process twice as often as a Redis or mock restart), until well
 * past the budget: clients of the phase may outlive it, and the runs still
 * planned when its last client is done are not made. */
static int cr_chaos_plan(gen_ctx *g, const cr_params *p)
{
    static const sched_chaos_action mix[4] = {CHAOS_KILL_WORKER, CHAOS_KILL_WORKER,
                                              CHAOS_RESTART_REDIS, CHAOS_RESTART_MOCK};
    uint32_t every = p->chaos_every_ms ? p->chaos_every_ms : 5000;
    uint32_t runs = p->budget_ms / every + 6;
    for (uint32_t k = 1; k <= runs; k++)
        if (sched_add_chaos(g->s, mix[rng_below(&g->rng, 4)], k * every) < 0) {
            snprintf(g->err, g->errlen, "out of memory");
            return -1;
        }
    return 0;
}

static int gen_crash(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    cr_params params;
    cr_defaults(&params, orders, budget_ms, plan->chaos_every_s);
    const cr_params *p = &params;
    sim_mock_knobs k;
    scenarios_mock_defaults(&k);
    k.latency_ms = rng_range(&g->rng, 10, 40);
    k.jitter_ms = 20;
    k.timeout_after_charge_rate = 0.02;
    if (gen_phase(g, "crash", &k, p->budget_ms, 1) < 0)
        return -1;
    gen_orders_spec spec = {.client = &p->client, .dup_share = p->dup_share, .step_ms = 3};
    if (gen_orders_with_clients(g, p->orders, p->budget_ms, &spec, NULL) < 0)
        return -1;
    return cr_chaos_plan(g, p);
}

/* ---- ping ---- */

static int gen_ping(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    sim_mock_knobs k;
    int workers = plan->concurrency > 0 ? plan->concurrency : 1;
    scenarios_mock_defaults(&k);
    if (gen_phase(g, "ping", &k, budget_ms ? budget_ms : 3000, 0) < 0)
        return -1;
    for (int w = 0; w < workers; w++) {
        sched_task *t = gen_task(g, TASK_PING, -1, 0);
        if (t == NULL)
            return -1;
        t->timeout_ms = 5000;
    }
    return 0;
}

/* ---- the mix ---- */

/* The table of generators: each takes its share of orders and time, fills
 * its scenario's parameter struct with the defaults for that share and
 * generates. */
typedef int (*sc_generator)(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms);

static int gen_nemesis(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    nm_params p;
    /* budget_ms unused: its length follows the service's windows */
    nemesis_defaults(&p, orders, plan->duration_s, plan->chaos, plan->windows);
    return nemesis_generate(g, &p);
}

static const sc_generator sc_generators[SC_COUNT] = {
    [SC_DOUBLE_CLICK] = gen_double_click,       [SC_RETRY_STORM] = gen_retry_storm,
    [SC_CALLBACK_STORM] = gen_callback_storm,   [SC_TOKEN_REPLAY] = gen_token_replay,
    [SC_FORGED_CALLBACK] = gen_forged_callback, [SC_ORDER_MISMATCH] = gen_order_mismatch,
    [SC_GATEWAY_CHAOS] = gen_gateway_chaos,     [SC_CRASH] = gen_crash,
    [SC_NEMESIS] = gen_nemesis,                 [SC_PING] = gen_ping,
    [SC_PAYER] = gen_payer,                     [SC_PAYER_EDGE] = gen_payer_edge,
    [SC_REFUNDS] = gen_refunds,                 [SC_V3_ATTACKS] = gen_v3_attacks,
};

/* The flags that shape the schedule (and, with the nemesis, the windows
 * it aims at), for the digest. */
void scenarios_params(const sim_plan *plan, char *out, size_t outlen)
{
    char wtext[160] = "";
    if (plan->mask & (1u << SC_NEMESIS)) {
        sim_windows w;
        if (plan->windows != NULL)
            w = *plan->windows;
        else
            windows_defaults(&w);
        windows_describe(&w, wtext, sizeof(wtext));
    }
    snprintf(out, outlen,
             "mask=%u orders=%zu duration_ms=%llu concurrency=%d chaos=%d chaos_every_ms=%llu%s%s",
             plan->mask, plan->orders, (unsigned long long)(plan->duration_s * 1000.0),
             plan->concurrency, plan->chaos,
             (unsigned long long)(plan->chaos ? plan->chaos_every_s * 1000.0 : 0),
             wtext[0] ? " windows: " : "", wtext);
}

int scenarios_build(sim_schedule *s, const sim_plan *plan, char *err, size_t errlen)
{
    /* Orders are shared by weight; time too, except for the nemesis, whose
     * length follows the service's windows. */
    unsigned wsum = 0, osum = 0;
    int last_order_sc = -1;
    for (int sc = 0; sc < SC_COUNT; sc++)
        if (plan->mask & (1u << sc)) {
            wsum += sc == SC_NEMESIS ? 0 : sc_weight[sc];
            osum += sc == SC_PING ? 0 : sc_weight[sc];
            last_order_sc = sc == SC_PING ? last_order_sc : sc;
        }
    if (plan->mask == 0) {
        snprintf(err, errlen, "no scenario selected");
        return -1;
    }
    scenarios_params(plan, s->params, sizeof(s->params));
    size_t given = 0;
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!(plan->mask & (1u << sc)))
            continue;
        gen_ctx g;
        memset(&g, 0, sizeof(g));
        g.s = s;
        g.scenario = sc;
        g.override = plan->mock_override;
        g.client = plan->client;
        g.err = err;
        g.errlen = errlen;
        uint64_t st = s->seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(sc + 1));
        rng_seed(&g.rng, rng_splitmix64(&st));
        g.seed_state = rng_splitmix64(&st);

        uint32_t budget = wsum ? (uint32_t)(plan->duration_s * 1000.0 * sc_weight[sc] / wsum) : 0;
        size_t orders = 0;
        if (sc != SC_PING) {
            orders = sc == last_order_sc ? (plan->orders > given ? plan->orders - given : 0)
                                         : plan->orders * sc_weight[sc] / osum;
            given += orders;
            if (orders < 4)
                orders = 4;
        }
        if (sc_generators[sc](&g, plan, orders, budget) < 0)
            return -1;
    }
    sched_sort_tasks(s);
    sched_mark_barriers(s);
    return 0;
}
