/* faults - the mock's knobs (fault injection, notification settings, the
 * closeorder and journal switches) and the seeded PRNGs that decide each
 * call's fate.
 *
 * Every unifiedorder draws exactly five values from the main PRNG, always in
 * this order: jitter, reset, error, decline, timeout_after_charge. So the same
 * seed and the same order of unifiedorder requests give the same decisions,
 * whatever else happens meanwhile. Precedence when several fire:
 * reset > error > decline > timeout_after_charge.
 *
 * The other endpoints (orderquery, closeorder, refund, downloadbill) draw
 * from a second, auxiliary PRNG derived from the same seed, three values per
 * call in this order: jitter, reset, error (reset wins). Their knobs live in
 * cfg->endpoints[]: latency_ms / jitter_ms may be MOCK_INHERIT (the
 * top-level unifiedorder value applies, as before per-endpoint faults
 * existed); error_rate and reset_rate default to 0. */
#ifndef IDEMPAY_MOCK_FAULTS_H
#define IDEMPAY_MOCK_FAULTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "mock_knobs.h"
#include "rng.h"

/* The config and its endpoints are common/mock_knobs' (one table of knobs
 * for the mock and the simulator); these are the mock's names for them. */
typedef mock_endpoint faults_endpoint;
typedef mock_endpoint_config faults_endpoint_config;
typedef mock_config faults_config;

typedef enum {
    FAULT_NONE = 0,
    FAULT_RESET,               /* cut the connection, no charge */
    FAULT_ERROR,               /* SYSTEMERROR, no charge */
    FAULT_DECLINE,             /* FAIL, no charge */
    FAULT_TIMEOUT_AFTER_CHARGE /* charge, then no reply */
} fault_kind;

/* The kind's name in the journal and the rules: none, reset, error,
 * decline, timeout_after_charge. */
const char *faults_kind_name(fault_kind k);
/* The kind a name names; -1 when none does. */
int faults_kind_of(const char *name);

typedef struct {
    fault_kind kind;
    long long delay_ms; /* latency_ms + the jitter drawn */
} fault_decision;

typedef struct {
    pthread_mutex_t mu;
    faults_config cfg;
    rng_t order_rng; /* unifiedorder decisions */
    rng_t aux_rng;   /* decisions of the other endpoints */
    rng_t flow_rng;  /* the payment flows' draws (USERPAYING, close race) */
} faults_state;

/* The defaults of this site: faults_config_defaults, then the JSON object of
 * knobs in the environment variable IDEMPAY_MOCK_DEFAULTS when it is set and
 * valid (./stack scales the flows' knobs there; POST /mock/reset returns to
 * them). A bad value is ignored with the reason in err (when err is not
 * NULL and errlen > 0; err[0] is '\0' otherwise). */
void faults_config_site_defaults(faults_config *cfg, char *err, size_t errlen);

/* true with probability rate, drawn from the flows' PRNG (under the lock);
 * never draws when rate is 0 or 1, so the knobs' defaults draw nothing. */
bool faults_draw_flow(faults_state *st, double rate);

/* The defaults: common/mock_knobs' table (no latency, no faults, dedupe on,
 * one notification copy, concurrency 8, no delay, retry step 1000 ms,
 * notifications on, hold 30 s, seed MOCK_DEFAULT_SEED, closeorder on, journal
 * on, bill_ready_hour 10, bill_range_enabled, bill_forge and bill_bad_line
 * off, every endpoint inheriting the top-level latency and jitter with no
 * errors or resets; refunds all SUCCESS, none refused), then the
 * environment's: refunds end after 20 min (IDEMPAY_MOCK_REFUND_DELAY_MS when
 * set and in range); client certificates required (unless
 * IDEMPAY_MOCK_REQUIRE_CLIENT_CERT is 0). */
void faults_config_defaults(faults_config *cfg);

/* Merges the JSON object obj over *base into *out (base and out may alias).
 * Every key must be a known knob of the right type and range. "endpoints" is
 * an object whose keys are endpoint names; each value is null (back to the
 * defaults: inherit latency and jitter, no errors, no resets) or an object
 * merged over that endpoint's knobs (latency_ms and jitter_ms: an integer
 * 0..60000 or null for the top-level value; error_rate, reset_rate: 0..1).
 * Returns 0, or -1 with *out untouched and an English reason in err.
 * *seed_given is set to 1 when obj names "seed" (may be NULL). Does not steal
 * obj. */
int faults_config_merge(const faults_config *base, const json_t *obj, faults_config *out,
                        int *seed_given, char *err, size_t errlen);

/* The config as a new JSON object (every knob in common/mock_knobs' order,
 * and "endpoints" with every endpoint, an inherited latency or jitter as
 * null), or NULL on OOM. */
json_t *faults_config_to_json(const faults_config *cfg);

/* The config as compact JSON text (rates with 15 significant digits), malloc'd;
 * NULL on OOM. */
char *faults_config_dump(const faults_config *cfg);

/* Draws one unifiedorder decision from r under cfg: always five draws. */
void faults_decide(rng_t *r, const faults_config *cfg, fault_decision *out);

/* Draws one decision for endpoint ep from r under cfg: always three draws
 * (jitter, reset, error); kind is FAULT_NONE, FAULT_RESET or FAULT_ERROR. */
void faults_decide_endpoint(rng_t *r, const faults_config *cfg, faults_endpoint ep,
                            fault_decision *out);

/* The retry delay in ms before delivery attempt number `retry` (1-based: the
 * first retry is 1) for a schedule step of step_ms: WeChat's 15s/15s/30s/3m/
 * 10m/20m/30m/30m/30m/60m/3h/3h/3h/6h/6h scaled by step_ms/15000. Returns -1
 * when retry is past the 15th (give up). */
long long faults_retry_delay_ms(int retry, long long step_ms);
#define FAULTS_MAX_RETRIES 15

/* Shared, thread-safe state around one config and the PRNGs. */
void faults_init(faults_state *st, const faults_config *cfg);
/* Copies the current config into *out. */
void faults_get(faults_state *st, faults_config *out);
/* Replaces the config; reseeds both PRNGs from cfg->seed when reseed != 0. */
void faults_set(faults_state *st, const faults_config *cfg, int reseed);
/* One unifiedorder decision (five draws from the main PRNG, under the lock). */
void faults_draw_order(faults_state *st, fault_decision *out);
/* One decision for another endpoint (three draws from the auxiliary PRNG,
 * under the lock). */
void faults_draw_endpoint(faults_state *st, faults_endpoint ep, fault_decision *out);

#endif
