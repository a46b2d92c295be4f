/* scenarios - the contract's scenarios as schedule generators, one row each
 * in scenario_table.h. Each scenario is one generator function; it draws
 * from its own PRNG (derived from the run seed and the scenario), appends
 * its phases (each with a mock gateway config), orders, tokens and client
 * tasks to the schedule. */
#ifndef IDEMPAY_SIM_SCENARIOS_H
#define IDEMPAY_SIM_SCENARIOS_H

#include <stddef.h>
#include <stdint.h>

#include "mock_knobs.h"
#include "schedule.h"
#include "windows.h"

typedef struct {
    unsigned mask;              /* bit (1u << sim_scenario) per scenario to run */
    size_t orders;              /* orders shared by the selected order scenarios */
    double duration_s;          /* traffic budget shared by the scenarios (0: no pacing) */
    int concurrency;            /* client workers (ping tasks, and recorded in the digest) */
    int chaos;                  /* a chaos command is configured */
    double chaos_every_s;       /* its period (crash lasts at least 2.5 periods) */
    const char *mock_override;  /* JSON object merged into every phase's mock config, or NULL */
    const sim_windows *windows; /* the service's windows the nemesis aims at (NULL: defaults) */
    const struct gen_client_override *client; /* a scenario file's client behaviour, applied
                                                 to every generator's clients (NULL: none) */
} sim_plan;

/* A generator: appends its scenario's phases, orders, tokens and tasks for
 * its share of the plan (orders, and budget_ms of traffic, 0: no pacing) to
 * g's schedule, drawing only from g's PRNG. 0, or -1 with a message in
 * g->err (out of memory, too many orders); what it added stays (the caller
 * frees the schedule). */
typedef struct gen_ctx gen_ctx;
typedef int (*sc_generator)(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms);

/* Every generator of SIM_SCENARIOS, declared from its row. */
#define SC_DECLARE_GENERATOR(id, name, code, weight, generate, flags)                              \
    int generate(gen_ctx *g, const sim_plan *plan, size_t orders, uint32_t budget_ms);
SIM_SCENARIOS(SC_DECLARE_GENERATOR)
#undef SC_DECLARE_GENERATOR

/* A scenario's weight in a mix: its share of the orders (SCF_NO_ORDERS:
 * none) and of the duration (SCF_OWN_LENGTH: none); 0 out of range. */
unsigned scenarios_weight(int scenario);
/* A scenario's SCF_* flags; 0 out of range. */
unsigned scenarios_flags(int scenario);

/* The mask of "all": every SCF_IN_ALL scenario, those that need a chaos
 * command only with one. */
unsigned scenarios_all_mask(int chaos);

/* Parses "double-click,retry-storm" / "all" into *mask. A scenario that
 * needs a chaos command (crash) without one, unknown names (the message
 * lists the known) and empty lists are errors: returns -1 with a message in
 * err. */
int scenarios_parse(const char *list, int chaos, unsigned *mask, char *err, size_t errlen);

/* Generates the schedule for plan into s (initialised with the seed).
 * Scenarios run in contract order. Returns 0, or -1 with a message in err
 * (bad mock override, out of memory, too many orders). */
int scenarios_build(sim_schedule *s, const sim_plan *plan, char *err, size_t errlen);

/* The flags that shape the schedule of plan (and, with the nemesis, the
 * windows it aims at) as the digest's parameters line, into out. */
void scenarios_params(const sim_plan *plan, char *out, size_t outlen);

/* The mock's endpoints a phase sets the faults of ("endpoints" in its
 * config): common/mock_knobs' first four, those mock_endpoint_in_phase names
 * (reverse, the fifth, keeps the mock's defaults). */
typedef enum {
    EP_ORDERQUERY = MOCK_EP_ORDERQUERY,
    EP_CLOSEORDER = MOCK_EP_CLOSEORDER,
    EP_REFUND = MOCK_EP_REFUND,
    EP_DOWNLOADBILL = MOCK_EP_DOWNLOADBILL,
    EP_COUNT
} sim_endpoint;

/* One endpoint's faults: latency_ms / jitter_ms < 0 inherit the top-level
 * latency and jitter (null in the config). */
typedef mock_endpoint_config sim_endpoint_faults;

/* The mock knobs of one phase: the mock's own config (common/mock_knobs).
 * A phase writes the knobs the table flags MOCK_KNOB_PHASE (unifiedorder's
 * latency and fault rates, which today's mock also applies to its other
 * endpoints, dedupe, the notifications, hold_max_ms, closeorder_enabled,
 * seed) and endpoints[0..EP_COUNT); the close switch, notify_enabled,
 * hold_max_ms and the endpoints only a mock that knows them applies
 * (mock_admin strips them for an older mock). */
typedef mock_config sim_mock_knobs;

/* The table's defaults (common/mock_knobs: no faults, dedupe on, one
 * notification copy, concurrency 8, retry step 1 s, notifications on,
 * replies withheld at most 30 s, close on, seed 1, every endpoint
 * inheriting). They were the simulator's own defaults for every knob a phase
 * writes before the table existed, so no digest changed. The mock's site
 * defaults (the environment's refund delay, IDEMPAY_MOCK_DEFAULTS) are not
 * read: a phase names every knob it writes, and those it does not write go
 * back to the running mock's own defaults (mock_admin_with_defaults). */
void scenarios_mock_defaults(sim_mock_knobs *k);
/* The knobs a phase writes (every one, so a phase never inherits the
 * previous phase's) as a compact JSON object with sorted keys and rates of 6
 * significant digits, with override (a JSON object text, or NULL) merged
 * over them: the text is part of the schedule digest. Returns 0, or -1
 * (override not a JSON object, or the result does not fit outlen) with a
 * message in err. */
int scenarios_mock_json(const sim_mock_knobs *k, const char *override, char *out, size_t outlen,
                        char *err, size_t errlen);

#endif
