/* metrics - Prometheus counters and histograms shared by every service
 * process through an mmap'd file (atomic adds, no locks on the hot path). */
#include "metrics.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define METRICS_MAGIC 0x69647032u  /* "idp2": bump when the layout changes */

static const char *const route_names[] = {
    "GET /api/ping", "GET /healthz", "GET /metrics", "POST /api/pay",
    "GET /api/pay/orders", "GET /api/pay/token", "POST /api/pay/callback/wechat", "other"
};
#define ROUTES (sizeof route_names / sizeof route_names[0])

static const int status_codes[] = { 200, 202, 400, 402, 403, 404, 405, 409, 413, 415, 422,
                                    500, 502, 503, 0 /* other */ };
#define STATUSES (sizeof status_codes / sizeof status_codes[0])

static const char *const gw_ops[] = { "unifiedorder", "orderquery", "refund", "closeorder",
                                      "downloadbill" };
#define GW_OPS (sizeof gw_ops / sizeof gw_ops[0])

static const double gw_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                    0.5, 1, 2.5, 5, 10 };
#define GW_BUCKETS (sizeof gw_bounds / sizeof gw_bounds[0])

/* name, label, help: how each counter is exposed. */
static const struct {
    const char *family;
    const char *label;   /* outcome label value, NULL for a plain counter */
} counter_desc[MET__COUNT] = {
    [MET_PAY_PAID] = { "idempay_payments_total", "paid" },
    [MET_PAY_REPLAYED] = { "idempay_payments_total", "replayed" },
    [MET_PAY_PROCESSING] = { "idempay_payments_total", "processing" },
    [MET_PAY_DECLINED] = { "idempay_payments_total", "declined" },
    [MET_PAY_MISMATCH] = { "idempay_payments_total", "order_mismatch" },
    [MET_PAY_IDEM_REPLAYED] = { "idempay_payments_total", "idempotency_replayed" },
    [MET_PAY_IDEM_CONFLICT] = { "idempay_payments_total", "request_in_progress" },
    [MET_PAY_IDEM_MISMATCH] = { "idempay_payments_total", "idempotency_key_mismatch" },
    [MET_PAY_INVALID_TOKEN] = { "idempay_payments_total", "invalid_token" },
    [MET_PAY_INVALID] = { "idempay_payments_total", "invalid_request" },
    [MET_PAY_UNAVAILABLE] = { "idempay_payments_total", "unavailable" },
    [MET_DUPLICATE_ABSORBED] = { "idempay_duplicates_absorbed_total", NULL },
    [MET_CB_APPLIED] = { "idempay_callbacks_total", "applied" },
    [MET_CB_ALREADY_APPLIED] = { "idempay_callbacks_total", "already_applied" },
    [MET_CB_FAIL_MALFORMED] = { "idempay_callbacks_total", "fail_malformed" },
    [MET_CB_FAIL_SIGNATURE] = { "idempay_callbacks_total", "fail_signature" },
    [MET_CB_FAIL_MERCHANT] = { "idempay_callbacks_total", "fail_merchant" },
    [MET_CB_FAIL_RESULT] = { "idempay_callbacks_total", "fail_result" },
    [MET_CB_FAIL_AMOUNT] = { "idempay_callbacks_total", "fail_amount" },
    [MET_CB_FAIL_UNKNOWN_ORDER] = { "idempay_callbacks_total", "fail_unknown_order" },
    [MET_CB_UNAVAILABLE] = { "idempay_callbacks_total", "unavailable" },
    [MET_DOUBLE_CHARGE_DETECTED] = { "idempay_double_charge_detected_total", NULL },
    [MET_REFUND_DONE] = { "idempay_refunds_total", "done" },
    [MET_REFUND_RETRY] = { "idempay_refunds_total", "retry" },
    [MET_RECON_PAID] = { "idempay_reconciler_settled_total", "paid" },
    [MET_RECON_FAILED] = { "idempay_reconciler_settled_total", "failed" },
    [MET_RECON_UNKNOWN] = { "idempay_reconciler_settled_total", "unknown" },
    [MET_TOKEN_ISSUED] = { "idempay_tokens_total", "issued" },
    [MET_TOKEN_REJECTED] = { "idempay_tokens_total", "rejected" },
    [MET_PAY_CLOSED] = { "idempay_payments_total", "closed" },
    [MET_CLOSE_CLOSED] = { "idempay_gateway_closes_total", "closed" },
    [MET_CLOSE_ORDERPAID] = { "idempay_gateway_closes_total", "orderpaid" },
    [MET_CLOSE_UNSUPPORTED] = { "idempay_gateway_closes_total", "unsupported" },
    [MET_CLOSE_UNKNOWN] = { "idempay_gateway_closes_total", "unknown" },
    [MET_REFUND_QUEUED] = { "idempay_refunds_queued_total", NULL },
    [MET_AMOUNT_MISMATCH] = { "idempay_charge_amount_mismatch_total", NULL },
    [MET_STMT_RUN_OK] = { "idempay_statement_runs_total", "ok" },
    [MET_STMT_RUN_FAILED] = { "idempay_statement_runs_total", "failed" },
    [MET_STMT_MATCHED] = { "idempay_statement_charges_total", "matched" },
    [MET_STMT_PAID] = { "idempay_statement_charges_total", "made_paid" },
    [MET_STMT_REFUND] = { "idempay_statement_charges_total", "refund_queued" },
    [MET_STMT_REFUNDED] = { "idempay_statement_charges_total", "already_refunded" },
    [MET_STMT_UNMATCHED] = { "idempay_statement_charges_total", "unmatched" },
    [MET_STMT_IN_FLIGHT] = { "idempay_statement_charges_total", "in_flight" },
};

