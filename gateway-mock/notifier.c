/* notifier.c - payment notifications: a time-ordered heap of deliveries
 * under one mutex, worker threads that POST them with libcurl, and a thread
 * that flushes the notifications_sent counter to the ledger. */
#include "notifier.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clocks.h"
#include "env.h"
#include "http_client.h"
#include "journal.h"
#include "log.h"
#include "refund_notify.h"
#include "v3_keys.h"
#include "v3_notify.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define NOTIFIER_FLUSH_MS 100
#define NOTIFIER_STACK (512 * 1024)

typedef struct {
    notifier_charge charge;
    long long due_ms; /* monotonic */
    int attempt;      /* deliveries made so far */
    int copy;         /* 1 .. notify_copies */
    unsigned long generation;
    bool is_refund; /* a refund result notification of refund */
    refund_record refund;
} delivery;

struct notifier {
    mock_app *app;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* work may be ready */
    delivery *heap;      /* min-heap by due_ms */
    size_t len, cap;
    int inflight;
    unsigned long generation; /* bumped by a reset */
    long long timeout_ms;

    pthread_mutex_t count_mu; /* the counter and its flush */
    long long unflushed;
};

/* ---- the XML ----------------------------------------------------------- */

char *notifier_build_xml(const notifier_charge *c, const mock_creds *creds, const char *nonce)
{
    wx_msg m;
    char sig[WX_SIGN_HEX_MAX];
    char *doc = NULL;
    /* In WeChat's order; the fees are bare numbers, as WeChat writes them.
     * sign is a placeholder until the signature is known. */
    const wx_pair fields[] = {
        WX_TEXT("appid", creds->appid),
        WX_TEXT("bank_type", "OTHERS"),
        WX_BARE_NUM("cash_fee", c->total_fee),
        WX_TEXT("fee_type", "CNY"),
        WX_TEXT("is_subscribe", "N"),
        WX_TEXT("mch_id", creds->mch_id),
        WX_TEXT("nonce_str", nonce),
        WX_TEXT("openid", c->openid),
        WX_TEXT("out_trade_no", c->out_trade_no),
        WX_TEXT("result_code", "SUCCESS"),
        WX_TEXT("return_code", "SUCCESS"),
        WX_TEXT("sign", ""),
        WX_TEXT("time_end", c->time_end),
        WX_BARE_NUM("total_fee", c->total_fee),
        WX_TEXT("trade_type", c->trade_type),
        WX_TEXT("transaction_id", c->transaction_id),
    };

    wx_msg_init(&m);
    /* signed as the merchant configured it (IDEMPAY_WX_SIGN_TYPE; WeChat
     * signs with the order's sign_type): HMAC-SHA256 names itself */
    if (WX_MSG_SET_PAIRS(&m, fields) == 0 &&
        (creds->sign_type != WX_SIGN_HMAC_SHA256 ||
         wx_msg_set(&m, "sign_type", "HMAC-SHA256") == 0) &&
        wx_sign_compute(&m, creds->key, creds->sign_type, sig) == 0 &&
        wx_msg_set(&m, "sign", sig) == 0)
        doc = wx_xml_build(&m);
    wx_msg_free(&m);
    return doc;
}

/* The merchant's return_code and return_msg into rc and msg ("" when the
 * body is not WeChat XML or lacks them). Returns 1 when return_code is
 * SUCCESS, else 0. */
static int notifier_reply_read(const char *body, size_t len, char *rc, size_t rclen, char *msg,
                               size_t msglen)
{
    wx_msg m;
    char err[128];

    rc[0] = msg[0] = '\0';
    wx_msg_init(&m);
    if (body != NULL && wx_xml_parse(body, len, &m, err, sizeof(err)) == 0) {
        const char *c = wx_msg_get(&m, "return_code");
        const char *t = wx_msg_get(&m, "return_msg");
        snprintf(rc, rclen, "%s", c != NULL ? c : "");
        snprintf(msg, msglen, "%s", t != NULL ? t : "");
    }
    wx_msg_free(&m);
    return strcmp(rc, "SUCCESS") == 0;
}

int notifier_reply_ok(const char *body, size_t len)
{
    char rc[16], msg[8];
    return notifier_reply_read(body, len, rc, sizeof(rc), msg, sizeof(msg));
}

/* v3's answer: acknowledged by HTTP 200 or 204 whatever the body (noted
 * return_code SUCCESS); else the JSON "code" and "message" of the failure
 * body, when there is one. */
