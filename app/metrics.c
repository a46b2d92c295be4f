/* metrics - Prometheus counters, gauges and histograms shared by every
 * service process through an mmap'd file (atomic adds, no locks on the hot
 * path), exposed with HELP and TYPE on every family. */
#include "metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define METRICS_MAGIC 0x69647036u /* "idp6": bump when the layout changes */

/* Route templates, as the router names them; "other" for unknown paths. */
static const char *const route_names[] = { "/api/ping",
                                           "/healthz",
                                           "/metrics",
                                           "/api/pay",
                                           "/api/pay/orders/{order_no}",
                                           "/api/pay/token",
                                           "/api/pay/callback/wechat",
                                           "/api/pay/orders/{order_no}/refunds",
                                           "/api/pay/callback/wechat/refund",
                                           "other" };
#define ROUTES (sizeof(route_names) / sizeof(route_names[0]))

static const char *const method_names[] = { "GET",  "POST",  "PUT",     "DELETE",
                                            "HEAD", "PATCH", "OPTIONS", "other" };
#define METHODS (sizeof(method_names) / sizeof(method_names[0]))

static const int status_codes[] = { 200, 202, 400, 401, 402, 403, 404, 405, 409,
                                    413, 415, 422, 429, 500, 502, 503, 504, 0 /* other */ };
#define STATUSES (sizeof(status_codes) / sizeof(status_codes[0]))

static const double req_bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,     10 };
#define REQ_BUCKETS (sizeof(req_bounds) / sizeof(req_bounds[0]))

static const char *const gw_ops[] = { "unifiedorder", "orderquery", "refund",  "closeorder",
                                      "downloadbill", "micropay",   "reverse", "other" };
#define GW_OPS (sizeof(gw_ops) / sizeof(gw_ops[0]))

static const double gw_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                    0.25,  0.5,    1,     2.5,  5,     10 };
#define GW_BUCKETS (sizeof(gw_bounds) / sizeof(gw_bounds[0]))

/* One slot per live service process: its gateway calls in flight. A slot
 * whose process died (kill -9 included) is ignored and taken over. */
#define PROC_SLOTS 64

/* family and outcome label of each counter: one entry per counter; the
 * families' help texts are in family_help below. */
static const struct {
    const char *family;
    const char *label; /* outcome label value, NULL for a plain counter */
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
    [MET_STMT_UNCONFIRMED] = { "idempay_statement_charges_total", "unconfirmed" },
    [MET_STMT_BAD_LINE] = { "idempay_statement_bad_lines_total", NULL },
    [MET_REFUND_ACCEPTED] = { "idempay_refunds_total", "accepted" },
    [MET_REFUND_STUCK_CLOSE] = { "idempay_refunds_stuck_total", "refundclose" },
    [MET_REFUND_STUCK_CHANGE] = { "idempay_refunds_stuck_total", "change" },
    [MET_REFUND_STUCK_ERROR] = { "idempay_refunds_stuck_total", "abnormal" },
    [MET_REFUND_NOTIFY_APPLIED] = { "idempay_refund_notifications_total", "applied" },
    [MET_REFUND_NOTIFY_FAIL] = { "idempay_refund_notifications_total", "fail" },
    [MET_REFUND_REQUESTED] = { "idempay_merchant_refunds_total", "created" },
    [MET_REFUND_REPLAYED] = { "idempay_merchant_refunds_total", "replayed" },
    [MET_REFUND_REFUSED] = { "idempay_merchant_refunds_total", "refused" },
    [MET_RATE_LIMITED_TOKENS] = { "idempay_rate_limit_total", "limited_tokens" },
    [MET_RATE_LIMITED_ORDERS] = { "idempay_rate_limit_total", "limited_orders" },
    [MET_RATE_UNCOUNTED] = { "idempay_rate_limit_total", "uncounted" },
    [MET_TOKEN_STORE_FULL] = { "idempay_tokens_total", "store_full" },
    [MET_LOG_SUPPRESSED] = { "idempay_log_lines_suppressed_total", NULL },
    [MET_CB_FAIL_SIGN_TYPE] = { "idempay_callbacks_total", "fail_sign_type" },
    [MET_CB_FAIL_NOT_NOTIFICATION] = { "idempay_callbacks_total", "fail_not_notification" },
    [MET_GW_REPLY_SIGN_TYPE] = { "idempay_gateway_replies_refused_total", "sign_type" },
    [MET_AUTH_REFUSED] = { "idempay_auth_refused_total", NULL },
    [MET_GW_REPLY_V3_SIGNATURE] = { "idempay_gateway_replies_refused_total", "v3_signature" },
    [MET_V3_CERTS_FETCHED] = { "idempay_v3_certificate_fetches_total", "ok" },
    [MET_V3_CERTS_FAILED] = { "idempay_v3_certificate_fetches_total", "fail" },
};

