/* saved_run_load.c - a saved run back into memory (see saved_run.h): the
 * schedule rebuilt from its recipe and checked against the saved digest,
 * then the history, the ledger, the rows, the chaos log and run.json. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_calls.h"
#include "mock_admin.h"
#include "saved_run_format.h"
#include "scenario_file.h"
#include "scenarios.h"

static json_t *sl_read(const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4096];
    json_error_t je;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, &je);
    if (j == NULL)
        snprintf(err, errlen, "%s: %s (line %d)", path, je.text, je.line);
    return j;
}

static const char *sl_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

static long sl_int(json_t *o, const char *key)
{
    return (long)json_integer_value(json_object_get(o, key));
}

static void sl_recipe(json_t *rj, saved_run *out)
{
    json_t *w = json_object_get(rj, "windows");
    sim_windows *win = &out->recipe.windows;
    out->scenarios = strdup(sl_str(rj, "scenarios"));
    const char *mo = json_string_value(json_object_get(rj, "mock_override"));
    out->mock_override = mo != NULL ? strdup(mo) : NULL;
    out->recipe.scenarios = out->scenarios;
    out->recipe.mock_override = out->mock_override;
    out->recipe.orders = (size_t)sl_int(rj, "orders");
    out->recipe.duration_s = json_number_value(json_object_get(rj, "duration_s"));
    out->recipe.concurrency = (int)sl_int(rj, "concurrency");
    out->recipe.chaos = json_is_true(json_object_get(rj, "chaos"));
    out->recipe.chaos_every_s = json_number_value(json_object_get(rj, "chaos_every_s"));
    for (size_t i = 0; i < SAVED_WINDOW_FIELDS; i++)
        *(long *)((char *)win + saved_window_fields[i].off) = sl_int(w,
                                                                     saved_window_fields[i].name);
    win->from_env = (int)sl_int(w, "from_env");
}

/* Builds the schedule from the plan, through the saved copy of the scenario
 * file when the run had one (file: its name in dir, or NULL). */
static int sl_build(const char *dir, const char *file, const sim_plan *plan, saved_run *out,
                    char *err, size_t errlen)
{
    char path[4096];
    sim_scenario_file *f;
    int rc;
    if (file == NULL)
        return scenarios_build(&out->sched, plan, err, errlen);
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if ((f = scenario_file_load(path, err, errlen)) == NULL)
        return -1;
    rc = scenario_file_build(f, plan, &out->sched, err, errlen);
    scenario_file_free(f);
    return rc;
}

/* schedule.json: the recipe, rebuilt into the schedule; the digest must match. */
static int sl_schedule(const char *dir, saved_run *out, char *err, size_t errlen)
{
    json_t *j = sl_read(dir, SAVED_SCHEDULE, err, errlen);
    int rc = -1;
    unsigned mask = 0;
    if (j == NULL)
        return -1;
    const char *seed = json_string_value(json_object_get(j, "seed_text"));
    const char *digest = json_string_value(json_object_get(j, "digest"));
    json_t *rj = json_object_get(j, "recipe");
    if (seed == NULL || digest == NULL || !json_is_object(rj)) {
        snprintf(err, errlen, "%s/%s: no seed_text, digest or recipe", dir, SAVED_SCHEDULE);
        goto out;
    }
    sl_recipe(rj, out);
    sched_init(&out->sched, strtoull(seed, NULL, 10));
    sim_plan plan = { .orders = out->recipe.orders,
                      .duration_s = out->recipe.duration_s,
                      .concurrency = out->recipe.concurrency,
                      .chaos = out->recipe.chaos,
                      .chaos_every_s = out->recipe.chaos_every_s,
                      .mock_override = out->recipe.mock_override,
                      .windows = &out->recipe.windows };
    if (out->scenarios == NULL ||
        scenarios_parse(out->scenarios, plan.chaos, &mask, err, errlen) < 0)
        goto out;
    /* the scenarios built: after a target profile's skips (older folders: all) */
    unsigned built = (unsigned)json_integer_value(json_object_get(rj, "mask"));
    plan.mask = built != 0 ? built : mask;
    if (sl_build(dir, json_string_value(json_object_get(rj, "scenario_file")), &plan, out, err,
                 errlen) < 0 ||
        sched_digest(&out->sched, out->digest) < 0)
        goto out;
    if (strcmp(out->digest, digest) != 0) {
        snprintf(err, errlen,
                 "the rebuilt schedule's digest %s is not the saved %s: the run "
                 "was saved by another version of idempay-sim, or %s was edited",
                 out->digest, digest, SAVED_SCHEDULE);
        goto out;
    }
    rc = 0;
out:
    json_decref(j);
    return rc;
}