typedef struct {
    _Atomic uint32_t magic;
    uint32_t size;
    _Atomic uint64_t counter[MET__COUNT];
    _Atomic uint64_t requests[ROUTES][STATUSES];
    _Atomic uint64_t request_us[ROUTES];
    _Atomic uint64_t gw_bucket[GW_OPS][GW_BUCKETS + 1];
    _Atomic uint64_t gw_us[GW_OPS];
} metrics_shared;

static metrics_shared local_metrics;
static metrics_shared *M = &local_metrics;

int metrics_init(const char *path)
{
    struct stat st;
    void *p;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0) {
        log_msg(LOG_WARN, "metrics file %s: cannot open; counting in process memory", path);
        return -1;
    }
    flock(fd, LOCK_EX);
    if (fstat(fd, &st) != 0 || (st.st_size != 0 && st.st_size != (off_t)sizeof(metrics_shared))) {
        /* another layout: start over */
        if (ftruncate(fd, 0) != 0)
            goto fail;
    }
    if (ftruncate(fd, sizeof(metrics_shared)) != 0)
        goto fail;
    p = mmap(NULL, sizeof(metrics_shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        goto fail;
    M = p;
    if (atomic_load(&M->magic) != METRICS_MAGIC) {
        memset((void *)M, 0, sizeof *M);
        M->size = sizeof *M;
        atomic_store(&M->magic, METRICS_MAGIC);
    }
    flock(fd, LOCK_UN);
    close(fd);
    return 0;
fail:
    log_msg(LOG_WARN, "metrics file %s: cannot map; counting in process memory", path);
    flock(fd, LOCK_UN);
    close(fd);
    return -1;
}

void metrics_inc(metric_counter m)
{
    if ((unsigned)m < MET__COUNT)
        atomic_fetch_add_explicit(&M->counter[m], 1, memory_order_relaxed);
}

static size_t route_index(const char *route)
{
    for (size_t i = 0; i + 1 < ROUTES; i++)
        if (!strcmp(route, route_names[i]))
            return i;
    return ROUTES - 1;
}

static size_t status_index(int status)
{
    for (size_t i = 0; i + 1 < STATUSES; i++)
        if (status_codes[i] == status)
            return i;
    return STATUSES - 1;
}

void metrics_request(const char *route, int status, double seconds)
{
    size_t r = route_index(route);

    atomic_fetch_add_explicit(&M->requests[r][status_index(status)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&M->request_us[r], (uint64_t)(seconds * 1e6), memory_order_relaxed);
}

void metrics_gateway(const char *op, double seconds)
{
    size_t o, b;

    for (o = 0; o < GW_OPS; o++)
        if (!strcmp(op, gw_ops[o]))
            break;
    if (o == GW_OPS)
        return;
    for (b = 0; b < GW_BUCKETS; b++)
        if (seconds <= gw_bounds[b])
            break;
    atomic_fetch_add_explicit(&M->gw_bucket[o][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&M->gw_us[o], (uint64_t)(seconds * 1e6), memory_order_relaxed);
}

/* A bounded text builder for the exposition. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} textbuf;

static void tb_printf(textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(textbuf *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        char *nb = realloc(t->buf, t->cap * 2);
        if (!nb) {
            t->failed = 1;
            return;
        }
        t->buf = nb;
        t->cap *= 2;
    }
}

void metrics_handle(http_response *resp)
{
    textbuf t = { malloc(16384), 0, 16384, 0 };
    const char *last_family = "";

    if (!t.buf) {
        http_response_error(resp, 503, "unavailable", "out of memory");
        return;
    }
    for (int m = 0; m < MET__COUNT; m++) {
        uint64_t v = atomic_load_explicit(&M->counter[m], memory_order_relaxed);
        if (strcmp(last_family, counter_desc[m].family)) {
            tb_printf(&t, "# TYPE %s counter\n", counter_desc[m].family);
            last_family = counter_desc[m].family;
        }
        if (counter_desc[m].label)
            tb_printf(&t, "%s{outcome=\"%s\"} %llu\n", counter_desc[m].family,
                      counter_desc[m].label, (unsigned long long)v);
        else
            tb_printf(&t, "%s %llu\n", counter_desc[m].family, (unsigned long long)v);
    }
    tb_printf(&t, "# TYPE idempay_http_requests_total counter\n");
    for (size_t r = 0; r < ROUTES; r++)
        for (size_t s = 0; s < STATUSES; s++) {
            uint64_t v = atomic_load_explicit(&M->requests[r][s], memory_order_relaxed);
            if (!v)
                continue;
            if (status_codes[s])
                tb_printf(&t, "idempay_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                          route_names[r], status_codes[s], (unsigned long long)v);
            else
                tb_printf(&t, "idempay_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                          route_names[r], (unsigned long long)v);
        }
    tb_printf(&t, "# TYPE idempay_http_request_seconds_sum counter\n");
    for (size_t r = 0; r < ROUTES; r++)
        tb_printf(&t, "idempay_http_request_seconds_sum{route=\"%s\"} %.6f\n", route_names[r],
                  (double)atomic_load_explicit(&M->request_us[r], memory_order_relaxed) / 1e6);
    tb_printf(&t, "# TYPE idempay_gateway_seconds histogram\n");
    for (size_t o = 0; o < GW_OPS; o++) {
        uint64_t cum = 0;
        for (size_t b = 0; b <= GW_BUCKETS; b++) {
            cum += atomic_load_explicit(&M->gw_bucket[o][b], memory_order_relaxed);
            if (b < GW_BUCKETS)
                tb_printf(&t, "idempay_gateway_seconds_bucket{op=\"%s\",le=\"%g\"} %llu\n",
                          gw_ops[o], gw_bounds[b], (unsigned long long)cum);
            else
                tb_printf(&t, "idempay_gateway_seconds_bucket{op=\"%s\",le=\"+Inf\"} %llu\n",
                          gw_ops[o], (unsigned long long)cum);
        }
        tb_printf(&t, "idempay_gateway_seconds_sum{op=\"%s\"} %.6f\n", gw_ops[o],
                  (double)atomic_load_explicit(&M->gw_us[o], memory_order_relaxed) / 1e6);
        tb_printf(&t, "idempay_gateway_seconds_count{op=\"%s\"} %llu\n", gw_ops[o],
                  (unsigned long long)cum);
    }
    if (t.failed || http_response_set(resp, 200, "text/plain; version=0.0.4", t.buf, t.len) != 0)
        http_response_error(resp, 503, "unavailable", "out of memory");
    free(t.buf);
}