/* # HELP of each counter family; a family missing here gets a generic text. */
static const struct {
    const char *family;
    const char *help;
} family_help[] = {
    { "idempay_payments_total", "POST /api/pay outcomes." },
    { "idempay_auth_refused_total",
      "Merchant-door requests refused with 401 (unsigned, stale, bad signature, replayed)." },
    { "idempay_duplicates_absorbed_total",
      "Repeated payment requests answered without reaching the gateway." },
    { "idempay_callbacks_total", "WeChat Pay notifications by outcome." },
    { "idempay_gateway_replies_refused_total",
      "Gateway replies refused before they were read, by reason (sign_type: MD5 while HMAC-SHA256 is configured; v3_signature: an APIv3 reply without a valid, fresh platform signature)." },
    { "idempay_v3_certificate_fetches_total",
      "APIv3 platform certificate list fetches (/v3/certificates), by outcome." },
    { "idempay_double_charge_detected_total",
      "Verified notifications of a second charge for an order already paid." },
    { "idempay_refunds_total",
      "Refund worker steps by outcome: accepted by the gateway, done (SUCCESS), retry." },
    { "idempay_reconciler_settled_total",
      "Orders the reconciler asked the gateway about, by what it settled." },
    { "idempay_tokens_total",
      "Payment tokens issued, rejected, and refused because Redis is near its maxmemory." },
    { "idempay_rate_limit_total",
      "Requests over their caller's per-second budget (429), and requests Redis could not count." },
    { "idempay_log_lines_suppressed_total",
      "Refusal log lines left out over IDEMPAY_LOG_REJECTS_PER_S." },
    { "idempay_gateway_closes_total",
      "closeorder calls that ended an uncertain payment attempt, by outcome." },
    { "idempay_refunds_queued_total",
      "Charges queued for refund because they are not their order's (any path)." },
    { "idempay_charge_amount_mismatch_total",
      "Charges of another amount than their order's (refunded)." },
    { "idempay_statement_runs_total", "Statement (downloadbill) reconciliation runs by outcome." },
    { "idempay_statement_charges_total",
      "Charges in the gateway's statement, by what the statement job did with them." },
    { "idempay_statement_bad_lines_total",
      "Bill lines the statement job could not read, set aside for an operator (payment_statement_bad_line)." },
    { "idempay_refunds_stuck_total",
      "Refunds stopped for an operator (REFUNDCLOSE, CHANGE, refused for good): idempay-fcgi --list-stuck-refunds." },
    { "idempay_refund_notifications_total", "WeChat refund notifications by outcome." },
    { "idempay_merchant_refunds_total", "POST /api/pay/orders/{order_no}/refunds outcomes." },
};

typedef struct {
    _Atomic int32_t pid;
    _Atomic int64_t gw_inflight;
} proc_slot;

typedef struct {
    _Atomic uint32_t magic;
    uint32_t size;
    _Atomic uint64_t counter[MET__COUNT];
    _Atomic uint64_t req_bucket[ROUTES][METHODS][STATUSES][REQ_BUCKETS + 1];
    _Atomic uint64_t req_us[ROUTES][METHODS][STATUSES];
    _Atomic uint64_t gw_bucket[GW_OPS][GW_BUCKETS + 1];
    _Atomic uint64_t gw_us[GW_OPS];
    proc_slot slots[PROC_SLOTS];
} metrics_shared;

static metrics_shared local_metrics;
static metrics_shared *M = &local_metrics;
static _Atomic int64_t local_inflight; /* when no slot could be had */
static _Atomic int64_t *my_inflight = &local_inflight;

