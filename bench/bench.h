/* bench.h - what one `./stack bench` run measured, shared by the runner
 * (bench.c) and the report (report.c). Every figure is kept per round
 * (stats_runs), so the report can give each one's median and spread. */
#ifndef IDEMPAY_BENCH_BENCH_H
#define IDEMPAY_BENCH_BENCH_H

#include <stdbool.h>

#include "dbstat.h"
#include "proc.h"
#include "stats.h"
#include "workload.h"

#define BENCH_PACED_SHARE 0.5 /* open-loop rate as a share of the closed-loop throughput */

typedef struct {
    bool selected;
    stats_runs rps;            /* closed loop */
    stats_runs p50_ms, p99_ms; /* open loop, from intended send time */
    stats_runs paced_rps;
    stats_runs ratio;                   /* rps / its baseline's rps, same round */
    stats_runs ratio_rawdb;             /* fresh payments and callbacks: against raw DB */
    stats_runs cpu_ms[PROC_ROLE_COUNT]; /* per request, closed loop */
    stats_runs cpu_irq_ms;              /* interrupts and softirqs (networking, disk) */
    stats_runs cpu_other_ms;            /* the machine's other busy CPU: other processes */
    stats_runs other_share;             /* that, as a share of all the machine's busy CPU */
    stats_runs db[DBSTAT_COUNT];        /* counter delta per request, closed loop */
    stats_runs db_writes;               /* INSERT, INSERT ... SELECT, UPDATE, DELETE per request */
    long requests;                      /* every phase of every round */
    long errors;
    int rounds_with_errors;
    char first_error[WL_ERROR_MAX];
} bench_row;

typedef struct {
    int concurrency;
    double duration_s;
    int rounds;
    int cpus;
    double load_start, load_end; /* 1-minute load average */
    char key_source[300];        /* where the merchant key came from (never the key) */
    char mock_key_source[300];
    char target[256], gateway[256];
    bench_row row[WL_COUNT];
    int service_pids[PROC_MAX_PER_ROLE];
    long service_peak_rss_kb[PROC_MAX_PER_ROLE];
    int n_service;
} bench_result;

/* A row's figures can be trusted: it ran and no request of it failed. */
bool bench_row_measured(const bench_result *r, wl_kind w);

/* Prints the table, the cost rows, what was not measured and the targets
 * on stdout. */
void report_print(const bench_result *r);

/* Writes the same as JSON to path. Returns 0 or -1. */
int report_json(const bench_result *r, const char *path);

#endif