/* Refunds of a JSON array into *v (malloc'd), *n. 0 or -1 (OOM). */
static int sl_refund_list(json_t *a, sim_refund **v, size_t *n)
{
    json_t *x;
    size_t i;
    *v = calloc(json_array_size(a) + 1, sizeof(**v));
    if (*v == NULL)
        return -1;
    json_array_foreach(a, i, x)
    {
        sim_refund *r = &(*v)[(*n)++];
        snprintf(r->refund_no, sizeof(r->refund_no), "%s", sl_str(x, "refund_no"));
        snprintf(r->transaction_id, sizeof(r->transaction_id), "%s", sl_str(x, "transaction_id"));
        r->order = (long)json_integer_value(json_object_get(x, "order"));
        r->fee = json_integer_value(json_object_get(x, "fee"));
        r->status = (uint8_t)history_refund_status_parse(sl_str(x, "status"));
        r->duplicate = json_is_true(json_object_get(x, "duplicate"));
    }
    return 0;
}

/* The refunds ledger.json kept (a run of the refund scenarios). 0 or -1. */
static int sl_refunds(json_t *j, saved_run *out)
{
    json_t *read = json_object_get(j, "lists_read"), *x;
    size_t i;
    if (!json_is_array(read))
        return 0;
    out->list_read = calloc(out->sched.norders + 1, 1);
    if (out->list_read == NULL ||
        sl_refund_list(json_object_get(j, "refunds"), &out->refunds, &out->nrefunds) < 0 ||
        sl_refund_list(json_object_get(j, "listed_refunds"), &out->listed, &out->nlisted) < 0)
        return -1;
    json_array_foreach(read, i, x)
    {
        json_int_t k = json_integer_value(x);
        if (k >= 0 && (size_t)k < out->sched.norders)
            out->list_read[k] = 1;
    }
    return 0;
}

/* The payment calls and fences ledger.json kept ("gateway_calls"). 0 or -1
 * (OOM). */
static int sl_calls(json_t *j, saved_run *out)
{
    json_t *g = json_object_get(j, "gateway_calls"), *a = json_object_get(g, "calls"), *x;
    size_t i;
    if (!json_is_array(a))
        return 0;
    out->calls = calloc(json_array_size(a) + 1, sizeof(*out->calls));
    if (out->calls == NULL)
        return -1;
    out->gateway_timeout_us = json_integer_value(json_object_get(g, "timeout_us"));
    json_array_foreach(a, i, x)
    {
        sim_gwcall *c = &out->calls[out->ncalls];
        snprintf(c->out_trade_no, sizeof(c->out_trade_no), "%s", sl_str(x, "out_trade_no"));
        snprintf(c->endpoint, sizeof(c->endpoint), "%s", sl_str(x, "endpoint"));
        int kind = gateway_calls_kind(c->endpoint);
        if (kind < 0)
            continue;
        c->fence = (uint8_t)kind;
        c->order = sched_order_lookup(&out->sched, out->prefix, c->out_trade_no);
        c->at_us = json_integer_value(json_object_get(x, "at_us"));
        c->latency_us = json_integer_value(json_object_get(x, "latency_us"));
        out->ncalls++;
    }
    return 0;
}

