/* saved_run.c - writing a run's observations and recipe (see saved_run.h);
 * the loader is saved_run_load.c. Every file is JSON written by jansson. */
#include "saved_run.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saved_run_format.h"

int saved_run_dump(const char *dir, const char *name, json_t *root, char *err, size_t errlen)
{
    char path[4096];
    int rc = -1;
    if (root == NULL) {
        snprintf(err, errlen, "%s: out of memory", name);
    } else if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
        snprintf(err, errlen, "%s: path too long", name);
    } else if (json_dump_file(root, path, JSON_INDENT(1) | JSON_SORT_KEYS) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    json_decref(root);
    return rc;
}

/* clang-format off */
#define WF(field) {#field, offsetof(sim_windows, field)}
/* clang-format on */
const saved_window_field saved_window_fields[SAVED_WINDOW_FIELDS] = {
    WF(gateway_timeout_ms), WF(lease_ms),     WF(reconcile_ms), WF(failed_recheck_ms),
    WF(retry_after_s),      WF(statement_ms), WF(claim_ms),     WF(notify_retry_ms),
};
#undef WF

static json_t *sr_windows_json(const sim_windows *w)
{
    json_t *j = json_object();
    for (size_t i = 0; j != NULL && i < SAVED_WINDOW_FIELDS; i++)
        json_object_set_new(j, saved_window_fields[i].name,
                            json_integer(
                                *(const long *)((const char *)w + saved_window_fields[i].off)));
    if (j != NULL)
        json_object_set_new(j, "from_env", json_integer(w->from_env));
    return j;
}

static json_t *sr_recipe_json(const saved_recipe *rc)
{
    json_t *j = json_pack("{s:s,s:I,s:f,s:i,s:b,s:f,s:o}", "scenarios", rc->scenarios, "orders",
                          (json_int_t)rc->orders, "duration_s", rc->duration_s, "concurrency",
                          rc->concurrency, "chaos", rc->chaos != 0, "chaos_every_s",
                          rc->chaos_every_s, "windows", sr_windows_json(&rc->windows));
    if (j != NULL) {
        if (rc->mask != 0)
            json_object_set_new(j, "mask", json_integer((json_int_t)rc->mask));
        if (rc->scenario_file != NULL)
            json_object_set_new(j, "scenario_file", json_string(SAVED_SCENARIO_FILE));
    }
    if (j != NULL)
        json_object_set_new(j, "mock_override",
                            rc->mock_override ? json_string(rc->mock_override) : json_null());
    return j;
}

/* Every phase with the mock config it sent (parsed, so it reads as JSON). */
static json_t *sr_phases_json(const sim_report *r)
{
    json_t *a = json_array();
    for (size_t p = 0; a != NULL && p < r->sched->nphases; p++) {
        const sched_phase *ph = &r->sched->phases[p];
        json_t *cfg = json_loads(ph->mock_config, 0, NULL);
        json_array_append_new(
            a, json_pack("{s:I,s:s,s:s,s:b,s:b,s:b,s:I,s:I,s:I,s:o,s:s,s:f}", "index",
                         (json_int_t)p, "scenario", sched_scenario_name(ph->scenario), "label",
                         ph->label, "barrier", ph->barrier != 0, "chaos", ph->chaos != 0,
                         "exclusive", ph->exclusive != 0, "budget_ms", (json_int_t)ph->budget_ms,
                         "tasks", (json_int_t)ph->ntasks, "tokens", (json_int_t)ph->ntokens,
                         "mock_config", cfg ? cfg : json_string(ph->mock_config), "faults",
                         ph->faults, "start_s", r->phase_s ? r->phase_s[p] : -1.0));
    }
    return a;
}

static int sr_write_schedule(const char *dir, const sim_report *r, const saved_run_meta *m,
                             char *err, size_t errlen)
{
    char path[4096];
    json_t *j = json_pack("{s:i,s:I,s:s,s:s,s:o,s:o}", "format", SAVED_RUN_FORMAT, "seed",
                          (json_int_t)r->seed, "seed_text", "", "digest",
                          r->digest ? r->digest : "", "recipe", sr_recipe_json(&m->recipe),
                          "phases", sr_phases_json(r));
    if (j != NULL)
        json_object_set_new(j, "seed_text", json_sprintf("%llu", (unsigned long long)r->seed));
    if (saved_run_dump(dir, SAVED_SCHEDULE, j, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/schedule.txt", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    sched_print(r->sched, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* chaos.json: the runs the schedule planned and the runs made. */
static int sr_write_chaos(const char *dir, const sim_report *r, char *err, size_t errlen)
{
    json_t *planned = json_array(), *ran = json_array();
    for (size_t i = 0; planned != NULL && i < r->sched->nchaos; i++) {
        const sched_chaos *c = &r->sched->chaos[i];
        json_array_append_new(planned, json_pack("{s:I,s:I,s:s}", "phase", (json_int_t)c->phase,
                                                 "at_ms", (json_int_t)c->at_ms, "action",
                                                 sched_chaos_name(c->action)));
    }
    for (size_t i = 0; ran != NULL && i < r->nchaos; i++) {
        const sim_chaos_event *e = &r->chaos[i];
        json_array_append_new(ran,
                              json_pack("{s:s,s:I,s:I,s:I,s:i,s:f}", "action",
                                        sched_chaos_name(e->action), "phase", (json_int_t)e->phase,
                                        "at_us", (json_int_t)e->at_us, "duration_us",
                                        (json_int_t)e->duration_us, "exit_status", e->exit_status,
                                        "at_s", (double)e->at_us / 1e6));
    }
    return saved_run_dump(dir, SAVED_CHAOS, json_pack("{s:o,s:o}", "planned", planned, "ran", ran),
                          err, errlen);
}

/* Refunds (the ledger's or the service's lists) as a JSON array. */
static json_t *sr_refunds_json(const sim_refund *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I,s:s,s:b}", "refund_no", v[i].refund_no,
                                           "transaction_id", v[i].transaction_id, "order",
                                           (json_int_t)v[i].order, "fee", (json_int_t)v[i].fee,
                                           "status", history_refund_status_name(v[i].status),
                                           "duplicate", v[i].duplicate != 0));
    return a;
}

