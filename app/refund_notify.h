/* refund_notify - POST /api/pay/callback/wechat/refund: WeChat Pay v2 refund
 * result notifications ("退款结果通知").
 *
 * The notification is not signed: its req_info is the refund's result,
 * AES-256-ECB encrypted under MD5(merchant key) (common/wx_refund_info.h).
 * A req_info that decrypts under our key, with our appid and mch_id, and
 * whose out_refund_no, transaction_id and refund_fee equal a refund row of
 * ours, is believed: its refund_status (SUCCESS, REFUNDCLOSE, CHANGE) steps
 * the row through refund_state_on_result by a CAS on the state read. Every
 * reply is HTTP 200 with WeChat's XML: SUCCESS when applied or already
 * final, FAIL (WeChat sends it again) when not verified or MariaDB fails. */
#ifndef IDEMPAY_REFUND_NOTIFY_H
#define IDEMPAY_REFUND_NOTIFY_H

#include <stddef.h>
#include "app_ctx.h"
#include "config.h"
#include "http_msg.h"
#include "refund_notify_verify.h"

/* The route: verify, apply, answer WeChat. Sets resp->log_order to the
 * refund's order when known. */
void refund_notify_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
