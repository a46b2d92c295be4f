/* gateway_v3.c - the APIv3 client's transport: signed JSON requests over the
 * thread's curl handle, replies checked against the platform certificates
 * (refreshed from /v3/certificates on an unknown serial), then read by
 * gateway_v3_reply.c in v2's words (see gateway_v3.h). */
#include "gateway_v3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <strings.h>
#include <openssl/evp.h>

#include "clocks.h"
#include "gateway_refund.h"
#include "gateway_v3_reply.h"
#include "log.h"
#include "metrics.h"
#include "wx3_sign.h"

/* A reply, copied out of the client (whose buffer the next call reuses). */
typedef struct {
    long code;
    char *body; /* malloc'd, NUL-terminated */
    size_t len;
    char serial[72], signature[700], timestamp[24], nonce[72];
} gw3_answer;

/* ---- the platform certificates ------------------------------------------ */

static pthread_mutex_t g3_lock = PTHREAD_MUTEX_INITIALIZER;
static wx3_trust g3_platform;
static int g3_ready;
static double g3_last_refresh = -1e9;

wx3_trust *gateway_v3_platform(const app_config *cfg)
{
    wx3_cert pinned;

    pthread_mutex_lock(&g3_lock);
    if (!g3_ready) {
        wx3_trust_init(&g3_platform);
        if (cfg->v3.platform_cert[0] != '\0' &&
            wx3_cert_load(cfg->v3.platform_cert, &pinned) == 0) {
            wx3_trust_add(&g3_platform, &pinned);
            wx3_cert_free(&pinned);
        }
        g3_ready = 1;
    }
    pthread_mutex_unlock(&g3_lock);
    return &g3_platform;
}

/* ---- requests -------------------------------------------------------------- */

int gateway_v3_authorization(const app_config *cfg, const char *method, const char *url,
                             const char *body, const char *ts, const char *nonce, char *hdr,
                             size_t cap)
{
    char *msg = NULL, *sig = NULL;
    int rc = -1;

    if ((msg = wx3_request_message(method, url, ts, nonce, body, body ? strlen(body) : 0)) ==
            NULL ||
        wx3_sign(cfg->v3.key, msg, strlen(msg), &sig) != 0)
        goto done;
    int n = snprintf(hdr, cap,
                     "Authorization: " WX3_AUTH_SCHEMA " mchid=\"%s\",nonce_str=\"%s\","
                     "signature=\"%s\",timestamp=\"%s\",serial_no=\"%s\"",
                     cfg->mch_id, nonce, sig, ts, cfg->v3.serial);
    rc = n > 0 && (size_t)n < cap ? 0 : -1;
done:
    free(msg);
    free(sig);
    return rc;
}

/* gateway_v3_authorization now, with a fresh nonce. */
static int gw3_authorization(const app_config *cfg, const char *method, const char *url,
                             const char *body, char *hdr, size_t cap)
{
    char ts[24], nonce[33];

    snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
    if (wx3_nonce(nonce, sizeof(nonce), 32) != 0)
        return -1;
    return gateway_v3_authorization(cfg, method, url, body, ts, nonce, hdr, cap);
}

/* Copies hr into a (owned). 0 or -1 (OOM). */
static int gw3_keep(const http_reply *hr, gw3_answer *a)
{
    memset(a, 0, sizeof(*a));
    a->code = hr->code;
    a->len = hr->body_len;
    if ((a->body = malloc(hr->body_len + 1)) == NULL)
        return -1;
    memcpy(a->body, hr->body, hr->body_len);
    a->body[hr->body_len] = '\0';
    snprintf(a->serial, sizeof(a->serial), "%s", hr->wx_serial);
    snprintf(a->signature, sizeof(a->signature), "%s", hr->wx_signature);
    snprintf(a->timestamp, sizeof(a->timestamp), "%s", hr->wx_timestamp);
    snprintf(a->nonce, sizeof(a->nonce), "%s", hr->wx_nonce);
    return 0;
}

/* One signed request of method to url (absolute), signed over signed_url
 * (its path and query), with a JSON body or none. 0 with *a holding the
 * HTTP answer (any status), or -1 with out GW_UNKNOWN (no answer). */
