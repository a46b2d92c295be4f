/* flows.c - WeChat Pay v2's payment flows in the mock (docs/MOCK.md
 * "Payment flows"): unifiedorder creating a prepay order (no charge),
 * micropay (the payment code charged at once, or USERPAYING), reverse
 * (micropay's fence: refund if paid, close if not, recall), and
 * closeorder's rules for these orders (minimum age, the payment confirmed
 * at the instant of the close). Every time is the mock's clock (clock.h).
 * The money moves only through the ledger (ledger_attempt, ledger_close,
 * ledger_refund), so a payment and a close of one out_trade_no still race
 * on the ledger's mock_trade row. */
#include "api_call.h"
#include "clocks.h"
#include "flows.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "bill.h"
#include "clock.h"
#include "flows_rules.h"
#include "log.h"
#include "notifier.h"

#define DES_BUSY "系统繁忙,请稍后再试"
#define DES_DUP "201 商户订单号重复"
#define DES_PAID "该订单已支付"
#define DES_CLOSED "订单已关闭"
#define CODE_URL_PREFIX "weixin://wxpay/bizpayurl?pr="

/* ---- shared ------------------------------------------------------------------ */

static void flows_busy(api_call *c, const char *what, const char *why)
{
    log_msg(LOG_ERROR, "%s: %s", what, why);
    api_fail(c, "SYSTEMERROR", DES_BUSY);
}

void flows_notify(mock_app *app, const prepay_row *row, const char *txid, time_t charged_at,
                  const char *openid)
{
    notifier_charge nc;
    memset(&nc, 0, sizeof(nc));
    api_copy(nc.transaction_id, sizeof(nc.transaction_id), txid);
    api_copy(nc.out_trade_no, sizeof(nc.out_trade_no), row->out_trade_no);
    nc.total_fee = row->total_fee;
    api_copy(nc.trade_type, sizeof(nc.trade_type), row->trade_type);
    api_copy(nc.openid, sizeof(nc.openid),
             openid != NULL && openid[0] != '\0' ? openid
             : row->openid[0] != '\0'            ? row->openid
                                                 : BILL_DEFAULT_OPENID);
    txid_time_end(charged_at, nc.time_end);
    api_copy(nc.notify_url, sizeof(nc.notify_url), row->notify_url);
    nc.api_version = row->api_version;
    if (nc.notify_url[0] != '\0')
        notifier_charge_made(app->notifier, &nc);
}

int flows_resolve(ledger *l, const char *otn)
{
    prepay_row row;
    ledger_attempt_result r;

    if (prepay_get(PREPAY_BY_OTN, otn, &row) != 0)
        return -1;
    if (!row.found || !row.micropay || strcmp(row.state, "USERPAYING") != 0 ||
        row.resolve_ms > mock_clock_now_ms())
        return 0;
    if (ledger_attempt(l, otn, row.total_fee, "MICROPAY", BILL_DEFAULT_OPENID, row.resolve_pay,
                       true, &r) != 0)
        return -1;
    const char *to = r.outcome == LEDGER_CHARGED || r.outcome == LEDGER_ORDERPAID ? "PAID"
                     : r.outcome == LEDGER_ORDERCLOSED                            ? "CLOSED"
                                                                                  : "PAYERROR";
    bool moved = false;
    if (prepay_cas_state(otn, "USERPAYING", to, &moved) != 0)
        return -1;
    log_msg(LOG_INFO, "micropay %s: USERPAYING resolved: %s%s%s", otn, to,
            r.outcome == LEDGER_CHARGED ? " as " : "",
            r.outcome == LEDGER_CHARGED ? r.transaction_id : "");
    return 0;
}

void flows_sweep(ledger *l)
{
    char otns[64][33];
    int n = 0;
    if (prepay_due(mock_clock_now_ms(), otns, 64, &n) != 0) {
        log_msg(LOG_WARN, "flows: cannot list due USERPAYING orders: %s", prepay_error());
        return;
    }
    for (int i = 0; i < n; i++)
        if (flows_resolve(l, otns[i]) != 0)
            log_msg(LOG_WARN, "flows: cannot resolve %s: %s / %s", otns[i], prepay_error(),
                    ledger_error(l));
}

void flows_sweep_now_and_then(ledger *l)
{
    static atomic_llong last_ms;
    long long now = clocks_mono_ms();
    long long prev = atomic_load(&last_ms);
    if (now - prev < FLOWS_SWEEP_EVERY_MS || !atomic_compare_exchange_strong(&last_ms, &prev, now))
        return;
    flows_sweep(l);
}

/* ---- unifiedorder: the prepay order ------------------------------------------- */

