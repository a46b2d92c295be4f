/* pay.c - the pay flow of POST /api/pay, in one place: validate, claim the
 * Idempotency-Key, check the token, then drive the order through its states
 * by compare-and-set, calling the gateway with no transaction open.
 * Every branch ends in exactly one answer; a request calls unifiedorder at
 * most once and never recurses (the seed's retry-by-recursion is gone). */
#include "pay.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "gateway.h"
#include "idem_key.h"
#include "log.h"
#include "metrics.h"
#include "order_archive.h"
#include "order_store.h"
#include "paid_cache.h"
#include "pay_prepay.h"
#include "pay_request.h"
#include "service_windows.h"
#include "settle.h"
#include "token.h"
#include "trade_store.h"

/* Re-reads after a lost insert or CAS before answering "in flight". */
#define PAY_MAX_ROUNDS 4

/* What POST /api/pay answers. */
typedef struct {
    int status;
    char *body;             /* malloc'd JSON, NULL only on out of memory */
    bool replayed;          /* Idempotent-Replayed: true */
    bool retry_after;       /* Retry-After: cfg->retry_after_s */
    metric_counter outcome; /* idempay_payments_total{outcome} */
    bool absorbed;          /* a repeat that never reached the gateway */
} pay_answer;

/* ---- answers ----------------------------------------------------------- */

/* A new answer in place of a's (whose body it frees): no header flags yet. */
static void pay_answer_set(pay_answer *a, int status, char *body, metric_counter outcome)
{
    free(a->body);
    *a = (pay_answer){ .status = status, .body = body, .outcome = outcome };
}

static void pay_paid(pay_answer *a, const char *order_no, const char *txid, int64_t fen,
                     bool repeat)
{
    pay_answer_set(a, 200, pay_body_paid(order_no, txid, fen),
                   repeat ? MET_PAY_REPLAYED : MET_PAY_PAID);
    a->replayed = repeat;
    a->absorbed = repeat;
}

static void pay_processing(pay_answer *a, const char *order_no, bool repeat)
{
    pay_answer_set(a, 202, pay_body_processing(order_no), MET_PAY_PROCESSING);
    a->retry_after = true;
    a->replayed = repeat;
    a->absorbed = repeat;
}

/* 202 AWAITING_PAYMENT: the order's prepay (the customer pays it in WeChat). */
static void pay_awaiting(app_ctx *ctx, pay_answer *a, const char *order_no, const trade_row *tr,
                         bool repeat)
{
    pay_jsapi js;
    char expires[32];
    char *body = NULL;

    pay_prepay_iso(tr->expires_ms, expires);
    if (tr->type != TRADE_JSAPI || pay_prepay_jsapi(ctx->cfg, tr->prepay_id, &js) == 0)
        body = pay_body_awaiting(order_no, tr->type, tr->code_url, tr->prepay_id, expires,
                                 tr->type == TRADE_JSAPI ? &js : NULL);
    pay_answer_set(a, 202, body, MET_PAY_PROCESSING);
    a->retry_after = true;
    a->replayed = repeat;
    a->absorbed = repeat;
}

static void pay_error(pay_answer *a, int status, const char *code, const char *message,
                      metric_counter outcome)
{
    pay_answer_set(a, status, pay_body_error(code, message), outcome);
    a->retry_after = status == 503 || status == 409;
}

static void pay_mismatch(pay_answer *a)
{
    pay_error(a, 422, "order_mismatch",
              "this order_no already exists with another user_id or amount", MET_PAY_MISMATCH);
}

/* An order_no another caller created (docs/API.md, "Scoping"): the same
 * 404 as an order that does not exist; nothing is read or charged. */
static void pay_not_theirs(pay_answer *a)
{
    pay_error(a, 404, "not_found", PAY_NOT_THEIRS_MESSAGE, MET_PAY_MISMATCH);
}

static void pay_flow_mismatch(pay_answer *a)
{
    pay_error(a, 422, "order_mismatch", "this order_no already exists with another trade_type",
              MET_PAY_MISMATCH);
}

static void pay_unavailable(pay_answer *a)
{
    pay_error(a, 503, "unavailable", "the payment database is unavailable; nothing was charged",
              MET_PAY_UNAVAILABLE);
}

