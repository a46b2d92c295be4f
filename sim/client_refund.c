/* client_refund.c - the merchant's refunds of one order (TASK_REFUND,
 * client_refund.h): POST /api/pay/orders/{no}/refunds with an
 * Idempotency-Key (idempay's merchant refund API, docs/API.md), recorded as
 * OP_REFUND (txn: the refund_no answered), and the GET of the order's
 * refunds (OP_REFUND with OPF_LIST) until none is PROCESSING. */
#include "client_refund.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "money.h"
#include "profile.h"

#define REFUND_TRIES 3            /* POSTs of one request on no answer, 5xx, 409/429 */
#define REFUND_WAIT_PAID_MS 20000 /* a later copy waits this long for the order to be PAID */
#define REFUND_LIST_POLL_MS 300
#define REFUND_LIST_PATIENCE_MS 15000

const char *refund_plan_name(int plan)
{
    static const char *const names[RP_COUNT] = { "twice", "race", "parts", "mismatch" };
    return plan >= 0 && plan < RP_COUNT ? names[plan] : "?";
}

int64_t refund_plan_amount(int64_t fen, int percent)
{
    int64_t v = fen * percent / 100;
    return v >= 1 ? v : 1;
}

char *refund_key(const char *order_no, int k, char *out, size_t len)
{
    snprintf(out, len, "%s-refund-%d", order_no, k);
    return out;
}

/* One refund request (key k, amount fen), retried on no answer. Returns the
 * last HTTP code (0: none). */
static long cr_request(sim_client *c, const sched_task *t, long task, int k, int64_t fen,
                       int attempt)
{
    client_world *w = c->world;
    const sched_order *o = &w->sched->orders[t->order];
    char no[64], key[96], hdr[128], amount[MONEY_STR_MAX], body[96];
    long code = 0;

    sched_order_no(w->sched, w->prefix, (size_t)t->order, no, sizeof(no));
    snprintf(c->url, sizeof(c->url), "%s/api/pay/orders/%s/refunds", w->target, no);
    snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", refund_key(no, k, key, sizeof(key)));
    int blen = snprintf(body, sizeof(body), "{\"amount\":\"%s\",\"reason\":\"sim %s\"}",
                        money_format(fen, amount), refund_plan_name(t->copies));
    char sig[4][CALLER_HEADER_LINE_MAX];
    const char *headers[6] = { hdr, NULL };
    for (int i = 0; i < REFUND_TRIES && !client_stopped(w); i++) {
        sim_op op;
        http_reply rep;
        /* signed as the merchant's caller, afresh each try (a nonce is spent once) */
        int ns = profile_sign_lines("POST", c->url, body, (size_t)blen, sig);
        for (int h = 0; h < 4; h++)
            headers[1 + h] = h < ns ? sig[h] : NULL;
        headers[5] = NULL;
        client_op_begin(c, &op, OP_REFUND, o->scenario, t->order, task);
        op.amount_fen = fen;
        op.user_id = o->user_id;
        op.idem = (uint8_t)k;
        op.attempt = (uint8_t)(attempt + i);
        http_status hs = http_client_request(c->http, "POST", c->url, "application/json", body,
                                             (size_t)blen, headers, 10000, &rep);
        client_op_transport(&op, hs, &rep);
        code = hs == HTTP_OK ? rep.code : 0;
        if (hs == HTTP_OK) {
            json_t *j = json_loadb(rep.body, rep.body_len, 0, NULL);
            client_copy_str(op.txn, sizeof(op.txn),
                            json_string_value(json_object_get(j, "refund_no")));
            client_copy_str(op.error, sizeof(op.error),
                            json_string_value(json_object_get(j, "error")));
            json_decref(j);
            op.outcome = code == 202 ? OUT_OK : code >= 400 && code < 500 ? OUT_FAIL : OUT_UNKNOWN;
        }
        client_op_end(c, &op, 1);
        if (code != 0 && code < 500 && code != 409 && code != 429)
            break;
        client_sleep_ms(w, 200 << i);
    }
    return code;
}

