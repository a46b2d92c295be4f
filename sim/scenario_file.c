/* scenario_file.c - loading, validating and generating a --scenario-file
 * (see scenario_file.h). Validation happens at load, before anything is
 * contacted; generation hands each phase to its scenario generator through
 * scenarios_build with a one-scenario plan. */
#include "scenario_file.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct {
    int scenario;
    size_t orders;     /* 0: its weight's share */
    double duration_s; /* < 0: its weight's share (nemesis: the run's duration) */
    char *mock;        /* file knobs as a JSON object text (top + phase), NULL none */
    gen_client_override client;
} sf_phase;

struct sim_scenario_file {
    const char *path;
    scenario_file_run run;
    sf_phase phase[SCENARIO_FILE_PHASES_MAX];
    size_t nphases;
    unsigned mask;
    int plain;       /* phases only name scenarios, once each, in contract order */
    char sha256[65]; /* of the canonical JSON */
};

/* ---- errors that name the field ---- */

typedef struct {
    const char *path;
    char *err;
    size_t errlen;
} sf_ctx;

__attribute__((format(printf, 3, 4))) static int sf_fail(sf_ctx *x, const char *field,
                                                         const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(x->err, x->errlen, "--scenario-file %s: %s: %s", x->path, field, msg);
    return -1;
}

/* Every key of obj is one of known (NULL-terminated). */
static int sf_known_keys(sf_ctx *x, const char *field, json_t *obj, const char *const *known)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        size_t i = 0;
        (void)v;
        while (known[i] != NULL && strcmp(known[i], key) != 0)
            i++;
        if (known[i] == NULL) {
            char list[256] = "";
            for (size_t k = 0; known[k] != NULL; k++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                         known[k]);
            return sf_fail(x, field, "unknown field '%s' (known: %s)", key, list);
        }
    }
    return 0;
}

/* An integer in [lo, hi] (absent: *out unchanged, 0). */
static int sf_int(sf_ctx *x, json_t *obj, const char *key, const char *field, long long lo,
                  long long hi, long long *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return sf_fail(x, field, "'%s' needs an integer from %lld to %lld", key, lo, hi);
    *out = json_integer_value(v);
    return 0;
}

static int sf_number(sf_ctx *x, json_t *obj, const char *key, const char *field, double lo,
                     double hi, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) >= lo && json_number_value(v) <= hi))
        return sf_fail(x, field, "'%s' needs a number from %g to %g", key, lo, hi);
    *out = json_number_value(v);
    return 0;
}

/* ---- mock knobs: the names and kinds of the generators' own config ---- */

/* The defaults as the generators write them: the reference for names and
 * kinds (integer, fraction, boolean, endpoints). */
static json_t *sf_reference_knobs(void)
{
    sim_mock_knobs k;
    char cfg[SCHED_MOCK_CONFIG_MAX], err[128];
    scenarios_mock_defaults(&k);
    if (scenarios_mock_json(&k, NULL, cfg, sizeof(cfg), err, sizeof(err)) < 0)
        return NULL;
    return json_loads(cfg, 0, NULL);
}

/* v fits a knob whose default is ref: the same kind, rates within 0..1; a
 * null default (an endpoint's latency: inherit) takes null or an integer. */
