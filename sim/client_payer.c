/* client_payer.c - the customer of a NATIVE/JSAPI order (TASK_PAYER,
 * client_payer.h): the merchant's page POSTs /api/pay for the prepay (202
 * AWAITING_PAYMENT with code_url / prepay_id), then the customer pays it
 * through the mock's payer (payer.h) as the task's behaviour says — once,
 * twice, slowly, after the close, a stale code, never, or slowly into the
 * close — and the page
 * polls the order until it is PAID or closed. Every call is recorded: the
 * POSTs and polls as today's clients record them, each payment as OP_PAYER.
 *
 * Against a service or mock of before the real flows, the POST is charged
 * at once (200 PAID, no prepay) or the payer API is missing (404): the
 * customer then has nothing to pay and the task ends there. */
#include "client_payer.h"

#include <stdio.h>
#include <string.h>

#include "payer.h"
#include "service_windows.h"

#define PAYER_POLL_MS 500            /* the page's poll period */
#define PAYER_CLOSE_WAIT_MS 60000    /* after-close: the longest wait for the close */
#define PAYER_STALE_MAX_MS 60000     /* stale: the longest wait for the prepay to expire */
#define PAYER_INTO_CLOSE_LEAD_MS 600 /* into-close: starts paying this long before expiry */
#define PAYER_ACROSS_WAIT_MS 500     /* across-close: how long the customer's call is waited for */
#define PAYER_RELOAD_AFTER_MS 300    /* reload: the page comes back this long after the prepay */

/* POSTs for the prepay until an answer that is not "try again". Returns 1
 * with the prepay in a, or 0 (paid at once, refused, no answer). */
static int cpay_prepay(sim_client *c, const sched_task *t, long task, const client_policy *pol,
                       const client_pay *p, profile_answer *a)
{
    client_world *w = c->world;
    for (int i = 0; i < pol->max_posts && !client_stopped(w); i++) {
        sim_op op;
        http_reply rep;
        client_post_pay(c, t, task, p, i + 1, pol->timeout_ms, &op, &rep, a);
        if (op.transport == HTTP_OK && op.http_code == 202 && (a->code_url[0] || a->prepay_id[0]))
            return 1;
        if (op.transport == HTTP_OK && op.http_code != 202 && op.http_code != 409 &&
            op.http_code != 429 && op.http_code < 500)
            return 0; /* 200 PAID (a gateway that charges at once), 402, 4xx */
        client_sleep_ms(w, pol->backoff_ms << (i < 4 ? i : 4));
    }
    return 0;
}

/* The prepay's life as the service gives it (IDEMPAY_PREPAY_TTL_MS, read
 * as the service reads it: common/service_windows), at most
 * PAYER_STALE_MAX_MS. */
static int64_t cpay_ttl_ms(void)
{
    service_windows sw;
    service_windows_load(&sw);
    long long ttl = sw.prepay_ttl_ms;
    return ttl < PAYER_STALE_MAX_MS ? ttl : PAYER_STALE_MAX_MS;
}

/* One payment by the customer, recorded as OP_PAYER. Returns its result. */
static payer_result cpay_pay_within(sim_client *c, const sched_task *t, long task,
                                    const profile_answer *a, uint32_t delay_ms, long timeout_ms)
{
    client_world *w = c->world;
    const sched_order *o = &w->sched->orders[t->order];
    char openid[40];
    payer_request req = { .delay_ms = delay_ms };
    if (t->flow == FLOW_NATIVE && a->code_url[0])
        req.code_url = a->code_url;
    else
        req.prepay_id = a->prepay_id[0] ? a->prepay_id : NULL;
    if (t->flow == FLOW_JSAPI)
        req.openid = payer_openid(o->user_id, openid, sizeof(openid));
    if (req.code_url == NULL && req.prepay_id == NULL)
        req.code_url = a->code_url;
    sim_op op;
    http_reply rep;
    payer_reply pr;
    client_op_begin(c, &op, OP_PAYER, o->scenario, t->order, task);
    op.amount_fen = o->amount_fen;
    op.user_id = o->user_id;
    op.attempt = 1;
    http_status hs = payer_pay(c->http, w->merchant.gateway, &req, timeout_ms, &rep, &pr);
    client_op_transport(&op, hs, &rep);
    op.outcome = pr.result == PAYER_PAID                                   ? OUT_OK
                 : pr.result == PAYER_REFUSED || pr.result == PAYER_NO_API ? OUT_FAIL
                                                                           : OUT_UNKNOWN;
    client_copy_str(op.txn, sizeof(op.txn), pr.transaction_id);
    if (pr.err_code[0])
        client_copy_str(op.error, sizeof(op.error), pr.err_code);
    client_op_end(c, &op, 1);
    return pr.result;
}

