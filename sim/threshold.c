/* threshold.c - k6-style gates on a run's numbers (see threshold.h): the
 * parser, the measurement from the report, and the three renderings. */
#include "threshold.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "history.h"

static const char *const th_op_text[] = { "<", "<=", ">", ">=", "==", "!=" };

/* ---- parsing ---- */

static const char *th_skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The kind before the first '.': a request kind name or "all". */
static int th_parse_kind(const char *name, size_t len, int *kind)
{
    if (len == 3 && strncmp(name, "all", 3) == 0) {
        *kind = THRESHOLD_KIND_ALL;
        return 0;
    }
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        const char *kn = history_kind_name(k);
        if (strlen(kn) == len && strncmp(name, kn, len) == 0) {
            *kind = k;
            return 0;
        }
    }
    return -1;
}

/* "p99", "p99.9", "max", "mean", "error_rate", "rate", "count". */
static int th_parse_metric(const char *name, size_t len, sim_threshold *t)
{
    static const struct {
        const char *name;
        th_metric metric;
    } named[] = { { "max", TH_MAX },
                  { "mean", TH_MEAN },
                  { "error_rate", TH_ERROR_RATE },
                  { "rate", TH_RATE },
                  { "count", TH_COUNT } };
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (strlen(named[i].name) == len && strncmp(name, named[i].name, len) == 0) {
            t->metric = named[i].metric;
            return 0;
        }
    if (len < 2 || len > 12 || name[0] != 'p' || !isdigit((unsigned char)name[1]))
        return -1;
    char num[16];
    memcpy(num, name + 1, len - 1);
    num[len - 1] = '\0';
    char *end = NULL;
    errno = 0;
    double q = strtod(num, &end);
    if (errno != 0 || *end != '\0' || !(q > 0.0 && q < 100.0))
        return -1;
    t->metric = TH_QUANTILE;
    t->quantile = q;
    return 0;
}

static int th_parse_op(const char **p, th_op *op)
{
    static const th_op order[] = { TH_LE, TH_GE, TH_EQ, TH_NE, TH_LT, TH_GT }; /* longest first */
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        size_t n = strlen(th_op_text[order[i]]);
        if (strncmp(*p, th_op_text[order[i]], n) == 0) {
            *op = order[i];
            *p += n;
            return 0;
        }
    }
    return -1;
}

static int th_is_latency(th_metric m)
{
    return m == TH_QUANTILE || m == TH_MAX || m == TH_MEAN;
}

/* Scales the limit by the unit; -1 when the unit does not suit the metric. */
static int th_apply_unit(sim_threshold *t, const char *unit)
{
    if (th_is_latency(t->metric)) {
        if (*unit == '\0' || strcmp(unit, "ms") == 0)
            return 0;
        if (strcmp(unit, "s") == 0)
            t->limit *= 1000.0;
        else if (strcmp(unit, "us") == 0)
            t->limit /= 1000.0;
        else
            return -1;
        return 0;
    }
    if (t->metric == TH_ERROR_RATE && strcmp(unit, "%") == 0) {
        t->limit /= 100.0;
        return 0;
    }
    if (t->metric == TH_RATE && strcmp(unit, "/s") == 0)
        return 0;
    return *unit == '\0' ? 0 : -1;
}

static const char *th_unit_hint(th_metric m)
{
    if (th_is_latency(m))
        return "a latency takes ms (the default), s or us";
    if (m == TH_ERROR_RATE)
        return "error_rate is a fraction (0.01) or a percentage (1%)";
    if (m == TH_RATE)
        return "rate is per second (50 or 50/s)";
    return "count takes no unit";
}

/* The number and its unit after the operator. */
static int th_parse_limit(const char *expr, const char *p, sim_threshold *t, char *err,
                          size_t errlen)
{
    char *end = NULL;
    p = th_skip_space(p);
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno != 0 || !isfinite(v) || v < 0.0) {
        snprintf(err, errlen, "--threshold '%s': needs a number (0 or more) after the operator",
                 expr);
        return -1;
    }
    t->limit = v;
    char unit[16] = "";
    const char *u = th_skip_space(end);
    size_t n = strlen(u);
    while (n > 0 && (u[n - 1] == ' ' || u[n - 1] == '\t'))
        n--;
    if (n < sizeof(unit)) {
        memcpy(unit, u, n);
        unit[n] = '\0';
    }
    if (n >= sizeof(unit) || th_apply_unit(t, unit) < 0) {
        snprintf(err, errlen, "--threshold '%s': unit '%.*s' does not fit: %s", expr,
                 (int)(n < 15 ? n : 15), u, th_unit_hint(t->metric));
        return -1;
    }
    if (t->metric == TH_ERROR_RATE && t->limit > 1.0) {
        snprintf(err, errlen, "--threshold '%s': an error_rate is at most 1 (100%%)", expr);
        return -1;
    }
    return 0;
}

