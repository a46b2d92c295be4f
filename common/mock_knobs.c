/* mock_knobs.c - the mock's knobs, one table (see mock_knobs.h): name, type,
 * field, range, default and flags of every knob, and what the mock and the
 * simulator do with them (defaults, checked stores, JSON). */
#include "mock_knobs.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "wx_endpoint.h"

#define PHASE MOCK_KNOB_PHASE
/* clang-format off */
#define KNOB_I(f, lo, hi, d, fl) { #f, MOCK_KNOB_INT, offsetof(mock_config, f), lo, hi, d, 0.0, fl }
#define KNOB_R(f, d, fl) { #f, MOCK_KNOB_RATE, offsetof(mock_config, f), 0, 0, 0, d, fl }
#define KNOB_B(f, d, fl) { #f, MOCK_KNOB_BOOL, offsetof(mock_config, f), 0, 1, d, 0.0, fl }
/* clang-format on */

/* In GET /mock/config's order. A phase's config is written with sorted keys,
 * so this order is not part of the simulator's digest. */
static const mock_knob mock_knobs[] = {
    KNOB_I(latency_ms, 0, MOCK_MAX_LATENCY_MS, 0, PHASE),
    KNOB_I(jitter_ms, 0, MOCK_MAX_LATENCY_MS, 0, PHASE),
    KNOB_R(error_rate, 0.0, PHASE),
    KNOB_R(decline_rate, 0.0, PHASE),
    KNOB_R(timeout_after_charge_rate, 0.0, PHASE),
    KNOB_R(reset_rate, 0.0, PHASE),
    KNOB_B(dedupe, 1, PHASE),
    KNOB_I(notify_copies, 0, 100, 1, PHASE),
    KNOB_I(notify_concurrency, 1, MOCK_MAX_NOTIFY_CONCURRENCY, 8, PHASE),
    KNOB_I(notify_delay_ms, 0, 3600000, 0, PHASE),
    KNOB_I(notify_retry_ms, 0, 900000, 1000, PHASE),
    KNOB_B(notify_enabled, 1, PHASE),
    KNOB_I(hold_max_ms, 0, 600000, 30000, PHASE),
    KNOB_I(seed, 0, INT64_MAX, MOCK_DEFAULT_SEED, PHASE),
    KNOB_B(closeorder_enabled, 1, PHASE),
    KNOB_B(journal, 1, 0),
    KNOB_I(clock_offset_ms, 0, 3153600000000LL, 0, 0),
    KNOB_B(instant_charge, 0, 0),
    KNOB_I(prepay_ttl_ms, 1000, 2592000000LL, 7200000, 0), /* WeChat: a prepay_id lives 2 h */
    KNOB_I(time_expire_min_ms, 0, 86400000, 300000, 0),    /* time_expire >= 5 min ahead */
    KNOB_I(closeorder_min_age_ms, 0, 86400000, 300000, 0), /* no close within 5 minutes */
    KNOB_R(close_race_rate, 0.0, 0),
    KNOB_R(userpaying_rate, 0.0, 0),
    KNOB_I(userpaying_ms, 0, 600000, 30000, 0), /* poll USERPAYING up to 30 s */
    KNOB_R(userpaying_pay_rate, 1.0, 0),
    KNOB_I(reverse_min_wait_ms, 0, 600000, 15000, 0), /* reverse >= 15 s after */
    KNOB_I(refund_delay_ms, 0, 86400000, 1200000, 0), /* a refund ends within 20 min */
    KNOB_R(refund_close_rate, 0.0, 0),
    KNOB_R(refund_change_rate, 0.0, 0),
    KNOB_R(refund_notenough_rate, 0.0, 0),
    KNOB_R(refund_abnormal_rate, 0.0, 0),
    KNOB_B(require_client_cert, 1, 0),
    KNOB_I(bill_ready_hour, 0, 23, 10, 0), /* WeChat's downloadbill page */
    KNOB_B(bill_range_enabled, 0, 0),
    KNOB_B(bill_forge, 0, 0),
    KNOB_B(bill_bad_line, 0, 0),
    KNOB_I(v3_platform_rotation, 0, 2, 0, 0),
};
#define NKNOBS ((int)(sizeof(mock_knobs) / sizeof(mock_knobs[0])))

