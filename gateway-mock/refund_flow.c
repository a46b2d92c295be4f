/* refund_flow.c - refunds accepted, ended, queried and notified; the
 * client-certificate check of /secapi/. */
#include "refund_flow.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "env.h"
#include "log.h"
#include "notifier.h"
#include "refund_store.h"
#include "rng.h"

#define DES_BUSY "系统繁忙,请稍后再试"
/* Refunds ended per pass (the rest wait for the next). */
#define REFUND_FLOW_BATCH 200

/* ---- the per-thread store and the PRNG ----------------------------------- */

static pthread_key_t flow_key;
static pthread_once_t flow_once = PTHREAD_ONCE_INIT;

static void flow_store_free(void *p)
{
    refund_store_free(p);
}

static void flow_key_init(void)
{
    (void)pthread_key_create(&flow_key, flow_store_free);
}

/* This thread's store (NULL on OOM). */
static refund_store *flow_store(void)
{
    pthread_once(&flow_once, flow_key_init);
    refund_store *s = pthread_getspecific(flow_key);
    if (s == NULL && (s = refund_store_new()) != NULL)
        pthread_setspecific(flow_key, s);
    return s;
}

static pthread_mutex_t flow_rng_mu = PTHREAD_MUTEX_INITIALIZER;
static rng_t flow_rng;
static long long flow_rng_seed = -1;

/* What a new refund meets: four draws, always, in this order. */
typedef struct {
    bool notenough, abnormal, close, change;
} flow_draw;

static void flow_decide(const faults_config *cfg, flow_draw *d)
{
    pthread_mutex_lock(&flow_rng_mu);
    if (flow_rng_seed != cfg->seed) {
        flow_rng_seed = cfg->seed;
        rng_seed(&flow_rng, (uint64_t)cfg->seed ^ 0x726566756e64ULL); /* "refund" */
    }
    d->notenough = rng_chance(&flow_rng, cfg->refund_notenough_rate);
    d->abnormal = rng_chance(&flow_rng, cfg->refund_abnormal_rate);
    d->close = rng_chance(&flow_rng, cfg->refund_close_rate);
    d->change = rng_chance(&flow_rng, cfg->refund_change_rate);
    pthread_mutex_unlock(&flow_rng_mu);
}

/* ---- ending refunds ---------------------------------------------------------- */

static void flow_ended(void *arg, const refund_record *r)
{
    mock_app *app = arg;
    const char *url = r->notify_url[0] != '\0' ? r->notify_url
                                               : env_str("IDEMPAY_MOCK_REFUND_NOTIFY_URL", "");
    log_msg(LOG_INFO, "refund %s of %s: %s", r->out_refund_no, r->transaction_id, r->status);
    if (url[0] != '\0')
        notifier_refund_ended(app->notifier, r, url);
}

static void flow_settle(mock_app *app, refund_store *s)
{
    if (s != NULL && refund_store_settle(s, REFUND_FLOW_BATCH, flow_ended, app) < 0)
        log_msg(LOG_WARN, "refunds: cannot end the due refunds: %s", refund_store_error(s));
}

void refund_flow_settle_now(mock_app *app)
{
    flow_settle(app, flow_store());
}

static void *flow_thread(void *arg)
{
    mock_app *app = arg;
    refund_store *s = refund_store_new();
    for (;;) {
        struct timespec ts = { 0, REFUND_FLOW_TICK_MS * 1000000L };
        nanosleep(&ts, NULL);
        flow_settle(app, s);
    }
    return NULL;
}

int refund_flow_start(mock_app *app)
{
    pthread_t t;
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &ta, flow_thread, app);
    pthread_attr_destroy(&ta);
    if (rc != 0)
        log_msg(LOG_ERROR, "refunds: pthread_create: %s", strerror(rc));
    return rc == 0 ? 0 : -1;
}

json_t *refund_flow_ledger_json(mock_app *app, const char *out_trade_no)
{
    refund_store *s = flow_store();
    if (s == NULL)
        return NULL;
    flow_settle(app, s);
    json_t *rows = refund_store_json(s, out_trade_no);
    if (rows == NULL)
        log_msg(LOG_ERROR, "refunds: listing failed: %s", refund_store_error(s));
    return rows;
}

/* ---- the client certificate ------------------------------------------------ */

/* true when subject dn names CN=cn: RFC 2253 ("CN=x,O=y", nginx) or
 * OpenSSL's one-line form ("/O=y/CN=x", lighttpd). */
