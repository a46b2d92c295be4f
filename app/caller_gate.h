/* caller_gate - authenticates a request on the merchant door: the signature
 * headers (caller_auth), the caller's row and key (caller_store), then the
 * nonce remembered in Redis so that a signed request is accepted once
 * (SET idempay:nonce:<caller id>:<nonce> 1 NX EX 2*window: a timestamp may be
 * up to window ahead, so a nonce must outlive now + 2*window to stop every
 * replay inside the window).
 *
 * Order of the checks: shape and window (no I/O), caller lookup, signature,
 * nonce. An unauthenticated peer therefore never writes to Redis, and a
 * disabled or unknown caller is told the same as a wrong signature. */
#ifndef IDEMPAY_CALLER_GATE_H
#define IDEMPAY_CALLER_GATE_H

#include "app_ctx.h"
#include "http_msg.h"

/* Returns the caller's id (>= 1) when req is authentic and fresh. Otherwise
 * returns 0 with resp filled: 401 (code unauthenticated, stale_timestamp,
 * bad_signature or replayed; WWW-Authenticate: Idempay-HMAC-SHA256), or 503
 * unavailable + Retry-After when MariaDB or Redis cannot be asked (nothing
 * is then remembered). Counts MET_AUTH_REFUSED. now is the Unix time. */
long long caller_gate_check(app_ctx *ctx, const http_request *req, long long now,
                            http_response *resp);

#endif
