/* scenario_clicks.c - the generators of one payment asked for many times:
 * `double-click` (copies of one order at once or back to back),
 * `retry-storm` (clients that time out before the gateway answers and ask
 * again) and `callback-storm` (the gateway's notification delivered many
 * times, concurrently). Each draws only from its own PRNG (gen.h). */
#include "scenarios.h"

#include <stdio.h>

#include "gen.h"
#include "gen_clients.h"

/* ---- double-click ---- */

static const struct {
    gen_range copies;
    double concurrent_share; /* copies as separate concurrent clients (else back to back) */
    gen_range offset_ms;     /* between concurrent copies */
    gen_range gap_ms;        /* between back-to-back copies */
    gen_client_kind_id client;
} dc_draws = {
    .copies = { 2, 10 },
    .concurrent_share = 0.6,
    .offset_ms = { 0, 5 },
    .gap_ms = { 0, 5 },
    .client = GK_DOUBLE_CLICKER,
};

/* Its two phases: a fast gateway that dedupes, a slow one that does not
 * (the odd order goes to the second). */
static const struct {
    const char *label;
    gen_gateway gateway;
    int dedupe;
} dc_phases[2] = {
    { "fast", { .latency_ms = { 5, 30 }, .jitter_ms = 20, .late_rate = 0.04 }, 1 },
    { "slow-nodedupe", { .latency_ms = { 60, 150 }, .jitter_ms = 80, .late_rate = 0.06 }, 0 },
};

/* The copies of order o (token tok, key idem) released from start: separate
 * concurrent clients or one client's burst. */
static int dc_copies(gen_ctx *g, int o, int tok, int idem, uint32_t start)
{
    const gen_client *cl = gen_client_kind(dc_draws.client);
    int copies = (int)gen_draw(g, dc_draws.copies);
    if (!rng_chance(&g->rng, dc_draws.concurrent_share)) {
        sched_task *t = gen_task(g, TASK_BURST, o, start);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, cl, tok, idem);
        t->copies = (uint8_t)copies;
        t->copy_count = (uint8_t)copies;
        t->gap_ms = (uint32_t)gen_draw(g, dc_draws.gap_ms);
        return 0;
    }
    uint32_t at = start;
    for (int c = 0; c < copies; c++) {
        sched_task *t = gen_task(g, TASK_PAY, o, at);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, cl, tok, idem);
        if (c > 0)
            t->max_attempts = (uint8_t)rng_range(&g->rng, 1, 2);
        t->style = (uint8_t)gen_style(g);
        t->copy_index = (uint8_t)c;
        t->copy_count = (uint8_t)copies;
        at += (uint32_t)gen_draw(g, dc_draws.offset_ms);
    }
    return 0;
}

int gen_double_click(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    for (int ph = 0; ph < 2; ph++) {
        size_t n = gen_part(orders, 2, 1 - ph);
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        sim_mock_knobs k;
        gen_gateway_knobs(g, &dc_phases[ph].gateway, &k);
        k.dedupe = dc_phases[ph].dedupe;
        if (gen_phase(g, dc_phases[ph].label, &k, budget, 0) < 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            int o = gen_order(g, 0), tok, idem;
            if (o < 0 ||
                gen_order_extras(g, gen_client_kind(dc_draws.client), o, &tok, &idem) < 0 ||
                dc_copies(g, o, tok, idem, gen_spread(i, n, budget)) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- retry-storm ---- */

static const struct {
    gen_gateway gateway; /* two phases: deduping, then not */
    double dup_share;    /* a second impatient client of the same order */
    gen_client_kind_id client;
} rs_draws = {
    .gateway = { .latency_ms = { 200, 400 }, .jitter_ms = 100, .late_rate = 0.08 },
    .dup_share = 0.2,
    .client = GK_IMPATIENT,
};

/* The client of a phase whose gateway answers after latency_ms: its
 * timeouts cut to 30 ms below that. */
static gen_client rs_client(long long latency_ms)
{
    gen_client c = *gen_client_kind(rs_draws.client);
    if ((long)c.max_timeout_ms > latency_ms - 30)
        c.max_timeout_ms = (uint32_t)(latency_ms - 30);
    if (c.min_timeout_ms > c.max_timeout_ms)
        c.min_timeout_ms = c.max_timeout_ms;
    return c;
}

int gen_retry_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    static const char *const labels[2] = { "dedupe", "nodedupe" };
    for (int ph = 0; ph < 2; ph++) {
        size_t n = gen_part(orders, 2, 1 - ph); /* the odd order to the second phase */
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        sim_mock_knobs k;
        gen_gateway_knobs(g, &rs_draws.gateway, &k);
        k.dedupe = ph == 0;
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        gen_client c = rs_client(k.latency_ms);
        gen_orders_spec spec = { .client = &c, .dup_share = rs_draws.dup_share, .step_ms = 20 };
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- callback-storm ---- */

static const struct {
    int phases;
    gen_gateway gateway; /* the first phase's; the later ones' latency and late rate: */
    gen_range later_latency_ms;
    double later_late_rate;
    gen_range copies; /* notify_copies */
    gen_range notify_concurrency, notify_delay_ms, notify_retry_ms;
    double dup_share;
    gen_client_kind_id client;
} cs_draws = {
    .phases = 2,
    .gateway = { .latency_ms = { 0, 20 }, .jitter_ms = 10 },
    .later_latency_ms = { 20, 60 },
    .later_late_rate = 0.05,
    .copies = { 2, 10 },
    .notify_concurrency = { 16, 64 },
    .notify_delay_ms = { 0, 10 },
    .notify_retry_ms = { 50, 300 },
    .dup_share = 0.25,
    .client = GK_NOTIFIED,
};

int gen_callback_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    for (int ph = 0; ph < cs_draws.phases; ph++) {
        size_t n = gen_part(orders, cs_draws.phases, ph);
        sim_mock_knobs k;
        gen_gateway_knobs(g, &cs_draws.gateway, &k);
        k.notify_copies = gen_draw(g, cs_draws.copies);
        k.notify_concurrency = gen_draw(g, cs_draws.notify_concurrency);
        k.notify_delay_ms = gen_draw(g, cs_draws.notify_delay_ms);
        k.notify_retry_ms = gen_draw(g, cs_draws.notify_retry_ms);
        if (ph > 0) {
            k.timeout_after_charge_rate = cs_draws.later_late_rate;
            k.latency_ms = gen_draw(g, cs_draws.later_latency_ms);
        }
        char label[32];
        snprintf(label, sizeof(label), "copies-%ld", (long)k.notify_copies);
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        if (gen_phase(g, label, &k, budget, 0) < 0)
            return -1;
        gen_orders_spec spec = { .client = gen_client_kind(cs_draws.client),
                                 .dup_share = cs_draws.dup_share,
                                 .jitter_ms = 3 };
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}
