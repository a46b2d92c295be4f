/* run_int - what run.c and run_settle.c share: one run's context (each
 * step of sim_run leaves in it what it found, or why it could not go on)
 * and the few steps both call. Private to the simulator's run. */
#ifndef IDEMPAY_SIM_RUN_INT_H
#define IDEMPAY_SIM_RUN_INT_H

#include <stdint.h>
#include <time.h>

#include "chaos.h"
#include "checker.h"
#include "driver.h"
#include "history.h"
#include "profile.h"
#include "progress.h"
#include "refund_obs.h"
#include "report.h"
#include "run.h"
#include "schedule.h"
#include "threshold.h"
#include "windows.h"

typedef struct {
    const sim_args *a;
    sim_schedule s;
    char digest[65];
    sim_windows w;
    char windows_text[200];
    unsigned mask;
    int need_gateway;
    sim_report rep;
    driver *d;
    chaos *ch;
    progress *prog;            /* the progress line(s) on stderr, NULL: none */
    sim_threshold *thresholds; /* --threshold, measured on this run */
    struct timespec started;   /* when sim_run began (the time of a run that could not start) */
    sim_history hist;
    sim_row *api_rows, *db_rows;
    size_t *pending;
    double *phase_s;
    sim_charge *charges;
    size_t ncharges;
    long long notifications;
    const char **strays; /* transaction ids of the payer's own second charges and of
                            the customer's payments through the mock's payer */
    size_t nstrays;
    chk_result chk;
    int have_chk;
    sim_observations obs;    /* what the checker judges (the report reads it too) */
    int64_t *phase_start_us; /* obs.phase_start_us */
    const char *error;
    char errbuf[1024];
    char **journal;         /* per order: the mock's journal of it (witnessed orders only) */
    char *mock_known;       /* the mock's own config: phase configs are cut to it */
    char mock_missing[256]; /* optional knobs the mock did not know */
    char skipped[384];      /* scenarios the target profile cannot run, with why */
    int phase_failed;
    refund_obs refunds; /* the ledger's refunds and the service's lists (run_refunds) */
    sim_gwcall *calls;  /* the service's payment calls and fences (the mock's journal) */
    size_t ncalls;
    int calls_read; /* 1 when the journal was read */
} run_ctx;

/* Whether the run reads refunds (scenarios refunds, payer-edge, against
 * idempay's own API, whose merchant refund API they speak to). */
int run_wants_refunds(const run_ctx *c);
/* The target profile of the run. */
const sim_profile *run_profile(const run_ctx *c);
/* PUT the mock's config (config, JSON) cut to the knobs the mock knows.
 * 0, or -1 with err set. */
int run_configure(run_ctx *c, const char *config, char *err, size_t errlen);

/* run_settle.c: heal the gateway, wait for the orders to settle, read the
 * rows, the ledger, the refunds, the database (--db) and the mock's
 * journal (sets c->error when a read fails). */
void run_settle_all(run_ctx *c);

#endif
