/* saved_run_meta.c - run.json both ways (see saved_run_format.h): the
 * report's own numbers, so that a saved run's report reads as the run's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saved_run_format.h"

const char *saved_row_state_name(int state)
{
    static const char *const names[] = { "unread", "absent", "present", "error" };
    return (state >= ROW_UNREAD && state <= ROW_ERROR) ? names[state] : "?";
}

int saved_row_state_parse(const char *name)
{
    for (int i = ROW_UNREAD; name != NULL && i <= ROW_ERROR; i++)
        if (strcmp(name, saved_row_state_name(i)) == 0)
            return i;
    return -1;
}

/* [[scenario, kind, outcome, n], ...] for the counts that are not 0. */
static json_t *meta_requests_json(const sim_report *r)
{
    json_t *a = json_array();
    for (int s = 0; a != NULL && s < SC_COUNT; s++)
        for (int k = 0; k < OP_KIND_COUNT; k++)
            for (int o = 0; o < OUT_COUNT; o++)
                if (r->requests[s][k][o])
                    json_array_append_new(a, json_pack("[i,i,i,I]", s, k, o,
                                                       (json_int_t)r->requests[s][k][o]));
    return a;
}

/* Per kind: count, sum, min, max and the buckets that are not empty. */
static json_t *meta_latency_json(const sim_report *r)
{
    json_t *a = json_array();
    for (int k = 0; a != NULL && k < OP_KIND_COUNT; k++) {
        const sim_hist *h = &r->latency[k];
        json_t *b = json_array();
        for (size_t i = 0; b != NULL && i < HIST_BUCKETS; i++)
            if (h->bucket[i])
                json_array_append_new(b,
                                      json_pack("[I,I]", (json_int_t)i, (json_int_t)h->bucket[i]));
        json_array_append_new(a, json_pack("{s:i,s:I,s:s,s:I,s:I,s:o}", "kind", k, "count",
                                           (json_int_t)h->count, "sum", "", "min",
                                           (json_int_t)(h->count ? h->min : 0), "max",
                                           (json_int_t)h->max, "buckets", b));
        json_object_set_new(json_array_get(a, json_array_size(a) - 1), "sum",
                            json_sprintf("%" PRIu64, h->sum));
    }
    return a;
}

static json_t *meta_starts_json(const sim_report *r)
{
    json_t *a = json_array();
    const sim_observations *o = r->obs;
    for (size_t p = 0; a != NULL && p < r->sched->nphases; p++)
        json_array_append_new(a,
                              json_pack("{s:I,s:f}", "start_us",
                                        (json_int_t)(o && o->phase_start_us ? o->phase_start_us[p]
                                                                            : -1),
                                        "start_s", r->phase_s ? r->phase_s[p] : -1.0));
    return a;
}

static json_t *meta_journals_json(const sim_report *r)
{
    json_t *j = json_object();
    for (size_t i = 0; j != NULL && r->journal != NULL && i < r->sched->norders; i++)
        if (r->journal[i] != NULL) {
            char key[32];
            snprintf(key, sizeof(key), "%zu", i);
            json_object_set_new(j, key, json_string(r->journal[i]));
        }
    return j;
}

