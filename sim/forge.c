/* forge.c - forged notifications and the payer's second charges (forge.h).
 * Messages are filled from wx_pair tables (wx_msg_set_pairs), signed with
 * wx_sign_msg and written by wx_xml_build: no XML or signing code here. */
#include "forge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forge_v3.h"
#include "service_ports.h"
#include "wx_endpoint.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define FORGE_WRONG_MCH_ID "1900000999"
#define FORGE_WRONG_KEY "NotTheMerchantKey000000000000000"

/* A transaction id nobody issued: 28 digits, unique to this run. */
static void forge_made_up_txn(const client_world *w, const sched_task *t, char out[SIM_TXN_MAX])
{
    uint64_t st = t->jitter_seed ^ w->salt;
    uint64_t a = rng_splitmix64(&st), b = rng_splitmix64(&st);
    snprintf(out, SIM_TXN_MAX, "4299%012llu%012llu", (unsigned long long)(a % 1000000000000ULL),
             (unsigned long long)(b % 1000000000000ULL));
}

/* Signs m as t's forgery wants (a wrong key for FORGE_BAD_SIGN; MD5 or
 * HMAC-SHA256 from the schedule) and writes it. NULL on failure. */
static char *forge_sign_build(wx_msg *m, const client_merchant *mc, const sched_task *t)
{
    const char *key = t->forge == FORGE_BAD_SIGN ? FORGE_WRONG_KEY : mc->key;
    int hmac = (t->jitter_seed >> 7) & 1;
    if (wx_sign_msg(m, key, hmac ? WX_SIGN_HMAC_SHA256 : WX_SIGN_MD5, hmac) != 0)
        return NULL;
    return wx_xml_build(m);
}

char *forge_notification_xml(const client_merchant *mc, const sched_task *t, const char *no,
                             const char *txn, int64_t fee)
{
    char timebuf[32], nonce[33];
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(timebuf, sizeof(timebuf), "%Y%m%d%H%M%S", &tmv);
    if (wx_nonce(nonce) < 0)
        snprintf(nonce, sizeof(nonce), "%016llx", (unsigned long long)t->jitter_seed);
    const wx_pair fields[] = {
        WX_TEXT("return_code", "SUCCESS"),
        WX_TEXT("result_code", "SUCCESS"),
        WX_TEXT("appid", mc->appid),
        WX_TEXT("mch_id", t->forge == FORGE_WRONG_MCH ? FORGE_WRONG_MCH_ID : mc->mch_id),
        WX_TEXT("nonce_str", nonce),
        WX_TEXT("openid", "oSimulatorForgedPayer000000"),
        WX_TEXT("trade_type", "NATIVE"),
        WX_TEXT("bank_type", "OTHERS"),
        WX_TEXT("fee_type", "CNY"),
        WX_NUM("total_fee", fee),
        WX_NUM("cash_fee", fee),
        WX_TEXT("transaction_id", txn),
        WX_TEXT("out_trade_no", no),
        WX_TEXT("time_end", timebuf),
    };
    wx_msg m;
    char *xml = NULL;
    wx_msg_init(&m);
    if (WX_MSG_SET_PAIRS(&m, fields) == 0)
        xml = forge_sign_build(&m, mc, t);
    wx_msg_free(&m);
    return xml;
}

/* Whether t's target may be forged against (see forge.h). */
static int forge_target_ok(client_world *w, const sched_task *t)
{
    if (w->sched->orders[t->order].flags & ORD_NEVER_SUBMITTED)
        return 1;
    pthread_mutex_lock(&w->mu);
    int declined = w->orders[t->order].saw_declined && !w->orders[t->order].saw_paid;
    pthread_mutex_unlock(&w->mu);
    return declined;
}

static void forge_known_txn(client_world *w, long order, char txn[SIM_TXN_MAX])
{
    pthread_mutex_lock(&w->mu);
    client_copy_str(txn, SIM_TXN_MAX, w->orders[order].txn);
    pthread_mutex_unlock(&w->mu);
}

/* The transaction id t's notification names into txn. Returns 0, or -1
 * when this forgery is not to be sent. */
static int forge_pick_txn(sim_client *c, const sched_task *t, long task, char txn[SIM_TXN_MAX])
{
    client_world *w = c->world;
    txn[0] = '\0';
    if (t->forge == FORGE_REPLAY_TXN && t->aux_order >= 0) {
        forge_known_txn(w, t->aux_order, txn);
        if (txn[0] == '\0') {
            /* Learn the paid order's transaction id as anyone could. */
            sched_task q = *t;
            client_policy pol;
            client_policy_of(t, &pol);
            q.order = t->aux_order;
            client_query(c, &q, task, 1, pol.timeout_ms);
            forge_known_txn(w, t->aux_order, txn);
        }
    }
    if (txn[0] != '\0')
        return 0;
    /* A properly signed notification with the right fee and a fresh
     * transaction id is indistinguishable from a real one: only send that
     * kind when a real, already used transaction id is at hand. */
    if (t->forge == FORGE_REPLAY_TXN)
        return -1;
    forge_made_up_txn(w, t, txn);
    return 0;
}

