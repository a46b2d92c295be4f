/* report.c - human table, JSON (jansson) and JUnit XML renderings of one
 * run. Witness text is built once (witness.c) and used by all three. */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "money.h"
#include "threshold.h"
#include "witness.h"

void report_init(sim_report *r)
{
    memset(r, 0, sizeof(*r));
    for (int k = 0; k < OP_KIND_COUNT; k++)
        hist_init(&r->latency[k]);
    r->notifications_sent = -1;
}

uint64_t report_total(const sim_report *r, int outcome)
{
    uint64_t n = 0;
    for (int s = 0; s < SC_COUNT; s++)
        for (int k = 0; k < OP_KIND_COUNT; k++)
            n += r->requests[s][k][outcome];
    return n;
}

static uint64_t report_sc_requests(const sim_report *r, int sc, int outcome)
{
    uint64_t n = 0;
    if (sc < 0 || sc >= SC_COUNT)
        return 0;
    for (int k = 0; k < OP_KIND_COUNT; k++)
        n += r->requests[sc][k][outcome];
    return n;
}

void report_xml_escape(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
                fputc('?', out);
            else
                fputc(*p, out);
        }
    }
}

static const char *report_cell(const sim_report *r, int sc, int inv, char *buf, size_t len)
{
    size_t n = r->chk->count[sc][inv];
    if (n == 0)
        return "pass";
    snprintf(buf, len, "FAIL(%zu)", n);
    return buf;
}

/* "pay answers: 200 x12, 202 x3, timeout x1" per request kind, from the history. */
static void report_answers(const sim_report *r, FILE *out)
{
    if (r->obs == NULL || r->obs->nops == 0)
        return;
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        uint64_t code[600] = { 0 }, transport[8] = { 0 };
        int any = 0;
        for (size_t i = 0; i < r->obs->nops; i++) {
            const sim_op *op = &r->obs->ops[i];
            if (op->kind != k)
                continue;
            any = 1;
            if (op->http_code > 0 && op->http_code < 600)
                code[op->http_code]++;
            else
                transport[op->transport < 8 ? op->transport : 7]++;
        }
        if (!any)
            continue;
        fprintf(out, "%s answers:", history_kind_name(k));
        const char *sep = " ";
        for (int c = 0; c < 600; c++)
            if (code[c]) {
                fprintf(out, "%s%d x%llu", sep, c, (unsigned long long)code[c]);
                sep = ", ";
            }
        for (int t = 0; t < 8; t++)
            if (transport[t]) {
                fprintf(out, "%s%s x%llu", sep,
                        t == 0 ? "no-status" : http_status_name((http_status)t),
                        (unsigned long long)transport[t]);
                sep = ", ";
            }
        fprintf(out, "\n");
    }
}

/* The run's numbers: requests and time, notifications, phase starts, chaos
 * runs, the windows aimed at and the mock knobs that could not be applied. */
static void report_run_lines(const sim_report *r, FILE *out)
{
    uint64_t ok = report_total(r, OUT_OK), fail = report_total(r, OUT_FAIL),
             unk = report_total(r, OUT_UNKNOWN);
    fprintf(out,
            "\nrequests: %llu (ok %llu, fail %llu, unknown %llu) in %.1f s of traffic: "
            "%.0f requests/s; run %.1f s (settle %.1f s)\n",
            (unsigned long long)(ok + fail + unk), (unsigned long long)ok, (unsigned long long)fail,
            (unsigned long long)unk, r->traffic_s,
            r->traffic_s > 0 ? (double)(ok + fail + unk) / r->traffic_s : 0.0, r->total_s,
            r->settle_s);
    if (r->notifications_sent >= 0)
        fprintf(out, "gateway notifications sent: %lld\n", r->notifications_sent);
    if (r->phase_s != NULL && r->sched->nphases > 0) {
        fprintf(out, "phases started at:");
        for (size_t p = 0; p < r->sched->nphases; p++)
            fprintf(out, "%s %s/%s +%.1fs", p ? "," : "",
                    sched_scenario_name(r->sched->phases[p].scenario), r->sched->phases[p].label,
                    r->phase_s[p]);
        fprintf(out, "\n");
    }
    if (r->nchaos > 0) {
        fprintf(out, "chaos command ran %zu time(s):", r->nchaos);
        for (size_t i = 0; i < r->nchaos; i++)
            fprintf(out, " %s +%.1fs(exit %d)", sched_chaos_name(r->chaos[i].action),
                    (double)r->chaos[i].at_us / 1e6, r->chaos[i].exit_status);
        fprintf(out, "\n");
    }
    if (r->windows != NULL)
        fprintf(out, "nemesis aimed at the service windows: %s\n", r->windows);
    if (r->mock_missing != NULL && r->mock_missing[0])
        fprintf(out, "the mock gateway does not know these knobs (not applied): %s\n",
                r->mock_missing);
    if (r->skipped != NULL && r->skipped[0])
        fprintf(out, "skipped, the target profile lacks what they need: %s\n", r->skipped);
}