static int sf_knob_fits(const json_t *ref, const json_t *v)
{
    if (json_is_null(ref) && json_is_null(v))
        return 1;
    if (json_is_boolean(ref))
        return json_is_boolean(v);
    if (json_is_real(ref))
        return json_is_number(v) && json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0;
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static const char *sf_kind_text(const json_t *ref)
{
    return json_is_null(ref)      ? "an integer (0 or more) or null"
           : json_is_boolean(ref) ? "true or false"
           : json_is_real(ref)    ? "a fraction from 0 to 1"
                                  : "an integer, 0 or more";
}

/* "endpoints": {"refund": {"error_rate": 0.2}}: known endpoints and knobs.
 * Completed with the defaults so that each endpoint replaces the
 * generator's as a whole (the mock merges configs: nothing is inherited). */
static int sf_endpoints(sf_ctx *x, const char *field, json_t *eps, const json_t *ref)
{
    const char *name, *knob;
    json_t *ep, *v;
    if (!json_is_object(eps))
        return sf_fail(x, field, "'endpoints' needs an object of endpoint names");
    json_object_foreach(eps, name, ep)
    {
        const json_t *rep = json_object_get(ref, name);
        if (rep == NULL)
            return sf_fail(x, field,
                           "unknown endpoint '%s' in endpoints (orderquery, "
                           "closeorder, refund, downloadbill)",
                           name);
        if (!json_is_object(ep))
            return sf_fail(x, field, "endpoints.%s needs an object", name);
        json_object_foreach(ep, knob, v)
        {
            const json_t *r = json_object_get(rep, knob);
            if (r == NULL)
                return sf_fail(x, field, "endpoints.%s: unknown knob '%s'", name, knob);
            if (!sf_knob_fits(r, v))
                return sf_fail(x, field, "endpoints.%s.%s needs %s", name, knob, sf_kind_text(r));
        }
    }
    json_t *full = json_deep_copy(ref);
    if (full == NULL)
        return sf_fail(x, field, "out of memory");
    json_object_foreach(eps, name, ep) json_object_update(json_object_get(full, name), ep);
    int rc = json_object_update(eps, full);
    json_decref(full);
    return rc == 0 ? 0 : sf_fail(x, field, "out of memory");
}

/* The "mock" object of field: knobs the generators know, of their kind. */
static int sf_mock(sf_ctx *x, const char *field, json_t *mock, const json_t *ref)
{
    const char *key;
    json_t *v;
    if (!json_is_object(mock))
        return sf_fail(x, field, "'mock' needs an object of mock knobs");
    json_object_foreach(mock, key, v)
    {
        const json_t *r = json_object_get(ref, key);
        if (r == NULL)
            return sf_fail(x, field, "unknown mock knob '%s' (see docs/MOCK.md)", key);
        if (strcmp(key, "endpoints") == 0) {
            if (sf_endpoints(x, field, v, r) < 0)
                return -1;
        } else if (!sf_knob_fits(r, v)) {
            return sf_fail(x, field, "mock knob '%s' needs %s", key, sf_kind_text(r));
        }
    }
    return 0;
}

/* ---- client behaviour: gen_client's fields ---- */

/* An integer or [min, max] in [lo, hi]; 1 when given, 0 absent, -1 bad. */
static int sf_range(sf_ctx *x, json_t *obj, const char *key, const char *field, long long lo,
                    long long hi, uint32_t *min, uint32_t *max)
{
    json_t *v = json_object_get(obj, key);
    json_t *a = json_is_array(v) && json_array_size(v) == 2 ? json_array_get(v, 0) : v;
    json_t *b = json_is_array(v) && json_array_size(v) == 2 ? json_array_get(v, 1) : v;
    if (v == NULL)
        return 0;
    if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(a) < lo ||
        json_integer_value(b) > hi || json_integer_value(a) > json_integer_value(b))
        return sf_fail(x, field,
                       "'%s' needs an integer from %lld to %lld, or [min, max] of "
                       "such",
                       key, lo, hi);
    *min = (uint32_t)json_integer_value(a);
    *max = (uint32_t)json_integer_value(b);
    return 1;
}

static int sf_share(sf_ctx *x, json_t *obj, const char *key, const char *field, double *out)
{
    if (json_object_get(obj, key) == NULL)
        return 0;
    return sf_number(x, obj, key, field, 0.0, 1.0, out) < 0 ? -1 : 1;
}

