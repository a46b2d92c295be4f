/* gen.c - the shared draws of the scenario generators (see gen.h). */
#include "gen.h"

#include <stdio.h>

#include "money.h"

int64_t gen_user(gen_ctx *g)
{
    if (rng_chance(&g->rng, 0.05))
        return rng_range(&g->rng, (int64_t)1 << 62, INT64_MAX);
    return rng_range(&g->rng, 1, (int64_t)1 << 40);
}

int64_t gen_amount(gen_ctx *g)
{
    switch (rng_below(&g->rng, 10)) {
    case 0:
    case 1:
    case 2:
    case 3:
        return rng_range(&g->rng, 1, 99999);
    case 4:
    case 5:
    case 6:
        return rng_range(&g->rng, 1, 500) * 100;
    case 7:
    case 8:
        return rng_range(&g->rng, 1, 9999) * 10;
    default:
        return rng_range(&g->rng, 1, MONEY_MAX_FEN);
    }
}

int gen_style(gen_ctx *g)
{
    return rng_chance(&g->rng, 0.5) ? AMT_SHORT : AMT_FIXED2;
}

int gen_order(gen_ctx *g, unsigned flags)
{
    int64_t user = gen_user(g), fen = gen_amount(g);
    int idx = sched_add_order(g->s, &g->rng, g->scenario, user, fen, gen_style(g), flags);
    if (idx < 0)
        snprintf(g->err, g->errlen, "out of memory or too many orders");
    return idx;
}

int64_t gen_draw(gen_ctx *g, gen_range r)
{
    return rng_range(&g->rng, r.lo, r.hi);
}

void gen_gateway_knobs(gen_ctx *g, const gen_gateway *gw, sim_mock_knobs *k)
{
    scenarios_mock_defaults(k);
    k->latency_ms = gen_draw(g, gw->latency_ms);
    k->jitter_ms = gw->jitter_ms;
    k->timeout_after_charge_rate = gw->late_rate;
}

int gen_phase(gen_ctx *g, const char *label, sim_mock_knobs *k, uint32_t budget_ms, int chaos)
{
    char cfg[SCHED_MOCK_CONFIG_MAX];
    k->seed = (long long)(rng_splitmix64(&g->seed_state) >> 1);
    if (scenarios_mock_json(k, g->override, cfg, sizeof(cfg), g->err, g->errlen) < 0)
        return -1;
    if (sched_begin_phase(g->s, g->scenario, label, cfg, budget_ms, chaos) < 0) {
        snprintf(g->err, g->errlen, "out of memory");
        return -1;
    }
    return 0;
}

int gen_gateway_phase(gen_ctx *g, const char *label, const gen_gateway *gw, uint32_t budget_ms)
{
    sim_mock_knobs k;
    gen_gateway_knobs(g, gw, &k);
    return gen_phase(g, label, &k, budget_ms, 0);
}

sched_task *gen_task(gen_ctx *g, sched_task_kind kind, int order, uint32_t start_ms)
{
    sched_task *t = sched_add_task(g->s, kind);
    if (t == NULL) {
        snprintf(g->err, g->errlen, "out of memory");
        return NULL;
    }
    t->order = order;
    t->start_ms = start_ms;
    t->style = order >= 0 ? g->s->orders[order].style : AMT_FIXED2;
    t->jitter_seed = rng_splitmix64(&g->seed_state);
    return t;
}

int gen_token(gen_ctx *g, int64_t user)
{
    int t = sched_add_token(g->s, g->scenario, user);
    if (t < 0)
        snprintf(g->err, g->errlen, "out of memory");
    return t;
}

uint32_t gen_spread(size_t i, size_t n, uint32_t budget_ms)
{
    return n ? (uint32_t)((uint64_t)budget_ms * i / n) : 0;
}

size_t gen_part(size_t total, int parts, int part)
{
    return total / (size_t)parts + ((size_t)part < total % (size_t)parts);
}

uint32_t gen_part_budget(uint32_t budget_ms, size_t n, size_t orders)
{
    return (uint32_t)((uint64_t)budget_ms * n / (orders ? orders : 1));
}

int gen_two_parts(gen_ctx *g, size_t orders, uint32_t budget_ms, gen_part_fn first,
                  gen_part_fn second)
{
    size_t third = orders / 3;
    uint32_t b1 = budget_ms * 2 / 3;
    if (first(g, orders - third, b1) < 0)
        return -1;
    return second(g, third, budget_ms - b1);
}

