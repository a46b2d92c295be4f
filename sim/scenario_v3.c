/* scenario_v3.c - the `v3-attacks` scenario (scenario_v3.h; docs/SIMULATOR.md).
 *
 * Phase `v3-declined` (alone; the gateway declines every payment): payment-
 * code orders, one POST each, whose decline is final: the targets, with
 * orders no client ever submits.
 * Phase `v3-forge` (the mock's first platform key signs): NATIVE/JSAPI
 * customers who pay once (genuine v3 notifications), and against every
 * target one or two APIv3 notifications of its payment signed with the
 * first platform key, each with one defect (FORGE_V3_*, in turn from a
 * drawn start, so every kind is sent from 7 forgeries on).
 * Phase `v3-rotated` (v3_platform_rotation 2: the mock's second key signs,
 * its certificate new to the service): more customers who pay once, whose
 * notifications the service accepts only after fetching /v3/certificates
 * again, and the same forgeries signed with the second key.
 * In both, the forgeries start 2 s into the phase (V3_FORGE_DELAY_MS).
 * forged_callback_no_effect judges the targets (none may end PAID or
 * exist); the customers' payments are judged like every other's. */
#include "scenario_v3.h"

#include "scenarios.h"

#include "gen_clients.h"
#include "payer.h"
#include "scenario_payer.h"

#define V3_KINDS (FORGE_KIND_COUNT - FORGE_V3_STALE)
/* The forgeries of a phase wait this long after its start, while its
 * customers' orders make the service fetch the platform certificates (at
 * start, and after the rotation): it fetches them at most once a second a
 * process (GW3_REFRESH_MIN_MS), so a forgery sent at once, after a
 * wrong-serial one, could be refused for its serial before the check it
 * is meant for. The two phases last at least V3_PHASE_MIN_MS. */
#define V3_FORGE_DELAY_MS 2000u
#define V3_PHASE_MIN_MS 4000u

/* n customers of the current phase who pay once. 0 or -1. */
static int v3_payers(gen_ctx *g, size_t n, uint32_t budget_ms)
{
    for (size_t i = 0; i < n; i++) {
        sched_task *t = gen_prepay_payer_task(g, gen_client_kind(GK_CUSTOMER), i, n, budget_ms);
        if (t == NULL)
            return -1;
        t->payer = PB_ONCE;
    }
    return 0;
}

/* One or two forgeries against each of the ntargets targets from first
 * (the never-submitted ones follow the declined ones), signed with
 * platform key pair, released from delay_ms on; *kind walks the
 * FORGE_V3_* kinds. 0 or -1. */
static int v3_forgeries(gen_ctx *g, int first, size_t ntargets, int pair, unsigned *kind,
                        uint32_t delay_ms, uint32_t budget_ms)
{
    for (size_t i = 0; i < ntargets; i++) {
        int n = (int)rng_range(&g->rng, 1, 2);
        uint32_t start = delay_ms + gen_spread(i, ntargets, budget_ms);
        for (int f = 0; f < n; f++) {
            sched_task *t = gen_task(g, TASK_FORGE, first + (int)i, start + (uint32_t)f * 2u);
            if (t == NULL)
                return -1;
            t->forge = (uint8_t)(FORGE_V3_STALE + (*kind)++ % V3_KINDS);
            t->aux_order = pair;
            t->variant_fen = g->s->orders[first + (int)i].amount_fen;
            t->timeout_ms = 5000;
            t->max_attempts = 1;
            t->patience_ms = GEN_PATIENCE_MS;
        }
    }
    return 0;
}

int gen_v3_attacks(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    (void)plan;
    size_t ndecl = orders / 4 > 2 ? orders / 4 : 2, nnever = orders / 8 > 1 ? orders / 8 : 1;
    size_t npay = orders > ndecl + nnever + 4 ? orders - ndecl - nnever : 4;
    uint32_t b = budget_ms / 3, bf = b > V3_PHASE_MIN_MS ? b : V3_PHASE_MIN_MS;
    uint32_t br = budget_ms - 2 * b > V3_PHASE_MIN_MS ? budget_ms - 2 * b : V3_PHASE_MIN_MS;
    unsigned kind = (unsigned)rng_below(&g->rng, V3_KINDS);
    const gen_orders_spec declined = { .client = gen_client_kind(GK_ONE_POST),
                                       .order_flags = ORD_DECLINE | ORD_FORGE_TARGET,
                                       .dup_share = -1 };
    sim_mock_knobs k;
    int first = -1;

    scenarios_mock_defaults(&k);
    k.decline_rate = 1.0;
    if (gen_payer_phase(g, "v3-declined", "{\"v3_platform_rotation\":0}", &k, b) < 0)
        return -1;
    /* alone: nobody else's payment is declined by it, and the forgeries
     * start once every target's decline is known */
    g->s->phases[g->s->nphases - 1].exclusive = 1;
    if (gen_orders_with_clients(g, ndecl, b, &declined, &first) < 0)
        return -1;
    for (size_t i = 0; i < nnever; i++)
        if (gen_order(g, ORD_NEVER_SUBMITTED | ORD_FORGE_TARGET) < 0)
            return -1;
    static const char forge_own[] = "{\"instant_charge\":false,\"v3_platform_rotation\":0}";
    static const char rotated_own[] = "{\"instant_charge\":false,\"v3_platform_rotation\":2}";
    scenarios_mock_defaults(&k);
    if (gen_payer_phase(g, "v3-forge", forge_own, &k, bf) < 0 || v3_payers(g, npay / 2, bf) < 0 ||
        v3_forgeries(g, first, ndecl + nnever, 0, &kind, V3_FORGE_DELAY_MS,
                     bf - V3_FORGE_DELAY_MS) < 0)
        return -1;
    scenarios_mock_defaults(&k);
    if (gen_payer_phase(g, "v3-rotated", rotated_own, &k, br) < 0 ||
        v3_payers(g, npay - npay / 2, br) < 0 ||
        v3_forgeries(g, first, ndecl + nnever, 1, &kind, V3_FORGE_DELAY_MS,
                     br - V3_FORGE_DELAY_MS) < 0)
        return -1;
    return 0;
}
