/* scenario_payer.c - the `payer` scenario (scenario_payer.h): the real
 * flows' customer (docs/FLOWS.md, docs/SIMULATOR.md).
 *
 * Phase `prepay`: NATIVE and JSAPI orders (half each, drawn), each with one
 * TASK_PAYER client whose customer pays once, twice, slowly, after the
 * close, a stale code, never, or into the close (in turn, so every
 * behaviour is present from 7 orders on); the mock's close_race_rate makes
 * half the payments that are being confirmed when the close comes land
 * anyway, for the service to refund. Phase `micropay`: payment-code clients (MICROPAY) whose
 * timeouts are shorter than the customer's confirmation on the phone
 * (USERPAYING), retrying and polling. Knobs a mock does not know are cut
 * by mock_admin before they are sent (MOCK_OPTIONAL_KNOBS). */
#include "scenario_payer.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "gen_clients.h"
#include "payer.h"

/* The phase's own knobs, merged under the plan's override (which wins).
 * Returns 0 or -1 (err set). */
static int py_override(gen_ctx *g, const char *own, char *out, size_t len)
{
    json_t *o = json_loads(own, 0, NULL);
    json_t *over = g->override != NULL ? json_loads(g->override, 0, NULL) : NULL;
    int rc = -1;
    if (json_is_object(o) && (over == NULL || json_object_update(o, over) == 0)) {
        size_t n = json_dumpb(o, out, len - 1, JSON_COMPACT | JSON_SORT_KEYS);
        if (n > 0 && n < len) {
            out[n] = '\0';
            rc = 0;
        }
    }
    if (rc < 0)
        snprintf(g->err, g->errlen, "payer: the mock config does not fit");
    json_decref(o);
    json_decref(over);
    return rc;
}

int gen_payer_phase(gen_ctx *g, const char *label, const char *own, sim_mock_knobs *k,
                    uint32_t budget_ms)
{
    char merged[512];
    const char *saved = g->override;
    if (py_override(g, own, merged, sizeof(merged)) < 0)
        return -1;
    g->override = merged;
    int rc = gen_phase(g, label, k, budget_ms, 0);
    g->override = saved;
    return rc;
}

sched_task *gen_prepay_payer_task(gen_ctx *g, const gen_client *cl, size_t i, size_t n,
                                  uint32_t budget_ms)
{
    int o = gen_order(g, 0), tok, idem;
    sched_task *t = NULL;

    if (o >= 0 && gen_order_extras(g, cl, o, &tok, &idem) == 0)
        t = gen_task(g, TASK_PAYER, o, gen_spread(i, n, budget_ms));
    if (t != NULL) {
        gen_client_fill(g, t, cl, -1, idem);
        t->flow = (uint8_t)(rng_chance(&g->rng, 0.5) ? FLOW_JSAPI : FLOW_NATIVE);
    }
    return t;
}

static int py_prepay(gen_ctx *g, size_t n, uint32_t budget_ms)
{
    static const gen_gateway gw = { .latency_ms = { 0, 20 } };
    static const char own[] = "{\"close_race_rate\":0.5,\"instant_charge\":false}";
    sim_mock_knobs k;
    gen_gateway_knobs(g, &gw, &k);
    if (gen_payer_phase(g, "prepay", own, &k, budget_ms) < 0)
        return -1;
    const gen_client *cl = gen_client_kind(GK_CUSTOMER);
    for (size_t i = 0; i < n; i++) {
        sched_task *t = gen_prepay_payer_task(g, cl, i, n, budget_ms);
        if (t == NULL)
            return -1;
        t->payer = (uint8_t)(PB_ONCE + i % (PB_PAYER_COUNT - 1));
        if (t->payer == PB_LATE)
            t->pay_delay_ms = (uint32_t)rng_range(&g->rng, 200, 3000);
        else if (t->payer == PB_STALE)
            t->pay_delay_ms = (uint32_t)rng_range(&g->rng, 200, 2000); /* past the expiry */
        else if (t->payer == PB_INTO_CLOSE)
            t->pay_delay_ms = (uint32_t)rng_range(&g->rng, 5000, 9000); /* past the close */
    }
    return 0;
}

static int py_micropay(gen_ctx *g, size_t n, uint32_t budget_ms)
{
    static const gen_gateway gw = { .latency_ms = { 5, 40 }, .late_rate = 0.05 };
    sim_mock_knobs k;
    gen_gateway_knobs(g, &gw, &k);
    if (gen_payer_phase(g, "micropay", "{\"userpaying_rate\":0.5}", &k, budget_ms) < 0)
        return -1;
    const gen_orders_spec spec = { .client = gen_client_kind(GK_MICROPAY),
                                   .dup_share = 0.2,
                                   .step_ms = 50 };
    return gen_orders_with_clients(g, n, budget_ms, &spec, NULL);
}

int gen_payer(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    return gen_two_parts(g, orders, budget_ms, py_prepay, py_micropay);
}
