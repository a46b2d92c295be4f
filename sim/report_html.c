/* report_html.c - report.html (see report_html.h): the page around the
 * charts of report_charts.c, its tables and its data block. */
#include "report_html.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "report_charts.h"
#include "timeline.h"
#include "witness.h"

static const char html_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;max-width:1200px}"
    "h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px "
    "solid #ccc}h3{font-size:14px;margin:14px 0 4px}"
    ".verdict{font-weight:bold;padding:2px 8px;border-radius:3px;color:#fff}"
    ".v0{background:#2e7d32}.v1{background:#c62828}.v2{background:#6d4c41}"
    "dl.meta{display:grid;grid-template-columns:max-content auto;gap:0 12px;margin:6px 0}"
    "dl.meta dt{color:#666}dl.meta dd{margin:0;font-family:monospace;word-break:break-all}"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;"
    "text-align:right}th{background:#f4f4f4}td.name,th.name{text-align:left}"
    "th.inv{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;"
    "text-align:left;font-weight:normal}td.pass{color:#2e7d32}td.fail{background:#ffebee;color:#c62828;font-weight:bold}"
    "svg.chart{display:block;margin:4px 0 10px;background:#fff}"
    ".grid{stroke:#e4e4e4}.axis{stroke:#888}.tick,.unit,.legend,.lane,.plabel{font:10px sans-serif;"
    "fill:#555}.plabel{fill:#888}.band0{fill:#f5f8fc}.band1{fill:#eaf0f7}"
    ".chaos line{stroke:#e53935;stroke-width:1.5;stroke-dasharray:4,2}"
    "pre{background:#fafafa;border:1px solid #eee;padding:6px;font-size:11px;overflow:auto}"
    "p.note{color:#666;font-size:12px}";

static void html_text(FILE *f, const char *s)
{
    report_xml_escape(f, s != NULL ? s : "");
}

static const char *html_verdict(int exit_code)
{
    return exit_code == 0   ? "PASS: every invariant held"
           : exit_code == 1 ? "FAIL: invariant(s) violated"
                            : "ERROR: the run could not be carried out";
}

static void html_header(FILE *f, const sim_report *r)
{
    uint64_t ok = report_total(r, OUT_OK), fail = report_total(r, OUT_FAIL),
             unk = report_total(r, OUT_UNKNOWN);
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>idempay-sim seed %llu: %s</title><style>%s</style></head>\n",
            (unsigned long long)r->seed,
            r->exit_code == 0   ? "PASS"
            : r->exit_code == 1 ? "FAIL"
                                : "ERROR",
            html_style);
    fprintf(f,
            "<body data-exit-code=\"%d\">\n<h1>idempay-sim report <span class=\"verdict v%d\" "
            "id=\"verdict\">%s</span></h1>\n<dl class=\"meta\">",
            r->exit_code, r->exit_code < 0 || r->exit_code > 2 ? 2 : r->exit_code,
            html_verdict(r->exit_code));
    fprintf(f, "<dt>seed</dt><dd id=\"seed\">%llu</dd><dt>schedule digest</dt><dd>%s</dd>",
            (unsigned long long)r->seed, r->digest ? r->digest : "-");
    fprintf(f, "<dt>order prefix</dt><dd>%s</dd><dt>target</dt><dd>", r->prefix ? r->prefix : "-");
    html_text(f, r->target);
    fprintf(f,
            "</dd><dt>orders</dt><dd>%zu</dd><dt>requests</dt><dd>%llu (ok %llu, fail %llu, "
            "unknown %llu) in %.1f s of traffic; run %.1f s (settle %.1f s)</dd>",
            r->sched->norders, (unsigned long long)(ok + fail + unk), (unsigned long long)ok,
            (unsigned long long)fail, (unsigned long long)unk, r->traffic_s, r->total_s,
            r->settle_s);
    if (r->windows != NULL) {
        fprintf(f, "<dt>service windows</dt><dd>");
        html_text(f, r->windows);
        fprintf(f, "</dd>");
    }
    if (r->replay_cmd != NULL) {
        fprintf(f, "<dt>replay</dt><dd>");
        html_text(f, r->replay_cmd);
        fprintf(f, "</dd>");
    }
    if (r->error != NULL) {
        fprintf(f, "<dt>error</dt><dd>");
        html_text(f, r->error);
        fprintf(f, "</dd>");
    }
    fprintf(f, "</dl>\n");
}

