/* flows_micropay.c - the payment-code flow (docs/MOCK.md "Payment flows"):
 * /pay/micropay charges the customer's payment code at once, or answers
 * USERPAYING (the customer confirms on the phone; resolved userpaying_ms
 * later to paid or not), an unknown error (SYSTEMERROR / BANKERROR, charged
 * or not) or a definitive one; /secapi/pay/reverse is its fence: refunds a
 * paid order, closes an unpaid one, cancels a USERPAYING one, answers
 * SYSTEMERROR with recall=Y within reverse_min_wait_ms of the micropay. */
#include "api_call.h"
#include "flows.h"

#include <stdio.h>
#include <string.h>

#include "bill.h"
#include "clock.h"
#include "flows_rules.h"
#include "log.h"

#define DES_BUSY "系统繁忙,请稍后再试"

static void mp_busy(api_call *c, const char *otn, const char *why)
{
    log_msg(LOG_ERROR, "%s: %s", otn, why);
    api_fail(c, "SYSTEMERROR", DES_BUSY);
}

/* The SUCCESS reply of a charge. */
static void mp_reply_charged(api_call *c, const ledger_attempt_result *r)
{
    char time_end[15];
    wx_msg extra;
    const wx_pair fields[] = {
        WX_TEXT("openid", BILL_DEFAULT_OPENID),
        WX_TEXT("is_subscribe", "N"),
        WX_TEXT("trade_type", "MICROPAY"),
        WX_TEXT("bank_type", "OTHERS"),
        WX_TEXT("fee_type", "CNY"),
        WX_NUM("total_fee", c->v.total_fee),
        WX_NUM("cash_fee", c->v.total_fee),
        WX_TEXT("transaction_id", r->transaction_id),
        WX_TEXT("out_trade_no", wx_msg_get(&c->m, "out_trade_no")),
        WX_TEXT("time_end", txid_time_end(r->charged_at, time_end)),
    };
    api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r->transaction_id);
    wx_msg_init(&extra);
    if (WX_MSG_SET_PAIRS(&extra, fields) != 0)
        api_cut(c);
    else
        api_send(c, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

/* What this call does: a test code's outcome, or the knobs' draw. */
static mp_test_code mp_decide(api_call *c, const faults_config *cfg)
{
    const mp_test_code *t = flows_test_code(wx_msg_get(&c->m, "auth_code"));
    mp_test_code d = { NULL, MP_SUCCESS, NULL, NULL };
    if (t != NULL)
        return *t;
    if (c->fd.kind == FAULT_DECLINE) {
        d.outcome = MP_DECLINED;
        d.err_code = "NOTENOUGH";
        d.err_des = "余额不足";
    } else if (faults_draw_flow(&c->app->faults, cfg->userpaying_rate)) {
        d.outcome = faults_draw_flow(&c->app->faults, cfg->userpaying_pay_rate)
                        ? MP_USERPAYING_PAY
                        : MP_USERPAYING_FAIL;
    }
    return d;
}

/* A charge (charge true) or a decline in the ledger, then the row's state. */
static int mp_attempt(api_call *c, const char *otn, bool charge, bool dedupe,
                      ledger_attempt_result *r)
{
    if (ledger_attempt(c->l, otn, c->v.total_fee, "MICROPAY", BILL_DEFAULT_OPENID, charge, dedupe,
                       r) != 0)
        return -1;
    if (r->outcome == LEDGER_CHARGED)
        return prepay_set_state(otn, "PAID");
    if (r->outcome == LEDGER_DECLINED)
        return prepay_set_state(otn, "PAYERROR");
    return 0;
}

/* Answers a ledger refusal of a charge; true when r was one. */
static bool mp_refused(api_call *c, const ledger_attempt_result *r)
{
    switch (r->outcome) {
    case LEDGER_ORDERPAID:
        api_fail(c, "ORDERPAID", "该订单已支付");
        return true;
    case LEDGER_ORDERCLOSED:
        api_fail(c, "ORDERCLOSED", "订单已关闭");
        return true;
    case LEDGER_MISMATCH:
        api_fail(c, "INVALID_REQUEST", "201 商户订单号重复");
        return true;
    default:
        return false;
    }
}

/* Runs outcome d for a micropay whose row exists (state NOTPAY). */
static void mp_run(api_call *c, const char *otn, const faults_config *cfg, const mp_test_code *d)
{
    ledger_attempt_result r;
    long long now = mock_clock_now_ms();
    bool charge = d->outcome == MP_SUCCESS || d->outcome == MP_UNKNOWN_CHARGED;

    if (d->outcome == MP_USERPAYING_PAY || d->outcome == MP_USERPAYING_FAIL ||
        d->outcome == MP_UNKNOWN_NONE) {
        if (ledger_note_unpaid(c->l, otn, c->v.total_fee) != 0 ||
            (d->outcome != MP_UNKNOWN_NONE &&
             prepay_set_userpaying(otn, now + cfg->userpaying_ms,
                                   d->outcome == MP_USERPAYING_PAY) != 0)) {
            mp_busy(c, otn, ledger_error(c->l));
            return;
        }
        if (d->outcome == MP_UNKNOWN_NONE)
            api_fail(c, d->err_code, d->err_des);
        else
            api_fail(c, "USERPAYING", "需要用户输入支付密码");
        return;
    }
    if (mp_attempt(c, otn, charge, d->outcome == MP_SUCCESS ? cfg->dedupe : true, &r) != 0) {
        mp_busy(c, otn, ledger_error(c->l));
        return;
    }
    if (mp_refused(c, &r))
        return;
    if (d->outcome == MP_DECLINED || d->outcome == MP_UNKNOWN_CHARGED) {
        if (r.outcome == LEDGER_CHARGED)
            api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r.transaction_id);
        api_fail(c, d->err_code, d->err_des);
        return;
    }
    log_msg(LOG_INFO, "micropay %s: charged %lld fen as %s%s", otn, c->v.total_fee,
            r.transaction_id, c->fd.kind == FAULT_TIMEOUT_AFTER_CHARGE ? " (reply withheld)" : "");
    if (c->fd.kind == FAULT_TIMEOUT_AFTER_CHARGE) {
        api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r.transaction_id);
        api_withhold(c, otn, c->hold_ms >= 0 ? c->hold_ms : cfg->hold_max_ms);
    } else {
        mp_reply_charged(c, &r);
    }
}