/* clang-format off */
#define EP_KNOB_I(f) { #f, MOCK_KNOB_INT, offsetof(mock_endpoint_config, f), 0, \
                       MOCK_MAX_LATENCY_MS, MOCK_INHERIT, 0.0, PHASE | MOCK_KNOB_NULL }
#define EP_KNOB_R(f) { #f, MOCK_KNOB_RATE, offsetof(mock_endpoint_config, f), 0, 0, 0, 0.0, PHASE }
/* clang-format on */

static const mock_knob mock_ep_knobs[] = {
    EP_KNOB_I(latency_ms),
    EP_KNOB_I(jitter_ms),
    EP_KNOB_R(error_rate),
    EP_KNOB_R(reset_rate),
};
#define NEPKNOBS ((int)(sizeof(mock_ep_knobs) / sizeof(mock_ep_knobs[0])))

/* The endpoints with knobs: wx_endpoint's name, and whether a phase writes them. */
static const struct {
    wx_endpoint wx;
    bool phase;
} mock_eps[MOCK_EP_COUNT] = {
    [MOCK_EP_ORDERQUERY] = { WX_EP_ORDERQUERY, true },
    [MOCK_EP_CLOSEORDER] = { WX_EP_CLOSEORDER, true },
    [MOCK_EP_REFUND] = { WX_EP_REFUND, true },
    [MOCK_EP_DOWNLOADBILL] = { WX_EP_DOWNLOADBILL, true },
    [MOCK_EP_REVERSE] = { WX_EP_REVERSE, false },
};

