/* scenario_file - --scenario-file FILE: the phases of a run described in
 * JSON instead of compiled in, so QA can write "200 orders, dedupe off,
 * 30 % timeouts after charging, clients that retry after 2 s" without C.
 *
 * A file is not a second schedule model: each of its phases names one of
 * the scenario generators (scenarios.c) and sets that generator's inputs —
 * its share of orders and time, mock knobs merged into every mock phase it
 * makes, and its clients' behaviour (gen_client: attempts, timeouts,
 * backoff, patience, polling, Idempotency-Key and token use). The schedule
 * is then generated as for --scenario, from the same seed.
 *
 *     {"description": "...", "orders": 300, "duration_s": 10, "concurrency": 16,
 *      "mock": {...}, "client": {...},            (defaults for every phase)
 *      "phases": [{"scenario": "retry-storm", "orders": 200, "duration_s": 5,
 *                  "mock": {"dedupe": false, "timeout_after_charge_rate": 0.3},
 *                  "client": {"backoff_ms": 2000, "attempts": [4, 8]}}]}
 *
 * A file whose phases only name scenarios (each once, in the contract's
 * order) is that --scenario list: the same schedule and digest. Any other
 * file puts the SHA-256 of its canonical JSON (sorted keys, no spaces) into
 * the schedule's parameters, so the same file and seed give the same digest
 * and another file another digest. Errors name the file and the line
 * (JSON syntax) or the field ("phases[1].client: 'attempts' needs ..."). */
#ifndef IDEMPAY_SIM_SCENARIO_FILE_H
#define IDEMPAY_SIM_SCENARIO_FILE_H

#include <stddef.h>

#include "scenarios.h"
#include "schedule.h"

#define SCENARIO_FILE_PHASES_MAX 64
#define SCENARIO_FILE_MAX_BYTES (1024 * 1024)

typedef struct sim_scenario_file sim_scenario_file;

/* The run-wide values the file sets (the command line's flags, when given,
 * win over them). */
typedef struct {
    size_t orders;     /* 0: not set */
    double duration_s; /* < 0: not set */
    int concurrency;   /* 0: not set */
} scenario_file_run;

/* Loads and validates path. Returns the file, or NULL with a message in err
 * ("FILE:LINE:COLUMN: ..." for JSON syntax, "FILE: phases[0].mock: mock knob
 * 'dedupe' needs ..." for a bad field). Free with scenario_file_free. */
sim_scenario_file *scenario_file_load(const char *path, char *err, size_t errlen);
void scenario_file_free(sim_scenario_file *f);

/* What the file sets for the whole run. */
scenario_file_run scenario_file_run_values(const sim_scenario_file *f);

/* The scenarios its phases name (1u << sim_scenario each). */
unsigned scenario_file_mask(const sim_scenario_file *f);

/* Generates the schedule of f into s (initialised with the seed). plan
 * gives the run's orders, duration, concurrency, chaos, --mock-config
 * (merged over the file's knobs: the command line wins) and windows; its
 * mask and client are ignored. Returns 0, or -1 with a message in err (a
 * crash phase without a chaos command, a mock config too long, OOM). */
int scenario_file_build(const sim_scenario_file *f, const sim_plan *plan, sim_schedule *s,
                        char *err, size_t errlen);

#endif