static int gw3_send(app_ctx *ctx, const char *op, const char *method, const char *url,
                    const char *signed_url, const char *body, gw3_answer *a, gw_result *out)
{
    char auth[1536];
    const char *headers[] = { auth, "Accept: application/json", NULL };
    http_reply hr;
    double started;

    memset(a, 0, sizeof(*a));
    if (gw3_authorization(ctx->cfg, method, signed_url, body, auth, sizeof(auth)) != 0) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "could not sign the v3 request");
        return -1;
    }
    started = clocks_mono_s();
    metrics_gateway_begin(op);
    http_status hs = http_client_request(ctx->gateway, method, url,
                                         body != NULL ? "application/json" : NULL, body,
                                         body != NULL ? strlen(body) : 0, headers,
                                         ctx->cfg->gateway_timeout_ms, &hr);
    metrics_gateway(op, clocks_mono_s() - started);
    if (hs != HTTP_OK) {
        gateway_result_set(out, GW_UNKNOWN, http_status_name(hs), hr.error);
        return -1;
    }
    out->http_code = hr.code;
    if (gw3_keep(&hr, a) != 0) {
        gateway_result_set(out, GW_UNKNOWN, "local_error", "out of memory");
        return -1;
    }
    return 0;
}

static wx3_trust_verdict gw3_check(wx3_trust *t, const gw3_answer *a, long window_s)
{
    const wx3_signed_headers h = { a->serial, a->signature, a->timestamp, a->nonce };
    return wx3_trust_check(t, &h, a->body, a->len, time(NULL), window_s);
}

int gateway_v3_refresh(app_ctx *ctx, gw_result *out)
{
    const app_config *cfg = ctx->cfg;
    char url[512], why[128];
    gw3_answer a;
    wx3_trust fresh;
    int rc = -1;

    pthread_mutex_lock(&g3_lock);
    double now = clocks_mono_s(), last = g3_last_refresh;
    if (now - last >= GW3_REFRESH_MIN_MS / 1000.0)
        g3_last_refresh = now;
    pthread_mutex_unlock(&g3_lock);
    if (now - last < GW3_REFRESH_MIN_MS / 1000.0) {
        gateway_result_set(out, GW_UNKNOWN, "refresh_too_soon",
                           "platform certificates just fetched");
        return -1;
    }
    snprintf(url, sizeof(url), "%s/v3/certificates", cfg->gateway_url);
    if (gw3_send(ctx, "other", "GET", url, "/v3/certificates", NULL, &a, out) != 0)
        return -1;
    wx3_trust_init(&fresh);
    if (a.code != 200 || wx3_trust_load_certificates(&fresh, a.body, a.len, cfg->v3.apiv3_key,
                                                     time(NULL), why, sizeof(why)) < 0)
        gateway_result_set(out, GW_UNKNOWN, "certificates", a.code != 200 ? "HTTP error" : why);
    else if (gw3_check(&fresh, &a, cfg->v3.window_s) != WX3_TRUST_OK)
        gateway_result_set(out, GW_UNKNOWN, "certificates", "the list's reply does not verify");
    else if (wx3_trust_load_certificates(gateway_v3_platform(cfg), a.body, a.len, cfg->v3.apiv3_key,
                                         time(NULL), why, sizeof(why)) > 0)
        rc = 0;
    metrics_inc(rc == 0 ? MET_V3_CERTS_FETCHED : MET_V3_CERTS_FAILED);
    if (rc == 0)
        log_msg(LOG_INFO, "gateway v3: platform certificates fetched");
    else
        log_msg(LOG_WARN, "gateway v3: platform certificates not fetched: %s", out->message);
    wx3_trust_clear(&fresh);
    pthread_mutex_destroy(&fresh.lock);
    free(a.body);
    return rc;
}

/* The platform signature of a: checked, after a refresh when its serial is
 * new to us. 0, or -1 with out GW_UNKNOWN and why. */
static int gw3_trusted(app_ctx *ctx, const gw3_answer *a, gw_result *out)
{
    wx3_trust *t = gateway_v3_platform(ctx->cfg);
    wx3_trust_verdict v = gw3_check(t, a, ctx->cfg->v3.window_s);
    gw_result ignored;

    if (v == WX3_TRUST_UNKNOWN_SERIAL) {
        gateway_result_init(&ignored);
        if (gateway_v3_refresh(ctx, &ignored) == 0)
            v = gw3_check(t, a, ctx->cfg->v3.window_s);
    }
    if (v == WX3_TRUST_OK)
        return 0;
    gateway_result_set(out, GW_UNKNOWN, wx3_trust_verdict_name(v),
                       "the v3 reply's platform signature is not valid");
    metrics_inc(MET_GW_REPLY_V3_SIGNATURE);
    return -1;
}

