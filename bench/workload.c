/* workload.c - the bench's requests (see workload.h); the rows and mock
 * state they need are workload_fixtures.c's.
 * The raw pipelines use the service's own statements, text for text, on the
 * service's own tables, so their rows cost the database what the service's
 * rows cost it. */
#include "workload.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caller_sign.h"
#include "clocks.h"
#include "db_conn.h"
#include "workload_int.h"
#include "wx_sign.h"
#include "workload_v3.h"
#include "wx_xml.h"

#define WL_LEASE_MS 10000 /* the service's default IDEMPAY_LEASE_MS */
#define WL_FEE 100
#define WL_PREPAY_TTL_MS 7200000LL /* the service's default IDEMPAY_PREPAY_TTL_MS */

const wl_config *wl_cfg;

/* notification pools: orders handed out so far (WL_CALLBACK, WL_RAWCB,
 * WL_CALLBACK_V3, WL_RAWCB_V3), and their order-number prefixes */
#define WL_POOLS 4
static atomic_long wl_pool_next[WL_POOLS];
static const char *const wl_pool_prefix[WL_POOLS] = { "CB", "RC", "C3", "R3" };

static int wl_pool_index(wl_kind w)
{
    return w == WL_CALLBACK ? 0 : w == WL_RAWCB ? 1 : w == WL_CALLBACK_V3 ? 2 : 3;
}

void wl_pools_reset(void)
{
    for (int p = 0; p < WL_POOLS; p++)
        atomic_store(&wl_pool_next[p], 0);
}

const char *wl_pool_prefix_of(wl_kind w)
{
    return wl_pool_prefix[wl_pool_index(w)];
}

static const struct {
    const char *name;
    const char *title;
    wl_kind baseline;
} wl_table[WL_COUNT] = {
    [WL_PING] = { "ping", "GET /api/ping", WL_PING },
    [WL_PAY] = { "pay_fresh", "POST /api/pay (fresh)", WL_RAWPAY },
    [WL_REPEAT] = { "pay_repeat", "POST /api/pay (repeat)", WL_PING },
    [WL_CALLBACK] = { "callback", "POST callback (verified)", WL_RAWCB },
    [WL_TOKEN] = { "token", "GET /api/pay/token", WL_PING },
    [WL_RAWDB] = { "rawdb", "raw DB: INSERT+UPDATE", WL_RAWDB },
    [WL_RAWPAY] = { "rawpay", "raw payment pipeline", WL_RAWPAY },
    [WL_RAWCB] = { "rawcallback", "raw callback pipeline", WL_RAWCB },
    [WL_PREPAY] = { "prepay", "POST /api/pay NATIVE (prepay)", WL_RAWPREPAY },
    [WL_RAWPREPAY] = { "rawprepay", "raw prepay pipeline", WL_RAWPREPAY },
    [WL_CALLBACK_V3] = { "callback_v3", "POST callback v3 (verified)", WL_RAWCB_V3 },
    [WL_RAWCB_V3] = { "rawcallback_v3", "raw v3 callback pipeline", WL_RAWCB_V3 },
};

const char *wl_name(wl_kind w)
{
    return wl_table[w].name;
}
const char *wl_title(wl_kind w)
{
    return wl_table[w].title;
}
wl_kind wl_baseline(wl_kind w)
{
    return wl_table[w].baseline;
}
bool wl_is_baseline(wl_kind w)
{
    return wl_table[w].baseline == w;
}

void wl_init(const wl_config *cfg)
{
    wl_cfg = cfg;
}

/* ---- statements ---------------------------------------------------------- */

/* The service's statements (app/order_store.c, app/callback.c), text for
 * text; rawdb keeps its own table, as before. */
