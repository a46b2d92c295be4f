/* timeline.c - per-interval series from the history (see timeline.h). */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

int64_t timeline_interval_us(int64_t span_us)
{
    static const int64_t steps_ms[] = { 100,   200,   500,   1000,   2000,   5000,  10000,
                                        15000, 30000, 60000, 120000, 300000, 600000 };
    size_t n = sizeof(steps_ms) / sizeof(steps_ms[0]);
    for (size_t i = 0; i < n; i++)
        if (span_us / (steps_ms[i] * 1000) < TIMELINE_MAX_BUCKETS)
            return steps_ms[i] * 1000;
    return steps_ms[n - 1] * 1000;
}

static size_t timeline_bucket(const sim_timeline *t, const sim_op *op)
{
    int64_t end = op->end_us > 0 ? op->end_us : 0;
    size_t b = (size_t)(end / t->interval_us);
    return b < t->nbuckets ? b : t->nbuckets - 1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank quantile q of sorted v[0..n), n > 0, in ms. */
static double timeline_rank_ms(const int64_t *v, size_t n, double q)
{
    size_t k = (size_t)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return (double)v[k - 1] / 1e3;
}

/* Latencies grouped by (kind, bucket) with a counting sort, each group
 * sorted, its p50 and p99 taken. Returns 0 or -1 (OOM). */
static int timeline_quantiles(sim_timeline *t, const sim_op *ops, size_t n)
{
    size_t cells = (size_t)OP_KIND_COUNT * t->nbuckets;
    size_t *at = calloc(cells + 1, sizeof(*at));
    int64_t *lat = malloc((n ? n : 1) * sizeof(*lat));
    if (at == NULL || lat == NULL) {
        free(at);
        free(lat);
        return -1;
    }
    for (size_t c = 0; c < cells; c++)
        at[c + 1] = at[c] + t->count[c];
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind >= OP_KIND_COUNT)
            continue;
        size_t c = (size_t)ops[i].kind * t->nbuckets + timeline_bucket(t, &ops[i]);
        int64_t us = ops[i].end_us - ops[i].start_us;
        lat[at[c]++] = us > 0 ? us : 0;
    }
    for (size_t c = 0, from = 0; c < cells; from += t->count[c], c++) {
        if (t->count[c] == 0)
            continue;
        qsort(lat + from, t->count[c], sizeof(*lat), cmp_i64);
        t->p50_ms[c] = timeline_rank_ms(lat + from, t->count[c], 0.50);
        t->p99_ms[c] = timeline_rank_ms(lat + from, t->count[c], 0.99);
    }
    free(at);
    free(lat);
    return 0;
}

int timeline_build(const sim_op *ops, size_t n, sim_timeline *t)
{
    int64_t last = 0;
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < n; i++)
        if (ops[i].end_us > last)
            last = ops[i].end_us;
    t->interval_us = timeline_interval_us(last);
    t->nbuckets = (size_t)(last / t->interval_us) + 1;
    size_t cells = (size_t)OP_KIND_COUNT * t->nbuckets;
    t->count = calloc(cells, sizeof(*t->count));
    t->p50_ms = calloc(cells, sizeof(*t->p50_ms));
    t->p99_ms = calloc(cells, sizeof(*t->p99_ms));
    t->outcome = calloc((size_t)OUT_COUNT * t->nbuckets, sizeof(*t->outcome));
    if (t->count == NULL || t->p50_ms == NULL || t->p99_ms == NULL || t->outcome == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        size_t b = timeline_bucket(t, &ops[i]);
        if (ops[i].kind < OP_KIND_COUNT)
            t->count[(size_t)ops[i].kind * t->nbuckets + b]++;
        if (ops[i].outcome < OUT_COUNT)
            t->outcome[(size_t)ops[i].outcome * t->nbuckets + b]++;
    }
    if (timeline_quantiles(t, ops, n) == 0)
        return 0;
fail:
    timeline_free(t);
    return -1;
}

void timeline_free(sim_timeline *t)
{
    if (t == NULL)
        return;
    free(t->count);
    free(t->p50_ms);
    free(t->p99_ms);
    free(t->outcome);
    memset(t, 0, sizeof(*t));
}
