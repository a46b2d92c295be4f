/* report.c - the bench's table, cost rows and targets, as text and JSON.
 * A row with any failed request is "not measured": it has no ratio, and
 * no row measured against it has one either. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"

/* The targets: ratio >= min against the row's baseline. */
static const struct {
    wl_kind w;
    double min_ratio;
} report_targets[] = {
    { WL_PAY, 0.7 },
    { WL_CALLBACK, 0.7 },
    { WL_REPEAT, 0.6 },
    { WL_TOKEN, 0.6 },
};
#define REPORT_P99_FACTOR 2.0 /* repeats' p99 <= this x ping's p99 */

/* the MariaDB counters printed per request under the table */
static const struct {
    int c; /* a dbstat_counter, or REPORT_WRITES */
    const char *label;
    double scale;
} report_db_cols[] = {
    { DBSTAT_QUESTIONS, "stmts", 1 },
    { -1, "writes", 1 },
    { DBSTAT_COM_COMMIT, "COMMIT", 1 },
    { DBSTAT_HANDLER_COMMIT, "hcommit", 1 },
    { DBSTAT_LOG_WRITES, "redo-wr", 1 },
    { DBSTAT_DATA_FSYNCS, "fsyncs", 1 },
    { DBSTAT_LOG_BYTES, "redo-KB", 1.0 / 1024 },
};
#define REPORT_WRITES (-1)
#define REPORT_NDB (sizeof(report_db_cols) / sizeof(report_db_cols[0]))

bool bench_row_measured(const bench_result *r, wl_kind w)
{
    const bench_row *row = &r->row[w];
    return row->selected && row->errors == 0 && stats_has(&row->rps);
}

/* The ratio of w can be given: w and its baseline measured. */
static bool report_ratio_ok(const bench_result *r, wl_kind w)
{
    return bench_row_measured(r, w) && bench_row_measured(r, wl_baseline(w)) &&
           stats_has(&r->row[w].ratio);
}

static void report_spread(char *out, size_t cap, const stats_runs *s)
{
    if (s->n > 1)
        snprintf(out, cap, "%3.0f%%", stats_spread(s) * 100);
    else
        snprintf(out, cap, "-");
}

/* The runs' values, "0.51 0.53 0.55". */
static void report_runs(char *out, size_t cap, const stats_runs *s)
{
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; i < s->n && used + 1 < cap; i++) {
        int n = snprintf(out + used, cap - used, i ? " " : "");
        used += (size_t)n < cap - used ? (size_t)n : 0;
        n = snprintf(out + used, cap - used, "%.2f", s->v[i]);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
}

static void report_table(const bench_result *r)
{
    char s1[16], s2[16], s3[16];

    printf("%-28s %9s %6s %8s %8s %6s %8s %6s  %-12s %7s\n", "workload", "req/s", "spread",
           "p50 ms", "p99 ms", "spread", "ratio", "spread", "baseline", "errors");
    for (int w = 0; w < WL_COUNT; w++) {
        const bench_row *row = &r->row[w];
        if (!row->selected)
            continue;
        report_spread(s1, sizeof(s1), &row->rps);
        report_spread(s2, sizeof(s2), &row->p99_ms);
        report_spread(s3, sizeof(s3), &row->ratio);
        if (!bench_row_measured(r, (wl_kind)w)) {
            printf("%-28s %9s %6s %8s %8s %6s %15s  %-12s %7ld\n", wl_title((wl_kind)w), "-", "",
                   "-", "-", "", "not measured", wl_name(wl_baseline((wl_kind)w)), row->errors);
            continue;
        }
        printf("%-28s %9.0f %6s %8.2f %8.2f %6s ", wl_title((wl_kind)w), stats_median(&row->rps),
               s1, stats_median(&row->p50_ms), stats_median(&row->p99_ms), s2);
        if (report_ratio_ok(r, (wl_kind)w))
            printf("%8.2f %6s", stats_median(&row->ratio), s3);
        else
            printf("%15s", "no baseline");
        printf("  %-12s %7ld\n", wl_name(wl_baseline((wl_kind)w)), row->errors);
    }
}