static const char *const wl_sql[WL_ST_COUNT] = {
    [WL_ST_RAWDB_INS] =
        "INSERT INTO bench_payment_order (order_no, user_id, amount, status, lease_until) "
        "VALUES (?, ?, ?, 1, NOW(3) + INTERVAL 10 SECOND)",
    [WL_ST_RAWDB_UPD] =
        "UPDATE bench_payment_order SET status = 2, transaction_id = ?, lease_until = NULL "
        "WHERE order_no = ? AND status = 1",
    [WL_ST_PAY_INS] =
        "INSERT INTO payment_order (order_no, user_id, amount, status, lease_until, attempts)"
        " VALUES (?, ?, ?, 1, NOW(3) + INTERVAL ? MICROSECOND, 1)",
    [WL_ST_PAY_UPD] = "UPDATE payment_order SET status = 2, transaction_id = ?, lease_until = NULL"
                      " WHERE order_no = ? AND status = 1",
    [WL_ST_CB_INS] =
        "INSERT INTO payment_callback_record (third_party_no, order_no, total_fee, outcome, raw_xml) "
        "SELECT ?, order_no, ?, 0, ? FROM payment_order WHERE order_no = ? AND amount * 100 = ?",
    [WL_ST_CB_CAS] =
        "UPDATE payment_order FORCE INDEX (uk_order_no) SET status = 2, transaction_id = ?, lease_until = NULL "
        "WHERE order_no = ? AND status IN (0, 1, 3) AND final_reason = 0",
    [WL_ST_TRADE_INS] =
        "INSERT INTO payment_trade (order_no, trade_type, openid, time_expire, expires_ms,"
        " sent_at) VALUES (?, ?, ?, ?, ?, IF(? = 2, NOW(3), NULL))",
    [WL_ST_TRADE_PREPAY] = "UPDATE payment_trade SET prepay_id = ?, code_url = ?"
                           " WHERE order_no = ? AND prepay_id IS NULL",
};

/* ---- errors -------------------------------------------------------------- */

