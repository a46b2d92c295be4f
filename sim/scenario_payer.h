/* scenario_payer - the `payer` scenario's generator: NATIVE and JSAPI
 * orders paid (or not) by the customer through the mock's payer, and
 * payment-code (MICROPAY) clients facing USERPAYING and their own
 * timeouts (scenario_payer.c says how). */
#ifndef IDEMPAY_SIM_SCENARIO_PAYER_H
#define IDEMPAY_SIM_SCENARIO_PAYER_H

#include "gen.h"

/* Starts a phase labelled label with the knobs k and the mock knobs of
 * the JSON object own (which the generic knobs lack: close_race_rate ...),
 * the plan's --mock-config merged over them. 0 or -1 (err set). */
int gen_payer_phase(gen_ctx *g, const char *label, const char *own, sim_mock_knobs *k,
                    uint32_t budget_ms);

/* The i-th of n customers of a prepay phase: a new order, its token and
 * Idempotency-Key drawn for cl, a TASK_PAYER task spread over budget_ms,
 * NATIVE or JSAPI by a coin. The caller sets its payer behaviour. NULL on
 * failure (err set). */
sched_task *gen_prepay_payer_task(gen_ctx *g, const gen_client *cl, size_t i, size_t n,
                                  uint32_t budget_ms);

/* The generator gen_payer is declared by its row of scenario_table.h
 * (scenarios.h). */

#endif
