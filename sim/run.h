/* run - one simulator run, from the parsed command line to the exit status:
 * generate the schedule from the seed (and the service's windows), check
 * that both ends answer, drive the phases (each with its mock config, and
 * the planned chaos runs), heal the gateway, let the orders settle, read
 * the final state, judge it and write the reports. */
#ifndef IDEMPAY_SIM_RUN_H
#define IDEMPAY_SIM_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "schedule.h"

struct sim_threshold;     /* threshold.h */
struct sim_scenario_file; /* scenario_file.h */

typedef struct {
    char target[256];
    char gateway[256];
    int dialect; /* --gateway v2|v3: the WeChat Pay dialect the target speaks,
                    2 or 3, checked against the mock's journal after the run
                    (dialect.h); 0 when not given: not checked */
    const char *scenarios;
    size_t orders;
    int concurrency;
    double duration_s;
    uint64_t seed;
    int seed_given;
    double settle_s;
    int settle_given; /* --settle given (else it follows the windows) */
    const char *json_path;
    const char *junit_path;
    const char *history_path;
    int quiet;
    const char *chaos_cmd;
    double chaos_every_s;
    int chaos_every_given; /* --chaos-every given (it needs --chaos-cmd) */
    int db;
    char prefix[SCHED_PREFIX_MAX + 1];
    int print_schedule;
    int schedule_only;
    const char *mock_override;
    size_t max_witnesses;
    double soak_min;        /* --soak MINUTES (0: one run) */
    const char *replay_cmd; /* printed in witnesses (may be NULL) */
    /* The run folder (results.h): */
    const char *out_dir;      /* --out DIR (NULL: the default base) */
    int no_out;               /* --no-out: keep no folder */
    const char *check_dir;    /* --check DIR: judge a saved run, offline */
    const char *profile_path; /* --profile FILE */
    sim_profile *profile;     /* that file, loaded; owned by the caller (NULL: the built-in
                                 idempay profile) */
    /* Output CI can use, and scenario files: */
    FILE *human; /* the human report, seed and banner: stdout, or stderr when
                    --json/--junit/--history '-' takes stdout (NULL: stdout) */
    const struct sim_threshold *thresholds; /* --threshold, parsed (copied by each run) */
    size_t nthresholds;
    struct sim_scenario_file *scenario_file; /* --scenario-file, loaded (NULL: none) */
    const char *scenario_file_path;
} sim_args;

/* Set by SIGINT / SIGTERM: the run stops sending and reports (exit 2). */
extern volatile int sim_stop;

/* Runs the simulator once with a. Prints the seed and digest first, then
 * the report, ending with a result: line (also when the run cannot start).
 * Returns the exit status: 0 every invariant held, 1 a violation, 2 the run
 * could not be carried out, 3 every invariant held but a --threshold failed. */
int sim_run(const sim_args *a);

#endif