/* The traffic table: one row per scenario that ran. */
static void report_traffic_table(const sim_report *r, FILE *out)
{
    const chk_result *c = r->chk;
    fprintf(out, "\n%-16s %7s %6s %6s %8s %8s %7s %8s %6s %8s %8s %7s\n", "scenario", "orders",
            "paid", "failed", "requests", "ok", "fail", "unknown", "dups", "absorbed", "replayed",
            "charges");
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (c ? !c->ran[sc] : report_sc_requests(r, sc, OUT_OK) == 0)
            continue;
        uint64_t ok = report_sc_requests(r, sc, OUT_OK), fail = report_sc_requests(r, sc, OUT_FAIL),
                 unk = report_sc_requests(r, sc, OUT_UNKNOWN);
        const chk_stats *st = c ? &c->stats[sc] : NULL;
        fprintf(out, "%-16s %7zu %6llu %6llu %8llu %8llu %7llu %8llu %6llu %8llu %8llu %7llu\n",
                sched_scenario_name(sc), st ? st->orders : 0,
                (unsigned long long)(st ? st->paid : 0), (unsigned long long)(st ? st->failed : 0),
                (unsigned long long)(ok + fail + unk), (unsigned long long)ok,
                (unsigned long long)fail, (unsigned long long)unk,
                (unsigned long long)(st ? st->duplicates : 0),
                (unsigned long long)(st ? st->absorbed : 0),
                (unsigned long long)(st ? st->replayed : 0),
                (unsigned long long)(st ? st->charges : 0));
    }
}

/* The refunds judged (scenarios refunds, payer-edge): the gateway's by
 * result and how many the service lists. */
static void report_refund_line(const sim_report *r, FILE *out)
{
    const sim_observations *o = r->obs;
    size_t st[RST_COUNT] = { 0 }, dup = 0;
    if (o == NULL || o->list_read == NULL)
        return;
    for (size_t i = 0; i < o->nrefunds; i++)
        st[o->refunds[i].status < RST_COUNT ? o->refunds[i].status : RST_OTHER]++;
    for (size_t i = 0; i < o->nlisted; i++)
        dup += o->listed[i].duplicate;
    fprintf(out,
            "\nrefunds at the gateway: %zu (SUCCESS %zu, REFUNDCLOSE %zu, CHANGE %zu, "
            "PROCESSING %zu); listed by the service: %zu (%zu of duplicate charges)\n",
            o->nrefunds, st[RST_SUCCESS], st[RST_REFUNDCLOSE], st[RST_CHANGE], st[RST_PROCESSING],
            o->nlisted, dup);
}

/* The customer's payments through the mock's payer and the refunds of the
 * scenarios' charges (only when there are any). */
static void report_payer_table(const sim_report *r, FILE *out)
{
    const chk_result *c = r->chk;
    int any = 0;
    for (int sc = 0; c && sc <= SC_COUNT && !any; sc++)
        any = c->stats[sc].payer_paid + c->stats[sc].payer_refused + c->stats[sc].payer_unknown +
                  c->stats[sc].refunds >
              0;
    if (!any)
        return;
    fprintf(out, "\n%-16s %8s %6s %7s %7s %7s\n", "payer", "payments", "paid", "refused", "unknown",
            "refunds");
    for (int sc = 0; sc <= SC_COUNT; sc++) {
        const chk_stats *st = &c->stats[sc];
        uint64_t n = st->payer_paid + st->payer_refused + st->payer_unknown;
        if (n + st->refunds == 0)
            continue;
        fprintf(out, "%-16s %8llu %6llu %7llu %7llu %7llu\n", sched_scenario_name(sc),
                (unsigned long long)n, (unsigned long long)st->payer_paid,
                (unsigned long long)st->payer_refused, (unsigned long long)st->payer_unknown,
                (unsigned long long)st->refunds);
    }
}