static void flows_reply_prepay(api_call *c, const prepay_row *row)
{
    char url[sizeof(CODE_URL_PREFIX) + PREPAY_TOKEN_BUF];
    wx_msg extra;
    bool native = strcmp(row->trade_type, "NATIVE") == 0;

    snprintf(url, sizeof(url), "%s%s", CODE_URL_PREFIX, row->code_token);
    const wx_pair fields[] = {
        WX_TEXT("trade_type", row->trade_type),
        WX_TEXT("prepay_id", row->prepay_id),
        WX_TEXT("code_url", native ? url : NULL),
    };
    wx_msg_init(&extra);
    if (WX_MSG_SET_PAIRS(&extra, fields) != 0)
        api_fail(c, "SYSTEMERROR", DES_BUSY);
    else
        api_send(c, NULL, NULL, NULL, &extra);
    wx_msg_free(&extra);
}

/* time_expire (or the default) into *expire_ms; false when refused (reply set). */
static bool flows_expiry(api_call *c, const faults_config *cfg, long long now, long long *expire_ms)
{
    const char *te = wx_msg_get(&c->m, "time_expire");
    if (te == NULL || te[0] == '\0') {
        *expire_ms = now + cfg->prepay_ttl_ms;
        return true;
    }
    if (flows_parse_cst(te, expire_ms) != 0) {
        api_fail(c, "PARAM_ERROR", "time_expire 格式错误: yyyyMMddHHmmss (UTC+8)");
        return false;
    }
    if (*expire_ms - now < cfg->time_expire_min_ms) {
        api_fail(c, "PARAM_ERROR", "time_expire时间过短，刷卡至少1分钟，其他5分钟");
        return false;
    }
    return true;
}

/* The order exists in the ledger as paid or closed: true when answered. */
static bool flows_ledger_final(api_call *c, const char *otn, bool micropay_row_revoked)
{
    ledger_order o;
    if (ledger_query(c->l, otn, NULL, &o) != 0) {
        flows_busy(c, otn, ledger_error(c->l));
        return true;
    }
    if (!o.found)
        return false;
    if (strcmp(o.trade_state, "SUCCESS") == 0 || strcmp(o.trade_state, "REFUND") == 0) {
        api_fail(c, micropay_row_revoked ? "ORDERREVERSED" : "ORDERPAID",
                 micropay_row_revoked ? "订单已撤销" : DES_PAID);
        return true;
    }
    if (strcmp(o.trade_state, "CLOSED") == 0) {
        api_fail(c, micropay_row_revoked ? "ORDERREVERSED" : "ORDERCLOSED",
                 micropay_row_revoked ? "订单已撤销" : DES_CLOSED);
        return true;
    }
    return false;
}

/* A unifiedorder of an out_trade_no that has a prepay order already. */
static void flows_uo_repeat(api_call *c, const prepay_row *row, const char *fp, long long now)
{
    if (!row->micropay && strcmp(fp, row->fingerprint) == 0 && now < row->prepay_until_ms) {
        flows_reply_prepay(c, row);
        return;
    }
    log_msg(LOG_INFO, "unifiedorder %s: %s", row->out_trade_no,
            row->micropay                       ? "the out_trade_no is a micropay order"
            : strcmp(fp, row->fingerprint) != 0 ? "other parameters than the prepay's"
                                                : "the prepay expired");
    api_fail(c, "INVALID_REQUEST", DES_DUP);
}

/* The new prepay order of this request, into *row. */
static void flows_new_prepay(api_call *c, const char *fp, long long now, long long expire_ms,
                             long long ttl_ms, prepay_row *row)
{
    const char *tt = wx_msg_get(&c->m, "trade_type");
    const char *openid = wx_msg_get(&c->m, "openid");

    memset(row, 0, sizeof(*row));
    api_copy(row->out_trade_no, sizeof(row->out_trade_no), wx_msg_get(&c->m, "out_trade_no"));
    txid_prepay((time_t)(now / 1000), row->prepay_id);
    if (strcmp(tt, "NATIVE") == 0)
        api_copy(row->code_token, sizeof(row->code_token), row->prepay_id + 16);
    api_copy(row->trade_type, sizeof(row->trade_type), tt);
    api_copy(row->openid, sizeof(row->openid), openid);
    row->total_fee = c->v.total_fee;
    api_copy(row->fingerprint, sizeof(row->fingerprint), fp);
    api_copy(row->notify_url, sizeof(row->notify_url), wx_msg_get(&c->m, "notify_url"));
    row->created_ms = now;
    row->expire_ms = expire_ms;
    row->prepay_until_ms = now + ttl_ms < expire_ms ? now + ttl_ms : expire_ms;
    api_copy(row->state, sizeof(row->state), "NOTPAY");
    row->api_version = c->v3 ? 3 : 2;
}

