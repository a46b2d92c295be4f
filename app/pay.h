/* pay - the payment service's pay routes: POST /api/pay (the idempotent
 * pay flow) and GET /api/pay/orders/{order_no}.
 *
 * The flow guarantees, across duplicate, concurrent and retried requests
 * and crashes: the gateway charges an order at most once (out_trade_no is
 * always the order_no, and an order whose earlier attempt may have reached
 * the gateway is asked about with orderquery before any new unifiedorder);
 * a charge ends PAID (here, or later through the reconciler or the
 * callback); PAID is reached only with a verified charge of the order's
 * amount; a timeout never becomes FAILED; nothing is charged when MariaDB
 * cannot record it. */
#ifndef IDEMPAY_PAY_H
#define IDEMPAY_PAY_H

#include "app_ctx.h"
#include "http_msg.h"

#define PAY_ORDERS_PREFIX "/api/pay/orders/"
/* The 404 of POST /api/pay for an order_no another caller created. */
#define PAY_NOT_THEIRS_MESSAGE                                                                     \
    "this order_no belongs to another caller; order numbers are unique across callers"

/* POST /api/pay, in the flow the body names (NATIVE, JSAPI, MICROPAY:
 * docs/FLOWS.md). Answers 200 PAID, 202 AWAITING_PAYMENT (NATIVE/JSAPI:
 * the prepay) or PROCESSING (+Retry-After), 402
 * payment_declined, 422 order_mismatch / idempotency_key_mismatch, 409
 * request_in_progress (+Retry-After), 403 invalid_token, 400/405/413/415,
 * 503 unavailable (+Retry-After; nothing charged: MariaDB or Redis down, or
 * every gateway slot of this process taken). Repeats carry
 * Idempotent-Replayed: true. Sets resp->log_order; counts the outcome in
 * metrics. resp must be initialised; it is always filled. */
void pay_handle_post(app_ctx *ctx, const http_request *req, http_response *resp);

/* GET /api/pay/orders/{order_no} (req->path starts with PAY_ORDERS_PREFIX).
 * 200 with the order, 400 invalid_request for a bad order_no, 404
 * not_found, 405 for another method, 503 unavailable. */
void pay_handle_get_order(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