static void notifier_v3_reply_read(const http_reply *reply, journal_entry *e)
{
    json_error_t jerr;
    json_t *o = reply->body_len > 0 ? json_loadb(reply->body, reply->body_len, 0, &jerr) : NULL;
    const char *code = json_string_value(json_object_get(o, "code"));
    const char *msg = json_string_value(json_object_get(o, "message"));
    bool ok = reply->code == 200 || reply->code == 204;
    snprintf(e->return_code, sizeof(e->return_code), "%s",
             ok             ? "SUCCESS"
             : code != NULL ? code
                            : "");
    snprintf(e->return_msg, sizeof(e->return_msg), "%s", msg != NULL ? msg : "");
    json_decref(o);
}

/* Fills the journal entry of one delivery attempt from its outcome; returns
 * true when the merchant acknowledged it (v2: HTTP 200 and return_code
 * SUCCESS; v3: HTTP 200 or 204). */
static bool notifier_outcome(const delivery *d, http_status st, const http_reply *reply,
                             journal_entry *e)
{
    const notifier_charge *c = &d->charge;
    snprintf(e->out_trade_no, sizeof(e->out_trade_no), "%s", c->out_trade_no);
    snprintf(e->transaction_id, sizeof(e->transaction_id), "%s", c->transaction_id);
    snprintf(e->notify_url, sizeof(e->notify_url), "%s", c->notify_url);
    e->copy = d->copy;
    e->attempt = d->attempt + 1;
    e->latency_ms = journal_elapsed_ms(e);
    if (st != HTTP_OK) {
        snprintf(e->error, sizeof(e->error), "%s: %.200s", http_status_name(st), reply->error);
        return false;
    }
    e->http_status = reply->code;
    if (c->api_version == 3) {
        notifier_v3_reply_read(reply, e);
        return reply->code == 200 || reply->code == 204;
    }
    int success = notifier_reply_read(reply->body, reply->body_len, e->return_code,
                                      sizeof(e->return_code), e->return_msg, sizeof(e->return_msg));
    return reply->code == 200 && success;
}

/* ---- the heap (callers hold mu) ----------------------------------------- */

static void notifier_swap(delivery *a, delivery *b)
{
    delivery t = *a;
    *a = *b;
    *b = t;
}

static int notifier_push(notifier *n, const delivery *d)
{
    if (n->len >= NOTIFIER_MAX_QUEUE)
        return -1;
    if (n->len == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 256;
        delivery *h = realloc(n->heap, cap * sizeof(*h));
        if (h == NULL)
            return -1;
        n->heap = h;
        n->cap = cap;
    }
    size_t i = n->len++;
    n->heap[i] = *d;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (n->heap[p].due_ms <= n->heap[i].due_ms)
            break;
        notifier_swap(&n->heap[p], &n->heap[i]);
        i = p;
    }
    return 0;
}

static void notifier_pop(notifier *n, delivery *out)
{
    *out = n->heap[0];
    n->heap[0] = n->heap[--n->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n->len && n->heap[l].due_ms < n->heap[m].due_ms)
            m = l;
        if (r < n->len && n->heap[r].due_ms < n->heap[m].due_ms)
            m = r;
        if (m == i)
            break;
        notifier_swap(&n->heap[m], &n->heap[i]);
        i = m;
    }
}

/* ---- delivery ---------------------------------------------------------- */

/* The body of delivery d in its dialect, with its extra headers (v3: the
 * four Wechatpay-* lines, malloc'd into lines[0..3]; lines[4] NULL). NULL
 * on failure (logged). */
static char *notifier_body(notifier *n, const delivery *d, char *lines[5])
{
    char nonce[33];
    const v3_keys *k = n->app->v3;
    faults_config cfg;
    v3_signed sig;

    memset(lines, 0, 5 * sizeof(lines[0]));
    if (d->charge.api_version != 3) {
        if (wx_nonce(nonce) != 0)
            return NULL;
        return d->is_refund ? refund_notify_build_xml(&d->refund, &n->app->creds, nonce)
                            : notifier_build_xml(&d->charge, &n->app->creds, nonce);
    }
    if (k == NULL) {
        log_msg(LOG_WARN, "notify %s: a v3 notification, but the mock has no v3 material",
                d->charge.out_trade_no);
        return NULL;
    }
    char *json = d->is_refund
                     ? v3_notify_refund_json(&d->refund, &n->app->creds, k->platform.apiv3_key)
                     : v3_notify_charge_json(&d->charge, &n->app->creds, k->platform.apiv3_key);
    faults_get(&n->app->faults, &cfg);
    if (json == NULL || v3_keys_sign(k, cfg.v3_platform_rotation, json, strlen(json), &sig) != 0) {
        free(json);
        return NULL;
    }
    int rc = wx3_signed_lines(sig.serial, sig.signature, sig.timestamp, sig.nonce, lines);
    v3_signed_free(&sig);
    if (rc != 0) {
        free(json);
        return NULL;
    }
    return json;
}