/* The gateway bulkhead: at most cfg->gateway_max_inflight request threads
 * of this process work on the gateway at once, so a slow gateway can never
 * take every worker away from ping, order queries and repeats of paid
 * orders. A slot is taken before any row is written; a request that finds
 * none is answered 503 with nothing written and nothing charged. */
static atomic_int pay_gateway_inflight;

static bool pay_slot_take(const app_config *cfg)
{
    if (atomic_fetch_add(&pay_gateway_inflight, 1) < cfg->gateway_max_inflight)
        return true;
    atomic_fetch_sub(&pay_gateway_inflight, 1);
    return false;
}

static void pay_slot_give(void)
{
    atomic_fetch_sub(&pay_gateway_inflight, 1);
}

static void pay_busy(pay_answer *a)
{
    pay_error(a, 503, "unavailable",
              "the payment gateway is busy; nothing was charged, retry later", MET_PAY_UNAVAILABLE);
}

/* 200, 402 and 422 are the final answers an Idempotency-Key keeps; 202,
 * 503 and 403 are not (a retry with the key runs the request again). */
static bool pay_answer_final(const pay_answer *a)
{
    return a->body != NULL && (a->status == 200 || a->status == 402 || a->status == 422);
}

static void pay_answer_write(app_ctx *ctx, const pay_answer *a, http_response *resp)
{
    char secs[24];

    if (a->body == NULL) {
        http_response_error(resp, 500, "internal_error", "out of memory");
        return;
    }
    http_response_set(resp, a->status, "application/json", a->body, strlen(a->body));
    if (a->retry_after) {
        snprintf(secs, sizeof(secs), "%ld", ctx->cfg->retry_after_s);
        http_response_header(resp, "Retry-After", secs);
    }
    if (a->replayed)
        http_response_header(resp, "Idempotent-Replayed", "true");
    metrics_inc(a->outcome);
    if (a->absorbed)
        metrics_inc(MET_DUPLICATE_ABSORBED);
}

/* ---- the order flow ----------------------------------------------------- */

/* 402 payment_closed: the order can never be paid (docs/FENCE.md). */
static void pay_closed(pay_answer *a, const order_row *row, bool repeat)
{
    const char *why = row->final_reason == ORDER_FINAL_WRONG_AMOUNT
                          ? "the gateway charged another amount; that charge is being refunded"
                            " and this order can no longer be paid; use a new order_no"
                          : "an uncertain payment attempt was closed at the gateway, so this"
                            " order can no longer be paid and nothing was charged; use a new"
                            " order_no";

    pay_answer_set(a, 402, pay_body_failed(row->order_no, "payment_closed", why), MET_PAY_CLOSED);
    a->replayed = repeat;
    a->absorbed = repeat;
}

/* 409 order_archived: the order_no belongs to an archived order (final and
 * unchanged for IDEMPAY_ORDER_RETENTION_DAYS; docs/FENCE.md "Order
 * retention"). Nothing was written, nothing charged; final (no
 * Retry-After). The trade row this request wrote before its refused order
 * insert is deleted again. */
static void pay_archived(app_ctx *ctx, const pay_request *pr, pay_answer *a)
{
    (void)order_archive_forget_trade(ctx, pr->order_no);
    pay_error(a, 409, "order_archived",
              "this order_no belongs to an archived order (final and unchanged for the"
              " retention period); nothing was charged; use a new order_no",
              MET_PAY_CLOSED);
    a->retry_after = false;
}

/* The answer for where settle left the order. A charge was (possibly)
 * involved, so nothing here may say "nothing was charged" unless the order
 * is closed: not known is 202, never 503. */
static void pay_answer_settled(pay_answer *a, const pay_request *pr, settle_result s,
                               const order_row *row)
{
    switch (s) {
    case SETTLE_PAID:
        pay_paid(a, pr->order_no, row->transaction_id, row->amount_fen, false);
        return;
    case SETTLE_CLOSED:
        pay_closed(a, row, false);
        return;
    default:
        pay_processing(a, pr->order_no, false);
        return;
    }
}