static int pid_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Takes a free or dead process slot for this process. */
static void claim_slot(void)
{
    int32_t me = (int32_t)getpid();

    for (int i = 0; i < PROC_SLOTS; i++) {
        int32_t pid = atomic_load(&M->slots[i].pid);
        if (pid == me || pid == 0 || !pid_alive(pid)) {
            if (pid == me || atomic_compare_exchange_strong(&M->slots[i].pid, &pid, me)) {
                atomic_store(&M->slots[i].gw_inflight, 0);
                my_inflight = &M->slots[i].gw_inflight;
                return;
            }
        }
    }
    log_msg(LOG_WARN, "metrics: no free process slot; gateway calls in flight count per process");
}

int metrics_init(const char *path)
{
    struct stat st;
    void *p;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0) {
        log_msg(LOG_WARN, "metrics file %s: cannot open; counting in process memory", path);
        claim_slot();
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
        memset((void *)M, 0, sizeof(*M));
        M->size = sizeof(*M);
        atomic_store(&M->magic, METRICS_MAGIC);
    }
    claim_slot();
    flock(fd, LOCK_UN);
    close(fd);
    return 0;
fail:
    log_msg(LOG_WARN, "metrics file %s: cannot map; counting in process memory", path);
    claim_slot();
    flock(fd, LOCK_UN);
    close(fd);
    return -1;
}

void metrics_inc(metric_counter m)
{
    if ((unsigned)m < MET__COUNT)
        atomic_fetch_add_explicit(&M->counter[m], 1, memory_order_relaxed);
}

static size_t index_of(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (!strcmp(name, names[i]))
            return i;
    return n - 1;
}

static size_t status_index(int status)
{
    for (size_t i = 0; i + 1 < STATUSES; i++)
        if (status_codes[i] == status)
            return i;
    return STATUSES - 1;
}

static size_t bucket_of(const double *bounds, size_t n, double seconds)
{
    size_t b;

    for (b = 0; b < n; b++)
        if (seconds <= bounds[b])
            break;
    return b;
}

void metrics_request(const char *method, const char *route, int status, double seconds)
{
    size_t r = index_of(route_names, ROUTES, route);
    size_t m = index_of(method_names, METHODS, method);
    size_t s = status_index(status);

    if (seconds < 0)
        seconds = 0;
    atomic_fetch_add_explicit(&M->req_bucket[r][m][s][bucket_of(req_bounds, REQ_BUCKETS, seconds)],
                              1, memory_order_relaxed);
    atomic_fetch_add_explicit(&M->req_us[r][m][s], (uint64_t)(seconds * 1e6), memory_order_relaxed);
}

void metrics_gateway_begin(const char *op)
{
    (void)op;
    atomic_fetch_add_explicit(my_inflight, 1, memory_order_relaxed);
}