/* The row of this micropay: an existing one judged (false: answered), or
 * a new one inserted. */
static bool mp_row(api_call *c, const char *otn, const char *fp, prepay_row *row)
{
    bool inserted = false;
    long long now = mock_clock_now_ms();

    if (prepay_get(PREPAY_BY_OTN, otn, row) != 0) {
        mp_busy(c, otn, prepay_error());
        return false;
    }
    if (!row->found) {
        memset(row, 0, sizeof(*row));
        api_copy(row->out_trade_no, sizeof(row->out_trade_no), otn);
        row->micropay = true;
        api_copy(row->trade_type, sizeof(row->trade_type), "MICROPAY");
        row->total_fee = c->v.total_fee;
        api_copy(row->fingerprint, sizeof(row->fingerprint), fp);
        row->created_ms = row->expire_ms = row->answered_ms = now;
        api_copy(row->state, sizeof(row->state), "NOTPAY");
        if (prepay_insert(row, &inserted) != 0 ||
            (!inserted && prepay_get(PREPAY_BY_OTN, otn, row) != 0)) {
            mp_busy(c, otn, prepay_error());
            return false;
        }
        if (inserted)
            return true;
    }
    if (!row->micropay || strcmp(fp, row->fingerprint) != 0) {
        api_fail(c, "INVALID_REQUEST", "201 商户订单号重复");
        return false;
    }
    if (strcmp(row->state, "USERPAYING") == 0) {
        api_fail(c, "USERPAYING", "需要用户输入支付密码");
        return false;
    }
    if (strcmp(row->state, "PAYERROR") == 0) {
        api_fail(c, "AUTH_CODE_INVALID", "101 每个二维码仅限使用一次，请刷新再试");
        return false;
    }
    return true; /* NOTPAY: an unknown answer before; WeChat takes the same call again */
}

void flows_micropay(api_call *c)
{
    const char *otn = wx_msg_get(&c->m, "out_trade_no");
    faults_config cfg;
    prepay_row row;
    char fp[33];

    faults_get(&c->app->faults, &cfg);
    if (c->fd.kind == FAULT_RESET) {
        api_cut(c);
        return;
    }
    if (c->fd.kind == FAULT_ERROR) {
        if (ledger_note_unpaid(c->l, otn, c->v.total_fee) != 0)
            log_msg(LOG_WARN, "ledger: %s", ledger_error(c->l));
        api_fail(c, "SYSTEMERROR", "系统超时");
        return;
    }
    if (flows_resolve(c->l, otn) != 0 || flows_fingerprint(&c->m, fp) != 0) {
        mp_busy(c, otn, prepay_error());
        return;
    }
    if (prepay_get(PREPAY_BY_OTN, otn, &row) != 0) {
        mp_busy(c, otn, prepay_error());
        return;
    }
    ledger_order o;
    if (ledger_query(c->l, otn, NULL, &o) != 0) {
        mp_busy(c, otn, ledger_error(c->l));
        return;
    }
    bool revoked = row.found && strcmp(row.state, "REVOKED") == 0;
    if (o.found && (revoked || strcmp(o.trade_state, "CLOSED") == 0)) {
        api_fail(c, revoked ? "ORDERREVERSED" : "ORDERCLOSED",
                 revoked ? "订单已撤销" : "订单已关闭");
    } else if (o.found && o.transaction_id[0] != '\0' && cfg.dedupe) {
        api_fail(c, "ORDERPAID", "该订单已支付");
    } else if (mp_row(c, otn, fp, &row)) { /* dedupe off: a repeat charges again (a fault) */
        mp_test_code d = mp_decide(c, &cfg);
        mp_run(c, otn, &cfg, &d);
    }
    if (prepay_set_answered(otn, mock_clock_now_ms()) != 0)
        log_msg(LOG_WARN, "micropay %s: %s", otn, prepay_error());
}