static void html_invariants(FILE *f, const sim_report *r)
{
    const chk_result *c = r->chk;
    fprintf(f, "<h2>Invariants</h2>\n");
    if (c == NULL) {
        fprintf(f, "<p class=\"note\">The checks did not run.</p>\n");
        return;
    }
    fprintf(f, "<table id=\"invariants\"><tr><th class=\"name\">scenario</th>");
    for (int i = 0; i < INV_COUNT; i++) {
        fprintf(f, "<th class=\"inv\" title=\"");
        html_text(f, checker_invariant_text(i));
        fprintf(f, "\">%s</th>", checker_invariant_name(i));
    }
    fprintf(f, "</tr>\n");
    for (int sc = 0; sc <= SC_COUNT; sc++) {
        if (!c->ran[sc])
            continue;
        fprintf(f, "<tr><td class=\"name\">%s</td>", sched_scenario_name(sc));
        for (int i = 0; i < INV_COUNT; i++) {
            size_t n = c->count[sc][i];
            fprintf(f,
                    "<td class=\"%s\" data-scenario=\"%s\" data-invariant=\"%s\" "
                    "data-violations=\"%zu\">%s",
                    n ? "fail" : "pass", sched_scenario_name(sc), checker_invariant_name(i), n,
                    n ? "FAIL " : "pass");
            if (n)
                fprintf(f, "%zu", n);
            fprintf(f, "</td>");
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

static void html_latency_row(FILE *f, const char *name, const sim_hist *h)
{
    fprintf(f,
            "<tr class=\"latency\" data-kind=\"%s\" data-count=\"%llu\" data-p50-ms=\"%.17g\" "
            "data-p99-ms=\"%.17g\"><td class=\"name\">%s</td><td>%llu</td><td>%.3f</td>"
            "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
            name, (unsigned long long)h->count, hist_quantile(h, 0.5) / 1e3,
            hist_quantile(h, 0.99) / 1e3, name, (unsigned long long)h->count,
            hist_quantile(h, 0.5) / 1e3, hist_quantile(h, 0.9) / 1e3, hist_quantile(h, 0.99) / 1e3,
            h->max / 1e3, hist_mean(h) / 1e3);
}

static void html_latency_table(FILE *f, const sim_report *r)
{
    sim_hist all;
    hist_init(&all);
    fprintf(f, "<h2>Latency (whole run)</h2>\n<table id=\"latency\"><tr><th class=\"name\">kind"
               "</th><th>count</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th>"
               "<th>mean ms</th></tr>\n");
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        hist_merge(&all, &r->latency[k]);
        if (r->latency[k].count)
            html_latency_row(f, history_kind_name(k), &r->latency[k]);
    }
    html_latency_row(f, "all", &all);
    fprintf(f, "</table>\n");
}

static void html_violations(FILE *f, const sim_report *r)
{
    const chk_result *c = r->chk;
    if (c == NULL || c->nv == 0)
        return;
    fprintf(f,
            "<h2>Violations (%zu)</h2>\n<p class=\"note\">Each witness as a timeline: "
            "ledger charges (diamonds; purple: refunded), the gateway's calls (purple: "
            "refunds) and notifications from its journal, and one lane per client of the "
            "order (bars: ok green, fail orange, unknown grey). Hover for details.</p>\n",
            c->total);
    for (size_t i = 0; i < c->nv; i++) {
        const chk_violation *v = &c->v[i];
        char no[64];
        witness_order_no(r, v->order, no, sizeof(no));
        if (i >= REPORT_HTML_MAX_WITNESSES) {
            fprintf(f, "<p class=\"note\">... %zu more: see report.json and report.txt</p>\n",
                    c->nv - i);
            break;
        }
        fprintf(f,
                "<div class=\"violation\" data-invariant=\"%s\" data-order=\"%s\"><h3>%s: %s "
                "(%s)</h3><p>",
                checker_invariant_name(v->invariant), no, checker_invariant_name(v->invariant), no,
                sched_scenario_name(v->scenario));
        html_text(f, v->message);
        fprintf(f, "</p>\n");
        charts_witness(f, r, v);
        char *w = witness_text(r, v);
        fprintf(f, "<details><summary>witness text</summary><pre>");
        html_text(f, w != NULL ? w : "(out of memory)");
        fprintf(f, "</pre></details></div>\n");
        free(w);
    }
}

/* ---- the data block: report.json's numbers and the series ---- */

static json_t *html_hist_json(const sim_hist *h)
{
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f}", "count", (json_int_t)h->count, "p50_ms",
                     hist_quantile(h, 0.5) / 1e3, "p90_ms", hist_quantile(h, 0.9) / 1e3, "p99_ms",
                     hist_quantile(h, 0.99) / 1e3, "max_ms", h->max / 1e3, "mean_ms",
                     hist_mean(h) / 1e3);
}