int threshold_parse(const char *expr, sim_threshold *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    size_t len = expr ? strlen(expr) : 0;
    if (len == 0 || len > THRESHOLD_EXPR_MAX) {
        snprintf(err, errlen,
                 "--threshold needs an expression of 1 to %d characters, "
                 "e.g. 'pay.p99<800ms'",
                 THRESHOLD_EXPR_MAX);
        return -1;
    }
    memcpy(t->expr, expr, len + 1);
    const char *p = th_skip_space(expr);
    const char *dot = strchr(p, '.');
    if (dot == NULL || th_parse_kind(p, (size_t)(dot - p), &t->kind) < 0) {
        snprintf(err, errlen,
                 "--threshold '%s': starts with a request kind and a dot: "
                 "pay., query., token., callback., ping., stray., payer. or all.",
                 expr);
        return -1;
    }
    const char *m = dot + 1, *q = m;
    while (*q && (isalnum((unsigned char)*q) || *q == '_' || *q == '.'))
        q++;
    if (th_parse_metric(m, (size_t)(q - m), t) < 0) {
        snprintf(err, errlen,
                 "--threshold '%s': unknown metric '%.*s' (pN such as p50, p99 "
                 "or p99.9, max, mean, error_rate, rate, count)",
                 expr, (int)(q - m), m);
        return -1;
    }
    q = th_skip_space(q);
    if (th_parse_op(&q, &t->op) < 0) {
        snprintf(err, errlen,
                 "--threshold '%s': needs an operator after the metric "
                 "(<, <=, >, >=, == or !=)",
                 expr);
        return -1;
    }
    return th_parse_limit(expr, q, t, err, errlen);
}

int threshold_holds(double value, th_op op, double limit)
{
    switch (op) {
    case TH_LT:
        return value < limit;
    case TH_LE:
        return value <= limit;
    case TH_GT:
        return value > limit;
    case TH_GE:
        return value >= limit;
    case TH_EQ:
        return value == limit;
    default:
        return value != limit;
    }
}

/* ---- measuring ---- */

typedef struct {
    uint64_t count, errors;
    sim_hist latency;
} th_sample;

/* An error: no HTTP answer at all, or a 5xx (a 4xx or a 202 is an answer). */
static int th_op_is_error(const sim_op *op)
{
    return op->transport != 0 || op->http_code >= 500;
}

static void th_measure(const sim_report *r, int kind, th_sample *out)
{
    memset(out, 0, sizeof(*out));
    hist_init(&out->latency);
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        if (kind != THRESHOLD_KIND_ALL && kind != k)
            continue;
        hist_merge(&out->latency, &r->latency[k]);
        for (int sc = 0; sc < SC_COUNT; sc++)
            for (int o = 0; o < OUT_COUNT; o++)
                out->count += r->requests[sc][k][o];
        if (k == OP_PING) /* pings are counted, not kept one by one: no 202 among them */
            for (int sc = 0; sc < SC_COUNT; sc++)
                out->errors += r->requests[sc][k][OUT_UNKNOWN];
    }
    for (size_t i = 0; r->obs != NULL && i < r->obs->nops; i++) {
        const sim_op *op = &r->obs->ops[i];
        if (op->kind != OP_PING && (kind == THRESHOLD_KIND_ALL || kind == op->kind))
            out->errors += (uint64_t)th_op_is_error(op);
    }
}

static double th_value(const sim_threshold *t, const th_sample *s, double traffic_s)
{
    switch (t->metric) {
    case TH_QUANTILE:
        return (double)hist_quantile(&s->latency, t->quantile / 100.0) / 1e3;
    case TH_MAX:
        return (double)s->latency.max / 1e3;
    case TH_MEAN:
        return hist_mean(&s->latency) / 1e3;
    case TH_ERROR_RATE:
        return s->count ? (double)s->errors / (double)s->count : 0.0;
    case TH_RATE:
        return traffic_s > 0 ? (double)s->count / traffic_s : 0.0;
    default:
        return (double)s->count;
    }
}