/* The scenarios x invariants table and its legend. */
static void report_invariant_table(const sim_report *r, const chk_result *c, FILE *out)
{
    fprintf(out, "\n%-16s", "invariants");
    for (int i = 0; i < INV_COUNT; i++)
        fprintf(out, " %-9s", checker_invariant_short(i));
    fprintf(out, "\n");
    for (int sc = 0; sc <= SC_COUNT; sc++) {
        if (!c->ran[sc])
            continue;
        fprintf(out, "%-16s", sched_scenario_name(sc));
        for (int i = 0; i < INV_COUNT; i++) {
            char cell[32];
            fprintf(out, " %-9s", report_cell(r, sc, i, cell, sizeof(cell)));
        }
        fprintf(out, "\n");
    }
    fprintf(out, "  (");
    for (int i = 0; i < INV_COUNT; i++)
        fprintf(out, "%s%s = %s", i ? "; " : "", checker_invariant_short(i),
                checker_invariant_name(i));
    fprintf(out, ")\n");
}

static void report_latency_row(FILE *out, const char *name, const sim_hist *h)
{
    fprintf(out, "%-10s %9llu %9.3f %9.3f %9.3f %9.3f %9.3f\n", name, (unsigned long long)h->count,
            hist_quantile(h, 0.5) / 1e3, hist_quantile(h, 0.9) / 1e3, hist_quantile(h, 0.99) / 1e3,
            h->max / 1e3, hist_mean(h) / 1e3);
}

/* Latency per request kind (kinds never sent are left out) and overall. */
static void report_latency_table(const sim_report *r, FILE *out)
{
    fprintf(out, "\n%-10s %9s %9s %9s %9s %9s %9s\n", "latency", "count", "p50 ms", "p90 ms",
            "p99 ms", "max ms", "mean ms");
    sim_hist all;
    hist_init(&all);
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        hist_merge(&all, &r->latency[k]);
        if (r->latency[k].count != 0)
            report_latency_row(out, history_kind_name(k), &r->latency[k]);
    }
    report_latency_row(out, "all", &all);
}

/* The violations: full witnesses for the first max_witnesses, one line
 * each for the next 100, then a count. */
static void report_violations(const sim_report *r, const chk_result *c, FILE *out,
                              size_t max_witnesses)
{
    fprintf(out, "\nviolations: %zu\n", c->total);
    for (size_t i = 0; i < c->nv; i++) {
        if (i < max_witnesses) {
            char *w = witness_text(r, &c->v[i]);
            fprintf(out, "%s\n", w ? w : "(out of memory)\n");
            free(w);
        } else if (i < max_witnesses + 100) {
            char no[64];
            witness_order_no(r, c->v[i].order, no, sizeof(no));
            fprintf(out, "[%s] %s %s: %s\n", checker_invariant_name(c->v[i].invariant),
                    sched_scenario_name(c->v[i].scenario), no, c->v[i].message);
        } else {
            fprintf(out, "... %zu more (see --json)\n", c->nv - i);
            break;
        }
    }
}

void report_human(const sim_report *r, FILE *out, size_t max_witnesses)
{
    const chk_result *c = r->chk;
    fprintf(out, "\nidempay-sim report\n");
    fprintf(out, "  seed: %llu   schedule digest: %s\n", (unsigned long long)r->seed,
            r->digest ? r->digest : "-");
    fprintf(out, "  target: %s   gateway: %s   order prefix: %s\n", r->target ? r->target : "-",
            r->gateway ? r->gateway : "-", r->prefix ? r->prefix : "-");
    if (r->profile != NULL)
        fprintf(out, "  target profile: %s\n", r->profile);
    report_traffic_table(r, out);
    report_payer_table(r, out);
    report_refund_line(r, out);
    if (c != NULL)
        report_invariant_table(r, c, out);
    report_latency_table(r, out);
    report_answers(r, out);
    report_run_lines(r, out);
    if (c != NULL && c->nv > 0)
        report_violations(r, c, out, max_witnesses);
    if (c != NULL && c->unreadable > 0)
        fprintf(out, "\n%zu order(s) could not be read at the end\n", c->unreadable);
    threshold_human(r->thresholds, r->nthresholds, out);
    if (r->error)
        fprintf(out, "\nerror: %s\n", r->error);
    fputc('\n', out);
    report_result_line(out, r->exit_code, &r->seed);
}

