/* histogram - log-bucketed latency histogram (microseconds).
 *
 * 16 linear buckets for 0..15 us, then 16 sub-buckets per power of two, so a
 * recorded value is known to within 1/16 (6.25 %) of itself over the whole
 * uint64 range. Fixed size, no allocation: one per worker thread, merged at
 * the end. Not thread-safe. */
#ifndef IDEMPAY_SIM_HISTOGRAM_H
#define IDEMPAY_SIM_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 4
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB_COUNT + (64 - HIST_SUB_BITS) * HIST_SUB_COUNT)

typedef struct {
    uint64_t count;
    uint64_t sum; /* saturates at UINT64_MAX */
    uint64_t min; /* UINT64_MAX when empty */
    uint64_t max; /* 0 when empty */
    uint64_t bucket[HIST_BUCKETS];
} sim_hist;

/* An empty histogram. */
void hist_init(sim_hist *h);
/* Adds one value (microseconds). */
void hist_record(sim_hist *h, uint64_t us);
/* Adds every value of src into dst. */
void hist_merge(sim_hist *dst, const sim_hist *src);
/* The value at quantile q (0 < q <= 1): the upper bound of the bucket holding
 * the ceil(q * count)-th smallest value, clamped to [min, max]. q >= 1 gives
 * max exactly. 0 when the histogram is empty. */
uint64_t hist_quantile(const sim_hist *h, double q);
/* Mean of the recorded values, 0 when empty. */
double hist_mean(const sim_hist *h);

/* The bucket index of value v, and the inclusive bounds of bucket i
 * (i < HIST_BUCKETS). */
size_t hist_bucket_index(uint64_t v);
uint64_t hist_bucket_low(size_t i);
uint64_t hist_bucket_high(size_t i);

#endif
