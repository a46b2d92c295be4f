/* callback - POST /api/pay/callback/wechat: WeChat Pay v2 payment-result
 * notifications, verified, then applied exactly once (the seed's fifth
 * scheme without its races; see docs/CALLBACKS.md).
 *
 * A notification is first verified without touching the database
 * (callback_verify.h: size, XML, return/result codes, merchant, signature,
 * fields), then checked against its order (callback_check_order), then
 * applied in one MariaDB transaction. Every failed check answers WeChat's
 * FAIL reply with the reason and changes nothing; every reply is HTTP 200
 * with WeChat's compact XML, never a 4xx/5xx. */
#ifndef IDEMPAY_CALLBACK_H
#define IDEMPAY_CALLBACK_H

#include "app_ctx.h"
#include "callback_verify.h"

/* POST /api/pay/callback/wechat. Verifies, then applies in one transaction:
 * record the transaction_id (unique), CAS the order to PAID; a second
 * charge for a PAID order is recorded and queued for refund
 * (refund_queue_enqueue) in the same transaction. Retries the transaction on
 * deadlock / lock wait timeout. Never calls the gateway. Always answers 200
 * XML (SUCCESS or FAIL with the reason); sets resp->log_order. */
void callback_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