static bool flow_dn_has_cn(const char *dn, const char *cn)
{
    size_t n = strlen(cn);
    for (const char *p = dn; p != NULL && *p != '\0'; p++) {
        bool start = p == dn || p[-1] == ',' || p[-1] == '/';
        if (start && strncmp(p, "CN=", 3) == 0 && strncmp(p + 3, cn, n) == 0 &&
            (p[3 + n] == '\0' || p[3 + n] == ',' || p[3 + n] == '/'))
            return true;
    }
    return false;
}

bool refund_flow_cert_ok(mock_app *app, const char *client_verify, const char *client_dn)
{
    faults_config cfg;
    faults_get(&app->faults, &cfg);
    if (!cfg.require_client_cert)
        return true;
    return client_verify != NULL && strcmp(client_verify, "SUCCESS") == 0 &&
           flow_dn_has_cn(client_dn, app->creds.mch_id);
}

/* ---- the refund ---------------------------------------------------------------- */

static void flow_reply_init(refund_flow_reply *out)
{
    memset(out, 0, sizeof(*out));
    wx_msg_init(&out->extra);
}

static void flow_fail(refund_flow_reply *out, const char *code, const char *des)
{
    out->err_code = code;
    snprintf(out->err_des, sizeof(out->err_des), "%s", des);
}

/* The err_code and err_code_des of a refund that was not accepted. */
static void flow_refused(refund_accept_outcome o, const char *refuse, refund_flow_reply *out)
{
    switch (o) {
    case REFUND_UNKNOWN_CHARGE:
        flow_fail(out, "ORDERNOTEXIST", "订单号不存在");
        return;
    case REFUND_TOTAL_MISMATCH:
        flow_fail(out, "INVALID_REQUEST", "订单金额与实际不符");
        return;
    case REFUND_OVER:
        flow_fail(out, "INVALID_REQUEST", "累计退款金额大于支付金额");
        return;
    case REFUND_OTHER_CHARGE:
        flow_fail(out, "INVALID_REQUEST", "退款单号已用于其他订单");
        return;
    case REFUND_REFUSED:
        flow_fail(out, refuse,
                  strcmp(refuse, "NOTENOUGH") == 0
                      ? "基本账户余额不足，请充值后重新发起"
                      : "用户帐号注销，不能原路退回，请使用其他方式进行退款");
        return;
    case REFUND_ACCEPTED:
    case REFUND_AGAIN:
        return;
    }
}

void refund_flow_refund(mock_app *app, const wx_msg *req, long long total_fee, long long refund_fee,
                        int api_version, refund_flow_reply *out)
{
    faults_config cfg;
    flow_draw d;
    refund_accept_outcome o;
    refund_record r;
    refund_store *s = flow_store();

    flow_reply_init(out);
    faults_get(&app->faults, &cfg);
    flow_decide(&cfg, &d);
    const refund_request q = {
        .transaction_id = wx_msg_get(req, "transaction_id"),
        .out_trade_no = wx_msg_get(req, "out_trade_no"),
        .out_refund_no = wx_msg_get(req, "out_refund_no"),
        .total_fee = total_fee,
        .refund_fee = refund_fee,
        .notify_url = wx_msg_get(req, "notify_url"),
        .delay_ms = cfg.refund_delay_ms,
        .outcome = d.close    ? "REFUNDCLOSE"
                   : d.change ? "CHANGE"
                              : "SUCCESS",
        .refuse = d.notenough  ? "NOTENOUGH"
                  : d.abnormal ? "USER_ACCOUNT_ABNORMAL"
                               : NULL,
        .api_version = api_version,
    };
    if (s == NULL || refund_store_accept(s, &q, &o, &r) != 0) {
        log_msg(LOG_ERROR, "refund: ledger failed: %s",
                s ? refund_store_error(s) : "out of memory");
        flow_fail(out, "SYSTEMERROR", DES_BUSY);
        return;
    }
    snprintf(out->out_trade_no, sizeof(out->out_trade_no), "%s", r.out_trade_no);
    snprintf(out->transaction_id, sizeof(out->transaction_id), "%s", r.transaction_id);
    if (o != REFUND_ACCEPTED && o != REFUND_AGAIN) {
        flow_refused(o, q.refuse, out);
        return;
    }
    log_msg(LOG_INFO, "refund %s of %s: %lld fen %s", q.out_refund_no, r.transaction_id,
            r.refund_fee, o == REFUND_AGAIN ? "(repeat, nothing done)" : "accepted");
    const wx_pair fields[] = {
        WX_TEXT("transaction_id", r.transaction_id),
        WX_TEXT("out_trade_no", r.out_trade_no),
        WX_TEXT("out_refund_no", r.out_refund_no),
        WX_TEXT("refund_id", r.refund_id),
        WX_NUM("refund_fee", r.refund_fee),
        WX_NUM("settlement_refund_fee", r.refund_fee),
        WX_NUM("total_fee", r.total_fee),
        WX_NUM("settlement_total_fee", r.total_fee),
        WX_TEXT("fee_type", "CNY"),
        WX_NUM("cash_fee", r.total_fee),
        WX_NUM("cash_refund_fee", r.refund_fee),
    };
    if (WX_MSG_SET_PAIRS(&out->extra, fields) != 0)
        flow_fail(out, "SYSTEMERROR", DES_BUSY);
}