size_t threshold_eval(sim_threshold *t, size_t n, const sim_report *r)
{
    for (size_t i = 0; i < n; i++) {
        th_sample s;
        th_measure(r, t[i].kind, &s);
        t[i].evaluated = 1;
        t[i].samples = s.count > 0;
        t[i].value = th_value(&t[i], &s, r->traffic_s);
        t[i].pass = (t[i].samples || !th_is_latency(t[i].metric)) &&
                    threshold_holds(t[i].value, t[i].op, t[i].limit);
    }
    return threshold_failed(t, n);
}

size_t threshold_failed(const sim_threshold *t, size_t n)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += t[i].evaluated && !t[i].pass;
    return failed;
}

/* ---- rendering ---- */

static const char *th_metric_name(const sim_threshold *t, char *buf, size_t len)
{
    static const char *const names[] = { "p", "max", "mean", "error_rate", "rate", "count" };
    if (t->metric != TH_QUANTILE)
        return names[t->metric];
    snprintf(buf, len, "p%g", t->quantile);
    return buf;
}

static const char *th_unit(th_metric m)
{
    return th_is_latency(m) ? "ms" : m == TH_RATE ? "/s" : "";
}

/* "p99 = 512.000 ms", "error_rate = 0.0031", "no pay requests". */
static void th_measured_text(const sim_threshold *t, char *out, size_t len)
{
    char mb[24];
    if (!t->evaluated)
        snprintf(out, len, "not evaluated: the run could not be carried out");
    else if (!t->samples && th_is_latency(t->metric))
        snprintf(out, len, "no %s%srequests: nothing measured",
                 t->kind == THRESHOLD_KIND_ALL ? "" : history_kind_name(t->kind),
                 t->kind == THRESHOLD_KIND_ALL ? "" : " ");
    else
        snprintf(out, len, "%s = %.*f%s%s", th_metric_name(t, mb, sizeof(mb)),
                 t->metric == TH_COUNT        ? 0
                 : t->metric == TH_ERROR_RATE ? 4
                                              : 3,
                 t->value, *th_unit(t->metric) ? " " : "", th_unit(t->metric));
}

void threshold_human(const sim_threshold *t, size_t n, FILE *out)
{
    if (n == 0)
        return;
    fprintf(out, "\nthresholds: %zu, %zu failed\n", n, threshold_failed(t, n));
    for (size_t i = 0; i < n; i++) {
        char m[96];
        th_measured_text(&t[i], m, sizeof(m));
        fprintf(out, "  %-5s %-28s %s\n",
                !t[i].evaluated ? "-"
                : t[i].pass     ? "pass"
                                : "FAIL",
                t[i].expr, m);
    }
}

json_t *threshold_json(const sim_threshold *t, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++) {
        char mb[24];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:s,s:b,s:b}", "expression", t[i].expr, "kind",
                              t[i].kind == THRESHOLD_KIND_ALL ? "all"
                                                              : history_kind_name(t[i].kind),
                              "metric", th_metric_name(&t[i], mb, sizeof(mb)), "op",
                              th_op_text[t[i].op], "limit", t[i].limit, "unit",
                              th_unit(t[i].metric), "pass", t[i].evaluated && t[i].pass,
                              "evaluated", t[i].evaluated != 0);
        if (o != NULL)
            json_object_set_new(o, "value",
                                t[i].evaluated && (t[i].samples || !th_is_latency(t[i].metric))
                                    ? json_real(t[i].value)
                                    : json_null());
        if (o == NULL || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

void threshold_junit(const sim_threshold *t, size_t n, double time_s, FILE *f)
{
    for (size_t i = 0; i < n; i++) {
        char m[160];
        fprintf(f, "    <testcase classname=\"idempay-sim.thresholds\" name=\"");
        report_xml_escape(f, t[i].expr);
        fprintf(f, "\" time=\"%.3f\"", time_s);
        if (t[i].evaluated && t[i].pass) {
            fprintf(f, "/>\n");
            continue;
        }
        th_measured_text(&t[i], m, sizeof(m));
        fprintf(f, ">\n      <%s message=\"",
                t[i].evaluated ? "failure type=\"threshold\"" : "skipped");
        report_xml_escape(f, m);
        fprintf(f, "\"/>\n    </testcase>\n");
    }
}
