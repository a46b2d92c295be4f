/* rules.c - the targeted fault rules: their strict JSON form, the glob over
 * out_trade_no, and the shared list whose counts move under one lock. */
#include "rules.h"

#include <stdio.h>
#include <string.h>

#include "text_token.h"

static const char *const rules_endpoints[] = {
    "*",           "unifiedorder", "orderquery", "closeorder", "refund", "downloadbill",
    "refundquery", "micropay",     "reverse",
};
#define RULES_NENDPOINTS (sizeof(rules_endpoints) / sizeof(rules_endpoints[0]))

bool rules_glob(const char *pattern, const char *s)
{
    const char *star = NULL, *resume = NULL;

    while (*s != '\0') {
        if (*pattern == '*') {
            star = pattern++;
            resume = s;
        } else if (*pattern != '\0' && (*pattern == '?' || *pattern == *s)) {
            pattern++;
            s++;
        } else if (star != NULL) {
            /* Let the last '*' swallow one more character and retry. */
            pattern = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}

/* ---- parsing ----------------------------------------------------------------- */

static bool rules_pattern_ok(const char *p)
{
    return text_token_valid(p, 1, RULES_PATTERN_MAX, "_|*?-");
}

/* An integer lo..hi at key of obj into *out (absent or null: RULES_KEEP).
 * 0 or -1 (err names where.key). */
static int rules_int(const json_t *obj, const char *key, long long lo, long long hi, long long *out,
                     const char *where, char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    *out = RULES_KEEP;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(err, errlen, "%s.%s must be an integer from %lld to %lld", where, key, lo, hi);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

/* Refuses any key of obj not in keys (NULL-terminated). 0 or -1. */
static int rules_known_keys(const json_t *obj, const char *const *keys, const char *where,
                            char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t i = 0;
        while (keys[i] != NULL && strcmp(keys[i], key) != 0)
            i++;
        if (keys[i] == NULL) {
            snprintf(err, errlen, "unknown key \"%s.%.32s\"", where, key);
            return -1;
        }
    }
    return 0;
}

/* The rule's "fault" object into r (its endpoint already set). 0 or -1. */
static int rules_parse_fault(const json_t *f, rule *r, const char *where, char *err, size_t errlen)
{
    static const char *const keys[] = { "kind", "latency_ms", "hold_ms", NULL };
    char at[64];

    snprintf(at, sizeof(at), "%s.fault", where);
    if (!json_is_object(f) || json_object_size(f) == 0) {
        snprintf(err, errlen, "%s must be an object with kind and/or latency_ms", at);
        return -1;
    }
    if (rules_known_keys(f, keys, at, err, errlen) != 0)
        return -1;
    const json_t *k = json_object_get(f, "kind");
    int kind = FAULT_NONE;
    if (k != NULL && (!json_is_string(k) || (kind = faults_kind_of(json_string_value(k))) < 0)) {
        snprintf(err, errlen,
                 "%s.kind must be one of none, error, reset, decline, "
                 "timeout_after_charge",
                 at);
        return -1;
    }
    r->kind = (fault_kind)kind;
    bool order_only = kind == FAULT_DECLINE || kind == FAULT_TIMEOUT_AFTER_CHARGE;
    if (order_only && strcmp(r->endpoint, "unifiedorder") != 0 &&
        strcmp(r->endpoint, "micropay") != 0) { /* the charging calls */
        snprintf(err, errlen, "%s.kind %s applies to endpoints unifiedorder and micropay only", at,
                 faults_kind_name(r->kind));
        return -1;
    }
    if (rules_int(f, "latency_ms", 0, MOCK_MAX_LATENCY_MS, &r->latency_ms, at, err, errlen) != 0 ||
        rules_int(f, "hold_ms", 0, RULES_MAX_HOLD_MS, &r->hold_ms, at, err, errlen) != 0)
        return -1;
    if (r->hold_ms != RULES_KEEP && r->kind != FAULT_TIMEOUT_AFTER_CHARGE) {
        snprintf(err, errlen, "%s.hold_ms applies to kind timeout_after_charge only", at);
        return -1;
    }
    return 0;
}

/* The endpoint and out_trade_no of rule obj into r. 0 or -1. */
static int rules_parse_match(const json_t *obj, rule *r, const char *where, char *err,
                             size_t errlen)
{
    const json_t *ep = json_object_get(obj, "endpoint");
    const json_t *otn = json_object_get(obj, "out_trade_no");
    size_t i = 0;

    while (json_is_string(ep) && i < RULES_NENDPOINTS &&
           strcmp(rules_endpoints[i], json_string_value(ep)) != 0)
        i++;
    if (!json_is_string(ep) || i == RULES_NENDPOINTS) {
        snprintf(err, errlen,
                 "%s.endpoint must be one of unifiedorder, orderquery, closeorder, "
                 "refund, downloadbill, refundquery, micropay, reverse, *",
                 where);
        return -1;
    }
    snprintf(r->endpoint, sizeof(r->endpoint), "%s", rules_endpoints[i]);
    if (otn != NULL && !json_is_null(otn)) {
        if (!json_is_string(otn) || !rules_pattern_ok(json_string_value(otn))) {
            snprintf(err, errlen,
                     "%s.out_trade_no must be a pattern of 1-%d characters of "
                     "[0-9A-Za-z_|*?-] ('*' any run, '?' one character)",
                     where, RULES_PATTERN_MAX);
            return -1;
        }
        snprintf(r->pattern, sizeof(r->pattern), "%s", json_string_value(otn));
    }
    return 0;
}

static int rules_parse_one(const json_t *obj, size_t idx, rule *r, char *err, size_t errlen)
{
    static const char *const keys[] = { "endpoint", "out_trade_no", "times", "fault", NULL };
    char where[32];

    snprintf(where, sizeof(where), "rules[%zu]", idx);
    memset(r, 0, sizeof(*r));
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "%s must be an object", where);
        return -1;
    }
    if (rules_known_keys(obj, keys, where, err, errlen) != 0 ||
        rules_parse_match(obj, r, where, err, errlen) != 0 ||
        rules_int(obj, "times", 1, RULES_MAX_TIMES, &r->times, where, err, errlen) != 0)
        return -1;
    const json_t *f = json_object_get(obj, "fault");
    if (f == NULL) {
        snprintf(err, errlen, "%s.fault is missing", where);
        return -1;
    }
    if (rules_parse_fault(f, r, where, err, errlen) != 0)
        return -1;
    r->remaining = r->times; /* RULES_KEEP == RULES_UNLIMITED: no limit */
    return 0;
}