static json_t *html_latency_json(const sim_report *r)
{
    sim_hist all;
    hist_init(&all);
    json_t *lat = json_object();
    for (int k = 0; k < OP_KIND_COUNT && lat != NULL; k++) {
        hist_merge(&all, &r->latency[k]);
        if (r->latency[k].count)
            json_object_set_new(lat, history_kind_name(k), html_hist_json(&r->latency[k]));
    }
    if (lat != NULL)
        json_object_set_new(lat, "all", html_hist_json(&all));
    return lat;
}

static json_t *html_invariants_json(const sim_report *r)
{
    const chk_result *c = r->chk;
    json_t *inv = c != NULL ? json_object() : json_null();
    for (int i = 0; c != NULL && inv != NULL && i < INV_COUNT; i++) {
        size_t n = 0;
        for (int sc = 0; sc <= SC_COUNT; sc++)
            n += c->count[sc][i];
        json_object_set_new(inv, checker_invariant_name(i),
                            json_pack("{s:b,s:I}", "pass", n == 0, "violations", (json_int_t)n));
    }
    return inv;
}

static json_t *html_u64_array(const uint64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *html_real_array(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *html_series_json(const sim_timeline *t)
{
    json_t *kinds = json_object(), *outcomes = json_object();
    for (int k = 0; k < OP_KIND_COUNT && kinds != NULL; k++) {
        size_t at = (size_t)k * t->nbuckets;
        uint64_t sum = 0;
        for (size_t b = 0; b < t->nbuckets; b++)
            sum += t->count[at + b];
        if (sum > 0)
            json_object_set_new(kinds, history_kind_name(k),
                                json_pack("{s:o,s:o,s:o}", "count",
                                          html_u64_array(t->count + at, t->nbuckets), "p50_ms",
                                          html_real_array(t->p50_ms + at, t->nbuckets), "p99_ms",
                                          html_real_array(t->p99_ms + at, t->nbuckets)));
    }
    for (int o = 0; o < OUT_COUNT && outcomes != NULL; o++)
        json_object_set_new(outcomes, history_outcome_name(o),
                            html_u64_array(t->outcome + (size_t)o * t->nbuckets, t->nbuckets));
    return json_pack("{s:f,s:I,s:o,s:o}", "interval_s", (double)t->interval_us / 1e6, "intervals",
                     (json_int_t)t->nbuckets, "kinds", kinds, "outcomes", outcomes);
}

static json_t *html_events_json(const sim_report *r)
{
    json_t *phases = json_array(), *chaos = json_array();
    const int64_t *st = r->obs ? r->obs->phase_start_us : NULL;
    for (size_t p = 0; phases != NULL && p < r->sched->nphases; p++) {
        const sched_phase *ph = &r->sched->phases[p];
        json_array_append_new(phases,
                              json_pack("{s:s,s:s,s:f,s:s}", "scenario",
                                        sched_scenario_name(ph->scenario), "label", ph->label,
                                        "start_s", st != NULL ? (double)st[p] / 1e6 : -1.0,
                                        "faults", ph->faults));
    }
    for (size_t i = 0; chaos != NULL && i < r->nchaos; i++)
        json_array_append_new(chaos, json_pack("{s:s,s:f,s:i}", "action",
                                               sched_chaos_name(r->chaos[i].action), "at_s",
                                               (double)r->chaos[i].at_us / 1e6, "exit_status",
                                               r->chaos[i].exit_status));
    return json_pack("{s:o,s:o}", "phases", phases, "chaos", chaos);
}

static void html_data(FILE *f, const sim_report *r, const sim_timeline *t)
{
    json_t *req = json_pack("{s:I,s:I,s:I,s:I}", "total",
                            (json_int_t)(report_total(r, OUT_OK) + report_total(r, OUT_FAIL) +
                                         report_total(r, OUT_UNKNOWN)),
                            "ok", (json_int_t)report_total(r, OUT_OK), "fail",
                            (json_int_t)report_total(r, OUT_FAIL), "unknown",
                            (json_int_t)report_total(r, OUT_UNKNOWN));
    json_t *root = json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:o}", "exit_code", (json_int_t)r->exit_code,
                             "schedule_digest", r->digest ? r->digest : "", "requests", req,
                             "latency", html_latency_json(r), "invariants", html_invariants_json(r),
                             "series", html_series_json(t), "events", html_events_json(r));
    char *text = root != NULL ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS | JSON_ESCAPE_SLASH)
                              : NULL;
    fprintf(f, "<script type=\"application/json\" id=\"idempay-report-data\">%s</script>\n",
            text != NULL ? text : "{}");
    free(text);
    json_decref(root);
}