void flows_unifiedorder(api_call *c)
{
    const char *otn = wx_msg_get(&c->m, "out_trade_no");
    const char *openid = wx_msg_get(&c->m, "openid");
    long long now = mock_clock_now_ms(), expire_ms = 0;
    faults_config cfg;
    prepay_row row;
    char fp[33];
    bool inserted = false;

    faults_get(&c->app->faults, &cfg);
    if (c->fd.kind == FAULT_RESET) {
        api_cut(c);
        return;
    }
    if (c->fd.kind == FAULT_ERROR) {
        api_fail(c, "SYSTEMERROR", "系统超时");
        return;
    }
    if (strcmp(wx_msg_get(&c->m, "trade_type"), "JSAPI") == 0 && (openid == NULL || !openid[0])) {
        api_fail(c, "PARAM_ERROR", "JSAPI支付必须传openid");
        return;
    }
    if (!flows_expiry(c, &cfg, now, &expire_ms) || flows_ledger_final(c, otn, false))
        return;
    if (flows_fingerprint(&c->m, fp) != 0 || prepay_get(PREPAY_BY_OTN, otn, &row) != 0) {
        flows_busy(c, otn, prepay_error());
        return;
    }
    if (row.found) {
        flows_uo_repeat(c, &row, fp, now);
        return;
    }
    flows_new_prepay(c, fp, now, expire_ms, cfg.prepay_ttl_ms, &row);
    if (prepay_insert(&row, &inserted) != 0 ||
        (!inserted && prepay_get(PREPAY_BY_OTN, otn, &row) != 0)) {
        flows_busy(c, otn, prepay_error());
        return;
    }
    if (!inserted) { /* a concurrent twin created it first */
        flows_uo_repeat(c, &row, fp, now);
        return;
    }
    if (ledger_note_unpaid(c->l, otn, row.total_fee) != 0)
        log_msg(LOG_WARN, "ledger: %s", ledger_error(c->l));
    log_msg(LOG_INFO, "unifiedorder %s: prepay %s (%s), expires in %lld ms", otn, row.prepay_id,
            row.trade_type, row.expire_ms - now);
    if (c->fd.kind == FAULT_TIMEOUT_AFTER_CHARGE)
        api_withhold(c, otn, c->hold_ms >= 0 ? c->hold_ms : cfg.hold_max_ms);
    else
        flows_reply_prepay(c, &row);
}

/* ---- closeorder and orderquery of the flows' orders ----------------------------- */

/* A payment being confirmed (the payer's delay_ms running) when the close
 * arrives, confirmed anyway at this instant (close_race_rate): the charge
 * is made and notified, and the close answers SUCCESS. true when it was. */
static bool flows_close_race(api_call *c, const prepay_row *row, const faults_config *cfg)
{
    ledger_attempt_result r;

    if (row->paying_until_ms <= mock_clock_now_ms() ||
        !faults_draw_flow(&c->app->faults, cfg->close_race_rate))
        return false;
    if (ledger_attempt(c->l, row->out_trade_no, row->total_fee, row->trade_type, row->openid, true,
                       true, &r) != 0 ||
        r.outcome != LEDGER_CHARGED)
        return false; /* the close goes on: the ledger tells ORDERPAID / ORDERCLOSED */
    if (prepay_set_race(row->out_trade_no, r.transaction_id) != 0 ||
        prepay_set_state(row->out_trade_no, "PAID") != 0)
        log_msg(LOG_WARN, "closeorder %s: %s", row->out_trade_no, prepay_error());
    api_copy(c->je.transaction_id, sizeof(c->je.transaction_id), r.transaction_id);
    flows_notify(c->app, row, r.transaction_id, r.charged_at, NULL);
    log_msg(LOG_INFO,
            "closeorder %s: the payment being confirmed won the race: charged as %s, "
            "close answered SUCCESS",
            row->out_trade_no, r.transaction_id);
    api_send(c, NULL, NULL, NULL, NULL);
    return true;
}

bool flows_closeorder(api_call *c)
{
    const char *otn = wx_msg_get(&c->m, "out_trade_no");
    faults_config cfg;
    prepay_row row;

    faults_get(&c->app->faults, &cfg);
    if (flows_resolve(c->l, otn) != 0 || prepay_get(PREPAY_BY_OTN, otn, &row) != 0) {
        flows_busy(c, otn, prepay_error());
        return true;
    }
    if (!row.found)
        return false;
    long long age = mock_clock_now_ms() - row.created_ms;
    if (age < cfg.closeorder_min_age_ms) {
        log_msg(LOG_INFO,
                "closeorder %s: refused, the order is %lld ms old (closeorder_min_age_ms "
                "%lld)",
                otn, age, cfg.closeorder_min_age_ms);
        api_fail(c, "SYSTEMERROR",
                 "订单生成后不能马上调用关单接口，最短调用时间间隔为5分钟 (mock)");
        return true;
    }
    return flows_close_race(c, &row, &cfg);
}

int flows_query_state(api_call *c, const char *otn, char *state)
{
    prepay_row row;
    state[0] = '\0';
    if (otn == NULL || otn[0] == '\0')
        return 0;
    if (flows_resolve(c->l, otn) != 0 || prepay_get(PREPAY_BY_OTN, otn, &row) != 0)
        return -1;
    if (row.found && row.micropay &&
        (strcmp(row.state, "USERPAYING") == 0 || strcmp(row.state, "REVOKED") == 0))
        api_copy(state, 16, row.state);
    return 0;
}
