/* report_charts.c - inline SVG for report.html (see report_charts.h). Every
 * chart is a frame (axes, grid, ticks) over a time range, with the run's
 * phases as bands and its chaos runs as red lines, and its series on top. */
#include "report_charts.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CH_W 1160
#define CH_ML 64
#define CH_MR 16
#define CH_MT 22
#define CH_MB 28

typedef struct {
    double t0, t1; /* the time axis, s */
    double vmax;   /* the value axis: 0 .. vmax */
    int h;         /* height in px (width CH_W) */
} ch_frame;

const char *charts_kind_colour(int kind)
{
    static const char *const c[OP_KIND_COUNT] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                  "#9467bd", "#8c564b", "#e377c2", "#7f7f7f" };
    return kind >= 0 && kind < OP_KIND_COUNT ? c[kind] : "#777";
}

const char *charts_outcome_colour(int outcome)
{
    static const char *const c[OUT_COUNT] = { "#4caf50", "#ff9800", "#9e9e9e" };
    return outcome >= 0 && outcome < OUT_COUNT ? c[outcome] : "#777";
}

static double ch_x(const ch_frame *fr, double t)
{
    double span = fr->t1 > fr->t0 ? fr->t1 - fr->t0 : 1.0;
    return CH_ML + (t - fr->t0) / span * (CH_W - CH_ML - CH_MR);
}

static double ch_y(const ch_frame *fr, double v)
{
    double top = fr->vmax > 0 ? fr->vmax : 1.0;
    return CH_MT + (1.0 - v / top) * (fr->h - CH_MT - CH_MB);
}

/* A step of 1, 2 or 5 x 10^k giving about n ticks over span. */
static double ch_step(double span, int n)
{
    double raw = span > 0 ? span / n : 1.0, p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

static void ch_open(FILE *f, const ch_frame *fr, const char *cls, const char *attrs)
{
    fprintf(f,
            "<svg class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" %s>\n",
            cls, CH_W, fr->h, CH_W, fr->h, attrs ? attrs : "");
}

/* Grid, ticks and axis labels. */
static void ch_axes(FILE *f, const ch_frame *fr, const char *unit)
{
    double ys = ch_step(fr->vmax, 4), xs = ch_step(fr->t1 - fr->t0, 12);
    for (double v = 0; v <= fr->vmax * 1.0001 && ys > 0; v += ys)
        fprintf(f,
                "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                CH_ML, CH_W - CH_MR, ch_y(fr, v), ch_y(fr, v), CH_ML - 4, ch_y(fr, v) + 4, v);
    for (double t = ceil(fr->t0 / xs) * xs; t <= fr->t1 && xs > 0; t += xs)
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gs</text>\n",
                ch_x(fr, t), fr->h - CH_MB + 14, t);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", CH_ML,
            CH_W - CH_MR, fr->h - CH_MB, fr->h - CH_MB);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", CH_ML, CH_ML,
            CH_MT, fr->h - CH_MB);
    fprintf(f, "<text class=\"unit\" x=\"4\" y=\"%d\">", CH_MT - 8);
    report_xml_escape(f, unit);
    fprintf(f, "</text>\n");
}

/* One band per phase (from its start to the next phase's start) and one
 * red line per chaos run, clipped to the frame. */