static void gw3_log(const char *op, const char *subject, const gw_result *out)
{
    static const char *const names[] = { "charged", "not_charged", "orderpaid", "unknown",
                                         "closed",  "unsupported", "prepay" };
    log_msg(out->outcome == GW_UNKNOWN ? LOG_WARN : LOG_DEBUG,
            "gateway v3 %s order=%s outcome=%s err=%s msg=%s", op, subject, names[out->outcome],
            out->err_code, out->message);
}

/* The v2 meaning of kind over the translated reply m. */
static void gw3_mean(gw3_kind kind, const wx_msg *m, const char *subject, gw_result *out)
{
    switch (kind) {
    case GW3_PREPAY_NATIVE:
    case GW3_PREPAY_JSAPI:
        gateway_reply_unifiedorder(m, kind == GW3_PREPAY_NATIVE, out);
        break;
    case GW3_QUERY:
        gateway_reply_orderquery(m, subject, out);
        break;
    case GW3_CLOSE:
        gateway_reply_closeorder(m, out);
        break;
    case GW3_REFUND:
        gateway_reply_refund(m, subject, out);
        break;
    case GW3_REFUNDQUERY:
        gateway_reply_refundquery(m, subject, out);
        break;
    }
}

/* One call: body (JSON text, malloc'd, freed here; NULL for a GET) to
 * path; the verified reply read by kind's meaning about subject. */
static gw_outcome gw3_call(app_ctx *ctx, const char *op, gw3_kind kind, const char *method,
                           const char *path, char *body, const char *subject, gw_result *out)
{
    char url[512];
    gw3_answer a = { 0 };
    wx_msg m;

    wx_msg_init(&m);
    if ((size_t)snprintf(url, sizeof(url), "%s%s", ctx->cfg->gateway_url, path) >= sizeof(url) ||
        (strcmp(method, "POST") == 0 && body == NULL))
        gateway_result_set(out, GW_UNKNOWN, "local_error", "could not build the v3 request");
    else if (gw3_send(ctx, op, method, url, path, body, &a, out) == 0 &&
             gw3_trusted(ctx, &a, out) == 0) {
        out->answered = 1;
        if (gw3_reply_to_v2(a.code, a.body, a.len, kind, ctx->cfg->appid, ctx->cfg->mch_id, &m,
                            out) == 0)
            gw3_mean(kind, &m, subject, out);
    }
    gw3_log(op, subject, out);
    wx_msg_free(&m);
    free(a.body);
    free(body);
    return out->outcome;
}

/* ---- the operations --------------------------------------------------------- */

/* yyyyMMddHHmmss (China time) as RFC 3339 with +08:00 into out[32]. */
static void gw3_rfc3339(const char *compact, char out[32])
{
    if (compact == NULL || strlen(compact) != 14) {
        out[0] = '\0';
        return;
    }
    snprintf(out, 32, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s+08:00", compact, compact + 4, compact + 6,
             compact + 8, compact + 10, compact + 12);
}

static char *gw3_dump(json_t *o)
{
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(o);
    return s;
}

gw_outcome gateway_v3_prepay(app_ctx *ctx, const gw_prepay_req *p, gw_result *out)
{
    const app_config *cfg = ctx->cfg;
    const int native = strcmp(p->trade_type, "NATIVE") == 0;
    char expire[32];
    json_t *o;

    gateway_result_init(out);
    gw3_rfc3339(p->time_expire, expire);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:I, s:s}}", "appid", cfg->appid, "mchid",
                  cfg->mch_id, "description", "idempay order", "out_trade_no", p->order_no,
                  "notify_url", cfg->v3.notify_url, "amount", "total", (json_int_t)p->total_fee,
                  "currency", "CNY");
    if (o != NULL && expire[0] != '\0')
        json_object_set_new(o, "time_expire", json_string(expire));
    if (o != NULL && !native)
        json_object_set_new(o, "payer", json_pack("{s:s}", "openid", p->openid ? p->openid : ""));
    return gw3_call(ctx, "unifiedorder", native ? GW3_PREPAY_NATIVE : GW3_PREPAY_JSAPI, "POST",
                    native ? "/v3/pay/transactions/native" : "/v3/pay/transactions/jsapi",
                    gw3_dump(o), p->order_no, out);
}

/* path + a URL-safe segment (order numbers and ids are [0-9A-Za-z_|*-]:
 * '|' and '*' are escaped) + suffix into out. 0 or -1. */