/* The refunds the checker judged (refund_obs), when they were read. */
static void sr_refunds(json_t *j, const sim_report *r)
{
    const sim_observations *o = r->obs;
    if (j == NULL || o == NULL || o->list_read == NULL)
        return;
    json_t *read = json_array();
    for (size_t i = 0; read != NULL && i < r->sched->norders; i++)
        if (o->list_read[i])
            json_array_append_new(read, json_integer((json_int_t)i));
    json_object_set_new(j, "refunds", sr_refunds_json(o->refunds, o->nrefunds));
    json_object_set_new(j, "listed_refunds", sr_refunds_json(o->listed, o->nlisted));
    json_object_set_new(j, "lists_read", read);
}

/* The service's payment calls and fences the checker judged (the mock's
 * journal), when they were read: {"timeout_us", "calls": [...]}. */
static void sr_calls(json_t *j, const sim_report *r)
{
    const sim_observations *o = r->obs;
    if (j == NULL || o == NULL || o->calls == NULL)
        return;
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < o->ncalls; i++) {
        const sim_gwcall *x = &o->calls[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I}", "out_trade_no", x->out_trade_no,
                                           "endpoint", x->endpoint, "at_us", (json_int_t)x->at_us,
                                           "latency_us", (json_int_t)x->latency_us));
    }
    json_object_set_new(j, "gateway_calls",
                        json_pack("{s:I,s:o}", "timeout_us", (json_int_t)o->gateway_timeout_us,
                                  "calls", a));
}

static int sr_write_ledger(const char *dir, const sim_report *r, char *err, size_t errlen)
{
    const sim_observations *o = r->obs;
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && o != NULL && i < o->ncharges; i++) {
        const sim_charge *c = &o->charges[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:b,s:s,s:i,s:I}", "transaction_id",
                                           c->transaction_id, "out_trade_no", c->out_trade_no,
                                           "total_fee", (json_int_t)c->total_fee, "refunded",
                                           c->refunded != 0, "charged_at", c->charged_at,
                                           "refund_count", c->refund_count, "refunded_fee",
                                           (json_int_t)c->refunded_fee));
    }
    json_t *j = json_pack("{s:o}", "charges", a);
    if (j != NULL)
        json_object_set_new(j, "notifications_sent",
                            r->notifications_sent >= 0 ? json_integer(r->notifications_sent)
                                                       : json_null());
    sr_refunds(j, r);
    sr_calls(j, r);
    return saved_run_dump(dir, SAVED_LEDGER, j, err, errlen);
}

static json_t *sr_row_json(const sim_row *row)
{
    if (row == NULL)
        return json_null();
    return json_pack("{s:s,s:s,s:I,s:I,s:s,s:s}", "state", saved_row_state_name(row->state),
                     "status", history_status_name(row->status), "user_id",
                     (json_int_t)row->user_id, "amount_fen", (json_int_t)row->amount_fen,
                     "transaction_id", row->transaction_id, "updated_at", row->updated_at);
}

static int sr_write_orders(const char *dir, const sim_report *r, char *err, size_t errlen)
{
    const sim_observations *o = r->obs;
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && o != NULL && o->api_rows != NULL && i < r->sched->norders;
         i++) {
        char no[64];
        if (sched_order_no(r->sched, r->prefix ? r->prefix : "", i, no, sizeof(no)) < 0)
            no[0] = '\0';
        json_array_append_new(a, json_pack("{s:I,s:s,s:o,s:o}", "index", (json_int_t)i, "order_no",
                                           no, "api", sr_row_json(&o->api_rows[i]), "db",
                                           sr_row_json(o->db_rows ? &o->db_rows[i] : NULL)));
    }
    return saved_run_dump(dir, SAVED_ORDERS, json_pack("{s:o}", "orders", a), err, errlen);
}

/* The scenario file as it was read (its canonical hash is in the digest). */
static int sr_copy_scenario_file(const char *dir, const char *from, char *err, size_t errlen)
{
    char path[4096];
    json_error_t je;
    json_t *j = json_load_file(from, JSON_REJECT_DUPLICATES, &je);
    int rc = -1;
    snprintf(path, sizeof(path), "%s/%s", dir, SAVED_SCENARIO_FILE);
    if (j == NULL)
        snprintf(err, errlen, "%s: %s", from, je.text);
    else if (json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else
        rc = 0;
    json_decref(j);
    return rc;
}

int saved_run_write(const char *dir, const sim_report *r, const saved_run_meta *m, char *err,
                    size_t errlen)
{
    if (m->recipe.scenario_file != NULL &&
        sr_copy_scenario_file(dir, m->recipe.scenario_file, err, errlen) < 0)
        return -1;
    if (sr_write_schedule(dir, r, m, err, errlen) < 0 || sr_write_chaos(dir, r, err, errlen) < 0 ||
        saved_run_write_meta(dir, r, m, err, errlen) < 0)
        return -1;
    if (sr_write_ledger(dir, r, err, errlen) < 0 || sr_write_orders(dir, r, err, errlen) < 0)
        return -1;
    return 0;
}
