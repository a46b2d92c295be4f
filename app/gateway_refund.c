/* gateway_refund.c - /secapi/pay/refund and /pay/refundquery (see
 * gateway_refund.h). */
#include "gateway_refund.h"

#include <stdlib.h>
#include <string.h>

#include "gateway_v3.h"
#include "money.h"

static int gr_is(const char *v, const char *want)
{
    return v != NULL && strcmp(v, want) == 0;
}

/* Copies an uppercase token ([A-Z_], at most cap - 1) or returns -1. */
static int gr_token(char *dst, size_t cap, const char *src)
{
    size_t n = src != NULL ? strlen(src) : 0;
    if (n == 0 || n >= cap)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((src[i] >= 'A' && src[i] <= 'Z') || src[i] == '_'))
            return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

static gw_outcome gr_mean_refund(const wx_msg *reply, const char *transaction_id, gw_result *out)
{
    return gateway_reply_refund(reply, transaction_id, out);
}

gw_outcome gateway_refund(app_ctx *ctx, const char *transaction_id, const char *out_refund_no,
                          long long total_fee, long long refund_fee, const char *reason,
                          gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_refund(ctx, transaction_id, out_refund_no, total_fee, refund_fee, reason,
                                 out);
    wx_msg req;
    const wx_pair fields[] = {
        WX_TEXT("transaction_id", transaction_id),
        WX_TEXT("out_refund_no", out_refund_no),
        WX_NUM("total_fee", total_fee),
        WX_NUM("refund_fee", refund_fee),
        WX_TEXT("refund_desc", reason != NULL && reason[0] != '\0' ? reason : NULL),
        WX_TEXT("notify_url", ctx->cfg->refund.notify_url),
    };

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = WX_MSG_SET_PAIRS(&req, fields) == 0;
    return gateway_call(ctx, WX_EP_REFUND, &req, built, transaction_id, gr_mean_refund, out);
}

gw_outcome gateway_reply_refundquery(const wx_msg *reply, const char *out_refund_no, gw_result *out)
{
    const char *result = wx_msg_get(reply, "result_code");
    const char *code = wx_msg_get(reply, "err_code");
    const char *no = wx_msg_get(reply, "out_refund_no_0");
    const char *fee = wx_msg_get(reply, "refund_fee_0");
    int64_t fen = -1;

    if (gr_is(result, "SUCCESS")) {
        if (no == NULL || strcmp(no, out_refund_no) != 0)
            return gateway_result_set(out, GW_UNKNOWN, "refund_mismatch",
                                      "the refundquery reply is about another refund");
        if (gr_token(out->trade_state, sizeof(out->trade_state),
                     wx_msg_get(reply, "refund_status_0")) != 0)
            return gateway_result_set(out, GW_UNKNOWN, "bad_refund_status",
                                      "refundquery without a valid refund_status_0");
        if (fee != NULL && money_parse_fen(fee, &fen) != 0)
            return gateway_result_set(out, GW_UNKNOWN, "bad_refund_fee",
                                      "refundquery with an invalid refund_fee_0");
        out->total_fee = fen;
        return gateway_result_set(out, GW_CHARGED, NULL, out->trade_state);
    }
    if (gr_is(result, "FAIL") && gr_is(code, "REFUNDNOTEXIST")) {
        memcpy(out->trade_state, "REFUNDNOTEXIST", sizeof("REFUNDNOTEXIST"));
        return gateway_result_set(out, GW_NOT_CHARGED, code, "the gateway has no such refund");
    }
    if (gr_token(out->err_code, sizeof(out->err_code), code) != 0)
        out->err_code[0] = '\0';
    return gateway_result_set(out, GW_UNKNOWN, out->err_code[0] ? NULL : "bad_result",
                              "refundquery gave no result");
}

gw_outcome gateway_refundquery(app_ctx *ctx, const char *out_refund_no, gw_result *out)
{
    if (ctx->cfg->v3.api == WX_API_V3)
        return gateway_v3_refundquery(ctx, out_refund_no, out);
    wx_msg req;

    gateway_result_init(out);
    wx_msg_init(&req);
    int built = wx_msg_set(&req, "out_refund_no", out_refund_no) == 0;
    return gateway_call(ctx, WX_EP_REFUNDQUERY, &req, built, out_refund_no,
                        gateway_reply_refundquery, out);
}
