/* api.c - the mock's WeChat Pay v2 endpoints: validation (pure, unit-tested),
 * signed replies, and the charge / query / refund flows over the ledger,
 * with the fault decisions of faults.c applied to unifiedorder. */
#include "api.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcgi_adapter.h"
#include "log.h"
#include "money.h"
#include "notifier.h"
#include "order_no.h"
#include "txid.h"

#define XML_TYPE "text/xml; charset=utf-8"

/* WeChat's words. */
#define MSG_POST_ONLY "请使用post方法"
#define MSG_XML_ERROR "XML格式错误"
#define MSG_SIGN_ERROR "签名错误"
#define MSG_SIGN_TYPE "sign_type参数错误"

api_endpoint api_endpoint_of(const char *path)
{
    if (strcmp(path, "/pay/unifiedorder") == 0)
        return API_UNIFIEDORDER;
    if (strcmp(path, "/pay/orderquery") == 0)
        return API_ORDERQUERY;
    if (strcmp(path, "/secapi/pay/refund") == 0)
        return API_REFUND;
    return API_NONE;
}

/* ---- validation ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int api_reject(api_verdict *v, const char *err_code, const char *fmt, ...)
{
    va_list ap;
    v->err_code = err_code;
    va_start(ap, fmt);
    vsnprintf(v->err_des, sizeof(v->err_des), fmt, ap);
    va_end(ap);
    return -1;
}

static bool api_present(const wx_msg *m, const char *name)
{
    const char *s = wx_msg_get(m, name);
    return s != NULL && s[0] != '\0';
}

/* WeChat's out_refund_no: 1-64 of [0-9A-Za-z_|*@-]. */
static bool api_refund_no_valid(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '_' || c == '|' || c == '*' || c == '@' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

static bool api_url_valid(const char *s)
{
    size_t n = strlen(s);
    if (n > NOTIFIER_MAX_URL)
        return false;
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7F)
            return false;
    return true;
}

static int api_check_fields(api_endpoint ep, const wx_msg *m, api_verdict *v)
{
    static const char *const uo_required[] = {
        "body", "out_trade_no", "total_fee", "spbill_create_ip", "notify_url", "trade_type", NULL,
    };
    static const char *const refund_required[] = {
        "out_refund_no", "total_fee", "refund_fee", NULL,
    };
    const char *const *required = ep == API_UNIFIEDORDER ? uo_required
                                  : ep == API_REFUND     ? refund_required
                                                         : NULL;
    for (size_t i = 0; required != NULL && required[i] != NULL; i++)
        if (!api_present(m, required[i]))
            return api_reject(v, "LACK_PARAMS", "缺少参数 %s", required[i]);
    if (ep != API_UNIFIEDORDER && !api_present(m, "transaction_id") && !api_present(m, "out_trade_no"))
        return api_reject(v, "LACK_PARAMS", "缺少参数 %s", "out_trade_no/transaction_id");

    const char *otn = wx_msg_get(m, "out_trade_no");
    if (api_present(m, "out_trade_no") && !order_no_valid(otn))
        return api_reject(v, "PARAM_ERROR", "out_trade_no 格式错误: %s",
                          "6-32 characters of [0-9A-Za-z_|*-]");
    if (api_present(m, "transaction_id") && strlen(wx_msg_get(m, "transaction_id")) > 32)
        return api_reject(v, "PARAM_ERROR", "transaction_id 格式错误");

    if (ep == API_UNIFIEDORDER || ep == API_REFUND) {
        int64_t fen = 0;
        if (money_parse_fen(wx_msg_get(m, "total_fee"), &fen) != 0)
            return api_reject(v, "PARAM_ERROR", "total_fee 格式错误: %s",
                              "a positive integer of fen");
        v->total_fee = fen;
    }
    if (ep == API_UNIFIEDORDER) {
        const char *tt = wx_msg_get(m, "trade_type");
        if (strcmp(tt, "JSAPI") != 0 && strcmp(tt, "NATIVE") != 0 && strcmp(tt, "APP") != 0 &&
            strcmp(tt, "MWEB") != 0)
            return api_reject(v, "PARAM_ERROR", "trade_type 参数错误: %s",
                              "one of JSAPI, NATIVE, APP, MWEB");
        if (!api_url_valid(wx_msg_get(m, "notify_url")))
            return api_reject(v, "PARAM_ERROR", "notify_url 格式错误: %s",
                              "an http:// or https:// URL of at most 256 characters");
    }
    if (ep == API_REFUND) {
        int64_t fen = 0;
        if (money_parse_fen(wx_msg_get(m, "refund_fee"), &fen) != 0)
            return api_reject(v, "PARAM_ERROR", "refund_fee 格式错误: %s",
                              "a positive integer of fen");
        v->refund_fee = fen;
        if (v->refund_fee > v->total_fee)
            return api_reject(v, "INVALID_REQUEST", "退款金额大于订单金额");
        if (!api_refund_no_valid(wx_msg_get(m, "out_refund_no")))
            return api_reject(v, "PARAM_ERROR", "out_refund_no 格式错误: %s",
                              "1-64 characters of [0-9A-Za-z_|*@-]");
    }
    return 0;
}

