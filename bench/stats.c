/* stats.c - medians, spreads and percentiles (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void stats_add(stats_runs *s, double v)
{
    if (s->n < STATS_MAX_RUNS)
        s->v[s->n++] = v;
}

bool stats_has(const stats_runs *s)
{
    return s->n > 0;
}

static int stats_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void stats_sort(double *samples, size_t n)
{
    qsort(samples, n, sizeof(*samples), stats_cmp);
}

double stats_median(const stats_runs *s)
{
    double v[STATS_MAX_RUNS];

    if (s->n == 0)
        return 0;
    memcpy(v, s->v, (size_t)s->n * sizeof(v[0]));
    stats_sort(v, (size_t)s->n);
    return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

double stats_min(const stats_runs *s)
{
    double m = s->n ? s->v[0] : 0;
    for (int i = 1; i < s->n; i++)
        m = fmin(m, s->v[i]);
    return m;
}

double stats_max(const stats_runs *s)
{
    double m = s->n ? s->v[0] : 0;
    for (int i = 1; i < s->n; i++)
        m = fmax(m, s->v[i]);
    return m;
}

double stats_spread(const stats_runs *s)
{
    double med = stats_median(s);
    return s->n > 1 && med != 0 ? (stats_max(s) - stats_min(s)) / med : 0;
}

double stats_quantile_sorted(const double *samples, size_t n, double q)
{
    size_t rank;

    if (n == 0)
        return 0;
    rank = (size_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    return samples[rank > n ? n - 1 : rank - 1];
}
