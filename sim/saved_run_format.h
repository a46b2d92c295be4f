/* saved_run_format - the names and pieces the saved run's writer and loader
 * share (internal to saved_run*.c): file names, the format version, and
 * run.json (the report's own numbers) both ways. */
#ifndef IDEMPAY_SIM_SAVED_RUN_FORMAT_H
#define IDEMPAY_SIM_SAVED_RUN_FORMAT_H

#include <jansson.h>
#include <stddef.h>

#include "saved_run.h"

#define SAVED_RUN_FORMAT 1
#define SAVED_SCHEDULE "schedule.json"
#define SAVED_RUN "run.json"
#define SAVED_CHAOS "chaos.json"
#define SAVED_LEDGER "ledger.json"
#define SAVED_ORDERS "orders.json"
#define SAVED_HISTORY "history.jsonl"
#define SAVED_SCENARIO_FILE "scenario.json" /* a copy of --scenario-file, when given */

/* The service windows as schedule.json's recipe keeps them: one name per
 * long field of sim_windows (from_env, an int, is written beside them). */
typedef struct {
    const char *name;
    size_t off; /* offsetof(sim_windows, ...) */
} saved_window_field;

#define SAVED_WINDOW_FIELDS 8
extern const saved_window_field saved_window_fields[SAVED_WINDOW_FIELDS];

/* "unread", "absent", "present", "error" (sim_row_state), and back (-1). */
const char *saved_row_state_name(int state);
int saved_row_state_parse(const char *name);

/* Writes root (taken over, NULL accepted: out of memory) to dir/name.
 * Returns 0, or -1 with a message in err. */
int saved_run_dump(const char *dir, const char *name, json_t *root, char *err, size_t errlen);

/* run.json: seed, prefix, ends, phase starts, the verdict and error, the
 * request counts and latency histograms, the witnessed orders' journals. */
int saved_run_write_meta(const char *dir, const sim_report *r, const saved_run_meta *m, char *err,
                         size_t errlen);
/* Reads run.json into out (the schedule must be loaded: phases, orders).
 * Returns 0, or -1 with a message in err. */
int saved_run_load_meta(json_t *root, saved_run *out, char *err, size_t errlen);

/* Reads history.jsonl (report_history's lines) into out->hist, sorted.
 * Returns 0, or -1 with a message in err (the line that is not an op). */
int saved_run_load_history(const char *dir, saved_run *out, char *err, size_t errlen);

#endif