/* A definitive decline seen by the holder of attempt `fence`: FAILED, and
 * a later POST may try again (every earlier attempt of the order ended
 * definitively too: the fence, or a recheck that found it unpaid, since no
 * attempt starts while a recheck is to come). */
static void pay_declined(app_ctx *ctx, const pay_request *pr, long long fence, const gw_result *gw,
                         pay_answer *a)
{
    order_row row;

    switch (order_store_mark_failed(ctx, pr->order_no, fence, 0)) {
    case ORDER_STORE_OK:
        pay_answer_set(a, 402, pay_body_failed(pr->order_no, "payment_declined", gw->message),
                       MET_PAY_DECLINED);
        return;
    case ORDER_STORE_MISS:
        /* Our attempt is no longer the current one: answer what the row says. */
        if (order_store_get(ctx, pr->order_no, &row) == ORDER_STORE_OK)
            pay_answer_settled(a, pr, settle_of_row(&row), &row);
        else
            pay_processing(a, pr->order_no, false);
        return;
    default:
        pay_unavailable(a); /* declined, so nothing was charged */
        return;
    }
}

static void pay_charge(app_ctx *ctx, const pay_request *pr, long long fence, pay_answer *a);

/* MICROPAY: calls micropay once, holding the order's lease at attempt
 * `fence`, and records the outcome (the charge with its reply). */
static void pay_micropay(app_ctx *ctx, const pay_request *pr, long long fence, pay_answer *a)
{
    gw_result gw;
    order_row row;
    settle_result s = SETTLE_PENDING;

    if (fence > 1 && trade_store_mark_sent(ctx, pr->order_no) == ORDER_STORE_ERROR) {
        pay_processing(a, pr->order_no, false); /* nothing sent; the lease runs out */
        return;
    }
    gateway_micropay(ctx, pr->order_no, pr->amount_fen, pr->auth_code, &gw);
    if (gw.answered && gw.outcome == GW_UNKNOWN)
        trade_store_mark_answered(ctx, pr->order_no); /* a reverse's ORDERNOTEXIST is final */
    switch (gw.outcome) {
    case GW_CHARGED:
        s = settle_own_charge(ctx, pr->order_no, pr->amount_fen, gw.transaction_id, gw.total_fee,
                              "pay", &row);
        break;
    case GW_ORDERPAID:
        /* Charged by an earlier attempt: fetch that charge. */
        if (gateway_orderquery(ctx, pr->order_no, &gw) == GW_CHARGED)
            s = settle_charge(ctx, pr->order_no, gw.transaction_id, gw.total_fee, "pay", &row);
        break;
    case GW_NOT_CHARGED:
        pay_declined(ctx, pr, fence, &gw, a);
        return;
    case GW_CLOSED:
        /* Closed or reversed at the gateway (by a resolver whose own write was lost). */
        s = settle_closed(ctx, pr->order_no, fence, "pay", &row);
        break;
    case GW_PREPAY: /* not a micropay answer */
    case GW_UNKNOWN:
    case GW_UNSUPPORTED:
        /* A verified reply without a known outcome (SYSTEMERROR...): the call
         * may still charge (USERPAYING: the customer confirms on the phone; a
         * timeout: the request may be on its way). The reconciler polls
         * orderquery every IDEMPAY_MICROPAY_POLL_MS, then reverses. */
        order_store_lease_for(ctx, pr->order_no, fence, ctx->cfg->micropay_poll_ms);
        break;
    }
    pay_answer_settled(a, pr, s, &row);
}

/* NATIVE/JSAPI: obtains the order's prepay (unifiedorder charges nothing)
 * and answers it; fence is the attempt read or held. */
static void pay_prepay(app_ctx *ctx, const pay_request *pr, long long fence, bool repeat,
                       pay_answer *a)
{
    trade_row tr;
    gw_result gw;
    order_row row;
    settle_result s = SETTLE_PENDING;

    if (trade_store_get(ctx, pr->order_no, &tr) != ORDER_STORE_OK) {
        pay_processing(a, pr->order_no, repeat);
        return;
    }
    switch (pay_prepay_obtain(ctx, pr->order_no, pr->amount_fen, fence, &tr, &gw, &s, &row)) {
    case PREPAY_AWAITING:
        pay_awaiting(ctx, a, pr->order_no, &tr, repeat);
        return;
    case PREPAY_SETTLED:
        pay_answer_settled(a, pr, s, &row);
        return;
    case PREPAY_DECLINED:
        pay_declined(ctx, pr, fence, &gw, a);
        return;
    default:
        pay_processing(a, pr->order_no, repeat);
        return;
    }
}