/* ---- refundquery ------------------------------------------------------------- */

/* The _$n fields of refund n. 0 or -1 (OOM). */
static int flow_query_row(wx_msg *m, int n, const refund_record *r)
{
    char k[8][40];
    static const char *const names[8] = {
        "out_refund_no",         "refund_id",     "refund_channel",     "refund_fee",
        "settlement_refund_fee", "refund_status", "refund_recv_accout", "refund_success_time",
    };
    for (int i = 0; i < 8; i++)
        snprintf(k[i], sizeof(k[i]), "%s_%d", names[i], n);
    bool success = strcmp(r->status, "SUCCESS") == 0;
    const wx_pair fields[] = {
        WX_TEXT(k[0], r->out_refund_no), WX_TEXT(k[1], r->refund_id),
        WX_TEXT(k[2], "ORIGINAL"),       WX_NUM(k[3], r->refund_fee),
        WX_NUM(k[4], r->refund_fee),     WX_TEXT(k[5], r->status),
        WX_TEXT(k[6], "支付用户零钱"),   WX_TEXT(k[7], success ? r->ended_at : NULL),
    };
    return WX_MSG_SET_PAIRS(m, fields);
}

void refund_flow_query(mock_app *app, const wx_msg *req, refund_flow_reply *out)
{
    static const char *const keys[] = { "refund_id", "out_refund_no", "transaction_id",
                                        "out_trade_no" };
    refund_record *recs = calloc(REFUND_FLOW_MAX_LISTED, sizeof(*recs));
    refund_store *s = flow_store();
    int n = 0, k = 0;

    flow_reply_init(out);
    while (k < 3 && (wx_msg_get(req, keys[k]) == NULL || wx_msg_get(req, keys[k])[0] == '\0'))
        k++;
    if (recs != NULL && s != NULL)
        flow_settle(app, s);
    if (recs == NULL || s == NULL ||
        refund_store_find(s, (refund_key)k, wx_msg_get(req, keys[k]), recs, REFUND_FLOW_MAX_LISTED,
                          &n) != 0) {
        log_msg(LOG_ERROR, "refundquery: ledger failed: %s", s ? refund_store_error(s) : "OOM");
        flow_fail(out, "SYSTEMERROR", DES_BUSY);
        goto done;
    }
    if (n == 0) {
        flow_fail(out, "REFUNDNOTEXIST", "退款订单查询失败");
        goto done;
    }
    snprintf(out->out_trade_no, sizeof(out->out_trade_no), "%s", recs[0].out_trade_no);
    snprintf(out->transaction_id, sizeof(out->transaction_id), "%s", recs[0].transaction_id);
    /* By an order key, 10 refunds from offset, with total_refund_count when
     * the order has more than 10 (WeChat's paging). */
    long long offset = 0, total = n;
    const char *off = wx_msg_get(req, "offset");
    if (k >= 2 && off != NULL && off[0] != '\0') {
        char *end = NULL;
        offset = strtoll(off, &end, 10);
        if (*end != '\0' || offset < 0 || offset >= n) {
            flow_fail(out, "PARAM_ERROR", "offset 参数错误: beyond total_refund_count");
            goto done;
        }
    }
    int first = (int)offset;
    if (k >= 2)
        n = n - first > REFUND_FLOW_PAGE ? REFUND_FLOW_PAGE : n - first;
    const wx_pair head[] = {
        WX_TEXT("transaction_id", recs[0].transaction_id),
        WX_TEXT("out_trade_no", recs[0].out_trade_no),
        WX_NUM("total_fee", recs[0].total_fee),
        WX_NUM("settlement_total_fee", recs[0].total_fee),
        WX_TEXT("fee_type", "CNY"),
        WX_NUM("cash_fee", recs[0].total_fee),
        WX_NUM("refund_count", n),
        WX_NUM("total_refund_count", total),
    };
    int bad = WX_MSG_SET_PAIRS(&out->extra, head);
    if (bad == 0 && total <= REFUND_FLOW_PAGE)
        wx_msg_del(&out->extra, "total_refund_count");
    for (int i = 0; i < n && bad == 0; i++)
        bad = flow_query_row(&out->extra, i, &recs[first + i]);
    if (bad != 0)
        flow_fail(out, "SYSTEMERROR", DES_BUSY);
done:
    free(recs);
}
