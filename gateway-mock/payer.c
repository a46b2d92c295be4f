/* payer.c - POST /mock/payer/pay: the customer pays a prepay order. */
#include "payer.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "clocks.h"
#include "flows.h"
#include "journal.h"
#include "log.h"
#include "prepay.h"

#define CODE_URL_PREFIX "weixin://wxpay/bizpayurl?pr="

typedef struct {
    const char *prepay_id, *code_url, *openid;
    long long delay_ms;
} payer_req;

/* One payment's answer. */
typedef struct {
    const char *err_code; /* NULL: SUCCESS */
    const char *err_des;
    char transaction_id[TXID_BUF];
    char out_trade_no[33];
} payer_ans;

static int payer_parse(const json_t *o, payer_req *p, char *err, size_t errlen)
{
    const json_t *id = json_object_get(o, "prepay_id"), *url = json_object_get(o, "code_url");
    const json_t *oid = json_object_get(o, "openid"), *d = json_object_get(o, "delay_ms");

    memset(p, 0, sizeof(*p));
    if ((id == NULL) == (url == NULL) || (id != NULL && !json_is_string(id)) ||
        (url != NULL && !json_is_string(url))) {
        snprintf(err, errlen, "give one of prepay_id or code_url (a string)");
        return -1;
    }
    if (oid != NULL && (!json_is_string(oid) || json_string_length(oid) > 128)) {
        snprintf(err, errlen, "openid must be a string of at most 128 characters");
        return -1;
    }
    if (d != NULL && (!json_is_integer(d) || json_integer_value(d) < 0 ||
                      json_integer_value(d) > PAYER_MAX_DELAY_MS)) {
        snprintf(err, errlen, "delay_ms must be an integer from 0 to %d", PAYER_MAX_DELAY_MS);
        return -1;
    }
    p->prepay_id = id != NULL ? json_string_value(id) : NULL;
    p->code_url = url != NULL ? json_string_value(url) : NULL;
    p->openid = oid != NULL ? json_string_value(oid) : "";
    p->delay_ms = d != NULL ? json_integer_value(d) : 0;
    return 0;
}

/* The prepay order p names; 0 (row->found may be false) or -1. */
static int payer_find(const payer_req *p, prepay_row *row)
{
    size_t n = strlen(CODE_URL_PREFIX);
    memset(row, 0, sizeof(*row));
    if (p->prepay_id != NULL)
        return strlen(p->prepay_id) < PREPAY_ID_BUF ? prepay_get(PREPAY_BY_ID, p->prepay_id, row)
                                                    : 0;
    if (strncmp(p->code_url, CODE_URL_PREFIX, n) != 0 || strlen(p->code_url + n) == 0 ||
        strlen(p->code_url + n) >= PREPAY_TOKEN_BUF)
        return 0;
    return prepay_get(PREPAY_BY_TOKEN, p->code_url + n, row);
}

/* Refusals before any payment: true when a is set. */
static bool payer_refuse(ledger *l, const payer_req *p, const prepay_row *row, payer_ans *a,
                         bool *failed)
{
    ledger_order o;
    *failed = false;
    if (!row->found || row->micropay) {
        a->err_code = "ORDERNOTEXIST";
        a->err_des = "此交易订单号不存在";
        return true;
    }
    if (strcmp(row->trade_type, "JSAPI") == 0 && strcmp(p->openid, row->openid) != 0) {
        a->err_code = "OPENID_MISMATCH";
        a->err_des = "openid和下单的openid不一致 (mock)";
        return true;
    }
    if (ledger_query(l, row->out_trade_no, NULL, &o) != 0) {
        *failed = true;
        return true;
    }
    if (o.found && o.transaction_id[0] != '\0') {
        a->err_code = "ORDERPAID";
        a->err_des = "该订单已支付";
    } else if (o.found && strcmp(o.trade_state, "CLOSED") == 0) {
        a->err_code = "ORDERCLOSED";
        a->err_des = "订单已关闭";
    } else if (mock_clock_now_ms() >= row->expire_ms) {
        a->err_code = "ORDER_EXPIRED";
        a->err_des = "订单已过期 (time_expire)";
    }
    return a->err_code != NULL;
}

