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

typedef enum { RN_APPLIED = 0, RN_REFUSED, RN_RETRY, RN_DOWN } rn_result;

/* The database half, shared with APIv3's refund notifications
 * (callback_v3.c): the verified n applied to our refund row (a few tries
 * of the CAS), counted and logged. RN_APPLIED: applied or final already
 * (acknowledge); RN_REFUSED: not our refund (n->reason); otherwise the
 * database failed (n->reason "temporarily unavailable"). order_no receives
 * the refund's order when known. */
rn_result refund_notify_apply(app_ctx *ctx, refund_notification *n, char *order_no, size_t cap);

#endif
