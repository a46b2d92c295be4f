/* rng - a small seeded PRNG (xoshiro256**, seeded through splitmix64).
 * The same seed gives the same sequence on every machine. Not for secrets:
 * use wx_nonce / the OS random source for those. Not thread-safe: one rng per
 * user, or a lock around it. */
#ifndef IDEMPAY_RNG_H
#define IDEMPAY_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} rng_t;

void rng_seed(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
/* Uniform in [0, n); n == 0 gives 0. */
uint64_t rng_below(rng_t *r, uint64_t n);
/* Uniform in [lo, hi] (inclusive); hi < lo gives lo. */
int64_t rng_range(rng_t *r, int64_t lo, int64_t hi);
/* Uniform double in [0, 1). */
double rng_unit(rng_t *r);
/* 1 with probability p (p <= 0 never, p >= 1 always; always draws once). */
int rng_chance(rng_t *r, double p);
/* splitmix64 step, exposed for deriving sub-seeds. */
uint64_t rng_splitmix64(uint64_t *state);

#endif