int api_validate(api_endpoint ep, const char *body, size_t len, const mock_creds *creds,
                 wx_msg *req, api_verdict *v)
{
    char why[128];

    memset(v, 0, sizeof(*v));
    v->sign_type = WX_SIGN_MD5;
    if (len == 0 || wx_xml_parse(body, len, req, why, sizeof(why)) != 0) {
        v->fail_msg = MSG_XML_ERROR;
        return -1;
    }
    if (wx_sign_type_of(req, WX_SIGN_MD5, &v->sign_type) != 0) {
        v->sign_type = WX_SIGN_MD5;
        v->fail_msg = MSG_SIGN_TYPE;
        return -1;
    }
    if (!wx_sign_verify(req, creds->key, WX_SIGN_MD5)) {
        v->fail_msg = MSG_SIGN_ERROR;
        return -1;
    }
    static const char *const common[] = { "appid", "mch_id", "nonce_str", NULL };
    for (size_t i = 0; common[i] != NULL; i++)
        if (!api_present(req, common[i]))
            return api_reject(v, "LACK_PARAMS", "缺少参数 %s", common[i]);
    if (strcmp(wx_msg_get(req, "appid"), creds->appid) != 0 ||
        strcmp(wx_msg_get(req, "mch_id"), creds->mch_id) != 0)
        return api_reject(v, "APPID_MCHID_NOT_MATCH", "appid和mch_id不匹配");
    return api_check_fields(ep, req, v);
}

/* ---- replies ------------------------------------------------------------- */

char *api_build_reply(const mock_creds *creds, wx_sign_type type, const char *fail_msg,
                      const char *err_code, const char *err_des, const wx_msg *extra)
{
    wx_msg m;
    char nonce[33];
    char *xml = NULL;

    wx_msg_init(&m);
    if (wx_nonce(nonce) != 0)
        goto done;
    if (wx_msg_set(&m, "return_code", fail_msg != NULL ? "FAIL" : "SUCCESS") != 0 ||
        wx_msg_set(&m, "return_msg", fail_msg != NULL ? fail_msg : "OK") != 0 ||
        wx_msg_set(&m, "appid", creds->appid) != 0 ||
        wx_msg_set(&m, "mch_id", creds->mch_id) != 0 ||
        wx_msg_set(&m, "nonce_str", nonce) != 0)
        goto done;
    if (fail_msg == NULL) {
        if (wx_msg_set(&m, "result_code", err_code != NULL ? "FAIL" : "SUCCESS") != 0)
            goto done;
        if (err_code != NULL && (wx_msg_set(&m, "err_code", err_code) != 0 ||
                                 wx_msg_set(&m, "err_code_des", err_des != NULL ? err_des : "") != 0))
            goto done;
        for (size_t i = 0; extra != NULL && i < extra->n; i++)
            if (wx_msg_set(&m, extra->field[i].name, extra->field[i].value) != 0)
                goto done;
    }
    if (wx_sign_msg(&m, creds->key, type, type == WX_SIGN_HMAC_SHA256) != 0)
        goto done;
    xml = wx_xml_build(&m);
done:
    wx_msg_free(&m);
    return xml;
}

static void api_send(http_response *resp, const mock_creds *creds, wx_sign_type type,
                     const char *fail_msg, const char *err_code, const char *err_des,
                     const wx_msg *extra)
{
    char *xml = api_build_reply(creds, type, fail_msg, err_code, err_des, extra);
    if (xml == NULL) {
        log_msg(LOG_ERROR, "mock: cannot build a reply");
        http_response_set(resp, 500, "text/plain", "reply failed\n", 13);
        return;
    }
    if (http_response_set(resp, 200, XML_TYPE, xml, strlen(xml)) != 0)
        log_msg(LOG_ERROR, "mock: out of memory for a reply");
    free(xml);
}

