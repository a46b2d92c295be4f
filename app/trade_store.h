/* trade_store - payment_trade: the gateway trade of an order (its flow, the
 * prepay of NATIVE/JSAPI, when a MICROPAY was sent), one row per order_no
 * (= out_trade_no: one gateway trade per order; sql/011_pay_flows.sql).
 *
 * The row is written before the order row (the first request's insert; a
 * repeat finds it), so every order created since 011 has one; an order
 * without one is a legacy order, resolved as before (orderquery, then
 * closeorder). Writes are single autocommit statements: the prepay is
 * stored once (WHERE prepay_id IS NULL), the poll's rate limit is a
 * compare-and-set on last_query_at. Statements use the app_ctx slots
 * STMT_TRADE_BASE..STMT_TRADE_BASE+7. */
#ifndef IDEMPAY_TRADE_STORE_H
#define IDEMPAY_TRADE_STORE_H

#include <stdbool.h>
#include "app_ctx.h"
#include "order_store.h"
#include "trade_type.h"

#define TRADE_OPENID_MAX 128
#define TRADE_PREPAY_MAX 64
#define TRADE_CODE_URL_MAX 256
#define TRADE_EXPIRE_LEN 14 /* yyyyMMddHHmmss */

typedef struct {
    trade_type type;
    char openid[TRADE_OPENID_MAX + 1];      /* JSAPI, else "" */
    char time_expire[TRADE_EXPIRE_LEN + 1]; /* NATIVE/JSAPI: China time, fixed at insert */
    long long expires_ms;                   /* time_expire as Unix ms (0 for MICROPAY) */
    char prepay_id[TRADE_PREPAY_MAX + 1];   /* "" until stored */
    char code_url[TRADE_CODE_URL_MAX + 1];  /* NATIVE, "" until stored */
    long long sent_age_ms;                  /* MICROPAY: ms since the micropay was sent; -1 none */
    long long age_ms;                       /* ms since the row was created */
    bool answered;                          /* MICROPAY: that micropay got a verified reply */
} trade_row;

/* Fills r for a new trade created now_ms (Unix ms): type, openid, and for
 * NATIVE/JSAPI time_expire = now + ttl_ms (whole seconds, rounded up,
 * formatted in China time, UTC+8) and expires_ms. Pure. */
void trade_row_new(trade_row *r, trade_type type, const char *openid, long long now_ms,
                   long ttl_ms);

/* Inserts r for order_no (MICROPAY: sent_at now). OK (inserted), DUPLICATE
 * (a row exists: *r is overwritten with it, so the caller compares the
 * flow), ERROR. */
order_store_result trade_store_insert(app_ctx *ctx, const char *order_no, trade_row *r);

/* Reads order_no's row. OK, MISS (a legacy order), ERROR. */
order_store_result trade_store_get(app_ctx *ctx, const char *order_no, trade_row *r);

/* Stores the prepay once (WHERE prepay_id IS NULL). OK, MISS (one was stored
 * first: read it), ERROR. */
order_store_result trade_store_set_prepay(app_ctx *ctx, const char *order_no, const char *prepay_id,
                                          const char *code_url);

/* The holder of a MICROPAY attempt is about to send it: sent_at = now. */
order_store_result trade_store_mark_sent(app_ctx *ctx, const char *order_no);

/* The MICROPAY holder's call got a verified reply (any answer): nothing of
 * it is still queued at the gateway. */
order_store_result trade_store_mark_answered(app_ctx *ctx, const char *order_no);

/* The poll's rate limit, shared by every process: OK when this caller may
 * send one orderquery now (last_query_at was older than min_interval_ms and
 * is now), MISS when another did within it, ERROR. */
order_store_result trade_store_query_take(app_ctx *ctx, const char *order_no, long min_interval_ms);

#endif