/* The holder of attempt `fence` starts its flow's gateway call. */
static void pay_charge(app_ctx *ctx, const pay_request *pr, long long fence, pay_answer *a)
{
    if (pr->flow == TRADE_MICROPAY)
        pay_micropay(ctx, pr, fence, a);
    else
        pay_prepay(ctx, pr, fence, false, a);
}

/* The trade row of a new order, before the order row: OK (go on, *lease_ms
 * the order's lease), DUPLICATE (the order_no has a trade of another flow:
 * *a holds 422), ERROR. */
static order_store_result pay_trade_begin(app_ctx *ctx, const pay_request *pr, pay_answer *a,
                                          long *lease_ms)
{
    trade_row tr;
    const long long now = clocks_real_ms();

    trade_row_new(&tr, pr->flow, pr->openid, now, ctx->cfg->prepay_ttl_ms);
    switch (trade_store_insert(ctx, pr->order_no, &tr)) {
    case ORDER_STORE_OK:
        break;
    case ORDER_STORE_DUPLICATE:
        if (tr.type != pr->flow) {
            /* another caller's order is not found, whatever its flow */
            order_row row;
            if (order_store_get(ctx, pr->order_no, &row) == ORDER_STORE_OK &&
                row.caller_id != pr->caller_id)
                pay_not_theirs(a);
            else
                pay_flow_mismatch(a);
            return ORDER_STORE_DUPLICATE;
        }
        break;
    default:
        return ORDER_STORE_ERROR;
    }
    if (tr.type != TRADE_MICROPAY)
        *lease_ms = pay_prepay_lease_ms(ctx->cfg, &tr, now);
    return ORDER_STORE_OK;
}

/* The three steps that may call the gateway, each begun by the write that
 * gives this request the order's current attempt. */
typedef enum {
    PAY_STEP_NEW,     /* INSERT the order (attempt 1), then charge */
    PAY_STEP_RESOLVE, /* take an expired lease, then end that attempt (settle_resolve) */
    PAY_STEP_RETRY    /* take a declined (retryable FAILED) order back, then charge */
} pay_step;

typedef enum {
    PAY_STEP_ANSWERED = 0, /* *a holds the answer */
    PAY_STEP_READ_AGAIN,   /* another request moved the order first, or it failed without a
                            * close: read it again */
    PAY_STEP_NO_SLOT,      /* every gateway slot of this process is taken: nothing written */
    PAY_STEP_DB_ERROR      /* MariaDB failed before the gateway was called: nothing charged */
} pay_step_result;

/* Runs one step holding a gateway slot: the one place the pay flow takes
 * and gives back a slot. row is the order as read (for RESOLVE and RETRY). */