/* The "client" object of field over *o (fields it names are set). */
static int sf_client(sf_ctx *x, const char *field, json_t *cl, gen_client_override *o)
{
    static const char *const known[] = { "attempts",
                                         "timeout_ms",
                                         "backoff_ms",
                                         "patience_ms",
                                         "poll_share",
                                         "retry_after_decline_share",
                                         "idempotency_key_share",
                                         "token_share",
                                         NULL };
    static const struct {
        const char *key;
        unsigned bit;
        size_t off;
    } shares[] = { { "token_share", GEN_CLIENT_TOKEN_SHARE, offsetof(gen_client, token_share) },
                   { "idempotency_key_share", GEN_CLIENT_IDEM_SHARE,
                     offsetof(gen_client, idem_share) },
                   { "poll_share", GEN_CLIENT_POLL_SHARE, offsetof(gen_client, poll_share) },
                   { "retry_after_decline_share", GEN_CLIENT_RETRY_DECLINED,
                     offsetof(gen_client, retry_declined_share) } };
    if (!json_is_object(cl))
        return sf_fail(x, field, "'client' needs an object");
    if (sf_known_keys(x, field, cl, known) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
        int r = sf_share(x, cl, shares[i].key, field, (double *)((char *)&o->c + shares[i].off));
        if (r < 0)
            return -1;
        o->set |= r ? shares[i].bit : 0;
    }
    uint32_t lo = 0, hi = 0;
    int r = sf_range(x, cl, "attempts", field, 1, 255, &lo, &hi);
    if (r > 0) {
        o->c.min_attempts = (int)lo;
        o->c.max_attempts = (int)hi;
        o->set |= GEN_CLIENT_ATTEMPTS;
    }
    if (r < 0 || (r = sf_range(x, cl, "timeout_ms", field, 1, 600000, &o->c.min_timeout_ms,
                               &o->c.max_timeout_ms)) < 0)
        return -1;
    o->set |= r ? GEN_CLIENT_TIMEOUT : 0;
    if ((r = sf_range(x, cl, "backoff_ms", field, 0, 60000, &o->c.min_backoff_ms,
                      &o->c.max_backoff_ms)) < 0)
        return -1;
    o->set |= r ? GEN_CLIENT_BACKOFF : 0;
    if ((r = sf_range(x, cl, "patience_ms", field, 1, 3600000, &lo, &hi)) < 0)
        return -1;
    if (r > 0 && lo != hi)
        return sf_fail(x, field, "'patience_ms' is one number");
    o->c.patience_ms = r ? lo : o->c.patience_ms;
    o->set |= r ? GEN_CLIENT_PATIENCE : 0;
    return 0;
}

/* ---- the file ---- */

/* The phase's knobs: the file's top-level ones with its own merged over
 * them, as a JSON object text in *out (NULL when neither has any). */
