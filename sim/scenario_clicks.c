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
    int min_copies, max_copies;
    double concurrent_share; /* copies as separate concurrent clients (else back to back) */
    uint32_t max_offset_ms;  /* between concurrent copies */
    uint32_t max_gap_ms;     /* between back-to-back copies */
    gen_client_kind_id client;
} dc_draws = {
    .min_copies = 2,
    .max_copies = 10,
    .concurrent_share = 0.6,
    .max_offset_ms = 5,
    .max_gap_ms = 5,
    .client = GK_DOUBLE_CLICKER,
};

/* The copies of order o (token tok, key idem) released from start: separate
 * concurrent clients or one client's burst. */
static int dc_copies(gen_ctx *g, int o, int tok, int idem, uint32_t start)
{
    int copies = (int)rng_range(&g->rng, dc_draws.min_copies, dc_draws.max_copies);
    if (!rng_chance(&g->rng, dc_draws.concurrent_share)) {
        sched_task *t = gen_task(g, TASK_BURST, o, start);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, gen_client_kind(dc_draws.client), tok, idem);
        t->copies = (uint8_t)copies;
        t->copy_count = (uint8_t)copies;
        t->gap_ms = (uint32_t)rng_range(&g->rng, 0, dc_draws.max_gap_ms);
        return 0;
    }
    uint32_t at = start;
    for (int c = 0; c < copies; c++) {
        sched_task *t = gen_task(g, TASK_PAY, o, at);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, gen_client_kind(dc_draws.client), tok, idem);
        if (c > 0)
            t->max_attempts = (uint8_t)rng_range(&g->rng, 1, 2);
        t->style = (uint8_t)gen_style(g);
        t->copy_index = (uint8_t)c;
        t->copy_count = (uint8_t)copies;
        at += (uint32_t)rng_range(&g->rng, 0, dc_draws.max_offset_ms);
    }
    return 0;
}

int gen_double_click(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    static const char *const labels[2] = { "fast", "slow-nodedupe" };
    for (int ph = 0; ph < 2; ph++) {
        size_t n = gen_part(orders, 2, 1 - ph); /* the odd order to the second phase */
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
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
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
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
    long min_latency_ms, max_latency_ms; /* gateway latency per phase */
    double timeout_after_charge_rate;
    double dup_share;          /* a second impatient client of the same order */
    gen_client_kind_id client; /* timeouts below the latency are set per phase */
} rs_draws = {
    .min_latency_ms = 200,
    .max_latency_ms = 400,
    .timeout_after_charge_rate = 0.08,
    .dup_share = 0.2,
    .client = GK_IMPATIENT,
};

int gen_retry_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    static const char *const labels[2] = { "dedupe", "nodedupe" };
    for (int ph = 0; ph < 2; ph++) {
        size_t n = gen_part(orders, 2, 1 - ph); /* the odd order to the second phase */
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        k.latency_ms = rng_range(&g->rng, rs_draws.min_latency_ms, rs_draws.max_latency_ms);
        k.jitter_ms = 100;
        k.timeout_after_charge_rate = rs_draws.timeout_after_charge_rate;
        k.dedupe = ph == 0;
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        gen_client c = *gen_client_kind(rs_draws.client);
        if ((long)c.max_timeout_ms > k.latency_ms - 30)
            c.max_timeout_ms = (uint32_t)(k.latency_ms - 30);
        if (c.min_timeout_ms > c.max_timeout_ms)
            c.min_timeout_ms = c.max_timeout_ms;
        gen_orders_spec spec = { .client = &c, .dup_share = rs_draws.dup_share, .step_ms = 20 };
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- callback-storm ---- */

static const struct {
    int phases;
    long min_copies, max_copies; /* notify_copies */
    long min_notify_concurrency, max_notify_concurrency;
    long max_notify_delay_ms;
    double timeout_after_charge_rate; /* phases after the first */
    double dup_share;
    gen_client_kind_id client;
} cs_draws = {
    .phases = 2,
    .min_copies = 2,
    .max_copies = 10,
    .min_notify_concurrency = 16,
    .max_notify_concurrency = 64,
    .max_notify_delay_ms = 10,
    .timeout_after_charge_rate = 0.05,
    .dup_share = 0.25,
    .client = GK_NOTIFIED,
};

int gen_callback_storm(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    for (int ph = 0; ph < cs_draws.phases; ph++) {
        size_t n = gen_part(orders, cs_draws.phases, ph);
        sim_mock_knobs k;
        scenarios_mock_defaults(&k);
        k.latency_ms = rng_range(&g->rng, 0, 20);
        k.jitter_ms = 10;
        k.notify_copies = rng_range(&g->rng, cs_draws.min_copies, cs_draws.max_copies);
        k.notify_concurrency = rng_range(&g->rng, cs_draws.min_notify_concurrency,
                                         cs_draws.max_notify_concurrency);
        k.notify_delay_ms = rng_range(&g->rng, 0, cs_draws.max_notify_delay_ms);
        k.notify_retry_ms = rng_range(&g->rng, 50, 300);
        k.timeout_after_charge_rate = ph == 0 ? 0.0 : cs_draws.timeout_after_charge_rate;
        k.latency_ms = ph == 0 ? k.latency_ms : rng_range(&g->rng, 20, 60);
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