/* POSTs one notification; true when the merchant acknowledged it. */
static bool notifier_deliver(notifier *n, http_client *hc, const delivery *d)
{
    char *lines[5];
    http_reply reply;
    bool ok = false;
    bool v3 = d->charge.api_version == 3;

    char *xml = notifier_body(n, d, lines);
    if (xml == NULL) {
        wx3_lines_free(lines);
        return false;
    }

    /* Counted before the POST (a delivery popped just before a reset is
     * neither counted nor sent). */
    pthread_mutex_lock(&n->mu);
    bool current = d->generation == n->generation;
    pthread_mutex_unlock(&n->mu);
    if (!current) {
        free(xml);
        wx3_lines_free(lines);
        return true;
    }
    pthread_mutex_lock(&n->count_mu);
    n->unflushed++;
    pthread_mutex_unlock(&n->count_mu);

    journal_entry e;
    journal_entry_begin(&e, true);
    http_status st = http_client_request(hc, "POST", d->charge.notify_url,
                                         v3 ? "application/json" : "text/xml; charset=utf-8", xml,
                                         strlen(xml), v3 ? (const char *const *)lines : NULL,
                                         n->timeout_ms, &reply);
    ok = notifier_outcome(d, st, &reply, &e);
    journal_append(n->app->journal, &e, false);
    log_msg(ok ? LOG_DEBUG : LOG_INFO, "notify %s copy %d attempt %d to %s: %s (HTTP %ld)%s",
            d->charge.transaction_id, d->copy, d->attempt + 1, d->charge.notify_url,
            http_status_name(st), reply.code, ok ? "" : " not acknowledged");
    free(xml);
    wx3_lines_free(lines);
    return ok;
}

static void *notifier_worker(void *arg)
{
    notifier *n = arg;
    http_client *hc = http_client_new(2000, n->timeout_ms);
    delivery d;

    if (hc == NULL) {
        log_msg(LOG_ERROR, "notifier: cannot create an HTTP client");
        return NULL;
    }
    pthread_mutex_lock(&n->mu);
    for (;;) {
        faults_config cfg;
        faults_get(&n->app->faults, &cfg);
        long long now = clocks_mono_ms();
        if (n->len == 0 || n->inflight >= cfg.notify_concurrency) {
            pthread_cond_wait(&n->cond, &n->mu);
            continue;
        }
        if (n->heap[0].due_ms > now) {
            long long due = n->heap[0].due_ms;
            struct timespec ts = { (time_t)(due / 1000), (long)(due % 1000) * 1000000L };
            pthread_cond_timedwait(&n->cond, &n->mu, &ts);
            continue;
        }
        notifier_pop(n, &d);
        if (!cfg.notify_enabled)
            continue; /* switched off: pending deliveries are dropped */
        n->inflight++;
        pthread_mutex_unlock(&n->mu);

        bool ok = notifier_deliver(n, hc, &d);

        pthread_mutex_lock(&n->mu);
        n->inflight--;
        d.attempt++;
        if (!ok && d.generation == n->generation) {
            faults_get(&n->app->faults, &cfg);
            long long wait = faults_retry_delay_ms(d.attempt, cfg.notify_retry_ms);
            if (wait < 0) {
                log_msg(LOG_WARN, "notify %s copy %d: giving up after %d attempts",
                        d.charge.transaction_id, d.copy, d.attempt);
            } else {
                d.due_ms = clocks_mono_ms() + wait;
                if (notifier_push(n, &d) != 0)
                    log_msg(LOG_WARN, "notify %s: queue full, retry dropped",
                            d.charge.transaction_id);
            }
        }
        pthread_cond_broadcast(&n->cond);
    }
    return NULL;
}