void metrics_gateway(const char *op, double seconds)
{
    size_t o = index_of(gw_ops, GW_OPS, op);

    if (seconds < 0)
        seconds = 0;
    atomic_fetch_sub_explicit(my_inflight, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&M->gw_bucket[o][bucket_of(gw_bounds, GW_BUCKETS, seconds)], 1,
                              memory_order_relaxed);
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

static void family(textbuf *t, const char *name, const char *type, const char *help)
{
    tb_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *help_of(const char *fam)
{
    for (size_t i = 0; i < sizeof(family_help) / sizeof(family_help[0]); i++)
        if (!strcmp(family_help[i].family, fam))
            return family_help[i].help;
    return "idempay counter (see docs/API.md).";
}

/* Every counter family once, its samples together, wherever its entries sit
 * in the enum. */
static void write_counters(textbuf *t)
{
    for (int m = 0; m < MET__COUNT; m++) {
        const char *fam = counter_desc[m].family;
        int seen = 0;

        if (!fam)
            continue;
        for (int k = 0; k < m && !seen; k++)
            seen = counter_desc[k].family && !strcmp(counter_desc[k].family, fam);
        if (seen)
            continue;
        family(t, fam, "counter", help_of(fam));
        for (int k = m; k < MET__COUNT; k++) {
            uint64_t v;
            if (!counter_desc[k].family || strcmp(counter_desc[k].family, fam))
                continue;
            v = atomic_load_explicit(&M->counter[k], memory_order_relaxed);
            if (counter_desc[k].label)
                tb_printf(t, "%s{outcome=\"%s\"} %llu\n", fam, counter_desc[k].label,
                          (unsigned long long)v);
            else
                tb_printf(t, "%s %llu\n", fam, (unsigned long long)v);
        }
    }
}

static void code_label(char *buf, size_t n, size_t s)
{
    if (status_codes[s])
        snprintf(buf, n, "%d", status_codes[s]);
    else
        snprintf(buf, n, "other");
}

static void write_requests(textbuf *t)
{
    char code[8];

    family(t, "idempay_http_request_duration_seconds", "histogram",
           "Time to answer an HTTP request, by method, route template and status code.");
    for (size_t r = 0; r < ROUTES; r++)
        for (size_t m = 0; m < METHODS; m++)
            for (size_t s = 0; s < STATUSES; s++) {
                uint64_t cum = 0;
                for (size_t b = 0; b <= REQ_BUCKETS; b++)
                    cum += atomic_load_explicit(&M->req_bucket[r][m][s][b], memory_order_relaxed);
                if (!cum)
                    continue;
                code_label(code, sizeof(code), s);
                cum = 0;
                for (size_t b = 0; b <= REQ_BUCKETS; b++) {
                    cum += atomic_load_explicit(&M->req_bucket[r][m][s][b], memory_order_relaxed);
                    if (b < REQ_BUCKETS)
                        tb_printf(t,
                                  "idempay_http_request_duration_seconds_bucket{method=\"%s\","
                                  "route=\"%s\",code=\"%s\",le=\"%g\"} %llu\n",
                                  method_names[m], route_names[r], code, req_bounds[b],
                                  (unsigned long long)cum);
                    else
                        tb_printf(t,
                                  "idempay_http_request_duration_seconds_bucket{method=\"%s\","
                                  "route=\"%s\",code=\"%s\",le=\"+Inf\"} %llu\n",
                                  method_names[m], route_names[r], code, (unsigned long long)cum);
                }
                tb_printf(t,
                          "idempay_http_request_duration_seconds_sum{method=\"%s\",route=\"%s\","
                          "code=\"%s\"} %.6f\n",
                          method_names[m], route_names[r], code,
                          (double)atomic_load_explicit(&M->req_us[r][m][s], memory_order_relaxed) /
                              1e6);
                tb_printf(t,
                          "idempay_http_request_duration_seconds_count{method=\"%s\",route=\"%s\","
                          "code=\"%s\"} %llu\n",
                          method_names[m], route_names[r], code, (unsigned long long)cum);
            }
    family(t, "idempay_http_requests_total", "counter",
           "HTTP requests answered, by method, route template and status code.");
    for (size_t r = 0; r < ROUTES; r++)
        for (size_t m = 0; m < METHODS; m++)
            for (size_t s = 0; s < STATUSES; s++) {
                uint64_t cum = 0;
                for (size_t b = 0; b <= REQ_BUCKETS; b++)
                    cum += atomic_load_explicit(&M->req_bucket[r][m][s][b], memory_order_relaxed);
                if (!cum)
                    continue;
                code_label(code, sizeof(code), s);
                tb_printf(
                    t, "idempay_http_requests_total{method=\"%s\",route=\"%s\",code=\"%s\"} %llu\n",
                    method_names[m], route_names[r], code, (unsigned long long)cum);
            }
}

static void write_gateway(textbuf *t)
{
    family(t, "idempay_gateway_seconds", "histogram",
           "Duration of calls to the payment gateway, by operation.");
    for (size_t o = 0; o < GW_OPS; o++) {
        uint64_t cum = 0;
        for (size_t b = 0; b <= GW_BUCKETS; b++) {
            cum += atomic_load_explicit(&M->gw_bucket[o][b], memory_order_relaxed);
            if (b < GW_BUCKETS)
                tb_printf(t, "idempay_gateway_seconds_bucket{op=\"%s\",le=\"%g\"} %llu\n",
                          gw_ops[o], gw_bounds[b], (unsigned long long)cum);
            else
                tb_printf(t, "idempay_gateway_seconds_bucket{op=\"%s\",le=\"+Inf\"} %llu\n",
                          gw_ops[o], (unsigned long long)cum);
        }
        tb_printf(t, "idempay_gateway_seconds_sum{op=\"%s\"} %.6f\n", gw_ops[o],
                  (double)atomic_load_explicit(&M->gw_us[o], memory_order_relaxed) / 1e6);
        tb_printf(t, "idempay_gateway_seconds_count{op=\"%s\"} %llu\n", gw_ops[o],
                  (unsigned long long)cum);
    }
}

static void write_gauges(textbuf *t, const metrics_scrape *scrape)
{
    long long inflight = 0;
    int procs = 0;

    if (M == &local_metrics) {
        inflight = atomic_load(&local_inflight);
        procs = 1;
    } else {
        for (int i = 0; i < PROC_SLOTS; i++) {
            int32_t pid = atomic_load(&M->slots[i].pid);
            if (pid && pid_alive(pid)) {
                inflight += atomic_load(&M->slots[i].gw_inflight);
                procs++;
            }
        }
        if (my_inflight == &local_inflight) { /* this process had no slot */
            inflight += atomic_load(&local_inflight);
            procs++;
        }
    }
    family(t, "idempay_gateway_calls_in_flight", "gauge",
           "Calls to the payment gateway under way now, in every live service process.");
    tb_printf(t, "idempay_gateway_calls_in_flight %lld\n", inflight < 0 ? 0 : inflight);
    family(t, "idempay_service_processes", "gauge",
           "Live service processes sharing these metrics.");
    tb_printf(t, "idempay_service_processes %d\n", procs);
    if (scrape && scrape->orders_processing >= 0) {
        family(t, "idempay_orders_processing", "gauge",
               "Orders in PROCESSING now: a gateway outcome is being waited for or reconciled.");
        tb_printf(t, "idempay_orders_processing %lld\n", scrape->orders_processing);
    }
    family(t, "idempay_build_info", "gauge",
           "The running build: always 1, labelled with its version.");
    tb_printf(t, "idempay_build_info{version=\"%s\",revision=\"%s\"} 1\n", IDEMPAY_VERSION,
              IDEMPAY_REVISION);
}

/* process_* of this process, from /proc/self (the names client libraries use). */
static void write_process(textbuf *t)
{
    char buf[1024], *p;
    unsigned long long utime = 0, stime = 0, starttime = 0, vsize = 0, btime = 0;
    long long rss = 0;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), fds = 0;
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    struct rlimit rl;
    DIR *d;
    FILE *f;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p || sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
                     "%*d %*d %llu %llu %lld",
                     &utime, &stime, &starttime, &vsize, &rss) != 5)
        return;
    f = fopen("/proc/stat", "re");
    if (f) {
        while (fgets(buf, sizeof(buf), f))
            if (sscanf(buf, "btime %llu", &btime) == 1)
                break;
        fclose(f);
    }
    d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            fds += e->d_name[0] != '.';
        closedir(d);
        fds--; /* the directory's own descriptor */
    }
    if (ticks <= 0)
        ticks = 100;
    family(t, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.");
    tb_printf(t, "process_cpu_seconds_total %.2f\n", (double)(utime + stime) / (double)ticks);
    family(t, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    tb_printf(t, "process_resident_memory_bytes %lld\n", rss * (long long)page);
    family(t, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    tb_printf(t, "process_virtual_memory_bytes %llu\n", vsize);
    if (btime) {
        family(t, "process_start_time_seconds", "gauge",
               "Start time of the process since unix epoch in seconds.");
        tb_printf(t, "process_start_time_seconds %.2f\n",
                  (double)btime + (double)starttime / (double)ticks);
    }
    if (fds > 0) {
        family(t, "process_open_fds", "gauge", "Number of open file descriptors.");
        tb_printf(t, "process_open_fds %d\n", fds);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        family(t, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        tb_printf(t, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
    }
}

void metrics_handle(http_response *resp, const metrics_scrape *scrape)
{
    textbuf t = { malloc(65536), 0, 65536, 0 };

    if (!t.buf) {
        http_response_error(resp, 503, "unavailable", "out of memory");
        return;
    }
    write_counters(&t);
    write_requests(&t);
    write_gateway(&t);
    write_gauges(&t, scrape);
    write_process(&t);
    if (t.failed ||
        http_response_set(resp, 200, "text/plain; version=0.0.4; charset=utf-8", t.buf, t.len) != 0)
        http_response_error(resp, 503, "unavailable", "out of memory");
    free(t.buf);
}
