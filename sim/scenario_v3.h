/* scenario_v3 - the `v3-attacks` scenario's generator (--gateway v3 only):
 * APIv3 payment notifications that must change nothing, sent to the
 * service's public door beside the mock's genuine ones, and the mock's
 * platform key rotated between two of its phases (scenario_v3.c says how;
 * forge_v3.h builds the notifications). */
#ifndef IDEMPAY_SIM_SCENARIO_V3_H
#define IDEMPAY_SIM_SCENARIO_V3_H

#include "gen.h"

/* Appends the scenario's phases, orders and tasks. 0 or -1 (err set). */
int gen_v3_attacks(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms);

#endif
