/* scenario_misuse.c - the generators of requests that must change nothing:
 * `token-replay` (one payment token used again, for other orders, by
 * another user, made up, or after it expired), `forged-callback` (payment
 * notifications the gateway never sent) and `order-mismatch` (an order
 * number sent again with another amount or user). Each draws only from its
 * own PRNG (gen.h). */
#include "scenarios.h"

#include <stdio.h>

#include "gen.h"
#include "gen_clients.h"
#include "money.h"

/* ---- token-replay ---- */

typedef struct {
    gen_gateway gateway;
    gen_range copies; /* one token, many requests of one order */
    gen_range orders; /* one token, many orders */
    int expiry_probe; /* try a token after its TTL (only if short) */
    gen_client_kind_id client;
} tr_params;

static const tr_params tr_draws = {
    .gateway = { .latency_ms = { 10, 60 }, .jitter_ms = 30, .late_rate = 0.03 },
    .copies = { 3, 8 },
    .orders = { 2, 6 },
    .expiry_probe = 1,
    .client = GK_TOKEN_HOLDER,
};

static sched_task *tr_pay(gen_ctx *g, const tr_params *p, int order, int token, uint32_t at)
{
    const gen_client *cl = gen_client_kind(p->client);
    sched_task *t = gen_task(g, TASK_PAY, order, at);
    if (t != NULL)
        gen_client_fill(g, t, cl, token, rng_chance(&g->rng, cl->idem_share));
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
    int copies = (int)gen_draw(g, p->copies);
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
    int n = (int)gen_draw(g, p->orders);
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
        uint32_t at = start +
                      (sequential ? (uint32_t)c * 150u : (uint32_t)rng_range(&g->rng, 0, 3));
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

int gen_token_replay(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    const tr_params *p = &tr_draws;
    if (gen_gateway_phase(g, "replay", &p->gateway, budget_ms) < 0)
        return -1;
    size_t made = 0, groups = 0;
    size_t est_groups = orders / 3 + 1;
    int expiry_done = !p->expiry_probe;
    while (made < orders) {
        uint32_t start = gen_spread(groups < est_groups ? groups : est_groups - 1, est_groups,
                                    budget_ms);
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
    gen_range forgeries; /* per target */
    gen_client_kind_id client;
} fc_params;

static const fc_params fc_draws = {
    .forgeries = { 1, 3 },
    .client = GK_FORGERY_TARGET,
};

/* The declined phase's orders: one client each, one POST, declines final.
 * *first gets the first one's index. */
static int fc_declined(gen_ctx *g, const fc_params *p, size_t n, uint32_t b, int *first)
{
    *first = -1;
    for (size_t i = 0; i < n; i++) {
        int o = gen_order(g, ORD_DECLINE | ORD_FORGE_TARGET), tok, idem;
        if (o < 0 || gen_order_extras(g, gen_client_kind(p->client), o, &tok, &idem) < 0)
            return -1;
        if (*first < 0)
            *first = o;
        sched_task *t = gen_task(g, TASK_PAY, o, gen_spread(i, n, b));
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, gen_client_kind(p->client), tok, idem);
        t->max_attempts = 1;
        t->retry_declined = 0;
    }
    return 0;
}

/* One forgery against target: its kind drawn (never-submitted targets
 * have their own kinds), a real paid order whose transaction id it may
 * replay, and a wrong fee when the kind wants one. */
static int fc_forgery(gen_ctx *g, int target, int never, int first_paid, size_t npaid, uint32_t at)
{
    static const uint8_t decl_kinds[4] = { FORGE_BAD_SIGN, FORGE_WRONG_FEE, FORGE_REPLAY_TXN,
                                           FORGE_WRONG_MCH };
    static const uint8_t never_kinds[3] = { FORGE_UNKNOWN_ORDER, FORGE_BAD_SIGN, FORGE_REPLAY_TXN };
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

int gen_forged_callback(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    const fc_params *p = &fc_draws;
    size_t npaid = orders / 4 ? orders / 4 : 1;
    size_t ndecl = orders / 4 ? orders / 4 : 1;
    size_t nnever = orders > npaid + ndecl ? orders - npaid - ndecl : 1;
    uint32_t b = budget_ms / 3;
    sim_mock_knobs k;
    int first_paid, first_decl;
    gen_orders_spec paid = { .client = gen_client_kind(p->client), .dup_share = -1 };

    scenarios_mock_defaults(&k);
    if (gen_phase(g, "paid", &k, b, 0) < 0 ||
        gen_orders_with_clients(g, npaid, b, &paid, &first_paid) < 0)
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
        int target = never ? gen_order(g, ORD_NEVER_SUBMITTED | ORD_FORGE_TARGET)
                           : first_decl + (int)i;
        if (target < 0)
            return -1;
        int n = (int)gen_draw(g, p->forgeries);
        uint32_t start = gen_spread(i, ntargets, b);
        for (int f = 0; f < n; f++)
            if (fc_forgery(g, target, never, first_paid, npaid, start + (uint32_t)f * 2u) < 0)
                return -1;
    }
    return 0;
}

/* ---- order-mismatch ---- */

typedef struct {
    gen_gateway gateway;
    gen_range variants; /* the changed requests of an order */
    gen_client_kind_id client;
} om_params;

static const om_params om_draws = {
    .gateway = { .latency_ms = { 0, 10 } },
    .variants = { 1, 4 },
    .client = GK_MISMATCHER,
};

int gen_order_mismatch(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    const om_params *p = &om_draws;
    if (gen_gateway_phase(g, "mismatch", &p->gateway, budget_ms) < 0)
        return -1;
    for (size_t i = 0; i < orders; i++) {
        int o = gen_order(g, ORD_MISMATCH), tok, idem;
        if (o < 0 || gen_order_extras(g, gen_client_kind(p->client), o, &tok, &idem) < 0)
            return -1;
        sched_task *t = gen_task(g, TASK_MISMATCH, o, gen_spread(i, orders, budget_ms));
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, gen_client_kind(p->client), tok, idem);
        t->copies = (uint8_t)gen_draw(g, p->variants);
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