void report_result_line(FILE *out, int exit_code, const uint64_t *seed)
{
    const char *verdict = exit_code == 0   ? "PASS: every invariant held"
                          : exit_code == 1 ? "FAIL: invariant(s) violated"
                          : exit_code == 3 ? "THRESHOLD: every invariant held, a threshold failed"
                                           : "ERROR: the run could not be carried out";
    if (seed != NULL)
        fprintf(out, "result: %s (exit %d, seed %llu)\n", verdict, exit_code,
                (unsigned long long)*seed);
    else
        fprintf(out, "result: %s (exit %d)\n", verdict, exit_code);
}

static json_t *report_hist_json(const sim_hist *h)
{
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "count", (json_int_t)h->count, "p50_ms",
                     hist_quantile(h, 0.5) / 1e3, "p90_ms", hist_quantile(h, 0.9) / 1e3, "p99_ms",
                     hist_quantile(h, 0.99) / 1e3, "max_ms", h->max / 1e3, "mean_ms",
                     hist_mean(h) / 1e3);
}

static json_t *report_outcomes_json(uint64_t ok, uint64_t fail, uint64_t unk)
{
    return json_pack("{s:I,s:I,s:I,s:I}", "total", (json_int_t)(ok + fail + unk), "ok",
                     (json_int_t)ok, "fail", (json_int_t)fail, "unknown", (json_int_t)unk);
}

static json_t *report_row_json(const sim_row *row)
{
    static const char *const states[] = { "unread", "absent", "present", "error" };
    json_t *j = json_pack("{s:s}", "state", row->state <= ROW_ERROR ? states[row->state] : "?");
    if (j == NULL || row->state != ROW_PRESENT)
        return j;
    char amt[MONEY_STR_MAX];
    json_object_set_new(j, "status", json_string(history_status_name(row->status)));
    json_object_set_new(j, "user_id", json_integer((json_int_t)row->user_id));
    json_object_set_new(j, "amount",
                        row->amount_fen >= 0 ? json_string(money_format(row->amount_fen, amt))
                                             : json_null());
    json_object_set_new(j, "transaction_id",
                        row->transaction_id[0] ? json_string(row->transaction_id) : json_null());
    json_object_set_new(j, "updated_at", json_string(row->updated_at));
    return j;
}

static json_t *report_violation_json(const sim_report *r, const chk_violation *v)
{
    char no[64];
    witness_order_no(r, v->order, no, sizeof(no));
    json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "invariant", checker_invariant_name(v->invariant),
                          "scenario", sched_scenario_name(v->scenario), "order_no", no, "message",
                          v->message);
    if (j == NULL)
        return NULL;
    json_t *charges = json_array();
    const sim_observations *o = r->obs;
    for (size_t i = 0; o && i < o->ncharges && charges; i++) {
        const sim_charge *c = &o->charges[i];
        if (!((v->order >= 0 && c->order == v->order) || (long)i == v->charge))
            continue;
        json_array_append_new(charges, json_pack("{s:s,s:s,s:I,s:b,s:s}", "transaction_id",
                                                 c->transaction_id, "out_trade_no", c->out_trade_no,
                                                 "total_fee", (json_int_t)c->total_fee, "refunded",
                                                 c->refunded != 0, "charged_at", c->charged_at));
        if (c->at_us != INT64_MIN)
            json_object_set_new(json_array_get(charges, json_array_size(charges) - 1), "at_s",
                                json_real((double)c->at_us / 1e6));
    }
    json_object_set_new(j, "charges", charges ? charges : json_null());
    if (v->order >= 0 && o && o->api_rows)
        json_object_set_new(j, "row", report_row_json(&o->api_rows[v->order]));
    if (v->order >= 0 && o && o->db_rows)
        json_object_set_new(j, "db_row", report_row_json(&o->db_rows[v->order]));
    if (v->token >= 0)
        json_object_set_new(j, "token_slot", json_integer(v->token));
    char *w = witness_text(r, v);
    json_object_set_new(j, "witness", w ? json_string(w) : json_null());
    free(w);
    char *faults = NULL;
    size_t flen = 0;
    FILE *f = open_memstream(&faults, &flen);
    if (f != NULL) {
        witness_faults(r, v->order, f);
        if (fclose(f) == 0)
            json_object_set_new(j, "faults", json_string(faults));
        free(faults);
    }
    return j;
}