static int sf_phase_mock(sf_ctx *x, const char *field, json_t *top, json_t *mine, const json_t *ref,
                         char **out)
{
    *out = NULL;
    if (mine != NULL && sf_mock(x, field, mine, ref) < 0)
        return -1;
    if (top == NULL && mine == NULL)
        return 0;
    json_t *m = top != NULL ? json_deep_copy(top) : json_object();
    if (m == NULL || (mine != NULL && json_object_update(m, mine) != 0) ||
        (*out = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
        json_decref(m);
        return sf_fail(x, field, "out of memory");
    }
    json_decref(m);
    return 0;
}

/* Phase i: its scenario, share, knobs and clients. *plain is cleared when
 * it sets anything but the scenario. */
static int sf_phase_parse(sf_ctx *x, size_t i, json_t *ph, json_t *top_mock,
                          const gen_client_override *top_client, const json_t *ref, sf_phase *out,
                          int *plain)
{
    static const char *const known[] = { "scenario", "description", "orders", "duration_s",
                                         "mock",     "client",      NULL };
    char field[32];
    long long orders = 0;
    snprintf(field, sizeof(field), "phases[%zu]", i);
    if (!json_is_object(ph))
        return sf_fail(x, field, "a phase is an object with a \"scenario\"");
    if (json_object_get(ph, "concurrency") != NULL)
        return sf_fail(x, field,
                       "'concurrency' is the run's (one pool of client workers): set "
                       "it at the top of the file or with --concurrency");
    if (sf_known_keys(x, field, ph, known) < 0)
        return -1;
    const char *name = json_string_value(json_object_get(ph, "scenario"));
    out->scenario = name != NULL ? sched_scenario_parse(name) : -1;
    if (out->scenario < 0)
        return sf_fail(x, field,
                       "'scenario' needs a scenario name (double-click, retry-storm, "
                       "callback-storm, token-replay, forged-callback, order-mismatch, "
                       "gateway-chaos, crash, nemesis, ping)");
    out->duration_s = -1.0;
    if (sf_int(x, ph, "orders", field, 1, 1000000, &orders) < 0 ||
        sf_number(x, ph, "duration_s", field, 0, 86400, &out->duration_s) < 0)
        return -1;
    out->orders = (size_t)orders;
    if (out->scenario == SC_PING && orders > 0)
        return sf_fail(x, field, "ping sends no orders: give it a duration_s only");
    out->client = *top_client;
    json_t *cl = json_object_get(ph, "client");
    if (cl != NULL && (out->scenario == SC_NEMESIS || out->scenario == SC_PING))
        return sf_fail(x, field, "%s draws its own clients: 'client' does not apply", name);
    char sub[48];
    snprintf(sub, sizeof(sub), "%s.client", field);
    if (cl != NULL && sf_client(x, sub, cl, &out->client) < 0)
        return -1;
    snprintf(sub, sizeof(sub), "%s.mock", field);
    if (sf_phase_mock(x, sub, top_mock, json_object_get(ph, "mock"), ref, &out->mock) < 0)
        return -1;
    const char *key;
    json_t *v;
    json_object_foreach(ph, key, v)
    {
        (void)v;
        if (strcmp(key, "scenario") != 0 && strcmp(key, "description") != 0)
            *plain = 0;
    }
    return 0;
}

/* SHA-256 of the file's canonical JSON (sorted keys, compact). */
static int sf_digest(json_t *root, char out[65])
{
    char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int ok = text != NULL && EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL) == 1 &&
             n == 32;
    for (unsigned int i = 0; ok && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    free(text);
    return ok ? 0 : -1;
}

/* The top level: run values, default knobs and clients, then each phase. */
static int sf_parse(sf_ctx *x, json_t *root, sim_scenario_file *f)
{
    static const char *const known[] = { "description", "orders", "duration_s", "concurrency",
                                         "mock",        "client", "phases",     NULL };
    long long orders = 0, conc = 0;
    gen_client_override top_client;
    memset(&top_client, 0, sizeof(top_client));
    if (!json_is_object(root))
        return sf_fail(x, "top level", "a scenario file is a JSON object with \"phases\"");
    if (sf_known_keys(x, "top level", root, known) < 0 ||
        sf_int(x, root, "orders", "top level", 1, 1000000, &orders) < 0 ||
        sf_int(x, root, "concurrency", "top level", 1, 1024, &conc) < 0 ||
        sf_number(x, root, "duration_s", "top level", 0, 86400, &f->run.duration_s) < 0)
        return -1;
    f->run.orders = (size_t)orders;
    f->run.concurrency = (int)conc;
    json_t *phases = json_object_get(root, "phases"), *ref = sf_reference_knobs();
    json_t *mock = json_object_get(root, "mock"), *cl = json_object_get(root, "client");
    int rc = -1;
    if (ref == NULL)
        sf_fail(x, "top level", "out of memory");
    else if (!json_is_array(phases) || json_array_size(phases) == 0 ||
             json_array_size(phases) > SCENARIO_FILE_PHASES_MAX)
        sf_fail(x, "phases", "needs an array of 1 to %d phases", SCENARIO_FILE_PHASES_MAX);
    else if ((mock == NULL || sf_mock(x, "mock", mock, ref) == 0) &&
             (cl == NULL || sf_client(x, "client", cl, &top_client) == 0))
        rc = 0;
    f->plain = mock == NULL && cl == NULL;
    for (size_t i = 0; rc == 0 && i < json_array_size(phases); i++) {
        sf_phase *p = &f->phase[f->nphases++];
        rc = sf_phase_parse(x, i, json_array_get(phases, i), mock, &top_client, ref, p, &f->plain);
        if (rc == 0 && i > 0 && p->scenario <= f->phase[i - 1].scenario)
            f->plain = 0; /* --scenario runs each once, in the contract's order */
        f->mask |= rc == 0 ? 1u << p->scenario : 0;
    }
    json_decref(ref);
    return rc;
}

sim_scenario_file *scenario_file_load(const char *path, char *err, size_t errlen)
{
    sf_ctx x = { .path = path, .err = err, .errlen = errlen };
    json_error_t je;
    sim_scenario_file *f = calloc(1, sizeof(*f));
    json_t *root = NULL;
    FILE *in = fopen(path, "rb");
    long size = -1;
    if (in != NULL && fseek(in, 0, SEEK_END) == 0)
        size = ftell(in);
    if (in != NULL)
        fclose(in);
    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->path = path;
    f->run.duration_s = -1.0;
    if (size < 0 || size > SCENARIO_FILE_MAX_BYTES) {
        snprintf(err, errlen, "--scenario-file %s: %s", path,
                 size < 0 ? "cannot read it" : "larger than 1 MiB");
    } else if ((root = json_load_file(path, JSON_REJECT_DUPLICATES, &je)) == NULL) {
        snprintf(err, errlen, "--scenario-file %s:%d:%d: %s", path, je.line, je.column, je.text);
    } else if (sf_digest(root, f->sha256) < 0) {
        snprintf(err, errlen, "--scenario-file %s: cannot hash it", path);
    } else if (sf_parse(&x, root, f) == 0) {
        json_decref(root);
        return f;
    }
    json_decref(root);
    scenario_file_free(f);
    return NULL;
}

void scenario_file_free(sim_scenario_file *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nphases; i++)
        free(f->phase[i].mock);
    free(f);
}