/* Confirms the payment (after delay_ms): the charge, or the ledger's refusal. */
static int payer_confirm(mock_app *app, ledger *l, const payer_req *p, const prepay_row *row,
                         payer_ans *a)
{
    ledger_attempt_result r;
    prepay_row now_row;
    const char *openid = p->openid[0] != '\0' ? p->openid : row->openid;

    if (p->delay_ms > 0) {
        if (prepay_set_paying(row->out_trade_no, mock_clock_now_ms() + p->delay_ms) != 0)
            return -1;
        clocks_sleep_ms(p->delay_ms);
    }
    if (ledger_attempt(l, row->out_trade_no, row->total_fee, row->trade_type, openid, true, true,
                       &r) != 0)
        return -1;
    if (p->delay_ms > 0 && prepay_set_paying(row->out_trade_no, 0) != 0)
        log_msg(LOG_WARN, "payer: %s", prepay_error());
    if (r.outcome == LEDGER_CHARGED) {
        snprintf(a->transaction_id, sizeof(a->transaction_id), "%s", r.transaction_id);
        if (prepay_set_state(row->out_trade_no, "PAID") != 0)
            log_msg(LOG_WARN, "payer: %s", prepay_error());
        flows_notify(app, row, r.transaction_id, r.charged_at, openid);
        return 0;
    }
    if (r.outcome == LEDGER_ORDERPAID && p->delay_ms > 0 &&
        prepay_get(PREPAY_BY_OTN, row->out_trade_no, &now_row) == 0 && now_row.race_txid[0]) {
        /* confirmed at the instant of a close (close_race_rate): this payment */
        snprintf(a->transaction_id, sizeof(a->transaction_id), "%s", now_row.race_txid);
        return 0;
    }
    a->err_code = r.outcome == LEDGER_ORDERCLOSED ? "ORDERCLOSED" : "ORDERPAID";
    a->err_des = r.outcome == LEDGER_ORDERCLOSED ? "订单已关闭" : "该订单已支付";
    return 0;
}

/* Journals the payer's call (endpoint "payer"). */
static void payer_journal(mock_app *app, journal_entry *je, const payer_ans *a, bool failed)
{
    snprintf(je->endpoint, sizeof(je->endpoint), "payer");
    snprintf(je->fault, sizeof(je->fault), "none");
    snprintf(je->reply, sizeof(je->reply), "json");
    snprintf(je->out_trade_no, sizeof(je->out_trade_no), "%s", a->out_trade_no);
    snprintf(je->transaction_id, sizeof(je->transaction_id), "%s", a->transaction_id);
    snprintf(je->return_code, sizeof(je->return_code), "%s", failed ? "FAIL" : "SUCCESS");
    snprintf(je->result_code, sizeof(je->result_code), "%s",
             failed                ? ""
             : a->err_code != NULL ? "FAIL"
                                   : "SUCCESS");
    snprintf(je->err_code, sizeof(je->err_code), "%s", a->err_code != NULL ? a->err_code : "");
    je->latency_ms = journal_elapsed_ms(je);
    journal_append(app->journal, je, true);
}

void payer_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    char err[160];
    payer_req p;
    payer_ans a;
    prepay_row row;
    journal_entry je;
    bool failed = false;

    if (strcmp(req->path, "/mock/payer/pay") != 0) {
        http_response_error(resp, 404, "not_found", "no such mock endpoint");
        return;
    }
    if (strcmp(req->method, "POST") != 0) {
        http_response_header(resp, "Allow", "POST");
        http_response_error(resp, 405, "method_not_allowed", "method not allowed on this path");
        return;
    }
    json_t *o = req->body_too_large ? NULL : http_json_parse_object(req->body, req->body_len);
    if (o == NULL || payer_parse(o, &p, err, sizeof(err)) != 0) {
        http_response_error(resp, 400, "invalid_request",
                            o == NULL ? "the body must be one JSON object" : err);
        json_decref(o);
        return;
    }
    memset(&a, 0, sizeof(a));
    journal_entry_begin(&je, false);
    flows_sweep(l);
    if (payer_find(&p, &row) != 0)
        failed = true;
    else {
        snprintf(a.out_trade_no, sizeof(a.out_trade_no), "%s", row.out_trade_no);
        if (!payer_refuse(l, &p, &row, &a, &failed) && payer_confirm(app, l, &p, &row, &a) != 0)
            failed = true;
    }
    json_decref(o);
    payer_journal(app, &je, &a, failed);
    if (failed) {
        log_msg(LOG_ERROR, "payer: the store or the ledger failed: %s / %s", prepay_error(),
                ledger_error(l));
        http_response_header(resp, "Retry-After", "1");
        http_response_error(resp, 503, "unavailable", "the mock's ledger (MariaDB) is unavailable");
        return;
    }
    log_msg(LOG_INFO, "payer: %s %s%s%s", a.out_trade_no[0] ? a.out_trade_no : "(no order)",
            a.err_code != NULL ? a.err_code : "paid as ",
            a.err_code != NULL ? "" : a.transaction_id, p.delay_ms > 0 ? " (slow payer)" : "");
    json_t *out = a.err_code != NULL
                      ? json_pack("{s:s, s:s, s:s, s:s}", "result", "FAIL", "err_code", a.err_code,
                                  "err_code_des", a.err_des, "out_trade_no", a.out_trade_no)
                      : json_pack("{s:s, s:s, s:s}", "result", "SUCCESS", "transaction_id",
                                  a.transaction_id, "out_trade_no", a.out_trade_no);
    if (out == NULL)
        http_response_error(resp, 500, "internal", "out of memory");
    else
        http_response_json(resp, 200, out);
}