/* One scenario's row of "scenarios" (with its invariants when judged). */
static json_t *report_scenario_json(const sim_report *r, int sc)
{
    const chk_result *c = r->chk;
    const chk_stats *st = c ? &c->stats[sc] : NULL;
    json_t *js = json_pack("{s:s,s:I,s:I,s:I,s:o,s:I,s:I,s:I,s:I}", "name", sched_scenario_name(sc),
                           "orders", (json_int_t)(st ? st->orders : 0), "paid",
                           (json_int_t)(st ? st->paid : 0), "failed",
                           (json_int_t)(st ? st->failed : 0), "requests",
                           report_outcomes_json(report_sc_requests(r, sc, OUT_OK),
                                                report_sc_requests(r, sc, OUT_FAIL),
                                                report_sc_requests(r, sc, OUT_UNKNOWN)),
                           "duplicates", (json_int_t)(st ? st->duplicates : 0), "absorbed",
                           (json_int_t)(st ? st->absorbed : 0), "replayed",
                           (json_int_t)(st ? st->replayed : 0), "charges",
                           (json_int_t)(st ? st->charges : 0));
    if (js && c) {
        json_t *inv = json_object();
        for (int i = 0; i < INV_COUNT && inv; i++)
            json_object_set_new(inv, checker_invariant_name(i),
                                json_pack("{s:b,s:I}", "pass", c->count[sc][i] == 0, "violations",
                                          (json_int_t)c->count[sc][i]));
        json_object_set_new(js, "invariants", inv);
        json_object_set_new(js, "payer",
                            json_pack("{s:I,s:I,s:I}", "paid", (json_int_t)st->payer_paid,
                                      "refused", (json_int_t)st->payer_refused, "unknown",
                                      (json_int_t)st->payer_unknown));
        json_object_set_new(js, "refunds", json_integer((json_int_t)st->refunds));
    }
    return js;
}

static json_t *report_scenarios_json(const sim_report *r)
{
    const chk_result *c = r->chk;
    json_t *scen = json_array();
    for (int sc = 0; sc <= SC_COUNT && scen; sc++) {
        if (c ? !c->ran[sc] : (sc == SC_COUNT || report_sc_requests(r, sc, OUT_OK) == 0))
            continue;
        json_array_append_new(scen, report_scenario_json(r, sc));
    }
    return scen;
}

/* "invariants", "all_invariants_held", "unreadable_orders", "violations". */
static void report_verdict_json(json_t *root, const sim_report *r)
{
    const chk_result *c = r->chk;
    if (c == NULL) {
        json_object_set_new(root, "invariants", json_null());
        json_object_set_new(root, "all_invariants_held", json_false());
        json_object_set_new(root, "violations", json_array());
        return;
    }
    json_t *inv = json_object();
    for (int i = 0; i < INV_COUNT && inv; i++) {
        size_t n = 0;
        for (int sc = 0; sc <= SC_COUNT; sc++)
            n += c->count[sc][i];
        json_object_set_new(inv, checker_invariant_name(i),
                            json_pack("{s:b,s:I,s:s}", "pass", n == 0, "violations", (json_int_t)n,
                                      "description", checker_invariant_text(i)));
    }
    json_object_set_new(root, "invariants", inv);
    json_object_set_new(root, "all_invariants_held", json_boolean(c->total == 0));
    json_object_set_new(root, "unreadable_orders", json_integer((json_int_t)c->unreadable));
    json_t *vs = json_array();
    for (size_t i = 0; i < c->nv && vs; i++)
        json_array_append_new(vs, report_violation_json(r, &c->v[i]));
    json_object_set_new(root, "violations", vs);
}

/* "requests": the outcomes overall and by_kind. */
static json_t *report_requests_json(const sim_report *r)
{
    json_t *req = report_outcomes_json(report_total(r, OUT_OK), report_total(r, OUT_FAIL),
                                       report_total(r, OUT_UNKNOWN));
    json_t *bykind = json_object();
    for (int k = 0; k < OP_KIND_COUNT && bykind; k++) {
        uint64_t n[OUT_COUNT] = { 0 };
        for (int sc = 0; sc < SC_COUNT; sc++)
            for (int o = 0; o < OUT_COUNT; o++)
                n[o] += r->requests[sc][k][o];
        json_object_set_new(bykind, history_kind_name(k),
                            report_outcomes_json(n[OUT_OK], n[OUT_FAIL], n[OUT_UNKNOWN]));
    }
    if (req)
        json_object_set_new(req, "by_kind", bykind);
    else
        json_decref(bykind);
    return req;
}

