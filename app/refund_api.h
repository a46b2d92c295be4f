/* refund_api - the merchant refund API:
 *   POST /api/pay/orders/{order_no}/refunds  {"amount":"1.00","reason":"..."}
 *        with a required Idempotency-Key
 *   GET  /api/pay/orders/{order_no}/refunds
 *
 * A refund is one payment_refund row (kind 1) whose out_refund_no is derived
 * from (order_no, Idempotency-Key) only (refund_api_refund_no): a repeat
 * names the same row, so it refunds once. The amount rule (refund_state.h:
 * the sum of the kept charge's refunds that are not REFUNDCLOSE, plus this
 * one, is at most the charge) is checked and the row inserted in one
 * transaction that first locks the order row (SELECT ... FOR UPDATE), so
 * concurrent requests are serialised on the order and cannot together
 * exceed the charge. The gateway is never called here: refund_queue.c
 * submits the row. */
#ifndef IDEMPAY_REFUND_API_H
#define IDEMPAY_REFUND_API_H

#include <stddef.h>
#include "app_ctx.h"
#include "http_msg.h"

#define REFUND_API_SUFFIX "/refunds"
#define REFUND_API_KEY_MAX 255   /* Idempotency-Key: 1..255 of [!-~] */
#define REFUND_API_REASON_MAX 80 /* WeChat's refund_desc: 80 characters */
#define REFUND_API_NO_LEN 32     /* "RM" + 30 hex digits */

/* The out_refund_no of the merchant refund (order_no, key): "RM" + the
 * first 30 hex digits of SHA-256("idempay-refund\n" order_no "\n" key).
 * Deterministic; out must hold REFUND_API_NO_LEN + 1. Returns 0, or -1 when
 * an argument is empty or the crypto library fails (out is then ""). */
int refund_api_refund_no(const char *order_no, const char *key, char *out, size_t outlen);

/* POST: 202 {"order_no","refund_no","amount","status"} (status PROCESSING,
 * SUCCESS, REFUNDCLOSE, CHANGE, ABNORMAL; a repeat of the same key and
 * amount answers the same refund with Idempotent-Replayed: true);
 * 400 invalid_request (bad order_no, body, amount, reason or key), 404
 * not_found, 409 order_not_paid, 422 refund_exceeds_charge /
 * idempotency_key_mismatch (the key was used for another amount or order),
 * 503 unavailable. GET: 200 {"order_no","refundable","refunds":[...]},
 * 404, 503. Sets resp->log_order. */
void refund_api_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
