/* api_handle.c - serving one WeChat call: its faults drawn (or decided by a
 * targeted rule) and applied, the flows over the ledger (charge, query,
 * refund, close, statement), and the call's journal entry, appended before
 * the reply leaves. */
#include "api.h"
#include "api_call.h"
#include "clocks.h"
#include "flows.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcgi_adapter.h"
#include "journal.h"
#include "log.h"
#include "notifier.h"
#include "order_no.h"
#include "refund_flow.h"
#include "text_token.h"
#include "txid.h"

#define XML_TYPE "text/xml; charset=utf-8"
#define BILL_TYPE "text/plain; charset=utf-8"

/* WeChat's words. */
#define MSG_POST_ONLY "请使用post方法"
#define MSG_XML_ERROR "XML格式错误"
#define MSG_NO_BILL "No Bill Exist"
#define MSG_BILL_CREATING "Bill Creating" /* the day's bill is not generated yet */
#define DES_BUSY "系统繁忙,请稍后再试"
#define DES_CLOSED "订单已关闭"

/* Statements built at once; more wait (each may hold BILL_MAX_BYTES). */
#define API_BILL_BUILDS 2

/* ---- replies ----------------------------------------------------------------- */

void api_copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src != NULL ? src : "");
}

/* Sends a signed XML reply (api_build_reply's arguments) and notes it in
 * the journal entry. */
void api_send(api_call *c, const char *fail_msg, const char *err_code, const char *err_des,
              const wx_msg *extra)
{
    journal_entry *je = &c->je;
    api_copy(je->reply, sizeof(je->reply), "xml");
    api_copy(je->return_code, sizeof(je->return_code), fail_msg != NULL ? "FAIL" : "SUCCESS");
    api_copy(je->return_msg, sizeof(je->return_msg), fail_msg != NULL ? fail_msg : "OK");
    api_copy(je->result_code, sizeof(je->result_code),
             fail_msg != NULL   ? NULL
             : err_code != NULL ? "FAIL"
                                : "SUCCESS");
    api_copy(je->err_code, sizeof(je->err_code), fail_msg != NULL ? NULL : err_code);

    if (c->v3) { /* v3_api.c answers from the outcome */
        c->out.set = true;
        c->out.fail_msg = fail_msg;
        c->out.err_code = fail_msg != NULL ? NULL : err_code;
        api_copy(c->out.err_des, sizeof(c->out.err_des), err_des);
        if (extra != NULL && wx_msg_merge(&c->out.extra, extra) != 0)
            c->out.err_code = "SYSTEMERROR";
        return;
    }
    char *xml = api_build_reply(&c->app->creds, c->v.sign_type, fail_msg, err_code, err_des, extra);
    if (xml == NULL) {
        log_msg(LOG_ERROR, "mock: cannot build a reply");
        http_response_set(c->resp, 500, "text/plain", "reply failed\n", 13);
        return;
    }
    if (http_response_set(c->resp, 200, XML_TYPE, xml, strlen(xml)) != 0)
        log_msg(LOG_ERROR, "mock: out of memory for a reply");
    free(xml);
}

/* result_code FAIL with err_code. */
void api_fail(api_call *c, const char *err_code, const char *err_des)
{
    api_send(c, NULL, err_code, err_des, NULL);
}

/* ---- faults that cut the reply --------------------------------------------- */

/* A reply the client cannot complete: headers promising 4096 bytes of body,
 * 30 sent, and "Connection: close", so lighttpd ends the client's connection
 * mid-body at once (curl: "transfer closed with 4066 bytes remaining").
 * fcgi_adapter writes its own Content-Length after Content-Type, and lighttpd
 * keeps the first of two, so the promise rides in the Content-Type value;
 * tests/integration/test_mock_faults.py checks that a client sees a transport
 * error. */
static void api_cut_reply(http_response *resp)
{
    static const char partial[] = "<xml><return_code><![CDATA[SUC";
    http_response_set(resp, 200, XML_TYPE "\r\nContent-Length: 4096", partial, sizeof(partial) - 1);
    http_response_header(resp, "Connection", "close");
}

void api_cut(api_call *c)
{
    api_copy(c->je.reply, sizeof(c->je.reply), "reset");
    api_cut_reply(c->resp);
}

