/* threshold - pass/fail gates on a run's numbers, in k6's spirit
 * (--threshold 'pay.p99<800ms'): parsed once from the command line,
 * evaluated against the report after the checks, rendered in the human,
 * JSON and JUnit reports. A failed threshold makes a run whose invariants
 * held exit 3; a violation (1) or a run that could not be carried out (2)
 * keeps its own status.
 *
 * Grammar (spaces allowed between the parts):
 *     KIND '.' METRIC OP NUMBER [UNIT]
 *     KIND   pay | query | token | callback | ping | stray | all
 *     METRIC pN (a latency quantile, 0 < N < 100: p50, p95, p99.9) | max | mean
 *            (latency: UNIT ms (default), s or us)
 *          | error_rate (requests without an HTTP answer or answered 5xx, as a
 *            fraction of the kind's requests; UNIT none or %)
 *          | rate (requests per second of traffic; UNIT none or /s)
 *          | count (requests; no UNIT)
 *     OP     < | <= | > | >= | == | != */
#ifndef IDEMPAY_SIM_THRESHOLD_H
#define IDEMPAY_SIM_THRESHOLD_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "report.h"

#define THRESHOLD_EXPR_MAX 96
#define THRESHOLD_KIND_ALL (-1)

typedef enum { TH_LT = 0, TH_LE, TH_GT, TH_GE, TH_EQ, TH_NE } th_op;

typedef enum {
    TH_QUANTILE = 0, /* latency quantile, ms */
    TH_MAX,          /* latency max, ms */
    TH_MEAN,         /* latency mean, ms */
    TH_ERROR_RATE,   /* fraction 0..1 */
    TH_RATE,         /* requests per second */
    TH_COUNT         /* requests */
} th_metric;

typedef struct sim_threshold {
    char expr[THRESHOLD_EXPR_MAX + 1]; /* as given, for the reports */
    int kind;                          /* sim_op_kind, or THRESHOLD_KIND_ALL */
    th_metric metric;
    double quantile; /* TH_QUANTILE: 0 < quantile < 100 */
    th_op op;
    double limit; /* in the metric's unit: ms, fraction, 1/s, count */
    /* Set by threshold_eval: */
    int evaluated; /* 0: the run could not be judged */
    int samples;   /* the kind had requests (latency needs some) */
    double value;
    int pass;
} sim_threshold;

/* Parses expr into *t (evaluation fields zeroed). Returns 0, or -1 with a
 * message naming what is wrong in err; *t is then unspecified. */
int threshold_parse(const char *expr, sim_threshold *t, char *err, size_t errlen);

/* Whether value op limit holds. */
int threshold_holds(double value, th_op op, double limit);

/* Measures and judges each of t[0..n) against the report r (its latency
 * histograms, request counters, history and traffic time). A latency
 * threshold of a kind without requests fails (nothing was measured).
 * Returns how many failed. */
size_t threshold_eval(sim_threshold *t, size_t n, const sim_report *r);

/* How many of t[0..n) were evaluated and failed. */
size_t threshold_failed(const sim_threshold *t, size_t n);

/* The thresholds as lines of the human report ("thresholds:" block); nothing
 * when n is 0. */
void threshold_human(const sim_threshold *t, size_t n, FILE *out);

/* The thresholds as a JSON array of {expression, kind, metric, op, limit,
 * value, unit, pass, evaluated}. NULL on OOM. */
json_t *threshold_json(const sim_threshold *t, size_t n);

/* One JUnit testcase per threshold (classname idempay-sim.thresholds),
 * each with time time_s (the traffic its numbers were measured over); a
 * failed one has a <failure>, one not evaluated a <skipped>. */
void threshold_junit(const sim_threshold *t, size_t n, double time_s, FILE *f);

#endif