static void ch_events(FILE *f, const ch_frame *fr, const sim_report *r)
{
    const sim_schedule *s = r->sched;
    const int64_t *st = r->obs ? r->obs->phase_start_us : NULL;
    for (size_t p = 0; st != NULL && p < s->nphases; p++) {
        if (st[p] < 0)
            continue;
        double a = (double)st[p] / 1e6, b = fr->t1;
        for (size_t q = p + 1; q < s->nphases; q++)
            if (st[q] >= 0) {
                b = (double)st[q] / 1e6;
                break;
            }
        if (b <= fr->t0 || a >= fr->t1)
            continue;
        a = a < fr->t0 ? fr->t0 : a;
        b = b > fr->t1 ? fr->t1 : b;
        fprintf(
            f,
            "<g class=\"phase\" data-phase=\"%zu\" data-start-s=\"%.6f\"><rect class=\"band%zu\" x=\"%.1f\" y=\"%d\" "
            "width=\"%.1f\" height=\"%d\"><title>",
            p, (double)st[p] / 1e6, p % 2, ch_x(fr, a), CH_MT, ch_x(fr, b) - ch_x(fr, a),
            fr->h - CH_MT - CH_MB);
        fprintf(f, "%s/%s from +%.2f s: ", sched_scenario_name(s->phases[p].scenario),
                s->phases[p].label, (double)st[p] / 1e6);
        report_xml_escape(f,
                          s->phases[p].faults[0] ? s->phases[p].faults : s->phases[p].mock_config);
        fprintf(f, "</title></rect>");
        if (ch_x(fr, b) - ch_x(fr, a) > 6.0 * (double)strlen(s->phases[p].label))
            fprintf(f, "<text class=\"plabel\" x=\"%.1f\" y=\"%d\">%s</text>", ch_x(fr, a) + 2,
                    CH_MT + 10, s->phases[p].label);
        fprintf(f, "</g>\n");
    }
    for (size_t i = 0; i < r->nchaos; i++) {
        double t = (double)r->chaos[i].at_us / 1e6;
        if (t < fr->t0 || t > fr->t1)
            continue;
        fprintf(f,
                "<g class=\"chaos\" data-at-s=\"%.6f\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
                "y2=\"%d\"/><title>chaos %s at +%.2f s (exit %d)</title></g>\n",
                t, ch_x(fr, t), ch_x(fr, t), CH_MT, fr->h - CH_MB,
                sched_chaos_name(r->chaos[i].action), t, r->chaos[i].exit_status);
    }
}

static double ch_t_end(const sim_timeline *t)
{
    return (double)t->nbuckets * (double)t->interval_us / 1e6;
}

/* A line through the interval midpoints of v[0..nbuckets); with present,
 * broken where present[b] is 0 (no value there, e.g. no latency). */
static void ch_line(FILE *f, const ch_frame *fr, const sim_timeline *t, const double *v,
                    const uint64_t *present, const char *colour, const char *dash)
{
    double w = (double)t->interval_us / 1e6;
    int pen = 0;
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s d=\"", colour, dash);
    for (size_t b = 0; b < t->nbuckets; b++) {
        if (present != NULL && present[b] == 0) {
            pen = 0;
            continue;
        }
        fprintf(f, "%s%.1f %.1f", pen ? " L" : " M", ch_x(fr, ((double)b + 0.5) * w),
                ch_y(fr, v[b]));
        pen = 1;
    }
    fprintf(f, "\"/>\n");
    for (size_t b = 0; present != NULL && b < t->nbuckets; b++) /* a lone value shows too */
        if (present[b] != 0)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\"/>",
                    ch_x(fr, ((double)b + 0.5) * w), ch_y(fr, v[b]), colour);
}

static void ch_counts_attr(FILE *f, const char *name, const uint64_t *v, size_t n)
{
    fprintf(f, " %s=\"", name);
    for (size_t b = 0; b < n; b++)
        fprintf(f, "%s%llu", b ? "," : "", (unsigned long long)v[b]);
    fprintf(f, "\"");
}

static void ch_legend(FILE *f, int i, const char *colour, const char *text)
{
    fprintf(f,
            "<rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"%s\"/>"
            "<text class=\"legend\" x=\"%d\" y=\"13\">%s</text>\n",
            CH_ML + 150 + i * 110, colour, CH_ML + 164 + i * 110, text);
}

void charts_throughput(FILE *f, const sim_report *r, const sim_timeline *t)
{
    double w = (double)t->interval_us / 1e6, vmax = 1.0;
    double *rate = calloc(t->nbuckets ? t->nbuckets : 1, sizeof(*rate));
    ch_frame fr = { .t0 = 0, .t1 = ch_t_end(t), .h = 260 };
    if (rate == NULL)
        return;
    for (size_t i = 0; i < (size_t)OP_KIND_COUNT * t->nbuckets; i++)
        if ((double)t->count[i] / w > vmax)
            vmax = (double)t->count[i] / w;
    fr.vmax = ch_step(vmax, 4) * ceil(vmax / ch_step(vmax, 4));
    ch_open(f, &fr, "throughput", NULL);
    ch_events(f, &fr, r);
    ch_axes(f, &fr, "operations/s");
    for (int k = 0, shown = 0; k < OP_KIND_COUNT; k++) {
        const uint64_t *c = t->count + (size_t)k * t->nbuckets;
        uint64_t sum = 0;
        for (size_t b = 0; b < t->nbuckets; b++) {
            sum += c[b];
            rate[b] = (double)c[b] / w;
        }
        if (sum == 0)
            continue;
        fprintf(f, "<g class=\"series\" data-kind=\"%s\" data-total=\"%llu\"", history_kind_name(k),
                (unsigned long long)sum);
        ch_counts_attr(f, "data-counts", c, t->nbuckets);
        fprintf(f, ">\n");
        ch_line(f, &fr, t, rate, NULL, charts_kind_colour(k), "");
        fprintf(f, "</g>\n");
        ch_legend(f, shown++, charts_kind_colour(k), history_kind_name(k));
    }
    fprintf(f, "</svg>\n");
    free(rate);
}