/* ---- faults that cut the reply --------------------------------------------- */

static void api_sleep_ms(long long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A reply the client cannot complete: headers promising 4096 bytes of body,
 * 30 sent, and "Connection: close", so lighttpd ends the client's connection
 * mid-body at once (curl: "transfer closed with 4066 bytes remaining").
 * fcgi_adapter writes its own Content-Length after Content-Type, and lighttpd
 * keeps the first of two, so the promise rides in the Content-Type value;
 * tests/integration/test_mock.py checks that a client sees a transport error. */
static void api_cut(http_response *resp)
{
    static const char partial[] = "<xml><return_code><![CDATA[SUC";
    http_response_set(resp, 200, XML_TYPE "\r\nContent-Length: 4096", partial, sizeof(partial) - 1);
    http_response_header(resp, "Connection", "close");
}

/* Withholds the reply until the client goes away (lighttpd then closes the
 * FastCGI connection) or hold_ms passes. Returns the ms waited. */
static long long api_hold(long long hold_ms, bool *client_gone)
{
    int fd = fcgi_adapter_current_fd();
    struct timespec t0, t1;
    long long spent = 0;

    *client_gone = false;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        spent = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        long long left = hold_ms - spent;
        if (left <= 0)
            return spent;
        if (fd < 0) {
            api_sleep_ms(left);
            return hold_ms;
        }
        struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };
        int rc = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc != 0) {
            /* The peer closed (or sent an abort): the client gave up. */
            *client_gone = true;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            return (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        }
    }
}

/* Replies being withheld now, across all request threads. */
static atomic_int api_holds;

/* ---- the endpoints ------------------------------------------------------------ */

static void api_openid(const wx_msg *req, char out[129])
{
    const char *o = wx_msg_get(req, "openid");
    bool ok = o != NULL && o[0] != '\0' && strlen(o) < 129;
    for (size_t i = 0; ok && o[i] != '\0'; i++) {
        char c = o[i];
        ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             c == '_' || c == '-';
    }
    snprintf(out, 129, "%s", ok ? o : "oIdemPayMockPayer0000000000");
}