static int gw3_path(char *out, size_t cap, const char *prefix, const char *seg, const char *suffix)
{
    size_t n = (size_t)snprintf(out, cap, "%s", prefix);
    for (const char *c = seg; *c != '\0' && n + 4 < cap; c++)
        n += (size_t)(*c == '|' || *c == '*' ? snprintf(out + n, cap - n, "%%%02X", *c)
                                             : snprintf(out + n, cap - n, "%c", *c));
    return n + strlen(suffix) + 1 < cap && snprintf(out + n, cap - n, "%s", suffix) > 0 ? 0 : -1;
}

gw_outcome gateway_v3_orderquery(app_ctx *ctx, const char *order_no, gw_result *out)
{
    char path[256], q[80];

    gateway_result_init(out);
    snprintf(q, sizeof(q), "?mchid=%s", ctx->cfg->mch_id);
    if (gw3_path(path, sizeof(path), "/v3/pay/transactions/out-trade-no/", order_no, q) != 0)
        return gateway_result_set(out, GW_UNKNOWN, "local_error", "order number too long");
    return gw3_call(ctx, "orderquery", GW3_QUERY, "GET", path, NULL, order_no, out);
}

gw_outcome gateway_v3_orderquery_charge(app_ctx *ctx, const char *order_no,
                                        const char *transaction_id, gw_result *out)
{
    char path[256], q[80];

    gateway_result_init(out);
    snprintf(q, sizeof(q), "?mchid=%s", ctx->cfg->mch_id);
    if (gw3_path(path, sizeof(path), "/v3/pay/transactions/id/", transaction_id, q) != 0)
        return gateway_result_set(out, GW_UNKNOWN, "local_error", "transaction_id too long");
    gw3_call(ctx, "orderquery", GW3_QUERY, "GET", path, NULL, order_no, out);
    if (out->outcome == GW_CHARGED && strcmp(out->transaction_id, transaction_id) != 0)
        gateway_result_set(out, GW_UNKNOWN, "charge_mismatch",
                           "the reply is about another transaction_id");
    return out->outcome;
}

gw_outcome gateway_v3_closeorder(app_ctx *ctx, const char *order_no, gw_result *out)
{
    char path[256];

    gateway_result_init(out);
    if (gw3_path(path, sizeof(path), "/v3/pay/transactions/out-trade-no/", order_no, "/close") != 0)
        return gateway_result_set(out, GW_UNKNOWN, "local_error", "order number too long");
    return gw3_call(ctx, "closeorder", GW3_CLOSE, "POST", path,
                    gw3_dump(json_pack("{s:s}", "mchid", ctx->cfg->mch_id)), order_no, out);
}

gw_outcome gateway_v3_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                             long long total_fee, long long refund_fee, const char *reason,
                             gw_result *out)
{
    json_t *o;

    gateway_result_init(out);
    o = json_pack("{s:s, s:s, s:s, s:{s:I, s:I, s:s}}", "transaction_id", transaction_id,
                  "out_refund_no", out_refund_no, "notify_url", ctx->cfg->v3.notify_url, "amount",
                  "refund", (json_int_t)refund_fee, "total", (json_int_t)total_fee, "currency",
                  "CNY");
    if (o != NULL && reason != NULL && reason[0] != '\0')
        json_object_set_new(o, "reason", json_string(reason));
    return gw3_call(ctx, "refund", GW3_REFUND, "POST", "/v3/refund/domestic/refunds", gw3_dump(o),
                    transaction_id, out);
}

gw_outcome gateway_v3_refundquery(app_ctx *ctx, const char *out_refund_no, gw_result *out)
{
    char path[256];

    gateway_result_init(out);
    if (gw3_path(path, sizeof(path), "/v3/refund/domestic/refunds/", out_refund_no, "") != 0)
        return gateway_result_set(out, GW_UNKNOWN, "local_error", "out_refund_no too long");
    return gw3_call(ctx, "refundquery", GW3_REFUNDQUERY, "GET", path, NULL, out_refund_no, out);
}

int gateway_v3_jsapi_sign(const app_config *cfg, const char *time_stamp, const char *nonce,
                          const char *prepay_id, char *out, size_t cap)
{
    char msg[512];
    char *sig = NULL;
    int n = snprintf(msg, sizeof(msg), "%s\n%s\n%s\nprepay_id=%s\n", cfg->appid, time_stamp, nonce,
                     prepay_id);
    int rc = -1;

    if (n > 0 && (size_t)n < sizeof(msg) && wx3_sign(cfg->v3.key, msg, (size_t)n, &sig) == 0 &&
        strlen(sig) < cap) {
        memcpy(out, sig, strlen(sig) + 1);
        rc = 0;
    }
    free(sig);
    return rc;
}