static void ch_latency_one(FILE *f, const sim_report *r, const sim_timeline *t, int k)
{
    const double *p50 = t->p50_ms + (size_t)k * t->nbuckets,
                 *p99 = t->p99_ms + (size_t)k * t->nbuckets;
    double vmax = 1.0;
    for (size_t b = 0; b < t->nbuckets; b++)
        vmax = p99[b] > vmax ? p99[b] : vmax;
    ch_frame fr = { .t0 = 0, .t1 = ch_t_end(t), .h = 190 };
    fr.vmax = ch_step(vmax, 4) * ceil(vmax / ch_step(vmax, 4));
    char attrs[64];
    snprintf(attrs, sizeof(attrs), "data-kind=\"%s\"", history_kind_name(k));
    ch_open(f, &fr, "latency", attrs);
    ch_events(f, &fr, r);
    char unit[64];
    snprintf(unit, sizeof(unit), "%s latency, ms", history_kind_name(k));
    ch_axes(f, &fr, unit);
    fprintf(f, "<g class=\"series\" data-kind=\"%s\" data-quantile=\"p50\">\n",
            history_kind_name(k));
    const uint64_t *n = t->count + (size_t)k * t->nbuckets;
    ch_line(f, &fr, t, p50, n, charts_kind_colour(k), "");
    fprintf(f, "</g><g class=\"series\" data-kind=\"%s\" data-quantile=\"p99\">\n",
            history_kind_name(k));
    ch_line(f, &fr, t, p99, n, charts_kind_colour(k), " stroke-dasharray=\"5,3\"");
    fprintf(f, "</g>\n");
    ch_legend(f, 0, charts_kind_colour(k), "p50 (solid)");
    ch_legend(f, 1, "#fff", "p99 (dashed)");
    fprintf(f, "</svg>\n");
}

void charts_latency(FILE *f, const sim_report *r, const sim_timeline *t)
{
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        uint64_t sum = 0;
        for (size_t b = 0; b < t->nbuckets; b++)
            sum += t->count[(size_t)k * t->nbuckets + b];
        if (sum > 0)
            ch_latency_one(f, r, t, k);
    }
}

void charts_outcomes(FILE *f, const sim_report *r, const sim_timeline *t)
{
    double vmax = 1.0, w = (double)t->interval_us / 1e6;
    for (size_t b = 0; b < t->nbuckets; b++) {
        uint64_t n = 0;
        for (int o = 0; o < OUT_COUNT; o++)
            n += t->outcome[(size_t)o * t->nbuckets + b];
        vmax = (double)n > vmax ? (double)n : vmax;
    }
    ch_frame fr = { .t0 = 0, .t1 = ch_t_end(t), .h = 240 };
    fr.vmax = ch_step(vmax, 4) * ceil(vmax / ch_step(vmax, 4));
    ch_open(f, &fr, "outcomes", NULL);
    ch_events(f, &fr, r);
    ch_axes(f, &fr, "operations per interval");
    for (int o = 0; o < OUT_COUNT; o++) {
        const uint64_t *c = t->outcome + (size_t)o * t->nbuckets;
        fprintf(f, "<g class=\"series\" data-outcome=\"%s\" fill=\"%s\"", history_outcome_name(o),
                charts_outcome_colour(o));
        ch_counts_attr(f, "data-counts", c, t->nbuckets);
        fprintf(f, ">\n");
        for (size_t b = 0; b < t->nbuckets; b++) {
            uint64_t below = 0;
            for (int q = 0; q < o; q++)
                below += t->outcome[(size_t)q * t->nbuckets + b];
            if (c[b] == 0)
                continue;
            double y1 = ch_y(&fr, (double)(below + c[b])), y0 = ch_y(&fr, (double)below);
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                    ch_x(&fr, (double)b * w) + 0.5, y1,
                    ch_x(&fr, w) - ch_x(&fr, 0) - 1.0 > 0.5 ? ch_x(&fr, w) - ch_x(&fr, 0) - 1.0
                                                            : 0.5,
                    y0 - y1);
        }
        fprintf(f, "\n</g>\n");
        ch_legend(f, o, charts_outcome_colour(o), history_outcome_name(o));
    }
    fprintf(f, "</svg>\n");
}

