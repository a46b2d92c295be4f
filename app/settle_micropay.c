/* settle_micropay.c - orderquery polls, then reverse: the payment-code
 * flow's fence (see settle_micropay.h and docs/FENCE.md). */
#include "settle_micropay.h"

#include <stdbool.h>
#include <string.h>

#include "gateway.h"
#include "log.h"

long settle_micropay_next_ms(const app_config *cfg, long long sent_age_ms)
{
    long long until = cfg->micropay_window_ms > cfg->reverse_min_wait_ms ? cfg->micropay_window_ms
                                                                         : cfg->reverse_min_wait_ms;
    long long left;

    if (sent_age_ms < 0 || sent_age_ms >= until)
        return 0;
    left = until - sent_age_ms;
    return left < cfg->micropay_poll_ms ? (long)left : cfg->micropay_poll_ms;
}

/* Keeps the order PROCESSING, leased to this attempt for ms more. */
static settle_result settle_micropay_later(app_ctx *ctx, const char *order_no, long long fence,
                                           long ms)
{
    if (order_store_lease_for(ctx, order_no, fence, ms) == ORDER_STORE_ERROR)
        return SETTLE_ERROR;
    return SETTLE_PENDING;
}

/* An unanswered micropay the gateway still does not know (reverse
 * ORDERNOTEXIST) once it was sent a micropay window and a lease ago (or its
 * send was never recorded): it is not waited for any longer. Without this
 * an order whose verified reply was lost with MariaDB (answered never
 * written) stayed PROCESSING for ever. */
static bool settle_micropay_given_up(const app_config *cfg, const trade_row *tr)
{
    return tr->sent_age_ms < 0 ||
           tr->sent_age_ms >= (long long)cfg->micropay_window_ms + cfg->lease_ms;
}

/* No fence possible (docs/FENCE.md, the fallback): FAILED retryably with a
 * recheck after IDEMPAY_FAILED_RECHECK_MS; the recheck and the statement
 * job make it PAID when the micropay lands after all. */
static settle_result settle_micropay_failed(app_ctx *ctx, const char *order_no, long long fence,
                                            const char *source, order_row *row)
{
    log_msg(LOG_WARN,
            "%s order=%s: reverse: still no such trade at the gateway; FAILED with a"
            " recheck in %ld ms",
            source, order_no, ctx->cfg->failed_recheck_ms);
    return settle_failed_retryably(ctx, order_no, fence, ctx->cfg->failed_recheck_ms, row);
}

/* The reverse: the trade ends (FAILED for good), or we call again later. */
static settle_result settle_reverse(app_ctx *ctx, const char *order_no, long long fence,
                                    const trade_row *tr, const char *source, order_row *row)
{
    gw_result gw;
    settle_result s;
    gw_outcome o = gateway_reverse(ctx, order_no, &gw);

    /* ORDERNOTEXIST: the micropay is not in the gateway's ledger. When its
     * reply came back verified (SYSTEMERROR...), nothing of it is in
     * flight: final. Otherwise (a timeout, a reset) it may still be queued
     * there: no fence; ask again, less often, until settle_micropay_given_up. */
    if (o == GW_NOT_CHARGED && tr->answered)
        o = GW_CLOSED;
    if (o == GW_NOT_CHARGED && settle_micropay_given_up(ctx->cfg, tr))
        return settle_micropay_failed(ctx, order_no, fence, source, row);
    if (o == GW_NOT_CHARGED) {
        log_msg(LOG_WARN,
                "%s order=%s: reverse: no such trade at the gateway yet; asking again"
                " in %ld ms",
                source, order_no, ctx->cfg->lease_ms);
        return settle_micropay_later(ctx, order_no, fence, ctx->cfg->lease_ms);
    }
    if (o != GW_CLOSED) {
        log_msg(LOG_WARN, "%s order=%s: reverse not done (%s%s); calling again later", source,
                order_no, gw.err_code, gw.recall ? ", recall=Y" : "");
        return settle_micropay_later(ctx, order_no, fence, ctx->cfg->micropay_poll_ms);
    }
    s = settle_closed(ctx, order_no, fence, source, row);
    if (s == SETTLE_PAID)
        log_msg(LOG_ERROR,
                "%s order=%s: reversed at the gateway but PAID here (%s): the"
                " gateway returned that charge; an operator must look",
                source, order_no, row->transaction_id);
    return s;
}

settle_result settle_resolve_micropay(app_ctx *ctx, const char *order_no, long long fence,
                                      const trade_row *tr, const char *source, order_row *row)
{
    gw_result gw;
    long next;

    switch (gateway_orderquery(ctx, order_no, &gw)) {
    case GW_CHARGED:
        return settle_charge(ctx, order_no, gw.transaction_id, gw.total_fee, source, row);
    case GW_CLOSED:
        return settle_closed(ctx, order_no, fence, source, row);
    default:
        if (strcmp(gw.trade_state, "REVOKED") == 0)
            return settle_closed(ctx, order_no, fence, source, row);
        break;
    }
    /* Not charged yet, USERPAYING, or not known: poll within the window. */
    next = settle_micropay_next_ms(ctx->cfg, tr->sent_age_ms);
    if (next > 0)
        return settle_micropay_later(ctx, order_no, fence, next);
    return settle_reverse(ctx, order_no, fence, tr, source, row);
}
