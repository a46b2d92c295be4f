/* mock_knobs - the mock gateway's knobs, defined once: each knob's name (its
 * key in PUT/GET /mock/config), type, range, default and field of
 * mock_config, and whether the simulator writes it into every phase's
 * config. The mock (gateway-mock/faults.c) validates, merges and prints its
 * config from this table; the simulator (sim/scenarios.c) starts each
 * phase's knobs from its defaults and writes the phase's config from it. So
 * the two cannot disagree on a knob's name, kind, range or default.
 *
 * The defaults here are the table's alone and never read the environment:
 * the mock's site defaults (gateway-mock/faults.h: the environment's refund
 * delay and client-certificate switch, IDEMPAY_MOCK_DEFAULTS) go over them.
 * A phase's config names every MOCK_KNOB_PHASE knob, so what a phase runs
 * with does not depend on a site's defaults.
 *
 * A phase's config (MOCK_KNOB_PHASE: 15 top-level knobs and four endpoints'
 * four knobs) is part of the simulator's schedule digest: adding a knob
 * without the flag changes no digest; flagging one, or changing a flagged
 * knob's name or default, changes every digest. */
#ifndef IDEMPAY_COMMON_MOCK_KNOBS_H
#define IDEMPAY_COMMON_MOCK_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define MOCK_DEFAULT_SEED 1
#define MOCK_MAX_NOTIFY_CONCURRENCY 64
#define MOCK_MAX_LATENCY_MS 60000
/* An endpoint's latency_ms / jitter_ms that takes the top-level value (JSON
 * null; any negative value is written as null). */
#define MOCK_INHERIT (-1LL)

/* The endpoints with knobs of their own (unifiedorder's are the top-level
 * ones), named as common/wx_endpoint names them. */
typedef enum {
    MOCK_EP_ORDERQUERY = 0,
    MOCK_EP_CLOSEORDER,
    MOCK_EP_REFUND,
    MOCK_EP_DOWNLOADBILL,
    MOCK_EP_REVERSE, /* /secapi/pay/reverse (micropay's fence); not in a phase's config */
    MOCK_EP_COUNT
} mock_endpoint;

typedef struct {
    long long latency_ms; /* 0..60000, or MOCK_INHERIT */
    long long jitter_ms;  /* 0..60000, or MOCK_INHERIT */
    double error_rate;    /* SYSTEMERROR, nothing done */
    double reset_rate;    /* connection cut without a reply, nothing done */
} mock_endpoint_config;

/* Every knob of the mock (the ranges and defaults are the table's, in
 * mock_knobs.c; docs/MOCK.md says what each does). */
typedef struct {
    long long latency_ms;             /* added to every WeChat reply, 0..60000 */
    long long jitter_ms;              /* plus uniform [0, jitter_ms], 0..60000 */
    double error_rate;                /* SYSTEMERROR, no charge */
    double decline_rate;              /* FAIL NOTENOUGH, no charge */
    double timeout_after_charge_rate; /* charge, then withhold the reply */
    double reset_rate;                /* connection cut, no charge */
    bool dedupe;                      /* a charged out_trade_no answers ORDERPAID */
    long long notify_copies;          /* deliveries per charge, 0..100 */
    long long notify_concurrency;     /* deliveries in flight, 1..64 */
    long long notify_delay_ms;        /* before the first delivery, 0..3600000 */
    long long notify_retry_ms;        /* the schedule's first 15 s step, 0..900000 */
    bool notify_enabled;
    long long hold_max_ms;   /* longest withheld reply, 0..600000 */
    long long seed;          /* 0..2^63-1 */
    bool closeorder_enabled; /* false: /pay/closeorder is 404 */
    bool journal;            /* append every call to the journal */
    /* WeChat's payment flows (docs/MOCK.md "Payment flows"); defaults are
     * WeChat's documented values, ./stack scales them (IDEMPAY_MOCK_DEFAULTS). */
    long long clock_offset_ms;       /* the mock's now = real time + this */
    bool instant_charge;             /* true: unifiedorder charges at once (the old mock) */
    long long prepay_ttl_ms;         /* a prepay's life when no time_expire is sent (2 h) */
    long long time_expire_min_ms;    /* shortest accepted time_expire - now (5 min) */
    long long closeorder_min_age_ms; /* closeorder refused this soon after creation (5 min) */
    double close_race_rate;          /* a payment being confirmed beats a close */
    double userpaying_rate;          /* micropay answers USERPAYING */
    long long userpaying_ms;         /* a USERPAYING micropay resolves after (30 s) */
    double userpaying_pay_rate;      /* ... to paid (else to not paid) */
    long long reverse_min_wait_ms;   /* reverse answers SYSTEMERROR recall=Y before (15 s) */
    mock_endpoint_config endpoints[MOCK_EP_COUNT];
    /* Refunds: an accepted refund ends after refund_delay_ms (WeChat: within
     * 20 min to change) as REFUNDCLOSE, CHANGE or SUCCESS; a new refund is
     * refused NOTENOUGH / USER_ACCOUNT_ABNORMAL at these rates. */
    long long refund_delay_ms; /* 0..86400000, default 1200000 */
    double refund_close_rate;
    double refund_change_rate;
    double refund_notenough_rate;
    double refund_abnormal_rate;
    bool require_client_cert; /* secapi calls want a verified client certificate */
    /* downloadbill */
    long long bill_ready_hour; /* day D's bill from D+1 at this China hour, 0..23 (10) */
    bool bill_range_enabled;   /* honour the mock-only begin_time/end_time (off) */
    bool bill_forge;           /* add a forged copy of every charge line (off) */
    bool bill_bad_line;        /* add an unreadable copy of every charge line (off) */
    /* APIv3: the platform certificate rotation. 0: only the first platform
     * certificate is served and signs; 1: the second is announced by
     * /v3/certificates too, the first still signs; 2: both served, the
     * second signs replies and notifications. */
    long long v3_platform_rotation; /* 0..2 (0) */
} mock_config;

