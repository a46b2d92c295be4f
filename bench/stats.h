/* stats - the figures of repeated runs (median, spread) and percentiles of
 * latency samples. A figure that was not measured in a run is left out of
 * that run's set; an empty set has no median (stats_has is false). */
#ifndef IDEMPAY_BENCH_STATS_H
#define IDEMPAY_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

#define STATS_MAX_RUNS 16

typedef struct {
    double v[STATS_MAX_RUNS];
    int n;
} stats_runs;

/* Adds one run's value (ignored beyond STATS_MAX_RUNS). */
void stats_add(stats_runs *s, double v);

bool stats_has(const stats_runs *s);

/* Median (mean of the middle two for an even count), minimum, maximum;
 * 0 for an empty set. */
double stats_median(const stats_runs *s);
double stats_min(const stats_runs *s);
double stats_max(const stats_runs *s);

/* (max - min) / median, 0 when there is one run or the median is 0. */
double stats_spread(const stats_runs *s);

/* Sorts samples[0..n) ascending and returns the q-quantile (0..1) by the
 * nearest-rank rule; 0 for n == 0. */
double stats_quantile_sorted(const double *samples, size_t n, double q);
void stats_sort(double *samples, size_t n);

#endif