static pay_step_result pay_gateway_step(app_ctx *ctx, const pay_request *pr, pay_step step,
                                        order_row *row, pay_answer *a)
{
    long lease_ms = ctx->cfg->lease_ms;
    order_store_result r;
    settle_result s = SETTLE_PENDING;

    if (!pay_slot_take(ctx->cfg))
        return PAY_STEP_NO_SLOT;
    switch (step) {
    case PAY_STEP_NEW:
        r = pay_trade_begin(ctx, pr, a, &lease_ms);
        if (r == ORDER_STORE_DUPLICATE) {
            r = ORDER_STORE_OK; /* *a holds the 422 */
            break;
        }
        if (r != ORDER_STORE_OK)
            break;
        /* the unique key decides between concurrent first requests */
        r = order_store_insert_owned(ctx, pr->caller_id, pr->order_no, pr->user_id, pr->amount_fen,
                                     lease_ms);
        if (r == ORDER_STORE_OK)
            pay_charge(ctx, pr, 1, a);
        if (r == ORDER_STORE_ARCHIVED) {
            pay_archived(ctx, pr, a);
            r = ORDER_STORE_OK; /* *a holds the 409 */
        }
        break;
    case PAY_STEP_RESOLVE:
        r = order_store_take_expired(ctx, pr->order_no, row->attempts, lease_ms);
        if (r == ORDER_STORE_OK) {
            s = settle_resolve(ctx, pr->order_no, row->attempts + 1, ctx->cfg->failed_recheck_ms,
                               "pay", row);
            if (s != SETTLE_FAILED)
                pay_answer_settled(a, pr, s, row);
        }
        break;
    case PAY_STEP_RETRY:
    default:
        r = order_store_retry(ctx, pr->order_no, row->status, row->attempts, lease_ms);
        if (r == ORDER_STORE_OK)
            pay_charge(ctx, pr, row->attempts + 1, a);
        break;
    }
    pay_slot_give();
    if (r == ORDER_STORE_ERROR)
        return PAY_STEP_DB_ERROR;
    return r == ORDER_STORE_OK && s != SETTLE_FAILED ? PAY_STEP_ANSWERED : PAY_STEP_READ_AGAIN;
}

/* A repeat of a PROCESSING order under a live lease. MICROPAY (and an
 * order without a trade row): 202, its holder or the reconciler works it.
 * NATIVE/JSAPI: the stored prepay, after the poll's rate-limited
 * orderquery; no prepay stored once the holder's call is over (uncertain,
 * or its holder died): unifiedorder again, with the same parameters. */
static void pay_live(app_ctx *ctx, const pay_request *pr, order_row *row, pay_answer *a)
{
    trade_row tr;

    if (trade_store_get(ctx, pr->order_no, &tr) != ORDER_STORE_OK || tr.type == TRADE_MICROPAY) {
        pay_processing(a, row->order_no, true);
        return;
    }
    if (tr.type != pr->flow) {
        pay_flow_mismatch(a);
        return;
    }
    if (tr.prepay_id[0] == '\0') {
        if (tr.age_ms <= ctx->cfg->gateway_timeout_ms || !pay_slot_take(ctx->cfg)) {
            pay_processing(a, row->order_no, true);
            return;
        }
        pay_prepay(ctx, pr, row->attempts, true, a);
        pay_slot_give();
        return;
    }
    switch (pay_prepay_poll(ctx, pr->order_no, row)) {
    case SETTLE_PAID:
        pay_paid(a, row->order_no, row->transaction_id, row->amount_fen, true);
        return;
    case SETTLE_CLOSED:
        pay_closed(a, row, true);
        return;
    default:
        pay_awaiting(ctx, a, row->order_no, &tr, true);
        return;
    }
}

/* Acts on the order as read: returns true when *a holds the answer, false
 * to read the order again. */
static bool pay_act_on(app_ctx *ctx, const pay_request *pr, order_row *row, pay_answer *a)
{
    pay_step step;

    if (row->caller_id != pr->caller_id) {
        pay_not_theirs(a);
        return true;
    }
    if (row->user_id != pr->user_id || row->amount_fen != pr->amount_fen) {
        pay_mismatch(a);
        return true;
    }
    switch (row->status) {
    case ORDER_PAID:
        paid_cache_put(row->order_no, row->caller_id, row->user_id, row->amount_fen,
                       row->transaction_id);
        pay_paid(a, row->order_no, row->transaction_id, row->amount_fen, true);
        return true;
    case ORDER_PROCESSING:
        if (row->lease_live) {
            pay_live(ctx, pr, row, a);
            return true;
        }
        step = PAY_STEP_RESOLVE; /* its holder's lease ran out: end that attempt first */
        break;
    case ORDER_FAILED:
        if (row->final_reason != ORDER_RETRYABLE) {
            pay_closed(a, row, true);
            return true;
        }
        if (order_row_awaits_recheck(row)) {
            /* FAILED without a fence (docs/FENCE.md): its last attempt may
             * still charge until the recheck says; no new attempt before. */
            pay_processing(a, row->order_no, true);
            return true;
        }
        step = PAY_STEP_RETRY; /* a declined order may be tried again */
        break;
    case ORDER_PENDING:
    default:
        step = PAY_STEP_RETRY;
        break;
    }
    switch (pay_gateway_step(ctx, pr, step, row, a)) {
    case PAY_STEP_ANSWERED:
        return true;
    case PAY_STEP_NO_SLOT:
        if (step == PAY_STEP_RESOLVE)
            pay_processing(a, row->order_no, true);
        else
            pay_busy(a);
        return true;
    case PAY_STEP_DB_ERROR:
        pay_unavailable(a);
        return true;
    default:
        return false;
    }
}