gen_client gen_client_apply(const gen_client *c, const gen_client_override *o)
{
    gen_client e = *c;
    unsigned set = o != NULL ? o->set : 0;
    if (set & GEN_CLIENT_TOKEN_SHARE)
        e.token_share = o->c.token_share;
    if (set & GEN_CLIENT_IDEM_SHARE)
        e.idem_share = o->c.idem_share;
    if (set & GEN_CLIENT_POLL_SHARE)
        e.poll_share = o->c.poll_share;
    if (set & GEN_CLIENT_RETRY_DECLINED)
        e.retry_declined_share = o->c.retry_declined_share;
    if (set & GEN_CLIENT_ATTEMPTS) {
        e.min_attempts = o->c.min_attempts;
        e.max_attempts = o->c.max_attempts;
    }
    if (set & GEN_CLIENT_TIMEOUT) {
        e.min_timeout_ms = o->c.min_timeout_ms;
        e.max_timeout_ms = o->c.max_timeout_ms;
    }
    if (set & GEN_CLIENT_BACKOFF) {
        e.min_backoff_ms = o->c.min_backoff_ms;
        e.max_backoff_ms = o->c.max_backoff_ms;
    }
    if (set & GEN_CLIENT_PATIENCE)
        e.patience_ms = o->c.patience_ms;
    return e;
}

/* Fills the client fields of t from c (with the scenario file's changes).
 * token is the order's slot or -1. */
void gen_client_fill(gen_ctx *g, sched_task *t, const gen_client *base, int token, int idem)
{
    gen_client eff = gen_client_apply(base, g->client);
    const gen_client *c = &eff;
    t->token = token;
    t->token_use = token >= 0 ? TOK_SLOT : TOK_NONE;
    t->idem = (uint8_t)idem;
    t->poll = (uint8_t)rng_chance(&g->rng, c->poll_share);
    t->retry_declined = (uint8_t)rng_chance(&g->rng, c->retry_declined_share);
    t->max_attempts = (uint8_t)rng_range(&g->rng, c->min_attempts, c->max_attempts);
    t->timeout_ms = (uint32_t)rng_range(&g->rng, c->min_timeout_ms, c->max_timeout_ms);
    t->backoff_ms = (uint32_t)rng_range(&g->rng, c->min_backoff_ms, c->max_backoff_ms);
    t->patience_ms = c->patience_ms ? c->patience_ms : GEN_PATIENCE_MS;
}

/* Token slot and key variant for a new order of a client. */
int gen_order_extras(gen_ctx *g, const gen_client *base, int order, int *token, int *idem)
{
    gen_client eff = gen_client_apply(base, g->client);
    const gen_client *c = &eff;
    *token = -1;
    *idem = rng_chance(&g->rng, c->idem_share) ? 1 : 0;
    if (rng_chance(&g->rng, c->token_share)) {
        *token = gen_token(g, g->s->orders[order].user_id);
        if (*token < 0)
            return -1;
    }
    return 0;
}

/* The clients of order o (token tok, key idem) released from start. */
static int gen_clients_of(gen_ctx *g, const gen_orders_spec *spec, int o, int tok, int idem,
                          uint32_t start)
{
    int single = spec->dup_share < 0;
    int clients = !single && rng_chance(&g->rng, spec->dup_share) ? 2 : 1;
    for (int c = 0; c < clients; c++) {
        uint32_t at = start + (uint32_t)c * spec->step_ms;
        if (spec->jitter_ms)
            at += (uint32_t)rng_range(&g->rng, 0, spec->jitter_ms);
        sched_task *t = gen_task(g, TASK_PAY, o, at);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, spec->client, tok, idem);
        if (!single) {
            t->copy_index = (uint8_t)c;
            t->copy_count = (uint8_t)clients;
        }
    }
    return 0;
}

int gen_orders_with_clients(gen_ctx *g, size_t n, uint32_t budget_ms, const gen_orders_spec *spec,
                            int *first)
{
    if (first != NULL)
        *first = -1;
    for (size_t i = 0; i < n; i++) {
        int o = gen_order(g, spec->order_flags), tok, idem;
        if (o < 0 || gen_order_extras(g, spec->client, o, &tok, &idem) < 0)
            return -1;
        if (first != NULL && *first < 0)
            *first = o;
        if (gen_clients_of(g, spec, o, tok, idem, gen_spread(i, n, budget_ms)) < 0)
            return -1;
    }
    return 0;
}