/* Withholds the reply until the client goes away (lighttpd then closes the
 * FastCGI connection) or hold_ms passes. Returns the ms waited. */
static long long api_hold(long long hold_ms, bool *client_gone)
{
    int fd = fcgi_adapter_current_fd();
    long long t0 = clocks_mono_ms(), spent = 0;

    *client_gone = false;
    for (;;) {
        spent = clocks_mono_ms() - t0;
        long long left = hold_ms - spent;
        if (left <= 0)
            return spent;
        if (fd < 0) {
            clocks_sleep_ms(left);
            return hold_ms;
        }
        struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };
        int rc = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc != 0) {
            /* The peer closed (or sent an abort): the client gave up. */
            *client_gone = true;
            return clocks_mono_ms() - t0;
        }
    }
}

/* Replies being withheld now, across all request threads. */
static atomic_int api_holds;

/* timeout_after_charge: the charge stands; the journal entry goes out now
 * (the reply never will), then the reply is withheld and cut. Each withheld
 * reply occupies this thread; past max_holds it is cut at once instead (the
 * client gets no answer either way). */
void api_withhold(api_call *c, const char *otn, long long hold_max_ms)
{
    api_copy(c->je.reply, sizeof(c->je.reply), "withheld");
    c->je.latency_ms = journal_elapsed_ms(&c->je);
    journal_append(c->app->journal, &c->je, true);
    c->journaled = true;
    if (atomic_fetch_add(&api_holds, 1) < c->app->max_holds) {
        bool gone;
        long long held = api_hold(hold_max_ms, &gone);
        log_msg(LOG_INFO, "unifiedorder %s: reply withheld %lld ms (%s)", otn, held,
                gone ? "the client went away" : "hold_max_ms reached; cutting the reply");
    } else {
        log_msg(LOG_INFO, "unifiedorder %s: %d replies already withheld; cutting this one now", otn,
                c->app->max_holds);
    }
    atomic_fetch_sub(&api_holds, 1);
    api_cut_reply(c->resp);
}

/* ---- unifiedorder ------------------------------------------------------------ */

void api_openid(const wx_msg *req, char out[129])
{
    const char *o = wx_msg_get(req, "openid");

    snprintf(out, 129, "%s", text_token_valid(o, 1, 128, "_-") ? o : BILL_DEFAULT_OPENID);
}

/* Queues the notifications of the charge r just made. */
static void api_notify_charge(api_call *c, const ledger_attempt_result *r, const char *openid)
{
    notifier_charge nc;
    memset(&nc, 0, sizeof(nc));
    api_copy(nc.transaction_id, sizeof(nc.transaction_id), r->transaction_id);
    api_copy(nc.out_trade_no, sizeof(nc.out_trade_no), wx_msg_get(&c->m, "out_trade_no"));
    nc.total_fee = c->v.total_fee;
    api_copy(nc.trade_type, sizeof(nc.trade_type), wx_msg_get(&c->m, "trade_type"));
    api_copy(nc.openid, sizeof(nc.openid), openid);
    txid_time_end(r->charged_at, nc.time_end);
    api_copy(nc.notify_url, sizeof(nc.notify_url), wx_msg_get(&c->m, "notify_url"));
    nc.api_version = c->v3 ? 3 : 2;
    notifier_charge_made(c->app->notifier, &nc);
}