static json_t *report_latency_json(const sim_report *r)
{
    sim_hist all;
    hist_init(&all);
    json_t *lat = json_object();
    for (int k = 0; k < OP_KIND_COUNT && lat; k++) {
        hist_merge(&all, &r->latency[k]);
        if (r->latency[k].count)
            json_object_set_new(lat, history_kind_name(k), report_hist_json(&r->latency[k]));
    }
    if (lat)
        json_object_set_new(lat, "all", report_hist_json(&all));
    return lat;
}

static json_t *report_phases_json(const sim_report *r)
{
    json_t *phases = json_array();
    for (size_t p = 0; p < r->sched->nphases && phases; p++) {
        const sched_phase *ph = &r->sched->phases[p];
        json_array_append_new(phases,
                              json_pack("{s:s,s:s,s:I,s:I,s:f,s:f,s:s,s:s}", "scenario",
                                        sched_scenario_name(ph->scenario), "label", ph->label,
                                        "tasks", (json_int_t)ph->ntasks, "tokens",
                                        (json_int_t)ph->ntokens, "budget_s", ph->budget_ms / 1e3,
                                        "start_s", r->phase_s ? r->phase_s[p] : 0.0, "mock_config",
                                        ph->mock_config, "faults", ph->faults));
    }
    return phases;
}

static json_t *report_chaos_json(const sim_report *r)
{
    json_t *chaos = json_array();
    for (size_t i = 0; i < r->nchaos && chaos; i++)
        json_array_append_new(chaos, json_pack("{s:s,s:f,s:f,s:i}", "action",
                                               sched_chaos_name(r->chaos[i].action), "at_s",
                                               (double)r->chaos[i].at_us / 1e6, "duration_s",
                                               (double)r->chaos[i].duration_us / 1e6, "exit_status",
                                               r->chaos[i].exit_status));
    return chaos;
}