/* Moves the unflushed count into the ledger now and then. */
static void *notifier_flusher(void *arg)
{
    notifier *n = arg;
    ledger *l = ledger_new();
    if (l == NULL) {
        log_msg(LOG_ERROR, "notifier: out of memory for the counter flusher");
        return NULL;
    }
    for (;;) {
        struct timespec ts = { 0, NOTIFIER_FLUSH_MS * 1000000L };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&n->count_mu);
        long long k = n->unflushed;
        if (k > 0) {
            if (ledger_counter_add(l, k) == 0)
                n->unflushed -= k;
            else
                log_msg(LOG_WARN, "notifier: counter not saved yet: %s", ledger_error(l));
        }
        pthread_mutex_unlock(&n->count_mu);
    }
    return NULL;
}

notifier *notifier_start(mock_app *app)
{
    notifier *n = calloc(1, sizeof(*n));
    pthread_condattr_t ca;
    pthread_attr_t ta;

    if (n == NULL)
        return NULL;
    n->app = app;
    n->timeout_ms = env_int("IDEMPAY_MOCK_NOTIFY_TIMEOUT_MS", 5000);
    if (n->timeout_ms <= 0)
        n->timeout_ms = 5000;
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->count_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->cond, &ca);
    pthread_condattr_destroy(&ca);

    pthread_attr_init(&ta);
    pthread_attr_setstacksize(&ta, NOTIFIER_STACK);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < MOCK_MAX_NOTIFY_CONCURRENCY + 1; i++) {
        pthread_t t;
        void *(*fn)(void *) = i == 0 ? notifier_flusher : notifier_worker;
        int rc = pthread_create(&t, &ta, fn, n);
        if (rc != 0) {
            log_msg(LOG_ERROR, "notifier: pthread_create: %s", strerror(rc));
            pthread_attr_destroy(&ta);
            return NULL; /* threads already started keep n alive: not freed */
        }
    }
    pthread_attr_destroy(&ta);
    return n;
}

/* Queues notify_copies copies of d (charge.notify_url set). */
static void notifier_queue(notifier *n, delivery *d)
{
    faults_config cfg;
    const notifier_charge *c = &d->charge;
    faults_get(&n->app->faults, &cfg);
    if (!cfg.notify_enabled || cfg.notify_copies <= 0 || c->notify_url[0] == '\0')
        return;
    d->due_ms = clocks_mono_ms() + cfg.notify_delay_ms;
    pthread_mutex_lock(&n->mu);
    d->generation = n->generation;
    for (long long i = 0; i < cfg.notify_copies; i++) {
        d->copy = (int)i + 1;
        if (notifier_push(n, d) != 0) {
            log_msg(LOG_WARN, "notify %s: queue full, %lld copies dropped", c->transaction_id,
                    cfg.notify_copies - i);
            break;
        }
    }
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->mu);
}

void notifier_charge_made(notifier *n, const notifier_charge *c)
{
    delivery d;
    if (n == NULL)
        return;
    memset(&d, 0, sizeof(d));
    d.charge = *c;
    notifier_queue(n, &d);
}

void notifier_refund_ended(notifier *n, const refund_record *r, const char *url)
{
    delivery d;
    if (n == NULL)
        return;
    memset(&d, 0, sizeof(d));
    d.is_refund = true;
    d.refund = *r;
    /* The journal and the log name the charge and the refund's URL. */
    snprintf(d.charge.transaction_id, sizeof(d.charge.transaction_id), "%s", r->transaction_id);
    snprintf(d.charge.out_trade_no, sizeof(d.charge.out_trade_no), "%s", r->out_trade_no);
    snprintf(d.charge.notify_url, sizeof(d.charge.notify_url), "%s", url);
    d.charge.api_version = r->api_version; /* the dialect the refund was asked in */
    notifier_queue(n, &d);
}

void notifier_kick(notifier *n)
{
    if (n == NULL)
        return;
    pthread_mutex_lock(&n->mu);
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->mu);
}

int notifier_count(notifier *n, ledger *l, long long *out)
{
    if (n == NULL)
        return ledger_counter_get(l, out);
    pthread_mutex_lock(&n->count_mu);
    int rc = ledger_counter_get(l, out);
    if (rc == 0)
        *out += n->unflushed;
    pthread_mutex_unlock(&n->count_mu);
    return rc;
}

void notifier_reset_begin(notifier *n)
{
    if (n == NULL)
        return;
    pthread_mutex_lock(&n->mu);
    n->len = 0;
    n->generation++;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->mu);
    pthread_mutex_lock(&n->count_mu);
    n->unflushed = 0;
}

void notifier_reset_end(notifier *n)
{
    if (n == NULL)
        return;
    pthread_mutex_unlock(&n->count_mu);
}