scenario_file_run scenario_file_run_values(const sim_scenario_file *f)
{
    return f->run;
}

unsigned scenario_file_mask(const sim_scenario_file *f)
{
    return f->mask;
}

/* ---- generating ---- */

/* Each phase's orders and duration: its own, or its weight's share of the
 * run's (as --scenario shares them: orders by weight among the phases that
 * do not set theirs, the last taking the rest; time likewise, the nemesis
 * taking the run's duration for its episodes). */
static void sf_shares(const sim_scenario_file *f, const sim_plan *plan, size_t *orders,
                      double *duration_s)
{
    size_t fixed = 0, given = 0, last = SIZE_MAX;
    unsigned osum = 0, wsum = 0;
    for (size_t i = 0; i < f->nphases; i++) {
        const sf_phase *p = &f->phase[i];
        unsigned w = scenarios_weight(p->scenario);
        fixed += p->orders;
        if (p->orders == 0 && !(scenarios_flags(p->scenario) & SCF_NO_ORDERS)) {
            osum += w;
            last = i;
        }
        wsum += p->duration_s < 0 && !(scenarios_flags(p->scenario) & SCF_OWN_LENGTH) ? w : 0;
    }
    size_t pool = plan->orders > fixed ? plan->orders - fixed : 0;
    for (size_t i = 0; i < f->nphases; i++) {
        const sf_phase *p = &f->phase[i];
        unsigned w = scenarios_weight(p->scenario);
        orders[i] = p->orders;
        if (p->orders == 0 && !(scenarios_flags(p->scenario) & SCF_NO_ORDERS)) {
            orders[i] = i == last ? (pool > given ? pool - given : 0) : pool * w / osum;
            given += orders[i];
        }
        uint32_t budget_ms = p->duration_s >= 0 ? (uint32_t)(p->duration_s * 1000.0)
                             : wsum             ? (uint32_t)(plan->duration_s * 1000.0 * w / wsum)
                                                : 0;
        /* a quarter of a ms over, so that scenarios_build truncates it back to budget_ms */
        duration_s[i] = (scenarios_flags(p->scenario) & SCF_OWN_LENGTH) && p->duration_s < 0
                            ? plan->duration_s
                            : ((double)budget_ms + 0.25) / 1000.0;
    }
}