/* The SUCCESS reply of the charge r. */
static void api_reply_charged(api_call *c, const ledger_attempt_result *r)
{
    const char *tt = wx_msg_get(&c->m, "trade_type");
    char prepay[TXID_PREPAY_BUF], url[80];
    wx_msg extra;

    txid_prepay(r->charged_at, prepay);
    snprintf(url, sizeof(url), "weixin://wxpay/bizpayurl?pr=%.20s", prepay + 16);
    const wx_pair fields[] = {
        WX_TEXT("trade_type", tt),
        WX_TEXT("prepay_id", prepay),
        WX_TEXT("transaction_id", r->transaction_id),
        WX_NUM("total_fee", c->v.total_fee),
        WX_TEXT("out_trade_no", wx_msg_get(&c->m, "out_trade_no")),
        WX_TEXT("code_url", tt != NULL && strcmp(tt, "NATIVE") == 0 ? url : NULL),
    };
    wx_msg_init(&extra);
    if (WX_MSG_SET_PAIRS(&extra, fields) != 0)
        api_cut(c); /* charged, but no reply can be built: the outcome is unknown */
    else
        api_send(c, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

static void api_unifiedorder(api_call *c)
{
    const char *otn = wx_msg_get(&c->m, "out_trade_no");
    faults_config cfg;
    ledger_attempt_result r;
    char openid[129];

    faults_get(&c->app->faults, &cfg);
    if (c->fd.kind == FAULT_RESET) {
        log_msg(LOG_INFO, "unifiedorder %s: fault reset (no charge)", otn);
        api_cut(c);
        return;
    }
    if (c->fd.kind == FAULT_ERROR) {
        log_msg(LOG_INFO, "unifiedorder %s: fault SYSTEMERROR (no charge)", otn);
        if (ledger_note_unpaid(c->l, otn, c->v.total_fee) != 0)
            log_msg(LOG_WARN, "ledger: %s", ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", "系统超时");
        return;
    }
    /* The close check happens in here, in the transaction that would
     * charge, after the latency sleep: a close that ran meanwhile wins. */
    api_openid(&c->m, openid);
    if (ledger_attempt(c->l, otn, c->v.total_fee, wx_msg_get(&c->m, "trade_type"), openid,
                       c->fd.kind != FAULT_DECLINE, cfg.dedupe, &r) != 0) {
        log_msg(LOG_ERROR, "unifiedorder %s: ledger failed: %s", otn, ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", DES_BUSY);
        return;
    }
    switch (r.outcome) {
    case LEDGER_ORDERPAID:
        api_fail(c, "ORDERPAID", "该订单已支付");
        return;
    case LEDGER_ORDERCLOSED:
        log_msg(LOG_INFO, "unifiedorder %s: the order is closed (no charge)", otn);
        api_fail(c, "ORDERCLOSED", DES_CLOSED);
        return;
    case LEDGER_MISMATCH:
        api_fail(c, "INVALID_REQUEST", "订单重入时，要求参数值与原请求一致 (total_fee differs)");
        return;
    case LEDGER_DECLINED:
        log_msg(LOG_INFO, "unifiedorder %s: fault decline (no charge)", otn);
        api_fail(c, "NOTENOUGH", "用户帐号余额不足");
        return;
    case LEDGER_CHARGED:
        break;
    }
    api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r.transaction_id);
    api_notify_charge(c, &r, openid);
    log_msg(LOG_INFO, "unifiedorder %s: charged %lld fen as %s%s", otn, c->v.total_fee,
            r.transaction_id, c->fd.kind == FAULT_TIMEOUT_AFTER_CHARGE ? " (reply withheld)" : "");
    if (c->fd.kind == FAULT_TIMEOUT_AFTER_CHARGE)
        api_withhold(c, otn, c->hold_ms >= 0 ? c->hold_ms : cfg.hold_max_ms);
    else
        api_reply_charged(c, &r);
}

/* ---- orderquery, refund, closeorder -------------------------------------------- */

static const char *api_state_desc(const char *state)
{
    if (strcmp(state, "SUCCESS") == 0)
        return "支付成功";
    if (strcmp(state, "REFUND") == 0)
        return "转入退款";
    if (strcmp(state, "PAYERROR") == 0)
        return "支付失败";
    if (strcmp(state, "CLOSED") == 0)
        return DES_CLOSED;
    if (strcmp(state, "USERPAYING") == 0)
        return "用户支付中";
    if (strcmp(state, "REVOKED") == 0)
        return "已撤销";
    return "订单未支付";
}

static void api_orderquery(api_call *c)
{
    ledger_order o;
    wx_msg extra;

    char flow_state[16] = "";
    if (flows_query_state(c, wx_msg_get(&c->m, "out_trade_no"), flow_state) != 0 ||
        ledger_query(c->l, wx_msg_get(&c->m, "out_trade_no"), wx_msg_get(&c->m, "transaction_id"),
                     &o) != 0) {
        log_msg(LOG_ERROR, "orderquery: ledger failed: %s", ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", DES_BUSY);
        return;
    }
    if (!o.found) {
        api_fail(c, "ORDERNOTEXIST", "此交易订单号不存在");
        return;
    }
    api_copy(c->je.out_trade_no, sizeof(c->je.out_trade_no), o.out_trade_no);
    if (flow_state[0] == '\0' && flows_query_state(c, o.out_trade_no, flow_state) != 0)
        flow_state[0] = '\0';
    if (flow_state[0] != '\0') /* micropay: USERPAYING, REVOKED (flows.c) */
        api_copy(o.trade_state, sizeof(o.trade_state), flow_state);
    const wx_pair state[] = {
        WX_TEXT("out_trade_no", o.out_trade_no),
        WX_TEXT("trade_state", o.trade_state),
        WX_TEXT("trade_state_desc", api_state_desc(o.trade_state)),
    };
    const wx_pair charge[] = {
        /* only when charged */
        WX_TEXT("transaction_id", o.transaction_id),
        WX_NUM("total_fee", o.total_fee),
        WX_NUM("cash_fee", o.total_fee),
        WX_TEXT("fee_type", "CNY"),
        WX_TEXT("time_end", o.time_end),
        WX_TEXT("trade_type", o.trade_type),
        WX_TEXT("bank_type", "OTHERS"),
        WX_TEXT("is_subscribe", "N"),
    };
    wx_msg_init(&extra);
    int bad = WX_MSG_SET_PAIRS(&extra, state) != 0 ||
              (o.transaction_id[0] != '\0' && WX_MSG_SET_PAIRS(&extra, charge) != 0);
    if (bad)
        api_fail(c, "SYSTEMERROR", DES_BUSY);
    else
        api_send(c, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

/* refund and refundquery: refund_flow.c decides, this sends. */
static void api_refund_send(api_call *c, refund_flow_reply *r)
{
    if (r->out_trade_no[0] != '\0')
        api_copy(c->je.out_trade_no, sizeof(c->je.out_trade_no), r->out_trade_no);
    api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r->transaction_id);
    if (r->err_code != NULL)
        api_fail(c, r->err_code, r->err_des);
    else
        api_send(c, NULL, NULL, NULL, &r->extra);
    wx_msg_free(&r->extra);
}

static void api_refund(api_call *c)
{
    refund_flow_reply r;
    refund_flow_refund(c->app, &c->m, c->v.total_fee, c->v.refund_fee, c->v3 ? 3 : 2, &r);
    api_refund_send(c, &r);
}

static void api_refundquery(api_call *c)
{
    refund_flow_reply r;
    refund_flow_query(c->app, &c->m, &r);
    api_refund_send(c, &r);
}

static void api_closeorder(api_call *c)
{
    const char *otn = wx_msg_get(&c->m, "out_trade_no");
    ledger_close_outcome out;

    if (flows_closeorder(c)) /* the flows' orders: minimum age, the payer's race */
        return;
    if (ledger_close(c->l, otn, &out) != 0) {
        log_msg(LOG_ERROR, "closeorder %s: ledger failed: %s", otn, ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", DES_BUSY);
        return;
    }
    switch (out) {
    case CLOSE_DONE:
        log_msg(LOG_INFO, "closeorder %s: closed", otn);
        api_send(c, NULL, NULL, NULL, NULL);
        return;
    case CLOSE_ALREADY:
        api_fail(c, "ORDERCLOSED", DES_CLOSED);
        return;
    case CLOSE_PAID:
        log_msg(LOG_INFO, "closeorder %s: refused, the order was charged", otn);
        api_fail(c, "ORDERPAID", "订单已支付，不能发起关单，请当作已支付的正常交易");
        return;
    }
}

/* ---- downloadbill ---------------------------------------------------------- */

static pthread_mutex_t api_bill_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t api_bill_cond = PTHREAD_COND_INITIALIZER;
static int api_bill_builds;

/* Takes (take true) or gives back one of the API_BILL_BUILDS slots. */
static void api_bill_slot(bool take)
{
    pthread_mutex_lock(&api_bill_mu);
    if (take) {
        while (api_bill_builds >= API_BILL_BUILDS)
            pthread_cond_wait(&api_bill_cond, &api_bill_mu);
        api_bill_builds++;
    } else {
        api_bill_builds--;
        pthread_cond_signal(&api_bill_cond);
    }
    pthread_mutex_unlock(&api_bill_mu);
}

/* The mock's clock (UTC seconds): the wall clock moved by clock_offset_ms.
 * The one place downloadbill reads the time. */
static time_t api_bill_now(const faults_config *cfg)
{
    return (time_t)((clocks_real_ms() + cfg->clock_offset_ms) / 1000);
}

/* What the ledger's rows are added to. */
typedef struct {
    bill *b;
    bool forge; /* bill_forge: a forged copy after every charge line */
    bool bad;   /* bill_bad_line: an unreadable copy after every charge line */
} api_bill_sink;

static void api_bill_restart(void *arg)
{
    bill_restart(((api_bill_sink *)arg)->b);
}

static int api_bill_row(void *arg, const ledger_bill_record *r)
{
    api_bill_sink *s = arg;

    if (bill_add(s->b, r) != 0)
        return 1;
    if (s->forge && !r->refund) {
        ledger_bill_record f = *r;
        bill_forged_txid(r->transaction_id, f.transaction_id, sizeof(f.transaction_id));
        if (bill_add(s->b, &f) != 0)
            return 1;
    }
    if (s->bad && !r->refund) {
        ledger_bill_record f = *r;
        api_copy(f.out_trade_no, sizeof(f.out_trade_no), BILL_BAD_OUT_TRADE_NO);
        return bill_add(s->b, &f) != 0;
    }
    return 0;
}

/* Moves the finished text (gzip-compressed when asked) into the response. */
static void api_bill_send(api_call *c, char *text, size_t len, size_t lines)
{
    char *gz = NULL;
    size_t gzlen = 0;

    if (c->v.bill.gzip) {
        if (bill_gzip(text, len, &gz, &gzlen) != 0) {
            free(text);
            api_send(c, "CompressGZip Error", NULL, NULL, NULL);
            return;
        }
        free(text);
        text = gz;
        len = gzlen;
    }
    api_copy(c->je.reply, sizeof(c->je.reply), "statement");
    if (c->v3) { /* v3: the tradebill's hash, or the download (v3_api.c) */
        c->out.set = true;
        c->out.statement = text;
        c->out.statement_len = len;
        return;
    }
    /* The text moves into the response: no copy of a large statement. */
    free(c->resp->body);
    c->resp->body = text;
    c->resp->body_len = len;
    c->resp->status = 200;
    api_copy(c->resp->content_type, sizeof(c->resp->content_type),
             c->v.bill.gzip ? "application/x-gzip" : BILL_TYPE);
    api_copy(c->je.reply, sizeof(c->je.reply), "statement");
    log_msg(LOG_INFO, "downloadbill: %zu records, %zu bytes%s", lines, len,
            c->v.bill.gzip ? " (gzip)" : "");
}

static void api_downloadbill(api_call *c)
{
    bill_query *q = &c->v.bill;
    size_t len = 0;
    char *text = NULL;
    faults_config cfg;

    faults_get(&c->app->faults, &cfg);
    switch (bill_select(q, api_bill_now(&cfg), (int)cfg.bill_ready_hour, cfg.bill_range_enabled)) {
    case BILL_NO_DATE:
        api_fail(c, "LACK_PARAMS", "缺少参数 bill_date");
        return;
    case BILL_NOT_READY:
        log_msg(LOG_INFO, "downloadbill: the day's bill is not ready (from %02lld:00 next day)",
                cfg.bill_ready_hour);
        api_send(c, MSG_BILL_CREATING, NULL, NULL, NULL);
        return;
    case BILL_SERVE:
        break;
    }
    api_bill_sink sink = { bill_new(c->app->creds.appid, c->app->creds.mch_id, BILL_MAX_BYTES),
                           cfg.bill_forge && !q->ranged, cfg.bill_bad_line && !q->ranged };
    if (sink.b == NULL) {
        api_fail(c, "SYSTEMERROR", DES_BUSY);
        return;
    }
    api_bill_slot(true);
    int rc = ledger_bill(c->l, q->from, q->to, q->type != BILL_REFUND, q->type != BILL_SUCCESS,
                         api_bill_restart, api_bill_row, &sink);
    api_bill_slot(false);
    if (rc < 0) {
        log_msg(LOG_ERROR, "downloadbill: ledger failed: %s", ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", DES_BUSY);
    } else if (rc > 0) {
        log_msg(LOG_WARN, "downloadbill: more than %u bytes; refused", BILL_MAX_BYTES);
        api_fail(c, "SYSTEMERROR",
                 "账单过大: more than 64 MiB, ask for a shorter begin_time/end_time range");
    } else if (bill_lines(sink.b) == 0) {
        api_send(c, MSG_NO_BILL, NULL, NULL, NULL);
    } else if ((text = bill_finish(sink.b, &len)) == NULL) {
        api_fail(c, "SYSTEMERROR", DES_BUSY);
    } else {
        api_bill_send(c, text, len, bill_lines(sink.b));
    }
    bill_free(sink.b);
}

/* ---- one call ---------------------------------------------------------------- */

/* The out_trade_no the request names, without judging the request (left
 * as it is when there is none). */
static void api_peek_otn(const http_request *req, char out[33])
{
    wx_msg m;
    char err[128];
    wx_msg_init(&m);
    if (!req->body_too_large && req->body_len > 0 &&
        wx_xml_parse(req->body, req->body_len, &m, err, sizeof(err)) == 0) {
        const char *otn = wx_msg_get(&m, "out_trade_no");
        if (otn != NULL && order_no_valid(otn))
            api_copy(out, 33, otn);
    }
    wx_msg_free(&m);
}

/* Draws the call's fate first, for every call that arrives, so the
 * decisions follow the order of arrival whatever the requests contain.
 * Then the first live rule that matches (by the out_trade_no the call
 * names, before the call is judged) replaces the drawn fault, and its
 * latency_ms, when given, the drawn delay: the PRNGs still draw, so a
 * rule never shifts the random decisions of the other calls. */
void api_draw_otn(api_call *c, api_endpoint ep, const char *otn)
{
    static const faults_endpoint map[] = {
        [API_ORDERQUERY] = MOCK_EP_ORDERQUERY,
        [API_CLOSEORDER] = MOCK_EP_CLOSEORDER,
        [API_REFUND] = MOCK_EP_REFUND,
        [API_DOWNLOADBILL] = MOCK_EP_DOWNLOADBILL,
        [API_REVERSE] = MOCK_EP_REVERSE,
        [API_REFUNDQUERY] = MOCK_EP_REFUND, /* refundquery shares refund's knobs */
    };
    rules_decision rd;

    if (ep == API_UNIFIEDORDER || ep == API_MICROPAY) /* the charging calls */
        faults_draw_order(&c->app->faults, &c->fd);
    else
        faults_draw_endpoint(&c->app->faults, map[ep], &c->fd);
    c->hold_ms = RULES_KEEP;
    if (rules_any(&c->app->rules)) {
        rules_take(&c->app->rules, api_endpoint_name(ep), otn != NULL ? otn : "", &rd);
        if (rd.index >= 0) {
            c->je.rule = rd.index;
            c->fd.kind = rd.kind;
            if (rd.latency_ms != RULES_KEEP)
                c->fd.delay_ms = rd.latency_ms;
            c->hold_ms = rd.hold_ms;
        }
    }
    api_copy(c->je.fault, sizeof(c->je.fault), faults_kind_name(c->fd.kind));
}

/* api_draw_otn with the out_trade_no the XML body names (read only when a
 * rule may need it). */
static void api_draw(api_call *c, api_endpoint ep, const http_request *req)
{
    char otn[33] = "";
    if (rules_any(&c->app->rules))
        api_peek_otn(req, otn);
    api_draw_otn(c, ep, otn);
}

/* The faults of the endpoints other than unifiedorder, on a valid call:
 * true when one was applied (nothing done; the reply is set). */
static bool api_endpoint_fault(api_call *c, const char *path)
{
    if (c->fd.kind == FAULT_RESET) {
        log_msg(LOG_INFO, "%s: fault reset (nothing done)", path);
        api_cut(c);
        return true;
    }
    if (c->fd.kind == FAULT_ERROR) {
        log_msg(LOG_INFO, "%s: fault SYSTEMERROR (nothing done)", path);
        api_fail(c, "SYSTEMERROR", "系统超时");
        return true;
    }
    return false;
}

/* Parses and checks the request; false when it was refused (reply set). */
static bool api_accept(api_call *c, api_endpoint ep, const http_request *req)
{
    if (strcmp(req->method, "POST") != 0) {
        api_send(c, MSG_POST_ONLY, NULL, NULL, NULL);
        return false;
    }
    if (!req->body_too_large &&
        api_validate(ep, req->body, req->body_len, &c->app->creds, &c->m, &c->v) == 0) {
        const char *otn = wx_msg_get(&c->m, "out_trade_no");
        if (otn != NULL && order_no_valid(otn))
            api_copy(c->je.out_trade_no, sizeof(c->je.out_trade_no), otn);
        return true;
    }
    if (req->body_too_large) {
        memset(&c->v, 0, sizeof(c->v));
        c->v.sign_type = WX_SIGN_MD5;
        c->v.fail_msg = MSG_XML_ERROR;
    }
    log_msg(LOG_INFO, "%s: refused: %s %s", req->path,
            c->v.fail_msg ? c->v.fail_msg : c->v.err_code, c->v.fail_msg ? "" : c->v.err_des);
    api_send(c, c->v.fail_msg, c->v.err_code, c->v.err_des, NULL);
    return false;
}

void api_run(api_call *c, api_endpoint ep)
{
    faults_config cfg;

    faults_get(&c->app->faults, &cfg);
    if (ep != API_DOWNLOADBILL)
        flows_sweep_now_and_then(c->l); /* due USERPAYING micropays resolve (flows.h) */
    switch (ep) {
    case API_UNIFIEDORDER:
        if (cfg.instant_charge)
            api_unifiedorder(c); /* the old mock: a simulated payer pays at once */
        else
            flows_unifiedorder(c);
        break;
    case API_MICROPAY:
        flows_micropay(c);
        break;
    case API_REVERSE:
        flows_reverse(c);
        break;
    case API_ORDERQUERY:
        api_orderquery(c);
        break;
    case API_REFUND:
        api_refund(c);
        break;
    case API_CLOSEORDER:
        api_closeorder(c);
        break;
    case API_DOWNLOADBILL:
        api_downloadbill(c);
        break;
    case API_REFUNDQUERY:
        api_refundquery(c);
        break;
    case API_NONE:
        break;
    }
}

void api_handle(mock_app *app, ledger *l, api_endpoint ep, const http_request *req,
                http_response *resp)
{
    api_call c;
    faults_config cfg;

    memset(&c, 0, sizeof(c));
    wx_msg_init(&c.out.extra);
    c.app = app;
    c.l = l;
    c.resp = resp;
    c.v.sign_type = WX_SIGN_MD5;
    wx_msg_init(&c.m);
    journal_entry_begin(&c.je, false);
    api_copy(c.je.endpoint, sizeof(c.je.endpoint), api_endpoint_name(ep));
    api_copy(c.je.fault, sizeof(c.je.fault), "none");

    faults_get(&app->faults, &cfg);
    if (ep == API_CLOSEORDER && !cfg.closeorder_enabled) {
        /* A gateway without the API: nothing drawn, nothing done; the
         * journal still names the order the call was about. */
        api_peek_otn(req, c.je.out_trade_no);
        api_copy(c.je.reply, sizeof(c.je.reply), "not_found");
        http_response_set(resp, 404, "text/plain; charset=utf-8", "404 Not Found\n", 14);
        goto done;
    }
    if (strncmp(req->path, "/secapi/", 8) == 0 &&
        !refund_flow_cert_ok(app, fcgi_adapter_param("SSL_CLIENT_VERIFY"),
                             fcgi_adapter_param("SSL_CLIENT_S_DN"))) {
        /* No verified merchant certificate: refused before anything is drawn. */
        api_peek_otn(req, c.je.out_trade_no);
        log_msg(LOG_INFO, "%s: refused: no verified client certificate", req->path);
        api_send(&c, REFUND_FLOW_CERT_MSG, NULL, NULL, NULL);
        goto done;
    }
    api_draw(&c, ep, req);
    clocks_sleep_ms(c.fd.delay_ms);
    if (!api_accept(&c, ep, req))
        goto done;
    if (ep != API_UNIFIEDORDER && ep != API_MICROPAY && api_endpoint_fault(&c, req->path))
        goto done;
    api_run(&c, ep);
done:
    if (!c.journaled) {
        c.je.latency_ms = journal_elapsed_ms(&c.je);
        journal_append(app->journal, &c.je, true);
    }
    wx_msg_free(&c.m);
    wx_msg_free(&c.out.extra);
}