static json_t *meta_str(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

int saved_run_write_meta(const char *dir, const sim_report *r, const saved_run_meta *m, char *err,
                         size_t errlen)
{
    const sim_observations *o = r->obs;
    json_t *j = json_pack("{s:i,s:s,s:I,s:I,s:I,s:b,s:i,s:f,s:f,s:f,s:I}", "format",
                          SAVED_RUN_FORMAT, "prefix", r->prefix ? r->prefix : "", "origin_epoch_us",
                          (json_int_t)m->origin_epoch_us, "service_call_us",
                          (json_int_t)(o ? o->service_call_us : 0), "lease_us",
                          (json_int_t)(o ? o->lease_us : 0), "judged", m->judged != 0, "exit_code",
                          r->exit_code, "traffic_s", r->traffic_s, "settle_s", r->settle_s,
                          "total_s", r->total_s, "notifications_sent",
                          (json_int_t)r->notifications_sent);
    if (j == NULL)
        return saved_run_dump(dir, SAVED_RUN, NULL, err, errlen);
    json_object_set_new(j, "target", meta_str(r->target));
    json_object_set_new(j, "gateway", meta_str(r->gateway));
    json_object_set_new(j, "replay", meta_str(r->replay_cmd));
    json_object_set_new(j, "windows_text", meta_str(r->windows));
    json_object_set_new(j, "mock_missing", meta_str(r->mock_missing));
    json_object_set_new(j, "error", meta_str(r->error));
    json_object_set_new(j, "phases", meta_starts_json(r));
    json_object_set_new(j, "requests", meta_requests_json(r));
    json_object_set_new(j, "latency", meta_latency_json(r));
    json_object_set_new(j, "journals", meta_journals_json(r));
    return saved_run_dump(dir, SAVED_RUN, j, err, errlen);
}

/* ---- loading ---- */

static char *meta_dup(json_t *root, const char *key)
{
    const char *s = json_string_value(json_object_get(root, key));
    return s != NULL ? strdup(s) : NULL;
}

static void meta_load_counts(json_t *root, sim_report *rep)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(root, "requests"), i, v)
    {
        json_int_t s = json_integer_value(json_array_get(v, 0)),
                   k = json_integer_value(json_array_get(v, 1)),
                   o = json_integer_value(json_array_get(v, 2));
        if (s >= 0 && s < SC_COUNT && k >= 0 && k < OP_KIND_COUNT && o >= 0 && o < OUT_COUNT)
            rep->requests[s][k][o] = (uint64_t)json_integer_value(json_array_get(v, 3));
    }
    json_array_foreach(json_object_get(root, "latency"), i, v)
    {
        json_int_t k = json_integer_value(json_object_get(v, "kind"));
        if (k < 0 || k >= OP_KIND_COUNT)
            continue;
        sim_hist *h = &rep->latency[k];
        h->count = (uint64_t)json_integer_value(json_object_get(v, "count"));
        h->sum = strtoull(json_string_value(json_object_get(v, "sum"))
                              ? json_string_value(json_object_get(v, "sum"))
                              : "0",
                          NULL, 10);
        h->min = h->count ? (uint64_t)json_integer_value(json_object_get(v, "min")) : UINT64_MAX;
        h->max = (uint64_t)json_integer_value(json_object_get(v, "max"));
        size_t bi;
        json_t *b;
        json_array_foreach(json_object_get(v, "buckets"), bi, b)
        {
            json_int_t idx = json_integer_value(json_array_get(b, 0));
            if (idx >= 0 && idx < (json_int_t)HIST_BUCKETS)
                h->bucket[idx] = (uint64_t)json_integer_value(json_array_get(b, 1));
        }
    }
}

static int meta_load_phases(json_t *root, saved_run *out, char *err, size_t errlen)
{
    json_t *ph = json_object_get(root, "phases");
    size_t n = out->sched.nphases;
    if (json_array_size(ph) != n) {
        snprintf(err, errlen, "%s: %zu phases, the schedule has %zu", SAVED_RUN,
                 json_array_size(ph), n);
        return -1;
    }
    out->phase_start_us = calloc(n ? n : 1, sizeof(*out->phase_start_us));
    out->phase_s = calloc(n ? n : 1, sizeof(*out->phase_s));
    if (out->phase_start_us == NULL || out->phase_s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t p = 0; p < n; p++) {
        json_t *e = json_array_get(ph, p);
        out->phase_start_us[p] = json_integer_value(json_object_get(e, "start_us"));
        out->phase_s[p] = json_number_value(json_object_get(e, "start_s"));
    }
    return 0;
}

static void meta_load_journals(json_t *root, saved_run *out)
{
    const char *key;
    json_t *v;
    out->journal = calloc(out->sched.norders ? out->sched.norders : 1, sizeof(*out->journal));
    json_object_foreach(json_object_get(root, "journals"), key, v)
    {
        char *end = NULL;
        unsigned long i = strtoul(key, &end, 10);
        if (out->journal != NULL && *end == '\0' && i < out->sched.norders && json_is_string(v) &&
            out->journal[i] == NULL)
            out->journal[i] = strdup(json_string_value(v));
    }
}

int saved_run_load_meta(json_t *root, saved_run *out, char *err, size_t errlen)
{
    sim_report *rep = &out->rep;
    out->target = meta_dup(root, "target");
    out->gateway = meta_dup(root, "gateway");
    out->replay = meta_dup(root, "replay");
    out->windows_text = meta_dup(root, "windows_text");
    out->mock_missing = meta_dup(root, "mock_missing");
    out->error = meta_dup(root, "error");
    out->judged = json_is_true(json_object_get(root, "judged"));
    out->exit_code = (int)json_integer_value(json_object_get(root, "exit_code"));
    out->obs.service_call_us = json_integer_value(json_object_get(root, "service_call_us"));
    out->obs.lease_us = json_integer_value(json_object_get(root, "lease_us"));
    rep->traffic_s = json_number_value(json_object_get(root, "traffic_s"));
    rep->settle_s = json_number_value(json_object_get(root, "settle_s"));
    rep->total_s = json_number_value(json_object_get(root, "total_s"));
    rep->notifications_sent = json_integer_value(json_object_get(root, "notifications_sent"));
    meta_load_counts(root, rep);
    meta_load_journals(root, out);
    return meta_load_phases(root, out, err, errlen);
}
