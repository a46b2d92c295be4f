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
 * cfg->endpoints[]: latency_ms / jitter_ms may be FAULTS_INHERIT (the
 * top-level unifiedorder value applies, as before per-endpoint faults
 * existed); error_rate and reset_rate default to 0. */
#ifndef IDEMPAY_MOCK_FAULTS_H
#define IDEMPAY_MOCK_FAULTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "rng.h"

#define FAULTS_DEFAULT_SEED 1
#define FAULTS_MAX_NOTIFY_CONCURRENCY 64
#define FAULTS_MAX_LATENCY_MS 60000
/* An endpoint's latency_ms / jitter_ms that takes the top-level value (JSON null). */
#define FAULTS_INHERIT (-1LL)

/* The endpoints with knobs of their own (unifiedorder's are the top-level ones). */
typedef enum {
    FAULTS_EP_ORDERQUERY = 0,
    FAULTS_EP_CLOSEORDER,
    FAULTS_EP_REFUND,
    FAULTS_EP_DOWNLOADBILL,
    FAULTS_EP_REVERSE,        /* /secapi/pay/reverse (micropay's fence) */
    FAULTS_EP_COUNT
} faults_endpoint;

/* The endpoint's name in the config JSON ("orderquery", ...). */
const char *faults_endpoint_name(faults_endpoint ep);

typedef struct {
    long long latency_ms;   /* 0..60000, or FAULTS_INHERIT */
    long long jitter_ms;    /* 0..60000, or FAULTS_INHERIT */
    double error_rate;      /* SYSTEMERROR, nothing done */
    double reset_rate;      /* connection cut without a reply, nothing done */
} faults_endpoint_config;

typedef struct {
    long long latency_ms;              /* added to every WeChat reply, 0..60000 */
    long long jitter_ms;               /* plus uniform [0, jitter_ms], 0..60000 */
    double error_rate;                 /* SYSTEMERROR, no charge */
    double decline_rate;               /* FAIL NOTENOUGH, no charge */
    double timeout_after_charge_rate;  /* charge, then withhold the reply */
    double reset_rate;                 /* connection cut, no charge */
    bool dedupe;                       /* a charged out_trade_no answers ORDERPAID */
    long long notify_copies;           /* deliveries per charge, 0..100 */
    long long notify_concurrency;      /* deliveries in flight, 1..64 */
    long long notify_delay_ms;         /* before the first delivery, 0..3600000 */
    long long notify_retry_ms;         /* the schedule's first 15 s step, 0..900000 */
    bool notify_enabled;
    long long hold_max_ms;             /* longest withheld reply, 0..600000 */
    long long seed;                    /* 0..2^63-1 */
    bool closeorder_enabled;           /* false: /pay/closeorder is 404 */
    bool journal;                      /* append every call to the journal */
    /* WeChat's payment flows (docs/MOCK.md "Payment flows"); defaults are
     * WeChat's documented values, ./stack scales them (IDEMPAY_MOCK_DEFAULTS). */
    long long clock_offset_ms;         /* the mock's now = real time + this (clock.h) */
    bool instant_charge;               /* true: unifiedorder charges at once (the old mock) */
    long long prepay_ttl_ms;           /* a prepay's life when no time_expire is sent (2 h) */
    long long time_expire_min_ms;      /* shortest accepted time_expire - now (5 min) */
    long long closeorder_min_age_ms;   /* closeorder refused this soon after creation (5 min) */
    double close_race_rate;            /* a payment being confirmed beats a close */
    double userpaying_rate;            /* micropay answers USERPAYING */
    long long userpaying_ms;           /* a USERPAYING micropay resolves after (30 s) */
    double userpaying_pay_rate;        /* ... to paid (else to not paid) */
    long long reverse_min_wait_ms;     /* reverse answers SYSTEMERROR recall=Y before (15 s) */
    faults_endpoint_config endpoints[FAULTS_EP_COUNT];
    /* Refunds (refund_flow.h): an accepted refund ends after refund_delay_ms
     * (WeChat: within 20 min to change) as REFUNDCLOSE, CHANGE or SUCCESS;
     * a new refund is refused NOTENOUGH / USER_ACCOUNT_ABNORMAL at these rates. */
    long long refund_delay_ms;         /* 0..86400000, default 1200000 */
    double refund_close_rate;
    double refund_change_rate;
    double refund_notenough_rate;
    double refund_abnormal_rate;
    bool require_client_cert;          /* secapi calls want a verified client certificate */
    /* downloadbill (bill.h) */
    long long bill_ready_hour;         /* day D's bill from D+1 at this China hour, 0..23 (10) */
    bool bill_range_enabled;           /* honour the mock-only begin_time/end_time (off) */
    bool bill_forge;                   /* add a forged copy of every charge line (off) */
    bool bill_bad_line;                /* add an unreadable copy of every charge line (off) */
    /* APIv3 (v3_api.h): the platform certificate rotation. 0: only the
     * first platform certificate is served and signs; 1: the second is
     * announced by /v3/certificates too, the first still signs; 2: both
     * served, the second signs replies and notifications. */
    long long v3_platform_rotation;    /* 0..2 (0) */
} faults_config;

typedef enum {
    FAULT_NONE = 0,
    FAULT_RESET,                 /* cut the connection, no charge */
    FAULT_ERROR,                 /* SYSTEMERROR, no charge */
    FAULT_DECLINE,               /* FAIL, no charge */
    FAULT_TIMEOUT_AFTER_CHARGE   /* charge, then no reply */
} fault_kind;

/* The kind's name in the journal and the rules: none, reset, error,
 * decline, timeout_after_charge. */
const char *faults_kind_name(fault_kind k);
/* The kind a name names; -1 when none does. */
int faults_kind_of(const char *name);

typedef struct {
    fault_kind kind;
    long long delay_ms;   /* latency_ms + the jitter drawn */
} fault_decision;

typedef struct {
    pthread_mutex_t mu;
    faults_config cfg;
    rng_t order_rng;      /* unifiedorder decisions */
    rng_t aux_rng;        /* decisions of the other endpoints */
    rng_t flow_rng;       /* the payment flows' draws (USERPAYING, close race) */
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

/* The defaults: no latency, no faults, dedupe on, one notification copy,
 * concurrency 8, no delay, retry step 1000 ms, notifications on, hold 30 s,
 * seed FAULTS_DEFAULT_SEED, closeorder on, journal on, bill_ready_hour 10,
 * bill_range_enabled, bill_forge and bill_bad_line off, every endpoint
 * inheriting the top-level latency and jitter with no errors or resets; refunds end after
 * 20 min (IDEMPAY_MOCK_REFUND_DELAY_MS when set), all SUCCESS, none
 * refused; client certificates required (unless
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

/* The config as a new JSON object (every knob, and "endpoints" with all four
 * endpoints, an inherited latency or jitter as null), or NULL on OOM. */
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
