/* scenario_edge.c - the `payer-edge` and `refunds` scenarios
 * (scenario_edge.h, docs/SIMULATOR.md). */
#include "scenario_edge.h"

#include <stdio.h>

#include "client_refund.h"
#include "gen_clients.h"
#include "payer.h"
#include "scenario_payer.h"

/* slow-close: every order's customer pays across the close (PB_ACROSS_CLOSE)
 * or reloads the page (PB_RELOAD), in turn; the gateway refuses a close for
 * EDGE_CLOSE_MIN_AGE_MS after the order's creation, so the service's close
 * (after the prepay's expiry and its margin) is refused at first, and a
 * payment confirmed meanwhile must be the order's. The orders start within
 * budget_ms; the phase lasts EDGE_CLOSE_TAIL_MS longer. */
static int pe_slow_close(gen_ctx *g, size_t n, uint32_t budget_ms)
{
    static const gen_gateway gw = { .latency_ms = { 0, 20 } };
    sim_mock_knobs k;
    char own[160];
    gen_gateway_knobs(g, &gw, &k);
    snprintf(own, sizeof(own),
             "{\"close_race_rate\":0,\"closeorder_min_age_ms\":%d,\"instant_charge\":false}",
             EDGE_CLOSE_MIN_AGE_MS);
    if (gen_payer_phase(g, "slow-close", own, &k, budget_ms + EDGE_CLOSE_TAIL_MS) < 0)
        return -1;
    g->s->phases[g->s->nphases - 1].outlast = 1; /* the min age covers every order's close */
    gen_client cl = *gen_client_kind(GK_CUSTOMER);
    cl.patience_ms = 30000; /* a customer who waits across the refused close */
    for (size_t i = 0; i < n; i++) {
        sched_task *t = gen_prepay_payer_task(g, &cl, i, n, budget_ms);
        if (t == NULL)
            return -1;
        t->payer = (uint8_t)(i % 2 == 0 ? PB_ACROSS_CLOSE : PB_RELOAD);
        if (t->payer == PB_ACROSS_CLOSE)
            t->pay_delay_ms = (uint32_t)rng_range(&g->rng, 5000, 9000);
    }
    return 0;
}

/* userpaying: every payment code is confirmed on the phone (USERPAYING),
 * 70 % of them paid in the end; clients time out first and poll or POST. */
static int pe_userpaying(gen_ctx *g, size_t n, uint32_t budget_ms)
{
    static const gen_gateway gw = { .latency_ms = { 5, 30 } };
    sim_mock_knobs k;
    gen_gateway_knobs(g, &gw, &k);
    if (gen_payer_phase(g, "userpaying", "{\"userpaying_pay_rate\":0.7,\"userpaying_rate\":1}", &k,
                        budget_ms) < 0)
        return -1;
    /* its USERPAYING covers every order, also those begun late (in the
     * default run its 0.6 s gave way to refunds' config before its orders,
     * behind the slow-close customers, had begun: none was USERPAYING) */
    g->s->phases[g->s->nphases - 1].outlast = 1;
    const gen_orders_spec spec = { .client = gen_client_kind(GK_PHONE_CONFIRM), .dup_share = -1 };
    return gen_orders_with_clients(g, n, budget_ms, &spec, NULL);
}

int gen_payer_edge(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    return gen_two_parts(g, orders, budget_ms, pe_slow_close, pe_userpaying);
}

/* One order's refund tasks: copy 0 pays, a second copy for the plans that
 * race two requests. */
static int rf_order(gen_ctx *g, const gen_client *cl, int plan, uint32_t at_ms)
{
    int o = gen_order(g, 0), tok, idem;
    int copies = plan == RP_TWICE || plan == RP_RACE ? 2 : 1;
    if (o < 0 || gen_order_extras(g, cl, o, &tok, &idem) < 0)
        return -1;
    for (int k = 0; k < copies; k++) {
        sched_task *t = gen_task(g, TASK_REFUND, o, at_ms);
        if (t == NULL)
            return -1;
        gen_client_fill(g, t, cl, k == 0 ? tok : -1, idem);
        t->copies = (uint8_t)plan;
        t->copy_index = (uint8_t)k;
        t->copy_count = (uint8_t)copies;
    }
    return 0;
}

int gen_refunds(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms)
{
    (void)plan;
    static const gen_gateway gw = { .latency_ms = { 0, 20 } };
    sim_mock_knobs k;
    char own[256];
    gen_gateway_knobs(g, &gw, &k);
    k.endpoints[EP_REFUND].latency_ms = rng_range(&g->rng, 0, 300);
    k.endpoints[EP_REFUND].error_rate = 0.1;
    snprintf(own, sizeof(own),
             "{\"refund_change_rate\":%.2f,\"refund_close_rate\":%.2f,\"refund_delay_ms\":%ld,"
             "\"refund_notenough_rate\":%.2f}",
             0.1 + rng_unit(&g->rng) * 0.1, 0.15 + rng_unit(&g->rng) * 0.1,
             (long)rng_range(&g->rng, 300, 1500), 0.1 + rng_unit(&g->rng) * 0.1);
    if (gen_payer_phase(g, "refunds", own, &k, budget_ms) < 0)
        return -1;
    const gen_client *cl = gen_client_kind(GK_REFUNDER);
    for (size_t i = 0; i < orders; i++)
        if (rf_order(g, cl, (int)(i % RP_COUNT), gen_spread(i, orders, budget_ms)) < 0)
            return -1;
    return 0;
}
