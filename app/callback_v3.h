/* callback_v3 - POST /api/pay/callback/wechat/v3 (the public door): WeChat
 * Pay APIv3's payment and refund notifications for a merchant configured
 * with IDEMPAY_WX_API=v3. Verified and decrypted without the database
 * (callback_v3_verify.h; a signer new to us makes the process fetch
 * /v3/certificates once, gateway_v3_refresh), then applied by the same
 * code as v2's notifications: callback_apply (the order PAID exactly once,
 * a second charge queued for refund) and refund_notify_apply (the refund
 * row's CAS). Answers as APIv3 documents: 204 when applied or applied
 * before; 4xx {"code":"FAIL","message"} when refused (401 for a signature,
 * stale timestamp or unknown signer; 400 otherwise), 500 when the database
 * is down (WeChat sends it again). Refusals change nothing. Without v3
 * configured: 404. */
#ifndef IDEMPAY_CALLBACK_V3_H
#define IDEMPAY_CALLBACK_V3_H

#include "app_ctx.h"
#include "http_msg.h"

#define CALLBACK_V3_PATH "/api/pay/callback/wechat/v3"

void callback_v3_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