static payer_result cpay_pay(sim_client *c, const sched_task *t, long task, const profile_answer *a,
                             uint32_t delay_ms)
{
    return cpay_pay_within(c, t, task, a, delay_ms, 10000 + (long)delay_ms);
}

/* payer-edge's reload: the page POSTs again while the prepay is open; the
 * customer pays the code of that answer, then the first code it kept. */
static payer_result cpay_reload(sim_client *c, const sched_task *t, long task,
                                const client_policy *pol, const client_pay *p,
                                const profile_answer *first)
{
    profile_answer again;
    client_sleep_ms(c->world, PAYER_RELOAD_AFTER_MS);
    if (!cpay_prepay(c, t, task, pol, p, &again))
        return cpay_pay(c, t, task, first, 0);
    payer_result r = cpay_pay(c, t, task, &again, 0);
    if (r != PAYER_NO_API)
        cpay_pay(c, t, task, first, 0);
    return r;
}

/* The page polls the order until it is no longer awaiting payment or
 * until_us; returns the last status read (-1 unknown). */
static int cpay_poll(sim_client *c, const sched_task *t, long task, const client_policy *pol,
                     int64_t until_us, int stop_at)
{
    client_world *w = c->world;
    int st = -1;
    for (int n = 1; client_now_us(w) < until_us && !client_stopped(w); n++) {
        client_sleep_ms(w, PAYER_POLL_MS);
        st = client_query(c, t, task, n, pol->timeout_ms);
        if (st == stop_at || st == OST_FAILED || (stop_at == OST_PAID && st == OST_NONE))
            break;
    }
    return st;
}

void client_task_payer(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    client_policy pol;
    client_pay p;
    profile_answer a;
    client_policy_of(t, &pol);
    client_pay_of(w->sched, t, &p);
    if (w->merchant.gateway == NULL || !cpay_prepay(c, t, task, &pol, &p, &a))
        return;
    int64_t deadline = client_now_us(w) + pol.patience_ms * 1000;
    payer_result r = PAYER_UNKNOWN;
    switch (t->payer) {
    case PB_ABANDON:
        return;
    case PB_AFTER_CLOSE:
        cpay_poll(c, t, task, &pol, client_now_us(w) + (int64_t)PAYER_CLOSE_WAIT_MS * 1000,
                  OST_FAILED);
        r = cpay_pay(c, t, task, &a, 0);
        break;
    case PB_STALE: /* past the prepay's life */
        client_sleep_ms(w, cpay_ttl_ms() + t->pay_delay_ms);
        r = cpay_pay(c, t, task, &a, 0);
        break;
    case PB_INTO_CLOSE: /* just before the expiry, confirmed after the close */
        client_sleep_ms(w, cpay_ttl_ms() > PAYER_INTO_CLOSE_LEAD_MS
                               ? cpay_ttl_ms() - PAYER_INTO_CLOSE_LEAD_MS
                               : 0);
        r = cpay_pay(c, t, task, &a, t->pay_delay_ms);
        break;
    case PB_LATE:
        r = cpay_pay(c, t, task, &a, t->pay_delay_ms);
        break;
    case PB_ACROSS_CLOSE: /* as into-close, but the page polls while it is confirmed */
        client_sleep_ms(w, cpay_ttl_ms() > PAYER_INTO_CLOSE_LEAD_MS
                               ? cpay_ttl_ms() - PAYER_INTO_CLOSE_LEAD_MS
                               : 0);
        r = cpay_pay_within(c, t, task, &a, t->pay_delay_ms, PAYER_ACROSS_WAIT_MS);
        break;
    case PB_RELOAD:
        r = cpay_reload(c, t, task, &pol, &p, &a);
        break;
    default: /* PB_ONCE, PB_TWICE */
        r = cpay_pay(c, t, task, &a, 0);
        if (t->payer == PB_TWICE && r != PAYER_NO_API)
            r = cpay_pay(c, t, task, &a, 0);
        break;
    }
    if (r != PAYER_NO_API)
        cpay_poll(c, t, task, &pol, deadline, OST_PAID);
}
