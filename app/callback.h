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

/* The database half, shared by both dialects' notifications (v2 above,
 * APIv3's callback_v3.c): applies the verified n in one transaction as
 * described above; body[0..len) is the text kept in the record (v2: the
 * XML; v3: the decrypted resource). Returns CB_VERDICT_OK when the
 * notification is applied or was before (acknowledge it; the effect is
 * counted), else the verdict with n->reason (CB_VERDICT_UNAVAILABLE: the
 * database; WeChat should send it again). */
callback_verdict callback_apply(app_ctx *ctx, callback_notification *n, const char *body,
                                size_t len);
/* Counts and logs a refused notification (not CB_VERDICT_OK). */
void callback_refused(callback_verdict v, const callback_notification *n);

#endif