/* Reads the order and acts on its state (the seed's pay(), without its
 * recursion and its transaction around the gateway call). */
static void pay_flow(app_ctx *ctx, const pay_request *pr, pay_answer *a)
{
    order_row row;
    paid_entry paid;
    pay_step_result st;

    /* A repeat of an order already seen PAID: answered from memory (PAID is
     * terminal, so the cached row is the row). */
    if (paid_cache_get(pr->order_no, &paid)) {
        if (paid.caller_id != pr->caller_id)
            pay_not_theirs(a);
        else if (paid.user_id != pr->user_id || paid.amount_fen != pr->amount_fen)
            pay_mismatch(a);
        else
            pay_paid(a, paid.order_no, paid.transaction_id, paid.amount_fen, true);
        return;
    }
    /* Most requests that get here are new orders: try the INSERT first, and
     * let the unique key say whether it is a repeat (then read it below).
     * Without a gateway slot, go straight to reading. */
    st = pay_gateway_step(ctx, pr, PAY_STEP_NEW, NULL, a);
    for (int round = 0; round < PAY_MAX_ROUNDS; round++) {
        if (st == PAY_STEP_ANSWERED)
            return;
        if (st == PAY_STEP_DB_ERROR) {
            pay_unavailable(a);
            return;
        }
        switch (order_store_get(ctx, pr->order_no, &row)) {
        case ORDER_STORE_OK:
            if (pay_act_on(ctx, pr, &row, a))
                return;
            st = PAY_STEP_READ_AGAIN;
            break;
        case ORDER_STORE_MISS:
            st = pay_gateway_step(ctx, pr, PAY_STEP_NEW, NULL, a);
            if (st == PAY_STEP_NO_SLOT) {
                pay_busy(a);
                return;
            }
            break;
        default:
            pay_unavailable(a);
            return;
        }
    }
    pay_processing(a, pr->order_no, true);
}

/* The token check (before any order row is written or the gateway is
 * called). Returns 0 to go on, -1 with *a set to the refusal. */
static int pay_check_token(app_ctx *ctx, const pay_request *pr, pay_answer *a)
{
    token_mode mode = ctx->cfg->token_mode;

    if (mode == TOKEN_MODE_OFF)
        return 0;
    if (!pr->has_token) {
        if (mode != TOKEN_MODE_REQUIRED)
            return 0;
        pay_error(a, 403, "invalid_token", TOKEN_MISSING_MESSAGE, MET_PAY_INVALID_TOKEN);
        return -1;
    }
    switch (token_consume_for(ctx, pr->caller_id, pr->token, pr->user_id, pr->order_no)) {
    case TOKEN_ACCEPTED:
    case TOKEN_RETRY:
        return 0;
    case TOKEN_INVALID:
        pay_error(a, 403, "invalid_token", TOKEN_INVALID_MESSAGE, MET_PAY_INVALID_TOKEN);
        return -1;
    case TOKEN_UNAVAILABLE:
        break;
    }
    pay_error(a, 503, "unavailable", "the token store is unavailable; nothing was charged",
              MET_PAY_UNAVAILABLE);
    return -1;
}

/* How long an Idempotency-Key claim protects its running request: the
 * order lease, and at least two gateway calls (orderquery + unifiedorder). */
static long pay_claim_lease_ms(const app_config *cfg)
{
    return service_windows_claim_ms(cfg->lease_ms, cfg->gateway_timeout_ms);
}

/* An Idempotency-Key replay of a stored 402: true (with *a the PAID
 * answer, marked replayed) when the order is PAID now. */
