/* caller_auth - the pure part of the merchant door's caller check: the
 * shape of the X-Idempay-* headers, the replay window of the timestamp and
 * the constant-time comparison of the signature (common/caller_sign.h says
 * how a request is signed). No I/O: the caller's key comes from
 * caller_store, the nonce memory is caller_gate's; CUnit tests call this
 * directly (tests/unit/test_caller_auth.c).
 *
 * Contract: caller_auth_screen never looks at a key and
 * caller_auth_verify never at the clock; a request passes only when both
 * say CALLER_AUTH_OK and its nonce was not seen before (caller_gate). */
#ifndef IDEMPAY_CALLER_AUTH_H
#define IDEMPAY_CALLER_AUTH_H

#include "caller_sign.h"
#include "http_msg.h"

typedef enum {
    CALLER_AUTH_OK = 0,
    CALLER_AUTH_MISSING,      /* one of the four headers is absent */
    CALLER_AUTH_MALFORMED,    /* a header has the wrong shape */
    CALLER_AUTH_STALE,        /* the timestamp is outside now +- window */
    CALLER_AUTH_BAD_SIGNATURE /* the signature is not the key's over this request */
} caller_auth_result;

/* The headers' presence and shape (name, digits-only timestamp of at most
 * CALLER_TIMESTAMP_MAX digits, nonce, 64 hex digits of signature), then
 * |timestamp - now| <= window_s. On OK, *ts (may be NULL) is the timestamp.
 * Pure. */
caller_auth_result caller_auth_screen(const http_request *req, long long now, long window_s,
                                      long long *ts);

/* Recomputes the signature of req (method, path, query, timestamp, nonce,
 * body) with key and compares it with req->auth_signature in constant time
 * (CRYPTO_memcmp; upper-case hex accepted). OK or BAD_SIGNATURE (also when
 * the crypto library fails or a header is missing). Pure. */
caller_auth_result caller_auth_verify(const http_request *req,
                                      const unsigned char key[CALLER_KEY_LEN]);

/* The error code of the 401 answer for r ("unauthenticated",
 * "stale_timestamp", "bad_signature"), and a sentence for the client. */
const char *caller_auth_code(caller_auth_result r);
const char *caller_auth_message(caller_auth_result r);

#endif
