/* histogram.c - log-bucketed latency histogram: a value v >= 16 with its
 * highest set bit at position m falls in octave m - 4, sub-bucket given by
 * the 4 bits below the top bit. Recording is O(1) and never allocates. */
#include "histogram.h"

#include <string.h>

void hist_init(sim_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

size_t hist_bucket_index(uint64_t v)
{
    if (v < HIST_SUB_COUNT)
        return (size_t)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - HIST_SUB_BITS;
    size_t sub = (size_t)((v >> shift) & (HIST_SUB_COUNT - 1));
    return HIST_SUB_COUNT + (size_t)shift * HIST_SUB_COUNT + sub;
}

uint64_t hist_bucket_low(size_t i)
{
    if (i < HIST_SUB_COUNT)
        return (uint64_t)i;
    size_t shift = (i - HIST_SUB_COUNT) / HIST_SUB_COUNT;
    size_t sub = (i - HIST_SUB_COUNT) % HIST_SUB_COUNT;
    return ((uint64_t)HIST_SUB_COUNT + sub) << shift;
}

uint64_t hist_bucket_high(size_t i)
{
    if (i < HIST_SUB_COUNT)
        return (uint64_t)i;
    size_t shift = (i - HIST_SUB_COUNT) / HIST_SUB_COUNT;
    return hist_bucket_low(i) + (((uint64_t)1 << shift) - 1);
}

void hist_record(sim_hist *h, uint64_t us)
{
    h->bucket[hist_bucket_index(us)]++;
    h->count++;
    h->sum = (UINT64_MAX - h->sum < us) ? UINT64_MAX : h->sum + us;
    if (us < h->min)
        h->min = us;
    if (us > h->max)
        h->max = us;
}

void hist_merge(sim_hist *dst, const sim_hist *src)
{
    if (src->count == 0)
        return;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    dst->sum = (UINT64_MAX - dst->sum < src->sum) ? UINT64_MAX : dst->sum + src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_quantile(const sim_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q >= 1.0)
        return h->max;
    if (q <= 0.0)
        return h->min;
    double want = q * (double)h->count;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want)
        rank++;
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = hist_bucket_high(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

double hist_mean(const sim_hist *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}
