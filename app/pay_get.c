/* pay_get.c - GET /api/pay/orders/{order_no}: the order as its caller may
 * read it (live, or from the archive), with the state a reader is shown. */
#include "pay.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_msg.h"
#include "order_archive.h"
#include "order_no.h"
#include "order_store.h"
#include "pay_prepay.h"
#include "pay_request.h"
#include "trade_store.h"

/* The state a reader is shown: a retryable FAILED order whose recheck is
 * to come (lease_set) reads PROCESSING, as its POST answers 202: its last
 * attempt may still charge, so neither FAILED nor a new attempt is true
 * yet (docs/FENCE.md, proof step 3 (b)). Every other order reads its
 * stored state. */
static const char *pay_status_shown(const order_row *row)
{
    if (order_row_awaits_recheck(row))
        return order_state_name(ORDER_PROCESSING);
    return order_state_name(row->status);
}

/* The GET answer for row. An order with a trade names its flow; a
 * PROCESSING prepay order with its prepay stored is AWAITING_PAYMENT, and
 * the poll may ask orderquery first (rate-limited; PAID when it shows the
 * charge). */
static char *pay_order_body(app_ctx *ctx, order_row *row)
{
    trade_row tr;
    char expires[32];
    const char *status = pay_status_shown(row);
    bool awaiting;

    if (trade_store_get(ctx, row->order_no, &tr) != ORDER_STORE_OK)
        return pay_body_order(row->order_no, row->user_id, row->amount_fen, status,
                              row->transaction_id, row->created_at, row->updated_at);
    awaiting = row->status == ORDER_PROCESSING && tr.type != TRADE_MICROPAY &&
               tr.prepay_id[0] != '\0';
    if (awaiting && pay_prepay_poll(ctx, row->order_no, row) != SETTLE_PENDING) {
        char no[ORDER_NO_MAX + 1];

        awaiting = false;
        snprintf(no, sizeof(no), "%s", row->order_no);
        if (order_store_get(ctx, no, row) != ORDER_STORE_OK)
            return NULL;
        status = pay_status_shown(row);
    }
    if (awaiting)
        status = "AWAITING_PAYMENT";
    pay_prepay_iso(tr.expires_ms, expires);
    return pay_body_order_trade(row->order_no, row->user_id, row->amount_fen, status,
                                row->transaction_id, row->created_at, row->updated_at,
                                trade_type_name(tr.type),
                                awaiting && tr.type == TRADE_NATIVE ? tr.code_url : NULL,
                                awaiting ? tr.prepay_id : NULL, awaiting ? expires : NULL);
}

/* 200 with an order's JSON body (freed here), or 500 when it could not be
 * built. */
static void pay_send_body(http_response *resp, char *body)
{
    if (body == NULL) {
        http_response_error(resp, 500, "internal_error", "out of memory");
        return;
    }
    http_response_set(resp, 200, "application/json", body, strlen(body));
    free(body);
}

/* 503 unavailable + Retry-After: the order could not be read. */
static void pay_get_unavailable(app_ctx *ctx, http_response *resp)
{
    char secs[24];

    http_response_error(resp, 503, "unavailable", "the payment database is unavailable");
    snprintf(secs, sizeof(secs), "%ld", ctx->cfg->retry_after_s);
    http_response_header(resp, "Retry-After", secs);
}

/* GET of an order_no with no live order: 200 from the archive (the body
 * says "archived": true) to the caller that created it, 404 not_found, or
 * 503. */
static void pay_get_archived(app_ctx *ctx, long long caller_id, const char *order_no,
                             http_response *resp)
{
    order_row row;
    char archived_at[ORDER_TIME_MAX] = "";
    char *body;

    switch (order_archive_get(ctx, order_no, &row, archived_at)) {
    case ORDER_STORE_OK:
        if (row.caller_id != caller_id) {
            http_response_error(resp, 404, "not_found", "no order with this order_no");
            return;
        }
        body = order_archive_body(&row, archived_at);
        pay_send_body(resp, body);
        return;
    case ORDER_STORE_MISS:
        http_response_error(resp, 404, "not_found", "no order with this order_no");
        return;
    default:
        pay_get_unavailable(ctx, resp);
        return;
    }
}

void pay_handle_get_order(app_ctx *ctx, const http_request *req, http_response *resp)
{
    const char *segment;
    char order_no[ORDER_NO_MAX + 1];
    order_row row;
    char *body;

    if (strcmp(req->method, "GET") != 0) {
        http_response_error(resp, 405, "method_not_allowed", "use GET");
        return;
    }
    segment = strncmp(req->path, PAY_ORDERS_PREFIX, strlen(PAY_ORDERS_PREFIX)) == 0
                  ? req->path + strlen(PAY_ORDERS_PREFIX)
                  : "";
    /* The path arrives as sent: "ORDER%7C1" is the order "ORDER|1". */
    if (http_path_decode(segment, order_no, sizeof(order_no)) != 0 || !order_no_valid(order_no)) {
        http_response_error(resp, 400, "invalid_request",
                            "order_no must be 6 to 32 characters of [0-9A-Za-z_|*-]");
        return;
    }
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", order_no);

    switch (order_store_get(ctx, order_no, &row)) {
    case ORDER_STORE_OK:
        if (row.caller_id != req->caller_id) {
            http_response_error(resp, 404, "not_found", "no order with this order_no");
            return;
        }
        body = pay_order_body(ctx, &row);
        pay_send_body(resp, body);
        return;
    case ORDER_STORE_MISS:
        pay_get_archived(ctx, req->caller_id, order_no, resp);
        return;
    default:
        pay_get_unavailable(ctx, resp);
        return;
    }
}