static void report_cost(const bench_result *r)
{
    printf("\ncost per request (closed-loop phases, medians): CPU ms of each process; "
           "MariaDB counters (all clients)\n");
    printf("%-28s", "workload");
    for (int p = 0; p < PROC_ROLE_COUNT; p++)
        printf(" %8s", proc_role_name((proc_role)p));
    printf(" %8s %8s %5s |", "irq", "other", "oth%");
    for (size_t c = 0; c < REPORT_NDB; c++)
        printf(" %7s", report_db_cols[c].label);
    printf("\n");
    for (int w = 0; w < WL_COUNT; w++) {
        const bench_row *row = &r->row[w];
        if (!row->selected || !stats_has(&row->rps))
            continue;
        printf("%-28s", wl_title((wl_kind)w));
        for (int p = 0; p < PROC_ROLE_COUNT; p++) {
            if (stats_has(&row->cpu_ms[p]))
                printf(" %8.3f", stats_median(&row->cpu_ms[p]));
            else
                printf(" %8s", "n/a");
        }
        printf(" %8.3f %8.3f %4.0f%% |", stats_median(&row->cpu_irq_ms),
               stats_median(&row->cpu_other_ms), stats_median(&row->other_share) * 100);
        for (size_t c = 0; c < REPORT_NDB; c++) {
            const stats_runs *s = report_db_cols[c].c == REPORT_WRITES
                                      ? &row->db_writes
                                      : &row->db[report_db_cols[c].c];
            if (stats_has(s))
                printf(" %7.2f", stats_median(s) * report_db_cols[c].scale);
            else
                printf(" %7s", "n/a");
        }
        printf("%s\n", bench_row_measured(r, (wl_kind)w) ? "" : "   (not measured: errors)");
    }
    printf(
        "(\"lighttpd\" serves both fronts, the service's and the mock's. \"irq\": interrupts and\n"
        " softirqs in the same seconds - loopback TCP, disk completions - charged to no process.\n"
        " \"other\": the rest of the machine's busy CPU (other users, kernel threads); \"oth%%\": its\n"
        " share of all the busy CPU. \"stmts\": Questions; \"writes\": INSERT, INSERT ... SELECT, UPDATE,\n"
        " DELETE; \"COMMIT\": explicit COMMITs; \"hcommit\": Handler_commit, one per statement touching\n"
        " InnoDB plus one per COMMIT; \"redo-wr\": Innodb_log_writes; \"fsyncs\": Innodb_data_fsyncs,\n"
        " the redo log's included)\n");
}

static void report_not_measured(const bench_result *r)
{
    bool header = false;

    for (int w = 0; w < WL_COUNT; w++) {
        const bench_row *row = &r->row[w];
        if (!row->selected || bench_row_measured(r, (wl_kind)w))
            continue;
        if (!header)
            printf("\nnot measured (a row with errors measured something else):\n");
        header = true;
        if (row->errors)
            printf("  %s: %ld of %ld requests failed, in %d of %d rounds; first: %s\n",
                   wl_name((wl_kind)w), row->errors, row->requests, row->rounds_with_errors,
                   r->rounds, row->first_error);
        else
            printf("  %s: no request completed\n", wl_name((wl_kind)w));
    }
}

/* "met" / "MISSED" / "not measured" for one ratio target. */
static const char *report_judge_ratio(const bench_result *r, wl_kind w, double min)
{
    if (!report_ratio_ok(r, w))
        return "not measured";
    return stats_median(&r->row[w].ratio) >= min ? "met" : "MISSED";
}

static bool report_p99_ok(const bench_result *r)
{
    return bench_row_measured(r, WL_REPEAT) && bench_row_measured(r, WL_PING);
}

