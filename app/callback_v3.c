/* callback_v3.c - APIv3 notifications: verify, then the shared database half
 * (see callback_v3.h). */
#include "callback_v3.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "callback.h"
#include "callback_v3_verify.h"
#include "gateway_v3.h"
#include "log.h"
#include "metrics.h"
#include "refund_notify.h"

/* Verifies req into n, fetching the platform certificates once when the
 * signer's serial is new to us. 0 or -1 (n says why). */
static int cb3_verify(app_ctx *ctx, const http_request *req, cb3_notification *n)
{
    const wx3_signed_headers h = { req->wx_serial, req->wx_signature, req->wx_timestamp,
                                   req->wx_nonce };
    wx3_trust *t = gateway_v3_platform(ctx->cfg);
    gw_result ignored;

    int rc = callback_v3_verify(ctx->cfg, t, &h, req->body, req->body_len, req->body_too_large,
                                time(NULL), n);
    if (rc != 0 && n->trust == WX3_TRUST_UNKNOWN_SERIAL) {
        gateway_result_init(&ignored);
        if (gateway_v3_refresh(ctx, &ignored) == 0) {
            callback_v3_free(n);
            rc = callback_v3_verify(ctx->cfg, t, &h, req->body, req->body_len, req->body_too_large,
                                    time(NULL), n);
        }
    }
    return rc;
}

/* A refusal before the database: counted, logged, answered. */
static void cb3_refused(const cb3_notification *n, http_response *resp)
{
    if (n->kind == CB3_REFUND && n->verdict != CB_VERDICT_SIGNATURE) {
        metrics_inc(MET_REFUND_NOTIFY_FAIL);
        log_msg(LOG_WARN, "v3 refund notification refused: %s", n->reason);
    } else {
        callback_notification c = n->pay;
        callback_set_reason(&c, n->reason);
        callback_refused(n->verdict, &c);
    }
    callback_v3_reply(resp, n->status, n->reason);
}

static void cb3_payment(app_ctx *ctx, cb3_notification *n, http_response *resp)
{
    callback_verdict v = callback_apply(ctx, &n->pay, n->plain, n->plain_len);

    snprintf(resp->log_order, sizeof(resp->log_order), "%s", n->pay.order_no);
    if (v == CB_VERDICT_OK) {
        callback_v3_reply(resp, 204, NULL);
        return;
    }
    callback_refused(v, &n->pay);
    callback_v3_reply(resp, v == CB_VERDICT_UNAVAILABLE ? 500 : 400, n->pay.reason);
}

static void cb3_refund(app_ctx *ctx, cb3_notification *n, http_response *resp)
{
    char order_no[ORDER_NO_MAX + 1] = "";
    rn_result r = refund_notify_apply(ctx, &n->refund, order_no, sizeof(order_no));

    snprintf(resp->log_order, sizeof(resp->log_order), "%s", order_no);
    callback_v3_reply(resp, r == RN_APPLIED ? 204 : r == RN_REFUSED ? 400 : 500, n->refund.reason);
}

void callback_v3_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    cb3_notification n;

    if (ctx->cfg->v3.api != WX_API_V3) {
        callback_v3_reply(resp, 404, "APIv3 notifications are not configured here");
        return;
    }
    if (cb3_verify(ctx, req, &n) != 0)
        cb3_refused(&n, resp);
    else if (n.kind == CB3_PAYMENT)
        cb3_payment(ctx, &n, resp);
    else
        cb3_refund(ctx, &n, resp);
    callback_v3_free(&n);
}
