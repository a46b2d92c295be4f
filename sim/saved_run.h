/* saved_run - a run's observations on disk and back, so that a saved run can
 * be judged again offline (`idempay-sim --check DIR`): everything the
 * checker read (history.jsonl: every client operation; ledger.json: the
 * gateway's charges; orders.json: the final rows, API and database view),
 * the recipe that rebuilds the schedule it judged (schedule.json: the
 * effective arguments and the service windows, with the digest to check the
 * rebuild against; every phase's mock config), the chaos log (chaos.json)
 * and the report's own numbers (run.json: request counts, latency
 * histograms, phase starts, the error that ended the run).
 *
 * The writer only reads the report; the loader owns everything it returns.
 * A saved ledger is judged as written: a charge added by hand (a second
 * charge of an order) is judged like one the gateway made. */
#ifndef IDEMPAY_SIM_SAVED_RUN_H
#define IDEMPAY_SIM_SAVED_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "schedule.h"
#include "windows.h"

/* What generated the schedule: the flags that shape it and the service
 * windows the nemesis read (scenarios_build's input). */
typedef struct {
    const char *scenarios;     /* --scenario as given ("all") */
    unsigned mask;             /* the scenarios built (after the target profile's skips) */
    const char *scenario_file; /* --scenario-file's path, or NULL (copied into the folder) */
    size_t orders;
    double duration_s;
    int concurrency;
    int chaos; /* --chaos-cmd given */
    double chaos_every_s;
    const char *mock_override; /* --mock-config, or NULL */
    sim_windows windows;
} saved_recipe;

/* What the writer needs besides the report. */
typedef struct {
    saved_recipe recipe;
    int64_t origin_epoch_us; /* the wall clock at the run's time 0 */
    int judged;              /* the checker ran (its rows and ledger were read) */
} saved_run_meta;

/* Writes schedule.json, schedule.txt, run.json, chaos.json, ledger.json and
 * orders.json into dir (which exists). history.jsonl is report_history's.
 * Returns 0, or -1 with a message in err (files written so far stay). */
int saved_run_write(const char *dir, const sim_report *r, const saved_run_meta *m, char *err,
                    size_t errlen);

/* A saved run, loaded: the schedule rebuilt from its recipe (digest
 * checked), the observations and a report ready for the checker's result
 * (rep.chk is left NULL; rep.obs points at obs). */
typedef struct {
    sim_schedule sched;
    char digest[65];
    saved_recipe recipe;
    char *scenarios, *mock_override; /* the recipe's strings */
    char prefix[SCHED_PREFIX_MAX + 1];
    char *target, *gateway, *replay, *windows_text, *mock_missing, *error;
    sim_history hist;
    sim_charge *charges;
    size_t ncharges;
    sim_refund *refunds, *listed; /* the refunds judged (NULL: none were read) */
    size_t nrefunds, nlisted;
    sim_gwcall *calls; /* the payment calls and fences judged (NULL: not read) */
    size_t ncalls;
    int64_t gateway_timeout_us;
    uint8_t *list_read;
    sim_row *api_rows, *db_rows; /* db_rows NULL: not read (no --db) */
    int64_t *phase_start_us;
    double *phase_s;
    sim_chaos_event *chaos;
    size_t nchaos;
    char **journal; /* per order (NULL entries) */
    int judged;
    int exit_code; /* the run's own exit status */
    sim_observations obs;
    sim_report rep;
} saved_run;

/* Loads the run saved in dir. Returns 0, or -1 with a message in err (a
 * file missing or malformed, or a schedule whose digest differs from the
 * saved one); *out is to be freed with saved_run_free in both cases. */
int saved_run_load(const char *dir, saved_run *out, char *err, size_t errlen);
void saved_run_free(saved_run *r);

#endif
