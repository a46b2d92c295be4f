/* faults.c - the mock's knobs, their JSON form, and the seeded decisions.
 * A knob table drives validation, merging and printing, so a knob is added
 * in one place. */
#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { KNOB_INT, KNOB_RATE, KNOB_BOOL } knob_type;

typedef struct {
    const char *name;
    knob_type type;
    size_t offset;
    long long min, max;   /* KNOB_INT only */
} knob;

#define KNOB_I(f, lo, hi) { #f, KNOB_INT, offsetof(faults_config, f), lo, hi }
#define KNOB_R(f) { #f, KNOB_RATE, offsetof(faults_config, f), 0, 0 }
#define KNOB_B(f) { #f, KNOB_BOOL, offsetof(faults_config, f), 0, 0 }

static const knob faults_knobs[] = {
    KNOB_I(latency_ms, 0, 60000),
    KNOB_I(jitter_ms, 0, 60000),
    KNOB_R(error_rate),
    KNOB_R(decline_rate),
    KNOB_R(timeout_after_charge_rate),
    KNOB_R(reset_rate),
    KNOB_B(dedupe),
    KNOB_I(notify_copies, 0, 100),
    KNOB_I(notify_concurrency, 1, FAULTS_MAX_NOTIFY_CONCURRENCY),
    KNOB_I(notify_delay_ms, 0, 3600000),
    KNOB_I(notify_retry_ms, 0, 900000),
    KNOB_B(notify_enabled),
    KNOB_I(hold_max_ms, 0, 600000),
    KNOB_I(seed, 0, INT64_MAX),
};
#define FAULTS_NKNOBS (sizeof(faults_knobs) / sizeof(faults_knobs[0]))

void faults_config_defaults(faults_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->dedupe = true;
    cfg->notify_copies = 1;
    cfg->notify_concurrency = 8;
    cfg->notify_delay_ms = 0;
    cfg->notify_retry_ms = 1000;
    cfg->notify_enabled = true;
    cfg->hold_max_ms = 30000;
    cfg->seed = FAULTS_DEFAULT_SEED;
}

static const knob *faults_knob(const char *name)
{
    for (size_t i = 0; i < FAULTS_NKNOBS; i++)
        if (strcmp(faults_knobs[i].name, name) == 0)
            return &faults_knobs[i];
    return NULL;
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
    json_object_foreach((json_t *)obj, key, val) {
        const knob *k = faults_knob(key);
        if (k == NULL) {
            snprintf(err, errlen, "unknown knob \"%.64s\"", key);
            return -1;
        }
        char *field = (char *)&next + k->offset;
        switch (k->type) {
        case KNOB_INT: {
            if (!json_is_integer(val)) {
                snprintf(err, errlen, "%s must be an integer", k->name);
                return -1;
            }
            long long v = json_integer_value(val);
            if (v < k->min || v > k->max) {
                snprintf(err, errlen, "%s must be between %lld and %lld", k->name, k->min, k->max);
                return -1;
            }
            memcpy(field, &v, sizeof(v));
            if (strcmp(k->name, "seed") == 0)
                seeded = 1;
            break;
        }
        case KNOB_RATE: {
            if (!json_is_number(val)) {
                snprintf(err, errlen, "%s must be a number between 0 and 1", k->name);
                return -1;
            }
            double v = json_number_value(val);
            if (!(v >= 0.0 && v <= 1.0)) {
                snprintf(err, errlen, "%s must be a number between 0 and 1", k->name);
                return -1;
            }
            memcpy(field, &v, sizeof(v));
            break;
        }
        case KNOB_BOOL: {
            if (!json_is_boolean(val)) {
                snprintf(err, errlen, "%s must be true or false", k->name);
                return -1;
            }
            bool v = json_is_true(val);
            memcpy(field, &v, sizeof(v));
            break;
        }
        }
    }
    *out = next;
    if (seed_given != NULL)
        *seed_given = seeded;
    return 0;
}

json_t *faults_config_to_json(const faults_config *cfg)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < FAULTS_NKNOBS; i++) {
        const knob *k = &faults_knobs[i];
        const char *field = (const char *)cfg + k->offset;
        json_t *v = NULL;
        switch (k->type) {
        case KNOB_INT: {
            long long x;
            memcpy(&x, field, sizeof(x));
            v = json_integer(x);
            break;
        }
        case KNOB_RATE: {
            double x;
            memcpy(&x, field, sizeof(x));
            v = json_real(x);
            break;
        }
        case KNOB_BOOL: {
            bool x;
            memcpy(&x, field, sizeof(x));
            v = json_boolean(x);
            break;
        }
        }
        if (v == NULL || json_object_set_new(o, k->name, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
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
}

void faults_init(faults_state *st, const faults_config *cfg)
{
    pthread_mutex_init(&st->mu, NULL);
    st->cfg = *cfg;
    faults_reseed(st, cfg->seed);
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
    pthread_mutex_unlock(&st->mu);
}

void faults_draw_order(faults_state *st, fault_decision *out)
{
    pthread_mutex_lock(&st->mu);
    faults_decide(&st->order_rng, &st->cfg, out);
    pthread_mutex_unlock(&st->mu);
}

long long faults_draw_latency(faults_state *st)
{
    pthread_mutex_lock(&st->mu);
    long long d = st->cfg.latency_ms + rng_range(&st->aux_rng, 0, st->cfg.jitter_ms);
    pthread_mutex_unlock(&st->mu);
    return d;
}