typedef enum { MOCK_KNOB_INT, MOCK_KNOB_RATE, MOCK_KNOB_BOOL } mock_knob_type;

/* A knob's flags. */
#define MOCK_KNOB_PHASE 1u /* the simulator writes it in every phase's config */
#define MOCK_KNOB_NULL 2u  /* an integer that may also be null (MOCK_INHERIT) */

/* One knob: a field of mock_config (top level) or of mock_endpoint_config
 * (an endpoint's). An integer's field is a long long, a rate's a double in
 * 0..1, a boolean's a bool. */
typedef struct {
    const char *name;
    mock_knob_type type;
    size_t offset;      /* of its field in its struct */
    long long min, max; /* MOCK_KNOB_INT: the accepted range */
    long long dflt;     /* MOCK_KNOB_INT's default; MOCK_KNOB_BOOL's as 0 or 1 */
    double dflt_rate;   /* MOCK_KNOB_RATE's default */
    unsigned flags;     /* MOCK_KNOB_* */
} mock_knob;

/* The i-th top-level knob (in GET /mock/config's order), or NULL past the end. */
const mock_knob *mock_knob_at(int i);
/* The top-level knob of a name, or NULL. */
const mock_knob *mock_knob_of(const char *name);
/* The i-th knob of an endpoint, or NULL past the end. */
const mock_knob *mock_endpoint_knob_at(int i);
/* The endpoint knob of a name, or NULL. */
const mock_knob *mock_endpoint_knob_of(const char *name);

/* The endpoint's name in the config JSON ("orderquery", ...); "?" out of range. */
const char *mock_endpoint_name(int ep);
/* The endpoint of a name, or -1. */
int mock_endpoint_of_name(const char *name);
/* Whether the simulator writes the endpoint's knobs in every phase's config
 * (orderquery, closeorder, refund, downloadbill; not reverse). */
bool mock_endpoint_in_phase(int ep);

/* Every knob to the table's default (endpoints: inherit latency and jitter,
 * no errors, no resets). */
void mock_config_defaults(mock_config *cfg);
/* One endpoint's knobs to their defaults. */
void mock_endpoint_defaults(mock_endpoint_config *e);

/* Stores val into k's field of the struct at base, checked against k's type
 * and range (null for an integer with MOCK_KNOB_NULL, stored as
 * MOCK_INHERIT). Returns 0, or -1 with base untouched and an English reason
 * naming `where` in err ("WHERE must be between 0 and 60000", "... must be
 * an integer or null", "... a number between 0 and 1", "... true or false"). */
int mock_knob_set(const mock_knob *k, const json_t *val, void *base, const char *where, char *err,
                  size_t errlen);

/* k's field of the struct at base as new JSON: an integer (null when
 * negative and MOCK_KNOB_NULL), a real, a boolean; NULL on OOM. */
json_t *mock_knob_json(const mock_knob *k, const void *base);

/* The config as a new JSON object, "endpoints" last, or NULL on OOM. flags
 * 0: every knob and every endpoint (GET /mock/config); MOCK_KNOB_PHASE: the
 * knobs and endpoints a simulator phase writes. */
json_t *mock_config_json(const mock_config *cfg, unsigned flags);

#endif