/* Reads the order's refunds until none is PROCESSING (or patience). */
static void cr_wait_ended(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    const sched_order *o = &w->sched->orders[t->order];
    int64_t deadline = client_now_us(w) + (int64_t)REFUND_LIST_PATIENCE_MS * 1000;
    char no[64];

    sched_order_no(w->sched, w->prefix, (size_t)t->order, no, sizeof(no));
    snprintf(c->url, sizeof(c->url), "%s/api/pay/orders/%s/refunds", w->target, no);
    for (int n = 1; client_now_us(w) < deadline && !client_stopped(w); n++) {
        sim_op op;
        http_reply rep;
        client_sleep_ms(w, REFUND_LIST_POLL_MS);
        client_op_begin(c, &op, OP_REFUND, o->scenario, t->order, task);
        op.flags |= OPF_LIST;
        op.attempt = (uint8_t)(n > 255 ? 255 : n);
        char sig[4][CALLER_HEADER_LINE_MAX];
        const char *hdrs[5] = { NULL };
        int ns = profile_sign_lines("GET", c->url, NULL, 0, sig);
        for (int k = 0; k < ns; k++)
            hdrs[k] = sig[k];
        http_status hs = http_client_request(c->http, "GET", c->url, NULL, NULL, 0,
                                             ns > 0 ? hdrs : NULL, 5000, &rep);
        client_op_transport(&op, hs, &rep);
        int moving = 1;
        if (hs == HTTP_OK && rep.code == 200) {
            op.outcome = OUT_OK;
            moving = strstr(rep.body, "\"PROCESSING\"") != NULL;
        } else {
            op.outcome = hs == HTTP_OK && rep.code < 500 ? OUT_FAIL : OUT_UNKNOWN;
        }
        client_op_end(c, &op, 1);
        if (!moving)
            break;
    }
}

/* Whether a client saw the order PAID (waits up to REFUND_WAIT_PAID_MS). */
static int cr_paid(sim_client *c, const sched_task *t)
{
    client_world *w = c->world;
    int64_t deadline = client_now_us(w) + (int64_t)REFUND_WAIT_PAID_MS * 1000;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int paid = w->orders[t->order].saw_paid;
        pthread_mutex_unlock(&w->mu);
        if (paid || t->copy_index == 0 || client_now_us(w) >= deadline || client_stopped(w))
            return paid;
        client_sleep_ms(w, 10);
    }
}

void client_task_refund(sim_client *c, const sched_task *t, long task)
{
    client_world *w = c->world;
    int64_t fen = w->sched->orders[t->order].amount_fen;

    if (t->copy_index == 0)
        client_task_pay(c, t, task);
    if (!cr_paid(c, t))
        return;
    switch (t->copies) {
    case RP_TWICE:
        cr_request(c, t, task, 1, fen, 1);
        if (t->copy_index == 0)
            cr_request(c, t, task, 1, fen, 4);
        break;
    case RP_RACE:
        cr_request(c, t, task, 1 + t->copy_index, refund_plan_amount(fen, 60), 1);
        break;
    case RP_PARTS:
        cr_request(c, t, task, 1, refund_plan_amount(fen, 30), 1);
        cr_request(c, t, task, 2, refund_plan_amount(fen, 30), 4);
        cr_request(c, t, task, 1, refund_plan_amount(fen, 30), 7);
        cr_request(c, t, task, 3, fen, 10);
        break;
    default: /* RP_MISMATCH */
        cr_request(c, t, task, 1, fen, 1);
        if (fen > 1)
            cr_request(c, t, task, 1, fen / 2, 4);
        cr_request(c, t, task, 1, fen, 7);
        break;
    }
    if (t->copy_index == 0)
        cr_wait_ended(c, t, task);
}