static void report_target_lines(const bench_result *r)
{
    char runs[128];
    bool any = false;

    for (size_t i = 0; i < sizeof(report_targets) / sizeof(report_targets[0]); i++) {
        wl_kind w = report_targets[i].w, b = wl_baseline(w);
        if (!r->row[w].selected || !r->row[b].selected)
            continue;
        if (!any)
            printf("\ntargets (medians of %d round%s):\n", r->rounds, r->rounds > 1 ? "s" : "");
        any = true;
        printf("  %-10s >= %.1f x %-12s ", wl_name(w), report_targets[i].min_ratio, wl_name(b));
        if (report_ratio_ok(r, w)) {
            report_runs(runs, sizeof(runs), &r->row[w].ratio);
            printf("%5.2f  %-7s (runs: %s)\n", stats_median(&r->row[w].ratio),
                   report_judge_ratio(r, w, report_targets[i].min_ratio), runs);
        } else {
            printf("  not measured\n");
        }
        if (w == WL_REPEAT) {
            printf("  %-10s p99 <= %.0f x ping's p99   ", "pay_repeat", REPORT_P99_FACTOR);
            if (report_p99_ok(r)) {
                double rp = stats_median(&r->row[WL_REPEAT].p99_ms);
                double pp = stats_median(&r->row[WL_PING].p99_ms);
                printf("%.2f ms vs %.2f ms  %s\n", rp, REPORT_P99_FACTOR * pp,
                       rp <= REPORT_P99_FACTOR * pp ? "met" : "MISSED");
            } else {
                printf("not measured\n");
            }
        }
    }
    if (bench_row_measured(r, WL_RAWDB) &&
        (report_ratio_ok(r, WL_PAY) || report_ratio_ok(r, WL_CALLBACK))) {
        printf("  against raw DB (contract section 6):");
        if (bench_row_measured(r, WL_PAY) && stats_has(&r->row[WL_PAY].ratio_rawdb))
            printf("  pay_fresh %.2f", stats_median(&r->row[WL_PAY].ratio_rawdb));
        if (bench_row_measured(r, WL_CALLBACK) && stats_has(&r->row[WL_CALLBACK].ratio_rawdb))
            printf("  callback %.2f", stats_median(&r->row[WL_CALLBACK].ratio_rawdb));
        printf("\n");
    }
}

void report_print(const bench_result *r)
{
    printf("\nidempay bench: concurrency %d, %g s per phase, %d round%s interleaved "
           "(median; spread = (max - min) / median)\n",
           r->concurrency, r->duration_s, r->rounds, r->rounds > 1 ? "s" : "");
    printf("throughput: closed loop; latency: paced at %.0f%% of it, from intended send time\n",
           BENCH_PACED_SHARE * 100);
    printf("machine: %d CPUs, 1-minute load %.2f at the start, %.2f at the end\n", r->cpus,
           r->load_start, r->load_end);
    printf("merchant key: %s\n", r->key_source);
    printf("mock's key: %s\n\n", r->mock_key_source);
    report_table(r);
    report_cost(r);
    if (r->row[WL_PAY].selected || r->row[WL_REPEAT].selected) {
        printf("\nservice CPU per request:");
        if (stats_has(&r->row[WL_PAY].cpu_ms[PROC_SERVICE]))
            printf("  fresh payment %.3f ms", stats_median(&r->row[WL_PAY].cpu_ms[PROC_SERVICE]));
        if (stats_has(&r->row[WL_REPEAT].cpu_ms[PROC_SERVICE]))
            printf("  repeat %.3f ms", stats_median(&r->row[WL_REPEAT].cpu_ms[PROC_SERVICE]));
        printf("\n");
    }
    if (r->n_service > 0) {
        printf("service processes, peak RSS (VmHWM):");
        for (int i = 0; i < r->n_service; i++)
            printf("  pid %d %.1f MiB", r->service_pids[i],
                   (double)r->service_peak_rss_kb[i] / 1024.0);
        printf("\n");
    }
    report_not_measured(r);
    report_target_lines(r);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *report_runs_json(const stats_runs *s)
{
    json_t *runs = json_array();

    for (int i = 0; i < s->n; i++)
        json_array_append_new(runs, json_real(s->v[i]));
    if (!stats_has(s))
        return json_pack("{s:n, s:o}", "median", "runs", runs);
    return json_pack("{s:f, s:f, s:f, s:f, s:o}", "median", stats_median(s), "min", stats_min(s),
                     "max", stats_max(s), "spread", stats_spread(s), "runs", runs);
}

static json_t *report_row_json(const bench_result *r, wl_kind w)
{
    const bench_row *row = &r->row[w];
    bool measured = bench_row_measured(r, w);
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:i}", "workload", wl_name(w), "title",
                          wl_title(w), "baseline", wl_name(wl_baseline(w)), "measured", measured,
                          "requests", (json_int_t)row->requests, "errors", (json_int_t)row->errors,
                          "rounds_with_errors", row->rounds_with_errors);
    json_t *cpu = json_object(), *db = json_object();

    json_object_set_new(o, "first_error",
                        row->errors ? json_string(row->first_error) : json_null());
    json_object_set_new(o, "rps", report_runs_json(&row->rps));
    json_object_set_new(o, "p50_ms", report_runs_json(&row->p50_ms));
    json_object_set_new(o, "p99_ms", report_runs_json(&row->p99_ms));
    json_object_set_new(o, "paced_rps", report_runs_json(&row->paced_rps));
    /* a void row has no ratio: null, never a number */
    json_object_set_new(o, "ratio",
                        report_ratio_ok(r, w) ? report_runs_json(&row->ratio) : json_null());
    if (w == WL_PAY || w == WL_CALLBACK)
        json_object_set_new(o, "ratio_rawdb",
                            measured && bench_row_measured(r, WL_RAWDB) &&
                                    stats_has(&row->ratio_rawdb)
                                ? report_runs_json(&row->ratio_rawdb)
                                : json_null());
    for (int p = 0; p < PROC_ROLE_COUNT; p++)
        json_object_set_new(cpu, proc_role_name((proc_role)p), report_runs_json(&row->cpu_ms[p]));
    json_object_set_new(cpu, "irq", report_runs_json(&row->cpu_irq_ms));
    json_object_set_new(cpu, "other", report_runs_json(&row->cpu_other_ms));
    json_object_set_new(o, "other_share_of_busy_cpu", report_runs_json(&row->other_share));
    for (int c = 0; c < DBSTAT_COUNT; c++)
        json_object_set_new(db, dbstat_name((dbstat_counter)c), report_runs_json(&row->db[c]));
    json_object_set_new(db, "writes", report_runs_json(&row->db_writes));
    json_object_set_new(o, "cpu_ms_per_request", cpu);
    json_object_set_new(o, "mariadb_per_request", db);
    return o;
}