/* ---- reverse --------------------------------------------------------------- */

static void rv_reply(api_call *c, const char *err_code, const char *err_des, const char *recall)
{
    wx_msg extra;
    const wx_pair fields[] = { WX_TEXT("recall", recall) };
    wx_msg_init(&extra);
    if (WX_MSG_SET_PAIRS(&extra, fields) != 0)
        api_fail(c, "SYSTEMERROR", DES_BUSY);
    else
        api_send(c, NULL, err_code, err_des, &extra);
    wx_msg_free(&extra);
}

/* Refunds the rest of the order's charge (the reverse of a paid order). */
static int rv_refund(api_call *c, const char *otn)
{
    ledger_order o;
    ledger_refund_result rr;
    char orn[65];

    if (ledger_query(c->l, otn, NULL, &o) != 0)
        return -1;
    if (o.transaction_id[0] == '\0' || o.refunded_fee >= o.total_fee)
        return 0;
    snprintf(orn, sizeof(orn), "REVERSE-%s", otn);
    if (ledger_refund(c->l, o.transaction_id, otn, orn, o.total_fee, o.total_fee - o.refunded_fee,
                      &rr) != 0)
        return -1;
    api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), o.transaction_id);
    log_msg(LOG_INFO, "reverse %s: charge %s refunded (%lld fen)", otn, o.transaction_id,
            rr.refund_fee);
    return 0;
}

/* The out_trade_no the reverse names (by transaction_id when given); false
 * when answered. */
static bool rv_target(api_call *c, char otn[33])
{
    const char *txid = wx_msg_get(&c->m, "transaction_id");
    if (txid != NULL && txid[0] != '\0') {
        ledger_order o;
        if (ledger_query(c->l, NULL, txid, &o) != 0) {
            mp_busy(c, txid, ledger_error(c->l));
            return false;
        }
        if (!o.found) {
            api_fail(c, "ORDERNOTEXIST", "此交易订单号不存在");
            return false;
        }
        api_copy(otn, 33, o.out_trade_no);
        return true;
    }
    api_copy(otn, 33, wx_msg_get(&c->m, "out_trade_no"));
    return true;
}

void flows_reverse(api_call *c)
{
    faults_config cfg;
    prepay_row row;
    ledger_close_outcome out;
    char otn[33];

    faults_get(&c->app->faults, &cfg);
    if (!rv_target(c, otn))
        return;
    api_copy(c->je.out_trade_no, sizeof(c->je.out_trade_no), otn);
    if (flows_resolve(c->l, otn) != 0 || prepay_get(PREPAY_BY_OTN, otn, &row) != 0) {
        mp_busy(c, otn, prepay_error());
        return;
    }
    if (!row.found || !row.micropay) {
        if (!row.found)
            api_fail(c, "ORDERNOTEXIST", "此交易订单号不存在");
        else
            api_fail(c, "INVALID_REQUEST", "订单支付场景有误，请求被拒绝 (not a micropay order)");
        return;
    }
    if (mock_clock_now_ms() - row.answered_ms < cfg.reverse_min_wait_ms) {
        log_msg(LOG_INFO, "reverse %s: within reverse_min_wait_ms of the micropay: recall", otn);
        rv_reply(c, "SYSTEMERROR", "请勿在支付后立即撤销，至少15秒后再调用 (mock)", "Y");
        return;
    }
    if (strcmp(row.state, "REVOKED") != 0) {
        bool moved = false;
        if (strcmp(row.state, "USERPAYING") == 0 &&
            prepay_cas_state(otn, "USERPAYING", "REVOKED", &moved) != 0) {
            mp_busy(c, otn, prepay_error());
            return;
        }
        if (ledger_close(c->l, otn, &out) != 0 || (out == CLOSE_PAID && rv_refund(c, otn) != 0) ||
            prepay_set_state(otn, "REVOKED") != 0) {
            mp_busy(c, otn, ledger_error(c->l));
            return;
        }
        log_msg(LOG_INFO, "reverse %s: %s", otn, out == CLOSE_PAID ? "refunded" : "closed");
    }
    rv_reply(c, NULL, NULL, "N");
}
