/* report - the run's results for people (a table on stdout), for programs
 * (--json) and for CI (--junit: one testcase per scenario x invariant, a
 * failure carries the witnesses). Only reads its input. */
#ifndef IDEMPAY_SIM_REPORT_H
#define IDEMPAY_SIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "checker.h"
#include "histogram.h"
#include "history.h"
#include "schedule.h"

struct sim_threshold; /* threshold.h */

/* One run of the chaos command. */
typedef struct {
    int64_t at_us; /* when it started, from the run start */
    int64_t duration_us;
    int exit_status; /* exit code, or 128+signal, or -1 when it could not run */
    uint8_t action;  /* sched_chaos_action */
    uint32_t phase;  /* the phase that planned it */
} sim_chaos_event;

typedef struct {
    uint64_t seed;
    const char *digest; /* schedule digest, hex */
    const char *prefix; /* this run's order-number prefix */
    const char *target;
    const char *gateway;
    const char *replay_cmd; /* the command line that replays the run (may be NULL) */
    const sim_schedule *sched;
    const sim_observations *obs;
    const chk_result *chk; /* NULL when the checks could not run */
    /* Requests by scenario x kind x outcome, and latency by kind (pings included). */
    uint64_t requests[SC_COUNT][OP_KIND_COUNT][OUT_COUNT];
    sim_hist latency[OP_KIND_COUNT];
    double traffic_s; /* wall time of the traffic phases */
    double total_s;   /* whole run, settling included */
    double settle_s;  /* time spent settling */
    const sim_chaos_event *chaos;
    size_t nchaos;
    const double *phase_s;        /* when each phase started, s from the traffic start
                                     (-1 never; NULL unknown) */
    long long notifications_sent; /* from the ledger, -1 unknown */
    const char *windows;          /* the service windows the nemesis aimed at (NULL: no nemesis) */
    const char *mock_missing;     /* optional knobs the mock did not know ("" / NULL: none) */
    const char *profile;          /* the target profile's name (NULL: the built-in idempay) */
    const char *skipped;          /* scenarios the profile cannot run, with why ("" / NULL: none) */
    char *const *journal;         /* per schedule order: the mock's journal of it as text lines
                                     (NULL entries, or NULL: not fetched) */
    int exit_code;                /* 0, 1, 2, 3 (every invariant held, a threshold failed) */
    const char *error;            /* why the run could not be carried out (exit 2) */
    const struct sim_threshold *thresholds; /* --threshold gates, measured (NULL: none) */
    size_t nthresholds;
} sim_report;

/* A zeroed report with empty histograms. */
void report_init(sim_report *r);

/* The human report. Prints at most max_witnesses full witnesses (the rest
 * as one line each, up to 100). */
void report_human(const sim_report *r, FILE *out, size_t max_witnesses);

/* The closing line of every run: "result: PASS: every invariant held (exit
 * 0, seed S)", FAIL (1), ERROR (2), THRESHOLD (3); without "seed" when
 * seed is NULL (the arguments were refused before one was chosen). */
void report_result_line(FILE *out, int exit_code, const uint64_t *seed);

/* Writes the JSON report to path ("-" = stdout). Returns 0 or -1 (errno). */
int report_json(const sim_report *r, const char *path);

/* Writes the JUnit XML report to path ("-" = stdout). Returns 0 or -1.
 * A scenario x invariant testcase's time is the span of the scenario's
 * phases (the traffic judged) plus the checker's time on the invariant;
 * a threshold's is the traffic time; the carried_out error's the run's. */
int report_junit(const sim_report *r, const char *path);

/* Writes every client operation of the history as one JSON object per line
 * (time order) to path ("-" = stdout). Returns 0 or -1. */
int report_history(const sim_report *r, const char *path);

/* Appends s to out with the five XML special characters escaped and
 * characters XML 1.0 forbids (controls other than TAB/LF/CR) replaced by '?'. */
void report_xml_escape(FILE *out, const char *s);

/* The total requests of a report by outcome (all scenarios and kinds). */
uint64_t report_total(const sim_report *r, int outcome);

#endif