/* ---- the trade bill ------------------------------------------------------------ */

/* GET /v3/bill/tradebill of bill_date (yyyyMMdd): 2 with the download path
 * and hash, 0 for NO_STATEMENT_EXIST, 1 for STATEMENT_CREATING, -1 (out). */
static int gw3_bill_where(app_ctx *ctx, const char *bill_date, char *path, size_t pcap, char *hash,
                          size_t hcap, gw_result *out)
{
    char url[512], signed_url[128];
    gw3_answer a = { 0 };
    json_t *o = NULL;
    int rc = -1;

    snprintf(signed_url, sizeof(signed_url),
             "/v3/bill/tradebill?bill_date=%.4s-%.2s-%.2s"
             "&bill_type=ALL",
             bill_date, bill_date + 4, bill_date + 6);
    snprintf(url, sizeof(url), "%s%s", ctx->cfg->gateway_url, signed_url);
    if (strlen(bill_date) != 8 ||
        gw3_send(ctx, "downloadbill", "GET", url, signed_url, NULL, &a, out) != 0 ||
        gw3_trusted(ctx, &a, out) != 0)
        goto done;
    o = json_loadb(a.body, a.len, JSON_REJECT_DUPLICATES, NULL);
    const char *code = json_string_value(json_object_get(o, "code"));
    const char *dl = json_string_value(json_object_get(o, "download_url"));
    const char *hv = json_string_value(json_object_get(o, "hash_value"));
    const char *p = dl != NULL && strstr(dl, "://") != NULL ? strchr(strstr(dl, "://") + 3, '/')
                                                            : NULL;
    if (a.code == 400 && code != NULL && strcmp(code, "NO_STATEMENT_EXIST") == 0)
        rc = 0;
    else if (a.code == 400 && code != NULL && strcmp(code, "STATEMENT_CREATING") == 0) {
        gateway_result_set(out, GW_UNKNOWN, "bill_creating", "the day's bill is not generated yet");
        rc = 1;
    } else if (a.code != 200 || p == NULL || hv == NULL || strlen(p) >= pcap || strlen(hv) >= hcap)
        gateway_result_set(out, GW_UNKNOWN, "bill_error", code != NULL ? code : "tradebill failed");
    else {
        snprintf(path, pcap, "%s", p);
        snprintf(hash, hcap, "%s", hv);
        rc = 2;
    }
done:
    json_decref(o);
    free(a.body);
    return rc;
}

int gateway_v3_bill_hash_ok(const char *text, size_t len, const char *hex)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    size_t mdlen = 0;
    char mine[2 * EVP_MAX_MD_SIZE + 1];

    if (!EVP_Q_digest(NULL, "SHA1", NULL, text, len, md, &mdlen))
        return -1;
    for (size_t i = 0; i < mdlen; i++)
        snprintf(mine + 2 * i, 3, "%02x", md[i]);
    return hex != NULL && strcasecmp(mine, hex) == 0 ? 0 : -1;
}

int gateway_v3_tradebill(app_ctx *ctx, const char *bill_date, char **text, size_t *len,
                         gw_result *out)
{
    char path[384], hash[130], url[640];
    gw3_answer a = { 0 };
    int rc;

    *text = NULL;
    *len = 0;
    gateway_result_init(out);
    rc = gw3_bill_where(ctx, bill_date, path, sizeof(path), hash, sizeof(hash), out);
    if (rc == 0 && (*text = calloc(1, 1)) == NULL)
        rc = -1;
    if (rc != 2)
        goto done;
    rc = -1;
    /* the file is not signed (WeChat's download is not): its hash is */
    snprintf(url, sizeof(url), "%s%s", ctx->cfg->gateway_url, path);
    if (gw3_send(ctx, "downloadbill", "GET", url, path, NULL, &a, out) != 0)
        goto done;
    if (a.code != 200)
        gateway_result_set(out, GW_UNKNOWN, "bill_error", "the bill download failed");
    else if (gateway_v3_bill_hash_ok(a.body, a.len, hash) != 0)
        gateway_result_set(out, GW_UNKNOWN, "bill_hash", "the bill does not hash to hash_value");
    else {
        *text = a.body;
        *len = a.len;
        a.body = NULL;
        rc = 0;
    }
done:
    if (rc < 0)
        log_msg(LOG_WARN, "gateway v3 tradebill %s: %s %s", bill_date, out->err_code, out->message);
    free(a.body);
    return rc;
}
