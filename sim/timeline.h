/* timeline - the run as series over time, computed from the history: per
 * interval and request kind, how many client operations ended in it and
 * their latency p50 and p99 (nearest rank over the exact latencies); per
 * interval, the outcome mix (ok / fail / unknown) of all of them. An
 * operation belongs to the interval its end falls in. Pure: no I/O. */
#ifndef IDEMPAY_SIM_TIMELINE_H
#define IDEMPAY_SIM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

#define TIMELINE_MAX_BUCKETS 120

typedef struct {
    int64_t interval_us; /* width of one interval */
    size_t nbuckets;     /* intervals from time 0 to the last end */
    uint64_t *count;     /* [kind * nbuckets + b] operations that ended */
    double *p50_ms;      /* [kind * nbuckets + b]; 0 when count is 0 */
    double *p99_ms;
    uint64_t *outcome; /* [outcome * nbuckets + b] */
} sim_timeline;

/* The interval for a run that spans span_us: the smallest of 0.1, 0.2,
 * 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600 s giving at most
 * TIMELINE_MAX_BUCKETS intervals (600 s beyond). */
int64_t timeline_interval_us(int64_t span_us);

/* Builds the series of ops[0..n) (any order; end_us < 0 counts as 0).
 * Returns 0, or -1 on OOM (*t is then empty). Free with timeline_free. */
int timeline_build(const sim_op *ops, size_t n, sim_timeline *t);
void timeline_free(sim_timeline *t);

#endif
