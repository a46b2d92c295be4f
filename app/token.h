/* token - single-use, user-bound payment tokens in Redis (the seed's second
 * scheme, done right). A token is issued with SET pay:token:<t> <user> EX ttl NX
 * (pay:token:c<caller>:<t> for a merchant-door caller: token_issue_for)
 * and consumed by one atomic Lua step (EVALSHA, reloaded on NOSCRIPT): owned
 * by the user and unused -> bound to the order; already bound to the same
 * order -> a retry, accepted; anything else -> refused.
 *
 * Invariants: a token is never read and then deleted in two steps (two
 * concurrent requests can never both bind it), and a consumed token is never
 * deleted: it stays in Redis as "used:<user>:<order_no>" for at least
 * max(24 h, IDEMPAY_IDEMPOTENCY_TTL, IDEMPAY_TOKEN_TTL) so that a retry of the
 * same order is still recognised whatever the payment's outcome was.
 * Tokens are written to logs only through log_token (truncated). */
#ifndef IDEMPAY_TOKEN_H
#define IDEMPAY_TOKEN_H

#include <stddef.h>
#include "app_ctx.h"
#include "http_msg.h"

#define TOKEN_RANDOM_BYTES 24 /* 192 bits from the OS random source (getrandom) */
#define TOKEN_TEXT_LEN 32     /* base64url of TOKEN_RANDOM_BYTES, no padding */
#define TOKEN_TEXT_MAX (TOKEN_TEXT_LEN + 1)
#define TOKEN_KEY_PREFIX "pay:token:"
#define TOKEN_USED_KEEP_MIN_S 86400L /* a consumed token is kept at least this long */

/* The message of the 403 invalid_token answer (pay flow). */
#define TOKEN_INVALID_MESSAGE                                                                      \
    "token unknown, expired, of another user or used for another order; "                          \
    "fetch a new token with GET /api/pay/token"
/* The message of the 403 answer when tokens are required and none was sent. */
#define TOKEN_MISSING_MESSAGE "a payment token is required; fetch one with GET /api/pay/token"

typedef enum {
    TOKEN_ACCEPTED = 0, /* first use: now bound to order_no */
    TOKEN_RETRY,        /* already bound to this order_no by this user: a retry */
    TOKEN_INVALID,      /* unknown, expired, another user's, bound to another order, malformed */
    TOKEN_UNAVAILABLE   /* Redis down or failing: answer 503, write nothing */
} token_result;

/* Consumes token for (user_id, order_no) in one atomic Redis step. token may
 * be NULL or malformed (TOKEN_INVALID without asking Redis); an invalid
 * user_id (< 1) or order_no also gives TOKEN_INVALID. A connection found
 * closed by the peer (Redis restarted since it was opened) is replaced and the
 * step run once more. Each Redis call is bounded by the Redis timeout. On
 * TOKEN_UNAVAILABLE the Redis connection has been dropped (app_ctx_redis_lost)
 * and the token may or may not have been bound to order_no: a retry of the
 * same order with the same token is accepted either way. Counts
 * MET_TOKEN_REJECTED for TOKEN_INVALID. */
token_result token_consume(app_ctx *ctx, const char *token, long long user_id,
                           const char *order_no);

/* token_consume for the tokens of a merchant-door caller: the token is
 * looked up under pay:token:c<caller_id>:<t> (caller_id 0: pay:token:<t>,
 * as token_consume), so another caller's token is TOKEN_INVALID. */
token_result token_consume_for(app_ctx *ctx, long long caller_id, const char *token,
                               long long user_id, const char *order_no);

/* Writes a new token (TOKEN_TEXT_LEN characters of [A-Za-z0-9_-], base64url of
 * TOKEN_RANDOM_BYTES bytes from getrandom(2)) into out. Returns 0, or -1 when
 * the OS random source fails (out then holds ""). */
int token_generate(char out[TOKEN_TEXT_MAX]);

/* 1 when s has the shape of a token this module issues, else 0 (NULL ok). */
int token_text_valid(const char *s);

/* Issues a token for user_id (>= 1) valid for ttl_s (>= 1) seconds: SET
 * pay:token:<t> <user_id> EX ttl_s NX, drawing a new token on the (practically
 * impossible) clash; a connection closed by the peer is replaced once, as
 * in token_consume. Returns 0 with the token in out; -1 when Redis is down
 * or failing (connection dropped, ctx->err set, out ""); -2 for bad arguments
 * or a random source failure. */
int token_issue(app_ctx *ctx, long long user_id, long ttl_s, char out[TOKEN_TEXT_MAX]);
/* token_issue under caller_id's namespace (see token_consume_for). */
int token_issue_for(app_ctx *ctx, long long caller_id, long long user_id, long ttl_s,
                    char out[TOKEN_TEXT_MAX]);

/* GET /api/pay/token?user_id=U (for req->caller_id): 200 {"token","expires_in"} (Cache-Control:
 * no-store); 400 invalid_request when user_id is missing, repeated or not a
 * decimal 1..2^63-1; 503 unavailable + Retry-After when Redis is down; 500
 * when the random source fails. The method is checked by the router. Counts
 * MET_TOKEN_ISSUED. */
void token_handle_issue(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