/* The file's knobs with --mock-config merged over them (the command line
 * wins). malloc'd JSON text, or NULL when there are none; *oom on OOM. */
static char *sf_merge_mock(const char *file_mock, const char *cli, int *oom)
{
    *oom = 0;
    if (file_mock == NULL || cli == NULL || *cli == '\0')
        return file_mock != NULL ? strdup(file_mock) : NULL;
    json_t *m = json_loads(file_mock, 0, NULL), *c = json_loads(cli, 0, NULL);
    char *text = NULL;
    if (m != NULL && json_is_object(c) && json_object_update(m, c) == 0)
        text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    else if (m != NULL && c != NULL && !json_is_object(c))
        text = strdup(cli); /* not an object: scenarios_mock_json says so */
    json_decref(m);
    json_decref(c);
    *oom = text == NULL;
    return text;
}

/* The schedule's parameters: the file's hash, then what --scenario would
 * say of the run (mask, orders, duration, concurrency, chaos, windows). */
static void sf_params(const sim_scenario_file *f, const sim_plan *plan, sim_schedule *s)
{
    char run[sizeof(s->params) - 96]; /* room for "scenario-file=<64 hex> " */
    sim_plan p = *plan;
    p.mask = f->mask;
    scenarios_params(&p, run, sizeof(run));
    snprintf(s->params, sizeof(s->params), "scenario-file=%s %s", f->sha256, run);
}

/* Phase i through its generator; k earlier phases of the same scenario
 * give it a stream of its own. */
static int sf_generate(const sim_scenario_file *f, size_t i, size_t orders, double duration_s,
                       const sim_plan *plan, sim_schedule *s, char *err, size_t errlen)
{
    const sf_phase *ph = &f->phase[i];
    uint64_t seed = s->seed, k = 0;
    for (size_t j = 0; j < i; j++)
        k += f->phase[j].scenario == ph->scenario;
    int oom;
    char *mock = sf_merge_mock(ph->mock, plan->mock_override, &oom);
    if (oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sim_plan p = *plan;
    p.mask = 1u << ph->scenario;
    p.orders = orders;
    p.duration_s = duration_s;
    p.mock_override = mock != NULL ? mock : plan->mock_override;
    p.client = ph->client.set ? &ph->client : NULL;
    s->seed = seed ^ (0xD1B54A32D192ED03ULL * k);
    int rc = scenarios_build(s, &p, err, errlen);
    s->seed = seed;
    free(mock);
    return rc;
}

int scenario_file_build(const sim_scenario_file *f, const sim_plan *plan, sim_schedule *s,
                        char *err, size_t errlen)
{
    size_t orders[SCENARIO_FILE_PHASES_MAX];
    double duration_s[SCENARIO_FILE_PHASES_MAX];
    for (size_t i = 0; i < f->nphases; i++)
        if ((scenarios_flags(f->phase[i].scenario) & SCF_NEEDS_CHAOS) && !plan->chaos) {
            snprintf(err, errlen,
                     "--scenario-file %s: phases[%zu]: %s needs --chaos-cmd CMD "
                     "(it kills service processes while requests are in flight)",
                     f->path, i, sched_scenario_name(f->phase[i].scenario));
            return -1;
        }
    if (f->plain) { /* the --scenario list it names: the same schedule and digest */
        sim_plan p = *plan;
        p.mask = f->mask;
        p.client = NULL;
        return scenarios_build(s, &p, err, errlen);
    }
    sf_shares(f, plan, orders, duration_s);
    for (size_t i = 0; i < f->nphases; i++)
        if (sf_generate(f, i, orders[i], duration_s[i], plan, s, err, errlen) < 0)
            return -1;
    sf_params(f, plan, s);
    return 0;
}
