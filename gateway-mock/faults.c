/* faults.c - the mock's knobs, their JSON form, and the seeded decisions.
 * common/mock_knobs' table (shared with the simulator) drives validation,
 * merging and printing, so a knob is added in one place. */
#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "env.h"

/* The i-th endpoint with knobs, or NULL past the end. */
static const char *faults_endpoint_at(int i)
{
    return i < MOCK_EP_COUNT ? mock_endpoint_name(i) : NULL;
}

/* The i-th knob of an endpoint, or NULL past the end. */
static const char *faults_endpoint_knob_at(int i)
{
    const mock_knob *k = mock_endpoint_knob_at(i);
    return k != NULL ? k->name : NULL;
}

/* "orderquery, closeorder, ...": the names name_at gives, into out. */
static void faults_name_list(const char *(*name_at)(int), char *out, size_t outlen)
{
    size_t used = 0;
    const char *name;
    out[0] = '\0';
    for (int i = 0; (name = name_at(i)) != NULL && used < outlen; i++)
        used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", name);
}

static const char *const faults_kind_names[] = {
    [FAULT_NONE] = "none",
    [FAULT_RESET] = "reset",
    [FAULT_ERROR] = "error",
    [FAULT_DECLINE] = "decline",
    [FAULT_TIMEOUT_AFTER_CHARGE] = "timeout_after_charge",
};
#define FAULTS_NKINDS (sizeof(faults_kind_names) / sizeof(faults_kind_names[0]))

const char *faults_kind_name(fault_kind k)
{
    return (unsigned)k < FAULTS_NKINDS ? faults_kind_names[k] : "none";
}

int faults_kind_of(const char *name)
{
    for (size_t i = 0; i < FAULTS_NKINDS; i++)
        if (strcmp(faults_kind_names[i], name) == 0)
            return (int)i;
    return -1;
}

void faults_config_defaults(faults_config *cfg)
{
    mock_config_defaults(cfg);
    /* WeChat's 20 min (a refund to change; docs/MOCK.md) unless the
     * environment scales it (./stack does, and prints it). */
    const mock_knob *delay_knob = mock_knob_of("refund_delay_ms");
    long long delay = env_int("IDEMPAY_MOCK_REFUND_DELAY_MS", delay_knob->dflt);
    if (delay >= delay_knob->min && delay <= delay_knob->max)
        cfg->refund_delay_ms = delay;
    cfg->require_client_cert = env_int("IDEMPAY_MOCK_REQUIRE_CLIENT_CERT", 1) != 0;
}