/* Reads the service's reply to a notification into op. */
static void forge_callback_reply(const http_reply *rep, sim_op *op)
{
    wx_msg r;
    char perr[64];
    wx_msg_init(&r);
    if (wx_xml_parse(rep->body, rep->body_len, &r, perr, sizeof(perr)) == 0) {
        const char *rc = wx_msg_get(&r, "return_code");
        int success = rc != NULL && strcmp(rc, "SUCCESS") == 0;
        if (success)
            op->flags |= OPF_CALLBACK_SUCCESS;
        op->outcome = success ? OUT_OK : OUT_FAIL;
        client_copy_str(op->error, sizeof(op->error), wx_msg_get(&r, "return_msg"));
    } else {
        client_copy_str(op->error, sizeof(op->error), "unparseable reply");
    }
    wx_msg_free(&r);
}

/* POSTs body (NULL: could not be built) of type (NULL: XML) with headers
 * (NULL or as http_client_request) to url and records it in op. */
static void forge_post(sim_client *c, const char *url, const char *type, const char *body,
                       const char *const *headers, long timeout_ms, sim_op *op, http_reply *rep,
                       http_status *hs)
{
    *hs = HTTP_ERR_OTHER;
    if (body == NULL) {
        client_copy_str(op->error, sizeof(op->error), "could not build the message");
        return;
    }
    *hs = http_client_request(c->http, "POST", url, type != NULL ? type : "text/xml", body,
                              strlen(body), headers, timeout_ms, rep);
    client_op_transport(op, *hs, rep);
}

static void forge_send(sim_client *c, const char *url, char *xml, long timeout_ms, sim_op *op,
                       http_reply *rep, http_status *hs)
{
    forge_post(c, url, NULL, xml, NULL, timeout_ms, op, rep, hs);
}

/* t's APIv3 notification (forge_v3.h) POSTed to the service's v3 URL; a
 * 200/204 acknowledged it (v3's success), a 4xx refused it. */
static void forge_v3_send(sim_client *c, const sched_task *t, const char *no, const char *txn,
                          int64_t fee, long timeout_ms, sim_op *op)
{
    const client_merchant *m = &c->world->merchant;
    forge_v3_msg msg;
    http_reply rep;
    http_status hs;
    int built = forge_v3_build(m->v3, t, m->appid, m->mch_id, no, txn, fee, &msg) == 0;
    forge_post(c, m->notify_url_v3, "application/json", built ? msg.body : NULL,
               (const char *const *)msg.headers, timeout_ms, op, &rep, &hs);
    forge_v3_msg_free(&msg);
    if (hs != HTTP_OK)
        return;
    if (rep.code == 200 || rep.code == 204) {
        op->flags |= OPF_CALLBACK_SUCCESS;
        op->outcome = OUT_OK;
    } else if (rep.code >= 400 && rep.code < 500) {
        op->outcome = OUT_FAIL;
        client_copy_str(op->error, sizeof(op->error), rep.body_len > 0 ? rep.body : "refused");
    }
}

void forge_task_callback(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    const sched_order *target = &w->sched->orders[t->order];
    char no[64], txn[SIM_TXN_MAX], url[CLIENT_URL_MAX];
    client_policy pol;
    int v3 = sched_forge_is_v3(t->forge);
    if (!profile_has(w->profile, PROF_FEAT_CALLBACKS) || (v3 && w->merchant.v3 == NULL) ||
        !forge_target_ok(w, t) || forge_pick_txn(c, t, task, txn) < 0)
        return;
    client_policy_of(t, &pol);
    sched_order_no(w->sched, w->prefix, (size_t)t->order, no, sizeof(no));
    int64_t fee = t->forge == FORGE_WRONG_FEE ? t->variant_fen : target->amount_fen;
    char *xml = v3 ? NULL : forge_notification_xml(&w->merchant, t, no, txn, fee);
    sim_op op;
    http_reply rep;
    http_status hs;
    client_op_begin(c, &op, OP_CALLBACK, target->scenario, t->order, task);
    op.forge = t->forge;
    op.amount_fen = fee;
    op.attempt = 1;
    client_copy_str(op.txn, sizeof(op.txn), txn);
    if (v3) {
        forge_v3_send(c, t, no, txn, fee, pol.timeout_ms, &op);
        client_op_end(c, &op, 1);
        return;
    }
    /* to the service's notification URL (idempay's public door, run.c), where
     * the gateway's own notifications go; the target's path without one */
    if (w->merchant.notify_url != NULL && w->merchant.notify_url[0] != '\0')
        snprintf(url, sizeof(url), "%s", w->merchant.notify_url);
    else
        snprintf(url, sizeof(url), "%s%s", w->target, w->profile->ep[PROF_OP_CALLBACK].path);
    forge_send(c, url, xml, pol.timeout_ms, &op, &rep, &hs);
    free(xml);
    if (hs == HTTP_OK && rep.code == 200)
        forge_callback_reply(&rep, &op);
    else if (hs == HTTP_OK && rep.code >= 400 && rep.code < 500)
        op.outcome = OUT_FAIL;
    client_op_end(c, &op, 1);
}