static int sl_ledger(const char *dir, saved_run *out, int64_t origin, char *err, size_t errlen)
{
    json_t *j = sl_read(dir, SAVED_LEDGER, err, errlen), *a = json_object_get(j, "charges"), *v;
    size_t i;
    if (j == NULL)
        return -1;
    out->charges = calloc(json_array_size(a) + 1, sizeof(*out->charges));
    if (out->charges == NULL)
        a = NULL; /* out of memory: saved_run_load says so */
    json_array_foreach(a, i, v)
    {
        sim_charge *c = &out->charges[out->ncharges++];
        snprintf(c->transaction_id, sizeof(c->transaction_id), "%s", sl_str(v, "transaction_id"));
        snprintf(c->out_trade_no, sizeof(c->out_trade_no), "%s", sl_str(v, "out_trade_no"));
        snprintf(c->charged_at, sizeof(c->charged_at), "%s", sl_str(v, "charged_at"));
        c->total_fee = json_integer_value(json_object_get(v, "total_fee"));
        c->refunded = json_is_true(json_object_get(v, "refunded"));
        json_t *rc = json_object_get(v, "refund_count"), *rf = json_object_get(v, "refunded_fee");
        c->refund_count = json_is_integer(rc) ? (int)json_integer_value(rc) : -1;
        c->refunded_fee = json_is_integer(rf) ? (int64_t)json_integer_value(rf) : -1;
        c->order = sched_order_lookup(&out->sched, out->prefix, c->out_trade_no);
        c->epoch_us = mock_admin_time_us(c->charged_at);
    }
    history_charge_times(out->charges, out->ncharges, origin);
    int rc = sl_refunds(j, out) < 0 || sl_calls(j, out) < 0 ? -1 : 0;
    json_decref(j);
    if (rc < 0)
        snprintf(err, errlen, "%s: out of memory", SAVED_LEDGER);
    return rc;
}

static void sl_row(json_t *v, sim_row *row)
{
    int st = saved_row_state_parse(json_string_value(json_object_get(v, "state")));
    row->state = (uint8_t)(st < 0 ? ROW_UNREAD : st);
    row->status = (uint8_t)history_status_parse(json_string_value(json_object_get(v, "status")));
    row->user_id = json_integer_value(json_object_get(v, "user_id"));
    row->amount_fen = json_integer_value(json_object_get(v, "amount_fen"));
    snprintf(row->transaction_id, sizeof(row->transaction_id), "%s", sl_str(v, "transaction_id"));
    snprintf(row->updated_at, sizeof(row->updated_at), "%s", sl_str(v, "updated_at"));
}

static int sl_orders(const char *dir, saved_run *out, char *err, size_t errlen)
{
    json_t *j = sl_read(dir, SAVED_ORDERS, err, errlen), *a = json_object_get(j, "orders"), *v;
    size_t i, n = out->sched.norders ? out->sched.norders : 1;
    if (j == NULL)
        return -1;
    out->api_rows = calloc(n, sizeof(*out->api_rows));
    json_array_foreach(a, i, v)
    {
        long k = sl_int(v, "index");
        if (k < 0 || (size_t)k >= out->sched.norders || out->api_rows == NULL)
            continue;
        sl_row(json_object_get(v, "api"), &out->api_rows[k]);
        json_t *db = json_object_get(v, "db");
        if (json_is_object(db) && out->db_rows == NULL)
            out->db_rows = calloc(n, sizeof(*out->db_rows));
        if (json_is_object(db) && out->db_rows != NULL)
            sl_row(db, &out->db_rows[k]);
    }
    json_decref(j);
    return 0;
}

static int sl_chaos(const char *dir, saved_run *out, char *err, size_t errlen)
{
    json_t *j = sl_read(dir, SAVED_CHAOS, err, errlen), *a = json_object_get(j, "ran"), *v;
    size_t i;
    if (j == NULL)
        return -1;
    out->chaos = calloc(json_array_size(a) + 1, sizeof(*out->chaos));
    if (out->chaos == NULL)
        a = NULL; /* out of memory: saved_run_load says so */
    json_array_foreach(a, i, v)
    {
        sim_chaos_event *e = &out->chaos[out->nchaos++];
        const char *name = json_string_value(json_object_get(v, "action"));
        for (int k = 0; k < CHAOS_ACTION_COUNT; k++)
            if (name != NULL && strcmp(name, sched_chaos_name(k)) == 0)
                e->action = (uint8_t)k;
        e->phase = (uint32_t)sl_int(v, "phase");
        e->at_us = json_integer_value(json_object_get(v, "at_us"));
        e->duration_us = json_integer_value(json_object_get(v, "duration_us"));
        e->exit_status = (int)sl_int(v, "exit_status");
    }
    json_decref(j);
    return 0;
}