/* Merges the "endpoints" object obj into next. 0 or -1 (err set). */
static int faults_merge_endpoints(const json_t *obj, faults_config *next, char *err, size_t errlen)
{
    const char *name, *key;
    json_t *eobj, *val;

    char known[96];
    faults_name_list(faults_endpoint_at, known, sizeof(known));
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "endpoints must be an object of endpoint names (%s)", known);
        return -1;
    }
    json_object_foreach((json_t *)obj, name, eobj)
    {
        int ep = mock_endpoint_of_name(name);
        if (ep < 0) {
            snprintf(err, errlen, "unknown endpoint \"%.32s\" in endpoints (%s)", name, known);
            return -1;
        }
        faults_endpoint_config *e = &next->endpoints[ep];
        if (json_is_null(eobj)) {
            mock_endpoint_defaults(e);
            continue;
        }
        if (!json_is_object(eobj)) {
            snprintf(err, errlen, "endpoints.%s must be an object or null", name);
            return -1;
        }
        json_object_foreach(eobj, key, val)
        {
            char where[96], knobs[96];
            const mock_knob *k = mock_endpoint_knob_of(key);
            snprintf(where, sizeof(where), "endpoints.%s.%.32s", name, key);
            if (k == NULL) {
                faults_name_list(faults_endpoint_knob_at, knobs, sizeof(knobs));
                snprintf(err, errlen, "unknown knob \"%s\" (%s)", where, knobs);
                return -1;
            }
            if (mock_knob_set(k, val, e, where, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

int faults_config_merge(const faults_config *base, const json_t *obj, faults_config *out,
                        int *seed_given, char *err, size_t errlen)
{
    faults_config next = *base;
    const char *key;
    json_t *val;
    int seeded = 0;

    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "the config must be a JSON object");
        return -1;
    }
    json_object_foreach((json_t *)obj, key, val)
    {
        if (strcmp(key, "endpoints") == 0) {
            if (faults_merge_endpoints(val, &next, err, errlen) != 0)
                return -1;
            continue;
        }
        const mock_knob *k = mock_knob_of(key);
        if (k == NULL) {
            snprintf(err, errlen, "unknown knob \"%.64s\"", key);
            return -1;
        }
        if (mock_knob_set(k, val, &next, k->name, err, errlen) != 0)
            return -1;
        if (strcmp(k->name, "seed") == 0)
            seeded = 1;
    }
    *out = next;
    if (seed_given != NULL)
        *seed_given = seeded;
    return 0;
}

json_t *faults_config_to_json(const faults_config *cfg)
{
    return mock_config_json(cfg, 0);
}

char *faults_config_dump(const faults_config *cfg)
{
    json_t *o = faults_config_to_json(cfg);
    if (o == NULL)
        return NULL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    return s;
}

void faults_decide(rng_t *r, const faults_config *cfg, fault_decision *out)
{
    /* Five draws, always, in this order: the sequence must not depend on
     * which fault fires. */
    uint64_t j = rng_next(r);
    long long jitter = cfg->jitter_ms > 0 ? (long long)(j % (uint64_t)(cfg->jitter_ms + 1)) : 0;
    int reset = rng_chance(r, cfg->reset_rate);
    int error = rng_chance(r, cfg->error_rate);
    int decline = rng_chance(r, cfg->decline_rate);
    int timeout = rng_chance(r, cfg->timeout_after_charge_rate);

    out->delay_ms = cfg->latency_ms + jitter;
    if (reset)
        out->kind = FAULT_RESET;
    else if (error)
        out->kind = FAULT_ERROR;
    else if (decline)
        out->kind = FAULT_DECLINE;
    else if (timeout)
        out->kind = FAULT_TIMEOUT_AFTER_CHARGE;
    else
        out->kind = FAULT_NONE;
}

void faults_decide_endpoint(rng_t *r, const faults_config *cfg, faults_endpoint ep,
                            fault_decision *out)
{
    const faults_endpoint_config *e = &cfg->endpoints[ep];
    long long latency = e->latency_ms == MOCK_INHERIT ? cfg->latency_ms : e->latency_ms;
    long long jitter_max = e->jitter_ms == MOCK_INHERIT ? cfg->jitter_ms : e->jitter_ms;
    /* Three draws, always, in this order. */
    uint64_t j = rng_next(r);
    long long jitter = jitter_max > 0 ? (long long)(j % (uint64_t)(jitter_max + 1)) : 0;
    int reset = rng_chance(r, e->reset_rate);
    int error = rng_chance(r, e->error_rate);

    out->delay_ms = latency + jitter;
    out->kind = reset ? FAULT_RESET : error ? FAULT_ERROR : FAULT_NONE;
}

long long faults_retry_delay_ms(int retry, long long step_ms)
{
    /* WeChat's notification schedule in seconds; 15 s is one step. */
    static const long long schedule_s[FAULTS_MAX_RETRIES] = {
        15, 15, 30, 180, 600, 1200, 1800, 1800, 1800, 3600, 10800, 10800, 10800, 21600, 21600,
    };
    if (retry < 1 || retry > FAULTS_MAX_RETRIES || step_ms < 0)
        return -1;
    /* step_ms <= 900000 and s <= 21600: the product fits easily. */
    return step_ms * schedule_s[retry - 1] / 15;
}

static void faults_reseed(faults_state *st, long long seed)
{
    uint64_t sm = (uint64_t)seed;
    rng_seed(&st->order_rng, (uint64_t)seed);
    rng_seed(&st->aux_rng, rng_splitmix64(&sm) ^ 0x6D6F636B61757821ULL);
    rng_seed(&st->flow_rng, rng_splitmix64(&sm) ^ 0x666C6F7773212121ULL);
}

void faults_init(faults_state *st, const faults_config *cfg)
{
    pthread_mutex_init(&st->mu, NULL);
    st->cfg = *cfg;
    faults_reseed(st, cfg->seed);
    mock_clock_set_offset_ms(cfg->clock_offset_ms);
}

void faults_get(faults_state *st, faults_config *out)
{
    pthread_mutex_lock(&st->mu);
    *out = st->cfg;
    pthread_mutex_unlock(&st->mu);
}

void faults_set(faults_state *st, const faults_config *cfg, int reseed)
{
    pthread_mutex_lock(&st->mu);
    st->cfg = *cfg;
    if (reseed)
        faults_reseed(st, cfg->seed);
    mock_clock_set_offset_ms(cfg->clock_offset_ms);
    pthread_mutex_unlock(&st->mu);
}

bool faults_draw_flow(faults_state *st, double rate)
{
    if (rate <= 0.0)
        return false;
    if (rate >= 1.0)
        return true;
    pthread_mutex_lock(&st->mu);
    bool hit = rng_chance(&st->flow_rng, rate) != 0;
    pthread_mutex_unlock(&st->mu);
    return hit;
}

void faults_config_site_defaults(faults_config *cfg, char *err, size_t errlen)
{
    char why[200] = "";
    faults_config_defaults(cfg);
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    const char *text = env_str("IDEMPAY_MOCK_DEFAULTS", NULL);
    if (text == NULL || text[0] == '\0')
        return;
    json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (obj == NULL)
        snprintf(why, sizeof(why), "not a JSON object");
    else
        (void)faults_config_merge(cfg, obj, cfg, NULL, why, sizeof(why));
    json_decref(obj);
    if (why[0] != '\0' && err != NULL && errlen > 0)
        snprintf(err, errlen, "IDEMPAY_MOCK_DEFAULTS ignored: %s", why);
}

void faults_draw_order(faults_state *st, fault_decision *out)
{
    pthread_mutex_lock(&st->mu);
    faults_decide(&st->order_rng, &st->cfg, out);
    pthread_mutex_unlock(&st->mu);
}

void faults_draw_endpoint(faults_state *st, faults_endpoint ep, fault_decision *out)
{
    pthread_mutex_lock(&st->mu);
    faults_decide_endpoint(&st->aux_rng, &st->cfg, ep, out);
    pthread_mutex_unlock(&st->mu);
}