int report_json(const bench_result *r, const char *path)
{
    /* the run: what was asked, the machine, whose keys, against what */
    json_t *out = json_pack("{s:i, s:f, s:i, s:i, s:f, s:f, s:s, s:s, s:s, s:s}", "concurrency",
                            r->concurrency, "duration_s", r->duration_s, "rounds", r->rounds,
                            "cpus", r->cpus, "load_start", r->load_start, "load_end", r->load_end,
                            "key_source", r->key_source, "mock_key_source", r->mock_key_source,
                            "target", r->target, "gateway", r->gateway);
    json_t *rows = json_array(), *targets = json_array(), *mem = json_array();
    int rc;

    for (int w = 0; w < WL_COUNT; w++)
        if (r->row[w].selected)
            json_array_append_new(rows, report_row_json(r, (wl_kind)w));
    for (size_t i = 0; i < sizeof(report_targets) / sizeof(report_targets[0]); i++) {
        wl_kind w = report_targets[i].w;
        if (!r->row[w].selected || !r->row[wl_baseline(w)].selected)
            continue;
        json_array_append_new(
            targets,
            json_pack("{s:s, s:s, s:f, s:o, s:s}", "workload", wl_name(w), "baseline",
                      wl_name(wl_baseline(w)), "min_ratio", report_targets[i].min_ratio, "ratio",
                      report_ratio_ok(r, w) ? json_real(stats_median(&r->row[w].ratio))
                                            : json_null(),
                      "verdict", report_judge_ratio(r, w, report_targets[i].min_ratio)));
        if (w == WL_REPEAT && r->row[WL_PING].selected) {
            double rp = stats_median(&r->row[WL_REPEAT].p99_ms),
                   pp = stats_median(&r->row[WL_PING].p99_ms);
            json_array_append_new(targets, json_pack("{s:s, s:s, s:f, s:o, s:o, s:s}", "workload",
                                                     "pay_repeat_p99", "baseline", "ping_p99",
                                                     "max_factor", REPORT_P99_FACTOR, "p99_ms",
                                                     report_p99_ok(r) ? json_real(rp) : json_null(),
                                                     "ping_p99_ms",
                                                     report_p99_ok(r) ? json_real(pp) : json_null(),
                                                     "verdict",
                                                     !report_p99_ok(r)              ? "not measured"
                                                     : rp <= REPORT_P99_FACTOR * pp ? "met"
                                                                                    : "MISSED"));
        }
    }
    for (int i = 0; i < r->n_service; i++)
        json_array_append_new(mem, json_pack("{s:i, s:I}", "pid", r->service_pids[i], "peak_rss_kb",
                                             (json_int_t)r->service_peak_rss_kb[i]));
    json_object_set_new(out, "workloads", rows);
    json_object_set_new(out, "targets", targets);
    json_object_set_new(out, "service_memory", mem);
    rc = json_dump_file(out, path, JSON_INDENT(2)) == 0 ? 0 : -1;
    json_decref(out);
    return rc;
}