/* ---- a violation's witness as a timeline ---- */

#define CH_LANE 18
#define CH_MAX_LANES 24

typedef struct {
    double t0, t1;
    int32_t task[CH_MAX_LANES]; /* client lanes: the task each shows */
    int nclients;
} ch_witness;

static int ch_mine(const chk_violation *v, const sim_op *op)
{
    return (v->order >= 0 && op->order == v->order) ||
           (v->token >= 0 && op->token == v->token && op->token_use == TOK_SLOT);
}

static int ch_charge_mine(const chk_violation *v, const sim_charge *c, size_t i)
{
    return (v->order >= 0 && c->order == v->order) || (long)i == v->charge;
}

static void ch_span(ch_witness *w, double t)
{
    w->t0 = t < w->t0 ? t : w->t0;
    w->t1 = t > w->t1 ? t : w->t1;
}

/* The journal's entries ("    +1.234 s unifiedorder ..."), one call per line. */
static void ch_journal_each(const char *text,
                            void (*fn)(void *, double, const char *, const char *), void *arg)
{
    for (const char *p = text; p != NULL && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[512], word[64];
        double t;
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
        if (sscanf(line, " +%lf s %63s", &t, word) == 2)
            fn(arg, t, word, line);
        p = nl ? nl + 1 : NULL;
    }
}

static void ch_journal_span(void *arg, double t, const char *word, const char *line)
{
    (void)word;
    (void)line;
    ch_span(arg, t);
}

/* The time range and the client lanes of v's witness. */
static void ch_witness_plan(const sim_report *r, const chk_violation *v, ch_witness *w)
{
    const sim_observations *o = r->obs;
    w->t0 = INFINITY;
    w->t1 = -INFINITY;
    for (size_t i = 0; o != NULL && i < o->nops; i++) {
        const sim_op *op = &o->ops[i];
        if (!ch_mine(v, op))
            continue;
        ch_span(w, (double)op->start_us / 1e6);
        ch_span(w, (double)op->end_us / 1e6);
        int known = 0;
        for (int l = 0; l < w->nclients; l++)
            known |= w->task[l] == op->task;
        if (!known && w->nclients < CH_MAX_LANES)
            w->task[w->nclients++] = op->task;
    }
    for (size_t i = 0; o != NULL && i < o->ncharges; i++)
        if (ch_charge_mine(v, &o->charges[i], i) && o->charges[i].at_us != INT64_MIN)
            ch_span(w, (double)o->charges[i].at_us / 1e6);
    if (v->order >= 0 && r->journal != NULL)
        ch_journal_each(r->journal[v->order], ch_journal_span, w);
    if (!(w->t1 >= w->t0)) {
        w->t0 = 0;
        w->t1 = 1;
    }
    double pad = (w->t1 - w->t0) * 0.04 + 0.05;
    w->t0 -= pad;
    w->t1 += pad;
}

typedef struct {
    FILE *f;
    const ch_frame *fr;
} ch_journal_ctx;

static void ch_journal_mark(void *arg, double t, const char *word, const char *line)
{
    ch_journal_ctx *c = arg;
    int notify = strcmp(word, "notification") == 0, refund = strcmp(word, "refund") == 0;
    double x = ch_x(c->fr, t), y = CH_MT + (notify ? 2 : 1) * CH_LANE + 3;
    fprintf(c->f,
            "<g class=\"%s\" data-at-s=\"%.3f\"><rect x=\"%.1f\" y=\"%.1f\" width=\"4\" "
            "height=\"12\" fill=\"%s\"/><title>",
            notify   ? "notification"
            : refund ? "gateway-call refund"
                     : "gateway-call",
            t, x - 2, y,
            notify   ? "#17becf"
            : refund ? "#9c27b0"
                     : "#555");
    report_xml_escape(c->f, line);
    fprintf(c->f, "</title></g>\n");
}