static bool pay_replay_paid(app_ctx *ctx, const pay_request *pr, pay_answer *a)
{
    order_row row;

    if (order_store_get(ctx, pr->order_no, &row) != ORDER_STORE_OK || row.status != ORDER_PAID)
        return false;
    pay_paid(a, row.order_no, row.transaction_id, row.amount_fen, true);
    a->outcome = MET_PAY_IDEM_REPLAYED;
    return true;
}

/* An Idempotency-Key's stored answer: written to resp byte for byte what the
 * first request answered (true), or an answer in a (false): unavailable for
 * an unusable record, PAID for a stored decline of an order a late charge
 * has made PAID since (a gateway without closeorder). */
static bool pay_replay_stored(app_ctx *ctx, const pay_request *pr, const idem_stored *stored,
                              pay_answer *a, http_response *resp)
{
    if (stored->status < 200 || stored->status > 599 || stored->body_len == 0) {
        log_msg(LOG_ERROR,
                "pay order=%s: unusable stored answer (status %d) for an Idempotency-Key",
                pr->order_no, stored->status);
        pay_unavailable(a);
        return false;
    }
    if (stored->status == 402 && pay_replay_paid(ctx, pr, a))
        return false;
    http_response_set(resp, stored->status, "application/json", stored->body, stored->body_len);
    http_response_header(resp, "Idempotent-Replayed", "true");
    metrics_inc(MET_PAY_IDEM_REPLAYED);
    metrics_inc(MET_DUPLICATE_ABSORBED);
    return true;
}

void pay_handle_post(app_ctx *ctx, const http_request *req, http_response *resp)
{
    pay_answer a = { 0 };
    pay_request pr;
    pay_req_status st;
    char msg[PAY_MESSAGE_MAX];
    char fingerprint[IDEM_FINGERPRINT_LEN + 1];
    char flow_key[PAY_FLOW_KEY_MAX];
    idem_stored stored;
    bool claimed = false;

    st = pay_request_parse(req, &pr, msg, sizeof(msg));
    if (st != PAY_REQ_OK) {
        pay_error(&a, pay_req_status_http(st), pay_req_status_code(st), msg, MET_PAY_INVALID);
        goto answer;
    }
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", pr.order_no);
    pr.caller_id = req->caller_id;

    if (pr.has_idem_key) {
        pay_request_flow_key(&pr, flow_key);
        if (idem_key_fingerprint_flow(pr.order_no, pr.user_id, pr.amount_fen, flow_key,
                                      fingerprint) != 0) {
            pay_unavailable(&a);
            goto answer;
        }
        switch (idem_key_claim(ctx, pr.caller_id, pr.user_id, pr.idem_key, fingerprint,
                               pay_claim_lease_ms(ctx->cfg), ctx->cfg->idempotency_ttl_s,
                               &stored)) {
        case IDEM_CLAIMED:
            claimed = true;
            break;
        case IDEM_REPLAY:
            if (pay_replay_stored(ctx, &pr, &stored, &a, resp))
                return;
            goto answer;
        case IDEM_IN_PROGRESS:
            pay_error(&a, 409, "request_in_progress",
                      "a request with this Idempotency-Key is still running",
                      MET_PAY_IDEM_CONFLICT);
            a.absorbed = true;
            goto answer;
        case IDEM_MISMATCH:
            pay_error(&a, 422, "idempotency_key_mismatch",
                      "this Idempotency-Key was used with a different request",
                      MET_PAY_IDEM_MISMATCH);
            goto answer;
        case IDEM_UNAVAILABLE:
            pay_unavailable(&a);
            goto answer;
        }
    }

    if (pay_check_token(ctx, &pr, &a) == 0)
        pay_flow(ctx, &pr, &a);

    if (claimed) {
        if (pay_answer_final(&a))
            idem_key_complete(ctx, pr.caller_id, pr.user_id, pr.idem_key, fingerprint, a.status,
                              a.body);
        else
            idem_key_release(ctx, pr.caller_id, pr.user_id, pr.idem_key, fingerprint);
    }

answer:
    pay_answer_write(ctx, &a, resp);
    free(a.body);
}
