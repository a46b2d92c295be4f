/* scenario_v3 - the `v3-attacks` scenario's generator (--gateway v3 only):
 * APIv3 payment notifications that must change nothing, sent to the
 * service's public door beside the mock's genuine ones, and the mock's
 * platform key rotated between two of its phases (scenario_v3.c says how;
 * forge_v3.h builds the notifications). */
#ifndef IDEMPAY_SIM_SCENARIO_V3_H
#define IDEMPAY_SIM_SCENARIO_V3_H

#include "gen.h"

/* gen_v3_attacks, the generator, is declared from its row of
 * scenario_table.h (scenarios.h): it appends the scenario's phases, orders
 * and tasks; 0 or -1 (err set). */

#endif