static void api_unifiedorder(mock_app *app, ledger *l, const wx_msg *req, const api_verdict *v,
                             const fault_decision *fd, http_response *resp)
{
    const mock_creds *cr = &app->creds;
    const char *otn = wx_msg_get(req, "out_trade_no");
    const char *tt = wx_msg_get(req, "trade_type");
    faults_config cfg;
    ledger_attempt_result r;
    wx_msg extra;

    faults_get(&app->faults, &cfg);
    switch (fd->kind) {
    case FAULT_RESET:
        log_msg(LOG_INFO, "unifiedorder %s: fault reset (no charge)", otn);
        api_cut(resp);
        return;
    case FAULT_ERROR:
        log_msg(LOG_INFO, "unifiedorder %s: fault SYSTEMERROR (no charge)", otn);
        if (ledger_note_unpaid(l, otn, v->total_fee) != 0)
            log_msg(LOG_WARN, "ledger: %s", ledger_error(l));
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统超时", NULL);
        return;
    default:
        break;
    }

    bool charge = fd->kind != FAULT_DECLINE;
    if (ledger_attempt(l, otn, v->total_fee, tt, charge, cfg.dedupe, &r) != 0) {
        log_msg(LOG_ERROR, "unifiedorder %s: ledger failed: %s", otn, ledger_error(l));
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统繁忙,请稍后再试", NULL);
        return;
    }
    switch (r.outcome) {
    case LEDGER_ORDERPAID:
        api_send(resp, cr, v->sign_type, NULL, "ORDERPAID", "该订单已支付", NULL);
        return;
    case LEDGER_MISMATCH:
        api_send(resp, cr, v->sign_type, NULL, "INVALID_REQUEST",
                 "订单重入时，要求参数值与原请求一致 (total_fee differs)", NULL);
        return;
    case LEDGER_DECLINED:
        log_msg(LOG_INFO, "unifiedorder %s: fault decline (no charge)", otn);
        api_send(resp, cr, v->sign_type, NULL, "NOTENOUGH", "用户帐号余额不足", NULL);
        return;
    case LEDGER_CHARGED:
        break;
    }

    notifier_charge nc;
    memset(&nc, 0, sizeof(nc));
    snprintf(nc.transaction_id, sizeof(nc.transaction_id), "%s", r.transaction_id);
    snprintf(nc.out_trade_no, sizeof(nc.out_trade_no), "%s", otn);
    nc.total_fee = v->total_fee;
    snprintf(nc.trade_type, sizeof(nc.trade_type), "%s", tt);
    api_openid(req, nc.openid);
    txid_time_end(r.charged_at, nc.time_end);
    snprintf(nc.notify_url, sizeof(nc.notify_url), "%s", wx_msg_get(req, "notify_url"));
    notifier_charge_made(app->notifier, &nc);
    log_msg(LOG_INFO, "unifiedorder %s: charged %lld fen as %s%s", otn, v->total_fee,
            r.transaction_id, fd->kind == FAULT_TIMEOUT_AFTER_CHARGE ? " (reply withheld)" : "");

    if (fd->kind == FAULT_TIMEOUT_AFTER_CHARGE) {
        /* Each withheld reply occupies this thread; past max_holds the reply
         * is cut at once instead (the client gets no answer either way). */
        if (atomic_fetch_add(&api_holds, 1) < app->max_holds) {
            bool gone;
            long long held = api_hold(cfg.hold_max_ms, &gone);
            log_msg(LOG_INFO, "unifiedorder %s: reply withheld %lld ms (%s)", otn, held,
                    gone ? "the client went away" : "hold_max_ms reached; cutting the reply");
        } else {
            log_msg(LOG_INFO, "unifiedorder %s: %d replies already withheld; cutting this one now",
                    otn, app->max_holds);
        }
        atomic_fetch_sub(&api_holds, 1);
        api_cut(resp);
        return;
    }

    char prepay[TXID_PREPAY_BUF];
    txid_prepay(r.charged_at, prepay);
    wx_msg_init(&extra);
    if (wx_msg_set(&extra, "trade_type", tt) != 0 || wx_msg_set(&extra, "prepay_id", prepay) != 0 ||
        wx_msg_set(&extra, "transaction_id", r.transaction_id) != 0 ||
        wx_msg_set_int(&extra, "total_fee", v->total_fee) != 0 ||
        wx_msg_set(&extra, "out_trade_no", otn) != 0) {
        wx_msg_free(&extra);
        api_cut(resp);  /* charged, but no reply can be built: the outcome is unknown */
        return;
    }
    if (strcmp(tt, "NATIVE") == 0) {
        char url[80];
        snprintf(url, sizeof(url), "weixin://wxpay/bizpayurl?pr=%.20s", prepay + 16);
        wx_msg_set(&extra, "code_url", url);
    }
    api_send(resp, cr, v->sign_type, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

static void api_orderquery(mock_app *app, ledger *l, const wx_msg *req, const api_verdict *v,
                           http_response *resp)
{
    const mock_creds *cr = &app->creds;
    ledger_order o;
    wx_msg extra;

    if (ledger_query(l, wx_msg_get(req, "out_trade_no"), wx_msg_get(req, "transaction_id"), &o) != 0) {
        log_msg(LOG_ERROR, "orderquery: ledger failed: %s", ledger_error(l));
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统繁忙,请稍后再试", NULL);
        return;
    }
    if (!o.found) {
        api_send(resp, cr, v->sign_type, NULL, "ORDERNOTEXIST", "此交易订单号不存在", NULL);
        return;
    }
    wx_msg_init(&extra);
    int bad = wx_msg_set(&extra, "out_trade_no", o.out_trade_no);
    bad |= wx_msg_set(&extra, "trade_state", o.trade_state);
    if (o.transaction_id[0] != '\0') {
        bad |= wx_msg_set(&extra, "trade_state_desc",
                          strcmp(o.trade_state, "REFUND") == 0 ? "转入退款" : "支付成功");
        bad |= wx_msg_set(&extra, "transaction_id", o.transaction_id);
        bad |= wx_msg_set_int(&extra, "total_fee", o.total_fee);
        bad |= wx_msg_set_int(&extra, "cash_fee", o.total_fee);
        bad |= wx_msg_set(&extra, "fee_type", "CNY");
        bad |= wx_msg_set(&extra, "time_end", o.time_end);
        bad |= wx_msg_set(&extra, "trade_type", o.trade_type);
        bad |= wx_msg_set(&extra, "bank_type", "OTHERS");
        bad |= wx_msg_set(&extra, "is_subscribe", "N");
    } else {
        bad |= wx_msg_set(&extra, "trade_state_desc",
                          strcmp(o.trade_state, "PAYERROR") == 0 ? "支付失败" : "订单未支付");
    }
    if (bad != 0)
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统繁忙,请稍后再试", NULL);
    else
        api_send(resp, cr, v->sign_type, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

static void api_refund(mock_app *app, ledger *l, const wx_msg *req, const api_verdict *v,
                       http_response *resp)
{
    const mock_creds *cr = &app->creds;
    ledger_refund_result r;
    wx_msg extra;

    if (ledger_refund(l, wx_msg_get(req, "transaction_id"), wx_msg_get(req, "out_trade_no"),
                      wx_msg_get(req, "out_refund_no"), v->total_fee, v->refund_fee, &r) != 0) {
        log_msg(LOG_ERROR, "refund: ledger failed: %s", ledger_error(l));
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统繁忙,请稍后再试", NULL);
        return;
    }
    switch (r.outcome) {
    case REFUND_NO_CHARGE:
        api_send(resp, cr, v->sign_type, NULL, "ORDERNOTEXIST", "此交易订单号不存在", NULL);
        return;
    case REFUND_FEE_MISMATCH:
        api_send(resp, cr, v->sign_type, NULL, "INVALID_REQUEST", "订单金额与实际不符", NULL);
        return;
    case REFUND_TOO_MUCH:
        api_send(resp, cr, v->sign_type, NULL, "INVALID_REQUEST", "累计退款金额大于支付金额", NULL);
        return;
    case REFUND_CONFLICT:
        api_send(resp, cr, v->sign_type, NULL, "INVALID_REQUEST", "退款单号已用于其他订单", NULL);
        return;
    case REFUND_DONE:
    case REFUND_REPEAT:
        break;
    }
    log_msg(LOG_INFO, "refund %s of %s: %lld fen%s", wx_msg_get(req, "out_refund_no"),
            r.transaction_id, r.refund_fee, r.outcome == REFUND_REPEAT ? " (repeat, nothing done)" : "");
    wx_msg_init(&extra);
    int bad = wx_msg_set(&extra, "transaction_id", r.transaction_id);
    bad |= wx_msg_set(&extra, "out_trade_no", r.out_trade_no);
    bad |= wx_msg_set(&extra, "out_refund_no", wx_msg_get(req, "out_refund_no"));
    bad |= wx_msg_set(&extra, "refund_id", r.refund_id);
    bad |= wx_msg_set_int(&extra, "refund_fee", r.refund_fee);
    bad |= wx_msg_set_int(&extra, "total_fee", r.total_fee);
    bad |= wx_msg_set_int(&extra, "cash_fee", r.total_fee);
    bad |= wx_msg_set_int(&extra, "cash_refund_fee", r.refund_fee);
    if (bad != 0)
        api_send(resp, cr, v->sign_type, NULL, "SYSTEMERROR", "系统繁忙,请稍后再试", NULL);
    else
        api_send(resp, cr, v->sign_type, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

void api_handle(mock_app *app, ledger *l, api_endpoint ep, const http_request *req,
                http_response *resp)
{
    fault_decision fd = { FAULT_NONE, 0 };
    api_verdict v;
    wx_msg m;

    /* Draw first, for every unifiedorder that arrives, so the decisions
     * follow the order of arrival whatever the requests contain. */
    if (ep == API_UNIFIEDORDER)
        faults_draw_order(&app->faults, &fd);
    else
        fd.delay_ms = faults_draw_latency(&app->faults);
    api_sleep_ms(fd.delay_ms);

    if (strcmp(req->method, "POST") != 0) {
        api_send(resp, &app->creds, WX_SIGN_MD5, MSG_POST_ONLY, NULL, NULL, NULL);
        return;
    }
    wx_msg_init(&m);
    if (req->body_too_large ||
        api_validate(ep, req->body, req->body_len, &app->creds, &m, &v) != 0) {
        if (req->body_too_large) {
            memset(&v, 0, sizeof(v));
            v.fail_msg = MSG_XML_ERROR;
        }
        log_msg(LOG_INFO, "%s: refused: %s %s", req->path, v.fail_msg ? v.fail_msg : v.err_code,
                v.fail_msg ? "" : v.err_des);
        api_send(resp, &app->creds, v.sign_type, v.fail_msg, v.err_code, v.err_des, NULL);
        wx_msg_free(&m);
        return;
    }
    switch (ep) {
    case API_UNIFIEDORDER:
        api_unifiedorder(app, l, &m, &v, &fd, resp);
        break;
    case API_ORDERQUERY:
        api_orderquery(app, l, &m, &v, resp);
        break;
    case API_REFUND:
        api_refund(app, l, &m, &v, resp);
        break;
    case API_NONE:
        break;
    }
    wx_msg_free(&m);
}