/* ---- the payer's second charge ---- */

/* The signed unifiedorder of a second charge of order no (fee fen), or NULL. */
static char *forge_charge_xml(const client_merchant *mc, const char *no, int64_t fen)
{
    char nonce[33];
    if (wx_nonce(nonce) < 0)
        return NULL;
    const wx_pair fields[] = {
        WX_TEXT("appid", mc->appid),
        WX_TEXT("mch_id", mc->mch_id),
        WX_TEXT("nonce_str", nonce),
        WX_TEXT("body", "idempay-sim: the payer pays again"),
        WX_TEXT("out_trade_no", no),
        WX_NUM("total_fee", fen),
        WX_TEXT("spbill_create_ip", "127.0.0.1"),
        WX_TEXT("notify_url", mc->notify_url),
        WX_TEXT("trade_type", "NATIVE"),
    };
    wx_msg m;
    char *xml = NULL;
    wx_msg_init(&m);
    if (WX_MSG_SET_PAIRS(&m, fields) == 0 && wx_sign_msg(&m, mc->key, WX_SIGN_MD5, 0) == 0)
        xml = wx_xml_build(&m);
    wx_msg_free(&m);
    return xml;
}

static int forge_is_success(const char *v)
{
    return v != NULL && strcmp(v, "SUCCESS") == 0;
}

/* Reads the unifiedorder reply into op: ok with the transaction id when it
 * charged, fail when it says it did not, unknown otherwise. */
static void forge_charge_reply(const http_reply *rep, sim_op *op)
{
    wx_msg r;
    char perr[64];
    wx_msg_init(&r);
    if (rep->code == 200 && wx_xml_parse(rep->body, rep->body_len, &r, perr, sizeof(perr)) == 0) {
        const char *rc = wx_msg_get(&r, "return_code"), *txn = wx_msg_get(&r, "transaction_id");
        const char *ec = wx_msg_get(&r, "err_code");
        if (forge_is_success(rc) && forge_is_success(wx_msg_get(&r, "result_code")) &&
            txn != NULL && txn[0]) {
            op->outcome = OUT_OK;
            client_copy_str(op->txn, sizeof(op->txn), txn);
        } else if (rc != NULL) {
            op->outcome = OUT_FAIL; /* return_code FAIL or result_code FAIL: nothing charged */
            client_copy_str(op->error, sizeof(op->error), ec ? ec : wx_msg_get(&r, "return_msg"));
        }
    } else if (op->error[0] == '\0') {
        client_copy_str(op->error, sizeof(op->error), "unparseable reply");
    }
    wx_msg_free(&r);
}

void forge_task_second_charge(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    const sched_order *o = &w->sched->orders[t->order];
    char no[64], url[CLIENT_URL_MAX];
    client_policy pol;
    pthread_mutex_lock(&w->mu);
    int paid = w->orders[t->order].saw_paid;
    pthread_mutex_unlock(&w->mu);
    if (!paid || w->merchant.gateway == NULL)
        return;
    client_policy_of(t, &pol);
    sched_order_no(w->sched, w->prefix, (size_t)t->order, no, sizeof(no));
    char *xml = forge_charge_xml(&w->merchant, no, o->amount_fen);
    sim_op op;
    http_reply rep;
    http_status hs;
    client_op_begin(c, &op, OP_STRAY, o->scenario, t->order, task);
    op.amount_fen = o->amount_fen;
    op.attempt = 1;
    snprintf(url, sizeof(url), "%s%s", w->merchant.gateway, wx_endpoint_path(WX_EP_UNIFIEDORDER));
    int built = xml != NULL;
    forge_send(c, url, xml, pol.timeout_ms, &op, &rep, &hs);
    free(xml);
    if (!built)
        op.outcome = OUT_FAIL;
    else if (hs == HTTP_OK)
        forge_charge_reply(&rep, &op);
    client_op_end(c, &op, 1);
}

const char *forge_notify_base(const char *target)
{
    static char base[128];
    char merchant[64];

    snprintf(merchant, sizeof(merchant), "http://127.0.0.1:%lld", service_http_port());
    if (strcmp(target, merchant) != 0)
        return target;
    snprintf(base, sizeof(base), "http://127.0.0.1:%lld", service_public_port());
    return base;
}