/* Checks that the drawn series hold the data block's numbers, and says so
 * on <body> (data-loaded); a mismatch is a console error. */
static const char html_script[] =
    "<script>\n(function () {\n  \"use strict\";\n"
    "  var d = JSON.parse(document.getElementById(\"idempay-report-data\").textContent);\n"
    "  var ops = 0, drawn = 0;\n"
    "  Object.keys(d.series.kinds).forEach(function (k) {\n"
    "    d.series.kinds[k].count.forEach(function (c) { ops += c; });\n  });\n"
    "  document.querySelectorAll(\"svg.throughput g.series\").forEach(function (g) {\n"
    "    drawn += Number(g.getAttribute(\"data-total\"));\n  });\n"
    "  document.body.setAttribute(\"data-history-ops\", String(ops));\n"
    "  document.body.setAttribute(\"data-drawn-ops\", String(drawn));\n"
    "  document.body.setAttribute(\"data-loaded\", ops === drawn ? \"consistent\" : \"inconsistent\");\n"
    "  if (ops !== drawn) console.error(\"report.html: the charts do not hold the data block\");\n"
    "})();\n</script>\n";

static void html_body(FILE *f, const sim_report *r, const sim_timeline *t)
{
    html_header(f, r);
    fprintf(f,
            "<h2>Throughput per request kind</h2>\n<p class=\"note\">Client operations that "
            "ended in each %.1f s interval, per second. Bands: the phases (hover for their "
            "faults); red dashed lines: chaos runs.</p>\n",
            (double)t->interval_us / 1e6);
    charts_throughput(f, r, t);
    fprintf(f, "<h2>Latency over time per request kind</h2>\n");
    charts_latency(f, r, t);
    fprintf(f, "<h2>Outcome mix over time</h2>\n");
    charts_outcomes(f, r, t);
    html_invariants(f, r);
    html_latency_table(f, r);
    html_violations(f, r);
    html_data(f, r, t);
    fputs(html_script, f);
    fprintf(f, "</body></html>\n");
}

int report_html_write(const sim_report *r, const char *path)
{
    sim_timeline t;
    const sim_observations *o = r->obs;
    if (timeline_build(o ? o->ops : NULL, o ? o->nops : 0, &t) < 0) {
        errno = ENOMEM;
        return -1;
    }
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    int rc = -1;
    if (f != NULL) {
        html_body(f, r, &t);
        rc = ferror(f) ? -1 : 0;
        if (f != stdout && fclose(f) != 0)
            rc = -1;
        else if (f == stdout)
            fflush(f);
    }
    timeline_free(&t);
    return rc;
}