static const mock_knob *knob_named(const mock_knob *table, int n, const char *name)
{
    for (int i = 0; name != NULL && i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const mock_knob *mock_knob_at(int i)
{
    return i >= 0 && i < NKNOBS ? &mock_knobs[i] : NULL;
}

const mock_knob *mock_knob_of(const char *name)
{
    return knob_named(mock_knobs, NKNOBS, name);
}

const mock_knob *mock_endpoint_knob_at(int i)
{
    return i >= 0 && i < NEPKNOBS ? &mock_ep_knobs[i] : NULL;
}

const mock_knob *mock_endpoint_knob_of(const char *name)
{
    return knob_named(mock_ep_knobs, NEPKNOBS, name);
}

const char *mock_endpoint_name(int ep)
{
    return ep >= 0 && ep < MOCK_EP_COUNT ? wx_endpoint_name(mock_eps[ep].wx) : "?";
}

int mock_endpoint_of_name(const char *name)
{
    for (int i = 0; name != NULL && i < MOCK_EP_COUNT; i++)
        if (strcmp(mock_endpoint_name(i), name) == 0)
            return i;
    return -1;
}

bool mock_endpoint_in_phase(int ep)
{
    return ep >= 0 && ep < MOCK_EP_COUNT && mock_eps[ep].phase;
}

/* Every knob of table to its default in the struct at base. */
static void knobs_default(const mock_knob *table, int n, void *base)
{
    for (int i = 0; i < n; i++) {
        char *field = (char *)base + table[i].offset;
        const mock_knob *k = &table[i];
        if (k->type == MOCK_KNOB_INT)
            memcpy(field, &k->dflt, sizeof(k->dflt));
        else if (k->type == MOCK_KNOB_RATE)
            memcpy(field, &k->dflt_rate, sizeof(k->dflt_rate));
        else {
            bool b = k->dflt != 0;
            memcpy(field, &b, sizeof(b));
        }
    }
}

void mock_endpoint_defaults(mock_endpoint_config *e)
{
    memset(e, 0, sizeof(*e));
    knobs_default(mock_ep_knobs, NEPKNOBS, e);
}

void mock_config_defaults(mock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    knobs_default(mock_knobs, NKNOBS, cfg);
    for (int i = 0; i < MOCK_EP_COUNT; i++)
        mock_endpoint_defaults(&cfg->endpoints[i]);
}

/* An integer knob's value from val: 0, or -1 (err set). */
static int knob_int(const mock_knob *k, const json_t *val, const char *where, long long *out,
                    char *err, size_t errlen)
{
    bool null_ok = (k->flags & MOCK_KNOB_NULL) != 0;
    if (null_ok && json_is_null(val)) {
        *out = MOCK_INHERIT;
        return 0;
    }
    if (!json_is_integer(val)) {
        snprintf(err, errlen, "%s must be an integer%s", where, null_ok ? " or null" : "");
        return -1;
    }
    *out = json_integer_value(val);
    if (*out < k->min || *out > k->max) {
        snprintf(err, errlen, "%s must be between %lld and %lld", where, k->min, k->max);
        return -1;
    }
    return 0;
}

int mock_knob_set(const mock_knob *k, const json_t *val, void *base, const char *where, char *err,
                  size_t errlen)
{
    char *field = (char *)base + k->offset;
    switch (k->type) {
    case MOCK_KNOB_INT: {
        long long v;
        if (knob_int(k, val, where, &v, err, errlen) != 0)
            return -1;
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    case MOCK_KNOB_RATE: {
        double v = json_is_number(val) ? json_number_value(val) : -1.0;
        if (!(v >= 0.0 && v <= 1.0)) {
            snprintf(err, errlen, "%s must be a number between 0 and 1", where);
            return -1;
        }
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    case MOCK_KNOB_BOOL: {
        if (!json_is_boolean(val)) {
            snprintf(err, errlen, "%s must be true or false", where);
            return -1;
        }
        bool v = json_is_true(val);
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    }
    return -1;
}

json_t *mock_knob_json(const mock_knob *k, const void *base)
{
    const char *field = (const char *)base + k->offset;
    switch (k->type) {
    case MOCK_KNOB_INT: {
        long long x;
        memcpy(&x, field, sizeof(x));
        return (k->flags & MOCK_KNOB_NULL) && x < 0 ? json_null() : json_integer(x);
    }
    case MOCK_KNOB_RATE: {
        double x;
        memcpy(&x, field, sizeof(x));
        return json_real(x);
    }
    case MOCK_KNOB_BOOL: {
        bool x;
        memcpy(&x, field, sizeof(x));
        return json_boolean(x);
    }
    }
    return NULL;
}

/* Sets every knob of table with all of flags at base into o. 0 or -1 (OOM). */
static int knobs_json(json_t *o, const mock_knob *table, int n, const void *base, unsigned flags)
{
    for (int i = 0; i < n; i++) {
        if ((table[i].flags & flags) != flags)
            continue;
        json_t *v = mock_knob_json(&table[i], base);
        if (v == NULL || json_object_set_new(o, table[i].name, v) != 0)
            return -1;
    }
    return 0;
}

/* "endpoints": every endpoint (flags 0) or a phase's, each with its knobs. */
static json_t *endpoints_json(const mock_config *cfg, unsigned flags)
{
    json_t *eps = json_object();
    for (int i = 0; eps != NULL && i < MOCK_EP_COUNT; i++) {
        if ((flags & MOCK_KNOB_PHASE) && !mock_eps[i].phase)
            continue;
        json_t *e = json_object();
        if (e == NULL || json_object_set_new(eps, mock_endpoint_name(i), e) != 0 ||
            knobs_json(e, mock_ep_knobs, NEPKNOBS, &cfg->endpoints[i], flags) != 0) {
            json_decref(eps);
            return NULL;
        }
    }
    return eps;
}

json_t *mock_config_json(const mock_config *cfg, unsigned flags)
{
    json_t *o = json_object();
    if (o == NULL || knobs_json(o, mock_knobs, NKNOBS, cfg, flags) != 0) {
        json_decref(o);
        return NULL;
    }
    json_t *eps = endpoints_json(cfg, flags);
    if (eps == NULL || json_object_set_new(o, "endpoints", eps) != 0) {
        json_decref(o); /* set_new stole eps even on failure */
        return NULL;
    }
    return o;
}