/* Records an error of the current request; returns -1. */
static int wl_fail(wl_worker *wk, const char *fmt, ...)
{
    va_list ap;

    wk->errors++;
    if (wk->first_error_at != 0)
        return -1;
    wk->first_error_at = clocks_mono_s();
    va_start(ap, fmt);
    vsnprintf(wk->first_error, sizeof(wk->first_error), fmt, ap);
    va_end(ap);
    /* one line: bodies may hold newlines */
    for (char *p = wk->first_error; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return -1;
}

static int wl_db_fail(wl_worker *wk, const char *what, MYSQL_STMT *st)
{
    return wl_fail(wk, "%s: mariadb %u: %s", what, mysql_stmt_errno(st), mysql_stmt_error(st));
}

/* ---- workers ------------------------------------------------------------- */

int wl_worker_open(wl_worker *wk, int index, char *err, size_t errlen)
{
    memset(wk, 0, sizeof(*wk));
    wk->index = index;
    wk->http = http_client_new(2000, 10000);
    wk->db = db_conn_open_as(DB_ACCOUNT_MIGRATE, "idempay", err, errlen);
    if (wk->http == NULL || wk->db == NULL) {
        if (wk->http == NULL)
            snprintf(err, errlen, "out of memory");
        wl_worker_close(wk);
        return -1;
    }
    for (int i = 0; i < WL_ST_COUNT; i++) {
        wk->st[i] = mysql_stmt_init(wk->db);
        if (wk->st[i] == NULL || mysql_stmt_prepare(wk->st[i], wl_sql[i], strlen(wl_sql[i])) != 0) {
            snprintf(err, errlen, "prepare: %s",
                     wk->st[i] ? mysql_stmt_error(wk->st[i]) : "out of memory");
            wl_worker_close(wk);
            return -1;
        }
    }
    return 0;
}

void wl_worker_close(wl_worker *wk)
{
    for (int i = 0; i < WL_ST_COUNT; i++)
        if (wk->st[i] != NULL)
            mysql_stmt_close(wk->st[i]);
    if (wk->db != NULL)
        mysql_close(wk->db);
    http_client_free(wk->http);
    memset(wk, 0, sizeof(*wk));
}

void wl_worker_phase(wl_worker *wk, int phase)
{
    wk->phase = phase;
    wk->seq = 0;
    wk->errors = 0;
    wk->first_error[0] = '\0';
    wk->first_error_at = 0;
}

/* ---- the service's workloads -------------------------------------------- */

/* One HTTP exchange that must answer `expect` with a body containing
 * must_contain (and, when replayed, the Idempotent-Replayed header). */
static int wl_http(wl_worker *wk, const char *method, const char *base, const char *path,
                   const char *ctype, const char *body, long expect, const char *must_contain,
                   bool replayed, http_reply *rep)
{
    char url[600], lines[4][CALLER_HEADER_LINE_MAX], target[600];
    const char *headers[5] = { NULL }, *q;
    http_status hs;

    snprintf(url, sizeof(url), "%s%s", base, path);
    /* the merchant API is signed (common/caller_sign.h); ping is not */
    if (wl_cfg->caller_secret[0] && strncmp(path, "/api/pay", 8) == 0 &&
        strncmp(path, "/api/pay/callback/", 18) != 0) {
        q = strchr(path, '?');
        snprintf(target, sizeof(target), "%.*s", q ? (int)(q - path) : (int)strlen(path), path);
        if (caller_sign_headers(wl_cfg->caller, wl_cfg->caller_secret, (long long)time(NULL),
                                method, target, q ? q + 1 : "", body, body ? strlen(body) : 0,
                                lines) != 0)
            return wl_fail(wk, "%s %s: cannot sign as caller %s", method, path, wl_cfg->caller);
        for (int i = 0; i < 4; i++)
            headers[i] = lines[i];
    }
    hs = http_client_request(wk->http, method, url, ctype, body, body ? strlen(body) : 0,
                             headers[0] ? headers : NULL, 0, rep);
    if (hs != HTTP_OK)
        return wl_fail(wk, "%s %s: no answer (%s): %s", method, path, http_status_name(hs),
                       rep->error);
    if (rep->code != expect || (must_contain && (!rep->body || !strstr(rep->body, must_contain))))
        return wl_fail(wk, "%s %s: HTTP %ld: %.300s", method, path, rep->code,
                       rep->body ? rep->body : "");
    if (replayed && strcmp(rep->replayed, "true") != 0)
        return wl_fail(wk, "%s %s: HTTP %ld without Idempotent-Replayed: true: %.300s", method,
                       path, rep->code, rep->body ? rep->body : "");
    return 0;
}

int wl_pay(wl_worker *wk, const char *order_no, long user, bool repeat)
{
    char body[256];
    http_reply rep;

    /* the charge with its reply: a payment code (MICROPAY, docs/FLOWS.md) */
    snprintf(body, sizeof(body),
             "{\"order_no\":\"%s\",\"user_id\":%ld,\"amount\":\"" WL_AMOUNT "\","
             "\"trade_type\":\"MICROPAY\",\"auth_code\":\"134567890123456789\"}",
             order_no, user);
    return wl_http(wk, "POST", wl_cfg->target, "/api/pay", "application/json", body, 200,
                   "\"PAID\"", repeat, &rep);
}

/* A NATIVE order (the prepay flow, docs/FLOWS.md): 202 with its code_url,
 * nothing charged until a customer pays. */
static int wl_prepay(wl_worker *wk, const char *order_no, long user)
{
    char body[256];
    http_reply rep;

    snprintf(body, sizeof(body),
             "{\"order_no\":\"%s\",\"user_id\":%ld,\"amount\":\"" WL_AMOUNT "\","
             "\"trade_type\":\"NATIVE\"}",
             order_no, user);
    return wl_http(wk, "POST", wl_cfg->target, "/api/pay", "application/json", body, 202,
                   "\"code_url\"", false, &rep);
}

/* The next order of a notification pool into order_no, or -1 when the pool
 * is used up (an error: the pool was sized for a slower service). */
static int wl_pool_take(wl_worker *wk, wl_kind w, char *order_no, size_t cap, long *n)
{
    int p = wl_pool_index(w);

    *n = atomic_fetch_add(&wl_pool_next[p], 1);
    if (*n >= wl_cfg->pool_orders)
        return wl_fail(wk, "the pool of %ld orders for %s is used up (raise the pool)",
                       wl_cfg->pool_orders, wl_name(w));
    snprintf(order_no, cap, "%s%s_%ld", wl_pool_prefix[p], wl_cfg->run, *n);
    return 0;
}

long wl_pool_used(wl_kind w)
{
    long n = atomic_load(&wl_pool_next[wl_pool_index(w)]);
    return n < wl_cfg->pool_orders ? n : wl_cfg->pool_orders;
}

/* A signed notification of order_no paid by txid, as WeChat sends it. */
static char *wl_notification(const char *order_no, const char *txid)
{
    char nonce[33];
    wx_msg m;
    char *xml = NULL;

    wx_msg_init(&m);
    if (wx_nonce(nonce) == 0 && wx_msg_set(&m, "appid", wl_cfg->appid) == 0 &&
        wx_msg_set(&m, "bank_type", "CMC") == 0 && wx_msg_set_int(&m, "cash_fee", WL_FEE) == 0 &&
        wx_msg_set(&m, "fee_type", "CNY") == 0 && wx_msg_set(&m, "is_subscribe", "N") == 0 &&
        wx_msg_set(&m, "mch_id", wl_cfg->mchid) == 0 && wx_msg_set(&m, "nonce_str", nonce) == 0 &&
        wx_msg_set(&m, "openid", "oBenchOpenId000000000000000") == 0 &&
        wx_msg_set(&m, "out_trade_no", order_no) == 0 &&
        wx_msg_set(&m, "result_code", "SUCCESS") == 0 &&
        wx_msg_set(&m, "return_code", "SUCCESS") == 0 &&
        wx_msg_set(&m, "time_end", "20261130000000") == 0 &&
        wx_msg_set_int(&m, "total_fee", WL_FEE) == 0 &&
        wx_msg_set(&m, "trade_type", "NATIVE") == 0 &&
        wx_msg_set(&m, "transaction_id", txid) == 0 &&
        wx_sign_msg(&m, wl_cfg->key, WX_SIGN_MD5, 0) == 0)
        xml = wx_xml_build(&m);
    wx_msg_free(&m);
    return xml;
}

static int wl_callback(wl_worker *wk)
{
    char order_no[48], txid[40];
    char *xml;
    long n;
    http_reply rep;
    int rc;

    if (wl_pool_take(wk, WL_CALLBACK, order_no, sizeof(order_no), &n) != 0)
        return -1;
    snprintf(txid, sizeof(txid), "42%sC%012ld", wl_cfg->run, n);
    xml = wl_notification(order_no, txid);
    if (xml == NULL)
        return wl_fail(wk, "could not build a notification");
    rc = wl_http(wk, "POST", wl_cfg->public_base, "/api/pay/callback/wechat", "text/xml", xml, 200,
                 "<return_code><![CDATA[SUCCESS]]></return_code>", false, &rep);
    free(xml);
    return rc;
}

/* ---- the baselines ------------------------------------------------------- */

static int wl_rawdb(wl_worker *wk)
{
    char order_no[48], txid[40];
    MYSQL_STMT *ins = wk->st[WL_ST_RAWDB_INS], *upd = wk->st[WL_ST_RAWDB_UPD];

    snprintf(order_no, sizeof(order_no), "RW%s_%02d_%d_%ld", wl_cfg->run, wk->phase, wk->index,
             wk->seq);
    snprintf(txid, sizeof(txid), "41%s%02d%03d%09ld", wl_cfg->run, wk->phase, wk->index, wk->seq);
    if (db_stmt_exec(ins, "sls", order_no, (long long)(wk->index + 1), WL_AMOUNT) != 0)
        return wl_db_fail(wk, "rawdb INSERT", ins);
    if (db_stmt_exec(upd, "ss", txid, order_no) != 0)
        return wl_db_fail(wk, "rawdb UPDATE", upd);
    if (mysql_stmt_affected_rows(upd) != 1)
        return wl_fail(wk, "rawdb UPDATE changed %lld rows",
                       (long long)mysql_stmt_affected_rows(upd));
    return 0;
}

/* A signed call to the mock's front as the service makes it (app/gateway.c):
 * body, out_trade_no, total_fee, spbill_create_ip, then extra (name, value
 * pairs, NULL-terminated), appid, mch_id, nonce_str, MD5 sign. Its reply is
 * checked as the service checks it: HTTP 200, XML, return_code, signature,
 * appid/mch_id, result_code SUCCESS, and a non-empty field want, copied into
 * out. Returns 0 or -1 (counted). */
static int wl_gateway(wl_worker *wk, const char *path, const char *order_no,
                      const char *const *extra, const char *want, char *out, size_t cap)
{
    char nonce[33], err[128];
    wx_msg req, reply;
    char *xml = NULL;
    http_reply rep;
    const char *v;
    int rc = -1, built;

    wx_msg_init(&req);
    wx_msg_init(&reply);
    built = wx_msg_set(&req, "body", "idempay order") == 0 &&
            wx_msg_set(&req, "out_trade_no", order_no) == 0 &&
            wx_msg_set_int(&req, "total_fee", WL_FEE) == 0 &&
            wx_msg_set(&req, "spbill_create_ip", "127.0.0.1") == 0;
    for (int i = 0; built && extra[i] != NULL; i += 2)
        built = wx_msg_set(&req, extra[i], extra[i + 1]) == 0;
    if (!built || wx_nonce(nonce) != 0 || wx_msg_set(&req, "appid", wl_cfg->appid) != 0 ||
        wx_msg_set(&req, "mch_id", wl_cfg->mchid) != 0 ||
        wx_msg_set(&req, "nonce_str", nonce) != 0 ||
        wx_sign_msg(&req, wl_cfg->mock_key, WX_SIGN_MD5, 0) != 0 ||
        (xml = wx_xml_build(&req)) == NULL) {
        wl_fail(wk, "could not build the %s request", path);
        goto done;
    }
    if (wl_http(wk, "POST", wl_cfg->gateway, path, "text/xml; charset=utf-8", xml, 200, NULL, false,
                &rep) != 0)
        goto done;
    if (wx_xml_parse(rep.body, rep.body_len, &reply, err, sizeof(err)) != 0) {
        wl_fail(wk, "%s: unreadable reply (%s): %.300s", path, err, rep.body);
        goto done;
    }
    v = wx_msg_get(&reply, "return_code");
    if (v == NULL || strcmp(v, "SUCCESS") != 0 ||
        wx_sign_verify(&reply, wl_cfg->mock_key, WX_SIGN_MD5) != 1 ||
        (v = wx_msg_get(&reply, "appid")) == NULL || strcmp(v, wl_cfg->appid) != 0 ||
        (v = wx_msg_get(&reply, "mch_id")) == NULL || strcmp(v, wl_cfg->mchid) != 0 ||
        (v = wx_msg_get(&reply, "result_code")) == NULL || strcmp(v, "SUCCESS") != 0 ||
        (v = wx_msg_get(&reply, want)) == NULL || v[0] == '\0') {
        wl_fail(wk, "%s: not a verified SUCCESS with %s: %.300s", path, want, rep.body);
        goto done;
    }
    snprintf(out, cap, "%s", v);
    rc = 0;
done:
    free(xml);
    wx_msg_free(&req);
    wx_msg_free(&reply);
    return rc;
}

/* The signed micropay the service sends for a payment code: the charge
 * with its reply (its transaction_id into txid). */
static int wl_micropay(wl_worker *wk, const char *order_no, char *txid, size_t cap)
{
    static const char *const extra[] = { "auth_code", "134567890123456789", NULL };
    return wl_gateway(wk, "/pay/micropay", order_no, extra, "transaction_id", txid, cap);
}

static int wl_rawpay(wl_worker *wk)
{
    char order_no[48], txid[64];
    MYSQL_STMT *ins = wk->st[WL_ST_PAY_INS], *upd = wk->st[WL_ST_PAY_UPD];

    snprintf(order_no, sizeof(order_no), "RP%s_%02d_%d_%ld", wl_cfg->run, wk->phase, wk->index,
             wk->seq);
    if (db_stmt_exec(ins, "slsl", order_no, (long long)(wk->index + 1), WL_AMOUNT,
                     (long long)WL_LEASE_MS * 1000) != 0)
        return wl_db_fail(wk, "rawpay INSERT", ins);
    if (wl_micropay(wk, order_no, txid, sizeof(txid)) != 0)
        return -1;
    if (db_stmt_exec(upd, "ss", txid, order_no) != 0)
        return wl_db_fail(wk, "rawpay UPDATE", upd);
    if (mysql_stmt_affected_rows(upd) != 1)
        return wl_fail(wk, "rawpay UPDATE changed %lld rows",
                       (long long)mysql_stmt_affected_rows(upd));
    return 0;
}

/* time_expire of a prepay created now: China time (UTC+8) in 2 h, as
 * WeChat's yyyyMMddHHmmss, and its epoch ms. */
static void wl_time_expire(char out[16], long long *ms)
{
    struct timespec ts;
    struct tm tm;
    time_t t;

    clock_gettime(CLOCK_REALTIME, &ts);
    *ms = (long long)ts.tv_sec * 1000 + WL_PREPAY_TTL_MS;
    t = (time_t)(*ms / 1000) + 8 * 3600;
    gmtime_r(&t, &tm);
    strftime(out, 16, "%Y%m%d%H%M%S", &tm);
}

/* A NATIVE order's prepay as the service makes it (app/pay.c,
 * app/pay_prepay.c): the order INSERT, the trade INSERT, the signed
 * unifiedorder (reply verified, code_url read), the prepay UPDATE. */
static int wl_rawprepay(wl_worker *wk)
{
    static const char *extra[] = { "notify_url", NULL, "trade_type", "NATIVE", "time_expire", NULL,
                                   "product_id", NULL, NULL };
    char order_no[48], code_url[256], expire[16];
    const char *ex[9];
    long long expires_ms;
    MYSQL_STMT *ins = wk->st[WL_ST_PAY_INS], *tr = wk->st[WL_ST_TRADE_INS],
               *upd = wk->st[WL_ST_TRADE_PREPAY];

    snprintf(order_no, sizeof(order_no), "RN%s_%02d_%d_%ld", wl_cfg->run, wk->phase, wk->index,
             wk->seq);
    wl_time_expire(expire, &expires_ms);
    memcpy(ex, extra, sizeof(ex));
    ex[1] = wl_cfg->notify_url;
    ex[5] = expire;
    ex[7] = order_no;
    if (db_stmt_exec(ins, "slsl", order_no, (long long)(wk->index + 1), WL_AMOUNT,
                     (long long)WL_LEASE_MS * 1000) != 0)
        return wl_db_fail(wk, "rawprepay order INSERT", ins);
    if (db_stmt_exec(tr, "slssll", order_no, 0LL, NULL, expire, expires_ms, 0LL) != 0)
        return wl_db_fail(wk, "rawprepay trade INSERT", tr);
    if (wl_gateway(wk, "/pay/unifiedorder", order_no, ex, "code_url", code_url, sizeof(code_url)) !=
        0)
        return -1;
    if (db_stmt_exec(upd, "sss", "wx_bench_prepay", code_url, order_no) != 0)
        return wl_db_fail(wk, "rawprepay prepay UPDATE", upd);
    if (mysql_stmt_affected_rows(upd) != 1)
        return wl_fail(wk, "rawprepay prepay UPDATE changed %lld rows",
                       (long long)mysql_stmt_affected_rows(upd));
    return 0;
}

/* A notification's transaction for order_no paid by txid (app/callback.c,
 * success path): START TRANSACTION, the record INSERT ... SELECT that
 * checks order and amount, the CAS, COMMIT; raw (the notification) stored. */
static int wl_rawcallback_tx(wl_worker *wk, const char *order_no, const char *txid, const char *raw)
{
    MYSQL_STMT *ins = wk->st[WL_ST_CB_INS], *cas = wk->st[WL_ST_CB_CAS];
    int rc = -1;

    if (db_exec_simple(wk->db, "START TRANSACTION") != 0) {
        wl_fail(wk, "rawcallback START TRANSACTION: %s", mysql_error(wk->db));
        goto done;
    }
    if (db_stmt_exec(ins, "slssl", txid, (long long)WL_FEE, raw, order_no, (long long)WL_FEE) !=
        0) {
        wl_db_fail(wk, "rawcallback record INSERT", ins);
        goto rollback;
    }
    if (mysql_stmt_affected_rows(ins) != 1) {
        wl_fail(wk, "rawcallback record INSERT inserted %lld rows",
                (long long)mysql_stmt_affected_rows(ins));
        goto rollback;
    }
    if (db_stmt_exec(cas, "ss", txid, order_no) != 0) {
        wl_db_fail(wk, "rawcallback CAS", cas);
        goto rollback;
    }
    if (mysql_stmt_affected_rows(cas) != 1) {
        wl_fail(wk, "rawcallback CAS changed %lld rows", (long long)mysql_stmt_affected_rows(cas));
        goto rollback;
    }
    if (db_exec_simple(wk->db, "COMMIT") != 0) {
        wl_fail(wk, "rawcallback COMMIT: %s", mysql_error(wk->db));
        goto done;
    }
    rc = 0;
    goto done;
rollback:
    (void)db_exec_simple(wk->db, "ROLLBACK");
done:
    return rc;
}

/* rawcallback: a signed v2 notification of a pool order, its transaction. */
static int wl_rawcallback(wl_worker *wk)
{
    char order_no[48], txid[40];
    char *xml;
    long n;

    if (wl_pool_take(wk, WL_RAWCB, order_no, sizeof(order_no), &n) != 0)
        return -1;
    snprintf(txid, sizeof(txid), "42%sR%012ld", wl_cfg->run, n);
    xml = wl_notification(order_no, txid);
    if (xml == NULL)
        return wl_fail(wk, "could not build a notification");
    int rc = wl_rawcallback_tx(wk, order_no, txid, xml);
    free(xml);
    return rc;
}

/* An APIv3 notification of a pool order posted to the service's v3 URL,
 * answered 204 (applied). */
static int wl_callback_v3(wl_worker *wk)
{
    char order_no[48], txid[40], url[320], why[WL_ERROR_MAX];
    long n;

    if (wl_pool_take(wk, WL_CALLBACK_V3, order_no, sizeof(order_no), &n) != 0)
        return -1;
    snprintf(txid, sizeof(txid), "42%sV%012ld", wl_cfg->run, n);
    snprintf(url, sizeof(url), "%s/api/pay/callback/wechat/v3", wl_cfg->public_base);
    if (wl_v3_post(wk->http, url, wl_cfg->appid, wl_cfg->mchid, order_no, txid, WL_FEE, why,
                   sizeof(why)) != 0)
        return wl_fail(wk, "%s", why);
    return 0;
}

/* The same notification's signature verified and resource decrypted, then
 * rawcallback's transaction (the decrypted resource stored). */
static int wl_rawcallback_v3(wl_worker *wk)
{
    char order_no[48], txid[40];
    char *plain = NULL;
    wl_v3_msg m;
    long n;
    int rc;

    if (wl_pool_take(wk, WL_RAWCB_V3, order_no, sizeof(order_no), &n) != 0)
        return -1;
    snprintf(txid, sizeof(txid), "42%sW%012ld", wl_cfg->run, n);
    if (wl_v3_notification(wl_cfg->appid, wl_cfg->mchid, order_no, txid, WL_FEE, &m) != 0)
        return wl_fail(wk, "could not build a v3 notification");
    rc = wl_v3_verify_decrypt(&m, &plain) != 0
             ? wl_fail(wk, "rawcallback_v3: verify/decrypt failed")
             : wl_rawcallback_tx(wk, order_no, txid, plain);
    wl_v3_msg_free(&m);
    free(plain);
    return rc;
}

int wl_request(wl_worker *wk, wl_kind w)
{
    char buf[96];
    http_reply rep;
    int rc;

    switch (w) {
    case WL_PING:
        rc = wl_http(wk, "GET", wl_cfg->target, "/api/ping", NULL, NULL, 200, "\"ok\"", false,
                     &rep);
        break;
    case WL_PAY:
        snprintf(buf, sizeof(buf), "BP%s_%02d_%d_%ld", wl_cfg->run, wk->phase, wk->index, wk->seq);
        rc = wl_pay(wk, buf, wk->index + 1, false);
        break;
    case WL_REPEAT:
        snprintf(buf, sizeof(buf), "BR%s_%ld", wl_cfg->run,
                 (wk->seq * wl_cfg->concurrency + wk->index) % WL_REPEAT_ORDERS);
        rc = wl_pay(wk, buf, 7, true);
        break;
    case WL_CALLBACK:
        rc = wl_callback(wk);
        break;
    case WL_TOKEN:
        snprintf(buf, sizeof(buf), "/api/pay/token?user_id=%d", wk->index + 1);
        rc = wl_http(wk, "GET", wl_cfg->target, buf, NULL, NULL, 200, "\"token\"", false, &rep);
        break;
    case WL_RAWDB:
        rc = wl_rawdb(wk);
        break;
    case WL_RAWPAY:
        rc = wl_rawpay(wk);
        break;
    case WL_RAWCB:
        rc = wl_rawcallback(wk);
        break;
    case WL_PREPAY:
        snprintf(buf, sizeof(buf), "BN%s_%02d_%d_%ld", wl_cfg->run, wk->phase, wk->index, wk->seq);
        rc = wl_prepay(wk, buf, wk->index + 1);
        break;
    case WL_RAWPREPAY:
        rc = wl_rawprepay(wk);
        break;
    case WL_CALLBACK_V3:
        rc = wl_callback_v3(wk);
        break;
    case WL_RAWCB_V3:
        rc = wl_rawcallback_v3(wk);
        break;
    default:
        rc = wl_fail(wk, "unknown workload");
        break;
    }
    wk->seq++;
    return rc;
}
