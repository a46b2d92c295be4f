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

int gen_gateway_chaos(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    static const char *const labels[3] = { "errors-declines", "resets-latency", "mix" };
    for (int ph = 0; ph < 3; ph++) {
        size_t n = gen_part(orders, 3, ph);
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
        uint32_t budget = gen_part_budget(budget_ms, n, orders);
        if (gen_phase(g, labels[ph], &k, budget, 0) < 0)
            return -1;
        const gen_orders_spec spec = { .client = gen_client_kind(GK_DECLINE_RETRY),
                                       .dup_share = 0.15,
                                       .step_ms = 2 };
        if (gen_orders_with_clients(g, n, budget, &spec, NULL) < 0)
            return -1;
    }
    return 0;
}

/* ---- crash ---- */

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
    scenarios_mock_defaults(&k);
    k.latency_ms = rng_range(&g->rng, 10, 40);
    k.jitter_ms = 20;
    /* charges whose reply is withheld (the service waits its gateway
     * timeout): a kill lands while a worker is inside the gateway call (at
     * 2 % the default run's two kills in the phase met none, and a
     * transaction held across the call survived it) */
    k.timeout_after_charge_rate = 0.15;
    if (gen_phase(g, "crash", &k, budget, 1) < 0)
        return -1;
    const gen_orders_spec spec = { .client = gen_client_kind(GK_CRASH_SURVIVOR),
                                   .dup_share = 0.2,
                                   .step_ms = 3 };
    if (gen_orders_with_clients(g, orders, budget, &spec, NULL) < 0)
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
