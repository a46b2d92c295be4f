/* settle_micropay - the fence of the payment-code flow (MICROPAY): an
 * uncertain micropay (USERPAYING, SYSTEMERROR, no reply) is polled with
 * orderquery every IDEMPAY_MICROPAY_POLL_MS within IDEMPAY_MICROPAY_WINDOW_MS
 * of the micropay (WeChat: every 5 s for 30 s), then ended with
 * /secapi/pay/reverse, never before IDEMPAY_REVERSE_MIN_WAIT_MS after it
 * (WeChat: 15 s). A reverse that succeeds (recall N) ends the trade: not
 * charged, or charged and returned by the gateway itself; the order is
 * FAILED for good (402 payment_closed). recall Y or no answer: call again
 * after one poll interval. The argument is docs/FENCE.md. */
#ifndef IDEMPAY_SETTLE_MICROPAY_H
#define IDEMPAY_SETTLE_MICROPAY_H

#include "app_ctx.h"
#include "settle.h"
#include "trade_store.h"

/* How long to wait, from a micropay sent sent_age_ms ago (-1: unknown,
 * long ago), before the reverse may be sent: 0 when it may be sent now,
 * else the time until the next look (at most one poll interval). Pure. */
long settle_micropay_next_ms(const app_config *cfg, long long sent_age_ms);

/* settle_resolve of a MICROPAY order (tr its trade), whose attempt `fence`
 * the caller holds: orderquery; a charge is settle_charge'd; CLOSED or
 * REVOKED is final; otherwise, within the window, the order stays
 * PROCESSING leased until the next poll; after it, reverse. */
settle_result settle_resolve_micropay(app_ctx *ctx, const char *order_no, long long fence,
                                      const trade_row *tr, const char *source, order_row *row);

#endif