static void ch_witness_lanes(FILE *f, const ch_witness *w)
{
    static const char *const fixed[] = { "ledger charges", "gateway calls", "notifications" };
    for (int l = 0; l < 3 + w->nclients; l++) {
        fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", CH_ML,
                CH_W - CH_MR, CH_MT + l * CH_LANE + CH_LANE, CH_MT + l * CH_LANE + CH_LANE);
        if (l < 3)
            fprintf(f, "<text class=\"lane\" x=\"2\" y=\"%d\">%s</text>\n",
                    CH_MT + l * CH_LANE + 13, fixed[l]);
        else
            fprintf(f, "<text class=\"lane\" x=\"2\" y=\"%d\">client#%d</text>\n",
                    CH_MT + l * CH_LANE + 13, (int)w->task[l - 3]);
    }
}

static void ch_witness_op(FILE *f, const ch_frame *fr, const ch_witness *w, const sim_op *op)
{
    int lane = 0;
    while (lane < w->nclients && w->task[lane] != op->task)
        lane++;
    if (lane == w->nclients)
        return;
    double x0 = ch_x(fr, (double)op->start_us / 1e6), x1 = ch_x(fr, (double)op->end_us / 1e6);
    fprintf(
        f,
        "<g class=\"op\" data-kind=\"%s\" data-http=\"%u\" data-start-s=\"%.6f\">"
        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"%s\"/><title>%s %u %s%s%s +%.3f..+%.3f s</title></g>\n",
        history_kind_name(op->kind), (unsigned)op->http_code, (double)op->start_us / 1e6, x0,
        CH_MT + (lane + 3) * CH_LANE + 3, x1 - x0 > 2 ? x1 - x0 : 2,
        charts_outcome_colour(op->outcome), history_kind_name(op->kind), (unsigned)op->http_code,
        history_status_name(op->status), op->error[0] ? " " : "", op->error,
        (double)op->start_us / 1e6, (double)op->end_us / 1e6);
}

void charts_witness(FILE *f, const sim_report *r, const chk_violation *v)
{
    const sim_observations *o = r->obs;
    ch_witness w;
    memset(&w, 0, sizeof(w));
    ch_witness_plan(r, v, &w);
    ch_frame fr = {
        .t0 = w.t0, .t1 = w.t1, .vmax = 1, .h = CH_MT + (3 + w.nclients) * CH_LANE + CH_MB
    };
    ch_open(f, &fr, "witness", NULL);
    ch_events(f, &fr, r);
    ch_witness_lanes(f, &w);
    double xs = ch_step(fr.t1 - fr.t0, 12);
    for (double t = ceil(fr.t0 / xs) * xs; t <= fr.t1; t += xs)
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gs</text>\n",
                ch_x(&fr, t), fr.h - CH_MB + 14, t);
    for (size_t i = 0; o != NULL && i < o->nops; i++)
        if (ch_mine(v, &o->ops[i]))
            ch_witness_op(f, &fr, &w, &o->ops[i]);
    for (size_t i = 0; o != NULL && i < o->ncharges; i++) {
        const sim_charge *c = &o->charges[i];
        if (!ch_charge_mine(v, c, i) || c->at_us == INT64_MIN)
            continue;
        double x = ch_x(&fr, (double)c->at_us / 1e6);
        fprintf(
            f,
            "<g class=\"charge\" data-at-s=\"%.6f\" data-refunded=\"%d\"><path d=\"M%.1f %d l6 6 l-6 6 l-6 -6 z\" "
            "fill=\"%s\"/><title>charge %s total_fee=%lld%s at +%.3f s</title></g>\n",
            (double)c->at_us / 1e6, c->refunded != 0, x, CH_MT + 3,
            c->refunded ? "#9c27b0" : "#d62728", c->transaction_id, (long long)c->total_fee,
            c->refunded ? " (refunded)" : "", (double)c->at_us / 1e6);
    }
    ch_journal_ctx jc = { .f = f, .fr = &fr };
    if (v->order >= 0 && r->journal != NULL)
        ch_journal_each(r->journal[v->order], ch_journal_mark, &jc);
    fprintf(f, "</svg>\n");
}