/* The run's identity and result at the top of the report. */
static void report_head_json(json_t *root, const sim_report *r)
{
    json_object_set_new(root, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(root, "seed_text", json_sprintf("%llu", (unsigned long long)r->seed));
    json_object_set_new(root, "schedule_digest", json_string(r->digest ? r->digest : ""));
    json_object_set_new(root, "prefix", json_string(r->prefix ? r->prefix : ""));
    json_object_set_new(root, "target", json_string(r->target ? r->target : ""));
    json_object_set_new(root, "gateway", json_string(r->gateway ? r->gateway : ""));
    json_object_set_new(root, "exit_code", json_integer(r->exit_code));
    json_object_set_new(root, "result",
                        json_string(r->exit_code == 0   ? "pass"
                                    : r->exit_code == 1 ? "fail"
                                    : r->exit_code == 3 ? "threshold"
                                                        : "error"));
    json_object_set_new(root, "error", r->error ? json_string(r->error) : json_null());
    json_object_set_new(root, "orders", json_integer((json_int_t)r->sched->norders));
}

/* Times, throughput and what the run met besides the requests. */
static void report_run_json(json_t *root, const sim_report *r)
{
    uint64_t total = report_total(r, OUT_OK) + report_total(r, OUT_FAIL) +
                     report_total(r, OUT_UNKNOWN);
    json_object_set_new(root, "throughput_rps",
                        json_real(r->traffic_s > 0 ? (double)total / r->traffic_s : 0.0));
    json_object_set_new(root, "traffic_s", json_real(r->traffic_s));
    json_object_set_new(root, "settle_s", json_real(r->settle_s));
    json_object_set_new(root, "duration_s", json_real(r->total_s));
    json_object_set_new(root, "notifications_sent",
                        r->notifications_sent >= 0 ? json_integer(r->notifications_sent)
                                                   : json_null());
    json_object_set_new(root, "phases", report_phases_json(r));
    json_object_set_new(root, "chaos", report_chaos_json(r));
    if (r->windows != NULL)
        json_object_set_new(root, "windows", json_string(r->windows));
    if (r->mock_missing != NULL && r->mock_missing[0])
        json_object_set_new(root, "mock_knobs_missing", json_string(r->mock_missing));
    json_object_set_new(root, "profile", json_string(r->profile ? r->profile : "idempay"));
    if (r->skipped != NULL && r->skipped[0])
        json_object_set_new(root, "skipped", json_string(r->skipped));
    json_object_set_new(root, "thresholds", threshold_json(r->thresholds, r->nthresholds));
}

int report_json(const sim_report *r, const char *path)
{
    json_t *root = json_object();
    if (root == NULL)
        return -1;
    report_head_json(root, r);
    json_object_set_new(root, "scenarios", report_scenarios_json(r));
    report_verdict_json(root, r);
    json_object_set_new(root, "requests", report_requests_json(r));
    json_object_set_new(root, "latency", report_latency_json(r));
    report_run_json(root, r);
    int rc;
    if (strcmp(path, "-") == 0)
        rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 ? 0 : -1;
    else
        rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 ? 0 : -1;
    json_decref(root);
    return rc;
}

/* Seconds the phases of scenario sc ran (each phase from its start to the
 * next phase's, the last to the end of the traffic); the whole traffic for
 * violations of no scenario; 0 when the phase times are unknown. */
static double report_scenario_span(const sim_report *r, int sc)
{
    if (sc == CHK_UNATTRIBUTED || r->phase_s == NULL)
        return sc == CHK_UNATTRIBUTED ? r->traffic_s : 0.0;
    double span = 0.0;
    for (size_t p = 0; p < r->sched->nphases; p++) {
        if (r->sched->phases[p].scenario != sc || r->phase_s[p] < 0)
            continue;
        double end = p + 1 < r->sched->nphases && r->phase_s[p + 1] >= 0 ? r->phase_s[p + 1]
                                                                         : r->traffic_s;
        span += end > r->phase_s[p] ? end - r->phase_s[p] : 0.0;
    }
    return span;
}

/* Closes a report file (stdout is only flushed). 0, or -1 when anything
 * written to it failed. */
static int report_close(FILE *f)
{
    int rc = ferror(f) ? -1 : 0;
    if (f != stdout) {
        if (fclose(f) != 0)
            rc = -1;
    } else {
        fflush(f);
    }
    return rc;
}

int report_junit(const sim_report *r, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL)
        return -1;
    const chk_result *c = r->chk;
    size_t tests = 0, failures = 0;
    for (int sc = 0; c && sc <= SC_COUNT; sc++) {
        if (!c->ran[sc])
            continue;
        for (int i = 0; i < INV_COUNT; i++) {
            tests++;
            failures += c->count[sc][i] > 0;
        }
    }
    tests += r->nthresholds;
    failures += threshold_failed(r->thresholds, r->nthresholds);
    int errors = (c == NULL || r->exit_code == 2) ? 1 : 0;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"idempay-sim\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" "
            "time=\"%.3f\">\n",
            tests + (size_t)errors, failures, errors, r->total_s);
    fprintf(f,
            "  <testsuite name=\"idempay-sim\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" "
            "time=\"%.3f\">\n",
            tests + (size_t)errors, failures, errors, r->total_s);
    fprintf(f, "    <properties>\n");
    fprintf(f, "      <property name=\"seed\" value=\"%llu\"/>\n", (unsigned long long)r->seed);
    fprintf(f, "      <property name=\"schedule_digest\" value=\"");
    report_xml_escape(f, r->digest ? r->digest : "");
    fprintf(f, "\"/>\n      <property name=\"target\" value=\"");
    report_xml_escape(f, r->target ? r->target : "");
    fprintf(f, "\"/>\n      <property name=\"order_prefix\" value=\"");
    report_xml_escape(f, r->prefix ? r->prefix : "");
    fprintf(f, "\"/>\n    </properties>\n");
    for (int sc = 0; c && sc <= SC_COUNT; sc++) {
        if (!c->ran[sc])
            continue;
        for (int i = 0; i < INV_COUNT; i++) {
            fprintf(f, "    <testcase classname=\"idempay-sim.%s\" name=\"%s\" time=\"%.6f\"",
                    sched_scenario_name(sc), checker_invariant_name(i),
                    report_scenario_span(r, sc) + c->check_s[i]);
            if (c->count[sc][i] == 0) {
                fprintf(f, "/>\n");
                continue;
            }
            fprintf(f, ">\n      <failure type=\"%s\" message=\"", checker_invariant_name(i));
            char msg[128];
            snprintf(msg, sizeof(msg), "%zu violation(s) of %s (seed %llu)", c->count[sc][i],
                     checker_invariant_name(i), (unsigned long long)r->seed);
            report_xml_escape(f, msg);
            fprintf(f, "\">");
            size_t shown = 0;
            for (size_t k = 0; k < c->nv; k++) {
                if (c->v[k].scenario != sc || c->v[k].invariant != i)
                    continue;
                if (shown++ == 20) {
                    report_xml_escape(f, "... more violations in the JSON report\n");
                    break;
                }
                char *w = witness_text(r, &c->v[k]);
                report_xml_escape(f, w ? w : c->v[k].message);
                report_xml_escape(f, "\n");
                free(w);
            }
            fprintf(f, "</failure>\n    </testcase>\n");
        }
    }
    threshold_junit(r->thresholds, r->nthresholds, r->traffic_s, f);
    if (errors) {
        fprintf(f,
                "    <testcase classname=\"idempay-sim.run\" name=\"carried_out\" "
                "time=\"%.3f\">\n      <error message=\"",
                r->total_s);
        report_xml_escape(f, r->error ? r->error : "the run could not be carried out");
        fprintf(f, "\"/>\n    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return report_close(f);
}

/* The op's fields exactly as recorded, so that idempay-sim --check can load
 * the history back (saved_history.c). */
static void report_history_exact(json_t *j, const sim_op *op)
{
    json_t *x = json_pack("{s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:i}", "start_us", (json_int_t)op->start_us,
                          "end_us", (json_int_t)op->end_us, "order", op->order, "token", op->token,
                          "token_use", op->token_use, "transport", op->transport, "flags",
                          op->flags, "forge", op->forge);
    json_object_update(j, x);
    json_decref(x);
}

int report_history(const sim_report *r, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL)
        return -1;
    const sim_observations *o = r->obs;
    for (size_t i = 0; o != NULL && i < o->nops; i++) {
        const sim_op *op = &o->ops[i];
        char no[64];
        witness_order_no(r, op->order, no, sizeof(no));
        json_t *j = json_pack("{s:f,s:f,s:s,s:s,s:s,s:i,s:i,s:s,s:s}", "start_s",
                              (double)op->start_us / 1e6, "end_s", (double)op->end_us / 1e6, "kind",
                              history_kind_name(op->kind), "scenario",
                              sched_scenario_name(op->scenario), "order_no", no, "task", op->task,
                              "attempt", op->attempt, "outcome", history_outcome_name(op->outcome),
                              "status", history_status_name(op->status));
        if (j == NULL)
            continue;
        report_history_exact(j, op);
        json_object_set_new(j, "http_code",
                            op->http_code ? json_integer(op->http_code) : json_null());
        if (op->user_id)
            json_object_set_new(j, "user_id", json_integer((json_int_t)op->user_id));
        if (op->amount_fen >= 0)
            json_object_set_new(j, "amount_fen", json_integer((json_int_t)op->amount_fen));
        if (op->token_use == TOK_SLOT)
            json_object_set_new(j, "token_slot", json_integer(op->token));
        else if (op->token_use == TOK_UNKNOWN)
            json_object_set_new(j, "token_slot", json_string("made-up"));
        if (op->idem)
            json_object_set_new(j, "idempotency_key", json_integer(op->idem));
        if (op->kind == OP_CALLBACK)
            json_object_set_new(j, "forged", json_string(sched_forge_name(op->forge)));
        if (op->txn[0])
            json_object_set_new(j, "transaction_id", json_string(op->txn));
        if (op->error[0])
            json_object_set_new(j, "error", json_string(op->error));
        if (op->flags & OPF_REPLAYED)
            json_object_set_new(j, "replayed", json_true());
        if (op->flags & OPF_MISMATCH)
            json_object_set_new(j, "mismatch", json_true());
        if (op->flags & OPF_FOREIGN)
            json_object_set_new(j, "foreign_token", json_true());
        if (op->flags & OPF_EXPIRED)
            json_object_set_new(j, "expired_token", json_true());
        char *line = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(j);
        if (line != NULL) {
            fputs(line, f);
            fputc('\n', f);
            free(line);
        }
    }
    return report_close(f);
}