/* run.json: prefix first (the ledger's orders are looked up by it). */
static int sl_meta(const char *dir, saved_run *out, int64_t *origin, char *err, size_t errlen)
{
    json_t *j = sl_read(dir, SAVED_RUN, err, errlen);
    if (j == NULL)
        return -1;
    snprintf(out->prefix, sizeof(out->prefix), "%s", sl_str(j, "prefix"));
    *origin = json_integer_value(json_object_get(j, "origin_epoch_us"));
    int rc = saved_run_load_meta(j, out, err, errlen);
    json_decref(j);
    return rc;
}

/* The observations and the report over what was loaded. */
static void sl_wire(saved_run *out)
{
    sim_observations *o = &out->obs;
    sim_report *r = &out->rep;
    o->ops = out->hist.op;
    o->nops = out->hist.n;
    o->charges = out->charges;
    o->ncharges = out->ncharges;
    o->api_rows = out->api_rows;
    o->db_rows = out->db_rows;
    o->prefix = out->prefix;
    o->seed = out->sched.seed;
    o->phase_start_us = out->phase_start_us;
    o->refunds = out->refunds;
    o->nrefunds = out->nrefunds;
    o->listed = out->listed;
    o->nlisted = out->nlisted;
    o->list_read = out->list_read;
    o->calls = out->calls;
    o->ncalls = out->ncalls;
    o->gateway_timeout_us = out->gateway_timeout_us;
    r->seed = out->sched.seed;
    r->digest = out->digest;
    r->prefix = out->prefix;
    r->target = out->target;
    r->gateway = out->gateway;
    r->replay_cmd = out->replay;
    r->sched = &out->sched;
    r->obs = o;
    r->chaos = out->chaos;
    r->nchaos = out->nchaos;
    r->phase_s = out->phase_s;
    r->windows = out->windows_text;
    r->mock_missing = out->mock_missing;
    r->journal = out->journal;
    r->exit_code = out->exit_code;
    r->error = out->error;
}

int saved_run_load(const char *dir, saved_run *out, char *err, size_t errlen)
{
    int64_t origin = 0;
    memset(out, 0, sizeof(*out));
    history_init(&out->hist);
    report_init(&out->rep);
    sched_init(&out->sched, 0);
    if (sl_schedule(dir, out, err, errlen) < 0 || sl_meta(dir, out, &origin, err, errlen) < 0 ||
        sl_chaos(dir, out, err, errlen) < 0 || sl_ledger(dir, out, origin, err, errlen) < 0 ||
        sl_orders(dir, out, err, errlen) < 0 || saved_run_load_history(dir, out, err, errlen) < 0)
        return -1;
    if (out->charges == NULL || out->api_rows == NULL || out->chaos == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sl_wire(out);
    return 0;
}

void saved_run_free(saved_run *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; r->journal != NULL && i < r->sched.norders; i++)
        free(r->journal[i]);
    free(r->journal);
    sched_free(&r->sched);
    history_free(&r->hist);
    free(r->scenarios);
    free(r->mock_override);
    free(r->target);
    free(r->gateway);
    free(r->replay);
    free(r->windows_text);
    free(r->mock_missing);
    free(r->error);
    free(r->charges);
    free(r->refunds);
    free(r->listed);
    free(r->calls);
    free(r->list_read);
    free(r->api_rows);
    free(r->db_rows);
    free(r->phase_start_us);
    free(r->phase_s);
    free(r->chaos);
    memset(r, 0, sizeof(*r));
}
