/* results - the folder every run leaves: <base>/<UTC time>-seed<N>/ with
 * report.txt, report.json, junit.xml, report.html, history.jsonl and what
 * saved_run writes (schedule.json and .txt with every phase's mock config,
 * run.json, chaos.json, ledger.json, orders.json), and <base>/latest, a
 * symbolic link to the newest folder. The base is --out DIR, else
 * $IDEMPAY_STATE_DIR/runs, else ./idempay-sim-runs.
 *
 * results_check judges a saved folder again, offline: same checker, same
 * verdict and exit status as the run (unless the saved files were edited). */
#ifndef IDEMPAY_SIM_RESULTS_H
#define IDEMPAY_SIM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "saved_run.h"

#define RESULTS_DEFAULT_BASE "idempay-sim-runs"

/* The base folder for out_opt (--out, or NULL) into buf. Returns buf. */
const char *results_base(const char *out_opt, char *buf, size_t len);

/* Creates base (and its parents) and a new folder <UTC time>-seed<N> in it
 * (a -2, -3 ... suffix when that name is taken); its path goes to dir.
 * Returns 0, or -1 with a message in err. */
int results_create(const char *base, uint64_t seed, char *dir, size_t dirlen, char *err,
                   size_t errlen);

/* Writes every file of the run into dir. Returns 0, or -1 with a message
 * in err (the files written so far stay). */
int results_write(const char *dir, const sim_report *r, const saved_run_meta *m,
                  size_t max_witnesses, char *err, size_t errlen);

/* Points base/latest at dir (replaced atomically). Returns 0 or -1. */
int results_link_latest(const char *base, const char *dir, char *err, size_t errlen);

/* All of the above for one run; prints "results: DIR" on stderr. Returns
 * 0, or -1 after printing why on stderr. */
int results_save(const char *out_opt, const sim_report *r, const saved_run_meta *m,
                 size_t max_witnesses);

/* idempay-sim --check DIR: loads the saved run, judges it, prints the
 * report on stdout. Returns the exit status: 0, 1 (a violation), 2 (the
 * run could not be carried out, or the folder cannot be loaded). */
int results_check(const char *dir, size_t max_witnesses);

#endif
