/* scenario_faults.c - the generators of a failing world: `gateway-chaos`
 * (the gateway's errors, declines, resets and latency), `crash` (the chaos
 * command kills service processes and restarts Redis and the mock mid-run),
 * `ping` (the service's plain liveness under the load) and `nemesis` (its
 * generator is nemesis.c: faults aimed at the service's windows). Each draws
 * only from its own PRNG (gen.h). */
#include "scenarios.h"

#include <stdio.h>

#include "gen.h"
#include "gen_clients.h"
#include "nemesis.h"

/* ---- gateway-chaos ---- */

/* Its three phases: errors and declines, resets and latency, a mix (whose
 * dedupe is drawn). */
static const struct {
    const char *label;
    gen_gateway gateway;
    double error_rate, decline_rate, reset_rate;
} gc_phases[3] = {
    { "errors-declines", { .latency_ms = { 5, 5 } }, 0.25, 0.25, 0.0 },
    { "resets-latency", { .latency_ms = { 50, 200 }, .jitter_ms = 200 }, 0.0, 0.0, 0.2 },
    { "mix", { .latency_ms = { 20, 20 }, .jitter_ms = 60, .late_rate = 0.05 }, 0.1, 0.1, 0.1 },
};

int gen_gateway_chaos(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    const gen_orders_spec spec = { .client = gen_client_kind(GK_DECLINE_RETRY),
                                   .dup_share = 0.15,
                                   .step_ms = 2 };
    for (int ph = 0; ph < 3; ph++) {
        size_t n = gen_part(orders, 3, ph);
        sim_mock_knobs k;
        gen_gateway_knobs(g, &gc_phases[ph].gateway, &k);
        k.error_rate = gc_phases[ph].error_rate;
        k.decline_rate = gc_phases[ph].decline_rate;
        k.reset_rate = gc_phases[ph].reset_rate;
        if (ph == 2)
            k.dedupe = (int)rng_chance(&g->rng, 0.5);
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        if (gen_phase(g, gc_phases[ph].label, &k, budget, 0) < 0 ||
            gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- crash ---- */

/* Its gateway: 15 % of the charges have their reply withheld (the service
 * waits its gateway timeout), so that a kill lands while a worker is inside
 * the gateway call (at 2 % the default run's two kills in the phase met
 * none, and a transaction held across the call survived it). */
static const gen_gateway cr_gateway = { .latency_ms = { 10, 40 },
                                        .jitter_ms = 20,
                                        .late_rate = 0.15 };

/* The chaos command every every_ms (the chaos command's period), each
 * run's action drawn (kill a service process twice as often as a Redis or
 * mock restart), until well past the budget: clients of the phase may
 * outlive it, and the runs still planned when its last client is done are
 * not made. */
static int cr_chaos_plan(gen_ctx *g, uint32_t every_ms, uint32_t budget_ms)
{
    static const sched_chaos_action mix[4] = { CHAOS_KILL_WORKER, CHAOS_KILL_WORKER,
                                               CHAOS_RESTART_REDIS, CHAOS_RESTART_MOCK };
    uint32_t every = every_ms ? every_ms : 5000;
    uint32_t runs = budget_ms / every + 6;
    for (uint32_t k = 1; k <= runs; k++)
        if (sched_add_chaos(g->s, mix[rng_below(&g->rng, 4)], k * every) < 0) {
            snprintf(g->err, g->errlen, "out of memory");
            return -1;
        }
    return 0;
}

/* One phase of at least 2.5 chaos periods. */
int gen_crash(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    uint32_t every_ms = (uint32_t)(plan->chaos_every_s * 1000.0);
    uint32_t min_budget = (uint32_t)(plan->chaos_every_s * 2500.0);
    uint32_t budget = budget_ms > min_budget ? budget_ms : min_budget;
    sim_mock_knobs k;
    gen_gateway_knobs(g, &cr_gateway, &k);
    const gen_orders_spec spec = { .client = gen_client_kind(GK_CRASH_SURVIVOR),
                                   .dup_share = 0.2,
                                   .step_ms = 3 };
    if (gen_phase(g, "crash", &k, budget, 1) < 0 ||
        gen_orders_with_clients(g, orders, budget, &spec, NULL) < 0)
        return -1;
    return cr_chaos_plan(g, every_ms, budget);
}

/* ---- ping ---- */

int gen_ping(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
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

/* ---- nemesis (nemesis.c) ---- */

/* budget_ms unused: the nemesis' length follows the service's windows. */
int gen_nemesis(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    nm_params p;
    nemesis_defaults(&p, orders, plan->duration_s, plan->chaos, plan->windows);
    return nemesis_generate(g, &p);
}
