/* rng.c - xoshiro256** (Blackman & Vigna) seeded through splitmix64: small,
 * fast, and the same sequence for the same seed on every machine. */
#include "rng.h"

uint64_t rng_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void rng_seed(rng_t *r, uint64_t seed)
{
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix64(&sm);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(rng_t *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

uint64_t rng_below(rng_t *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Reject the low values that would make the modulo biased:
     * 2^64 mod n of them, computed as (-n) % n in unsigned arithmetic. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = rng_next(r);
        if (x >= threshold)
            return x % n;
    }
}

int64_t rng_range(rng_t *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo; /* modulo 2^64: no overflow */
    uint64_t off = span == UINT64_MAX ? rng_next(r) : rng_below(r, span + 1);
    uint64_t u = (uint64_t)lo + off;
    /* Back to int64_t without implementation-defined conversion. */
    if (u <= (uint64_t)INT64_MAX)
        return (int64_t)u;
    return -(int64_t)(UINT64_MAX - u) - 1;
}

double rng_unit(rng_t *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

int rng_chance(rng_t *r, double p)
{
    double u = rng_unit(r);
    if (p <= 0.0)
        return 0;
    if (p >= 1.0)
        return 1;
    return u < p;
}