int rules_parse(const json_t *v, rules_list *out, char *err, size_t errlen)
{
    size_t i;
    json_t *obj;

    out->n = 0;
    if (json_is_null(v))
        return 0;
    if (!json_is_array(v) || json_array_size(v) > RULES_MAX) {
        snprintf(err, errlen, "rules must be an array of at most %d rules, or null", RULES_MAX);
        return -1;
    }
    json_array_foreach(v, i, obj)
    {
        if (rules_parse_one(obj, i, &out->v[i], err, errlen) != 0)
            return -1;
        out->n = i + 1;
    }
    return 0;
}

/* ---- printing ---------------------------------------------------------------- */

static json_t *rules_opt_int(long long v)
{
    return v == RULES_KEEP ? json_null() : json_integer(v);
}

static json_t *rules_rule_json(const rule *r)
{
    json_t *f = json_pack("{s:s, s:o, s:o}", "kind", faults_kind_name(r->kind), "latency_ms",
                          rules_opt_int(r->latency_ms), "hold_ms", rules_opt_int(r->hold_ms));
    if (f == NULL)
        return NULL;
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:I}", "endpoint", r->endpoint, "out_trade_no",
                     r->pattern[0] ? json_string(r->pattern) : json_null(), "times",
                     rules_opt_int(r->times), "fault", f, "remaining", rules_opt_int(r->remaining),
                     "hits", (json_int_t)r->hits);
}

json_t *rules_to_json(const rules_list *l)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < l->n; i++) {
        json_t *r = rules_rule_json(&l->v[i]);
        if (r == NULL || json_array_append_new(a, r) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

/* ---- the shared list ------------------------------------------------------------ */

void rules_init(rules_set *s)
{
    pthread_mutex_init(&s->mu, NULL);
    s->list.n = 0;
    atomic_store(&s->count, 0);
}

void rules_replace(rules_set *s, const rules_list *l)
{
    pthread_mutex_lock(&s->mu);
    s->list.n = l->n;
    memcpy(s->list.v, l->v, l->n * sizeof(l->v[0]));
    atomic_store(&s->count, l->n);
    pthread_mutex_unlock(&s->mu);
}

void rules_get(rules_set *s, rules_list *out)
{
    pthread_mutex_lock(&s->mu);
    out->n = s->list.n;
    memcpy(out->v, s->list.v, s->list.n * sizeof(s->list.v[0]));
    pthread_mutex_unlock(&s->mu);
}

bool rules_any(rules_set *s)
{
    return atomic_load(&s->count) > 0;
}

static bool rules_matches(const rule *r, const char *endpoint, const char *otn)
{
    if (r->remaining == 0)
        return false;
    if (strcmp(r->endpoint, "*") != 0 && strcmp(r->endpoint, endpoint) != 0)
        return false;
    if (r->pattern[0] == '\0')
        return true;
    return otn != NULL && otn[0] != '\0' && rules_glob(r->pattern, otn);
}

void rules_take(rules_set *s, const char *endpoint, const char *otn, rules_decision *out)
{
    out->index = -1;
    out->kind = FAULT_NONE;
    out->latency_ms = RULES_KEEP;
    out->hold_ms = RULES_KEEP;
    if (!rules_any(s))
        return;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->list.n; i++) {
        rule *r = &s->list.v[i];
        if (!rules_matches(r, endpoint, otn))
            continue;
        if (r->remaining > 0)
            r->remaining--;
        r->hits++;
        out->index = (int)i;
        out->kind = r->kind;
        out->latency_ms = r->latency_ms;
        out->hold_ms = r->hold_ms;
        break;
    }
    pthread_mutex_unlock(&s->mu);
}
