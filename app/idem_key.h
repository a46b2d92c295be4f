/* idem_key - Idempotency-Key records (table payment_idempotent), with the
 * semantics of the IETF httpapi-idempotency-key-header draft: a key is
 * scoped per (caller, user_id) (the merchant-door caller that sent it:
 * docs/SECURITY.md, "Scoping") and bound to the fingerprint of the request it first
 * came with; the first request claims it (state 0 under a lease), the
 * finished response is stored (state 1) and replayed byte-for-byte, a claim
 * whose holder died is taken over once its lease has expired, and records
 * are purged after IDEMPAY_IDEMPOTENCY_TTL.
 *
 * Statements use the app_ctx slots STMT_IDEM_BASE.. (single autocommit
 * statements; no transaction is ever left open). */
#ifndef IDEMPAY_IDEM_KEY_H
#define IDEMPAY_IDEM_KEY_H

#include <stddef.h>
#include <stdint.h>
#include "app_ctx.h"

#define IDEM_FINGERPRINT_LEN 64 /* hex digits of SHA-256 */
#define IDEM_BODY_MAX 8192      /* bytes of a stored response body */

/* SHA-256 (lower-case hex) of the canonical request
 * "order_no=<no>\nuser_id=<decimal>\namount_fen=<decimal>\n". Amounts enter
 * as integer fen, so "12.3" and "12.30" give the same print. Returns 0, or
 * -1 when the crypto library fails (out is then ""). */
int idem_key_fingerprint(const char *order_no, long long user_id, int64_t amount_fen,
                         char out[IDEM_FINGERPRINT_LEN + 1]);
/* The same with the request's flow fields ("flow=<flow>\n" appended when
 * flow is non-NULL: "NATIVE", "JSAPI:<openid>", "MICROPAY:<auth_code>"), so
 * a key reused with another flow is idempotency_key_mismatch. */
int idem_key_fingerprint_flow(const char *order_no, long long user_id, int64_t amount_fen,
                              const char *flow, char out[IDEM_FINGERPRINT_LEN + 1]);

typedef enum {
    IDEM_CLAIMED = 0, /* this request owns the key now: run it, then complete or release */
    IDEM_REPLAY,      /* finished before: answer with stored (status, body) */
    IDEM_IN_PROGRESS, /* another request holds the key under a live lease: 409 */
    IDEM_MISMATCH,    /* the key was used with another request: 422 */
    IDEM_UNAVAILABLE  /* MariaDB failed: 503, nothing was written */
} idem_result;

typedef struct {
    int status;               /* stored HTTP status (IDEM_REPLAY) */
    char body[IDEM_BODY_MAX]; /* stored body, NUL-terminated (IDEM_REPLAY) */
    size_t body_len;
} idem_stored;

/* Claims (caller_id, user_id, key) for a request with fingerprint. lease_ms bounds how
 * long the claim protects a running request; ttl_s is the record's life.
 * A record past its expiry counts as absent (it is taken over). On
 * IDEM_REPLAY, *stored holds the answer; otherwise *stored is unspecified. */
idem_result idem_key_claim(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                           const char *fingerprint, long lease_ms, long ttl_s, idem_stored *stored);

/* Stores the final answer of a claimed key (state 1). Only a claim still
 * in state 0 with the same fingerprint is completed. Returns 0, or -1 on a
 * database failure (the claim then expires on its own and a retry re-runs
 * the request, which the order table keeps idempotent). */
int idem_key_complete(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                      const char *fingerprint, int status, const char *body);

/* Gives a claim back without an answer (202/503/403 are not final): the next
 * request with the key runs anew. Returns 0 or -1 (the claim then expires). */
int idem_key_release(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                     const char *fingerprint);

/* Deletes at most limit expired records, using statement slot slot (a
 * caller's own range, e.g. the reconciler's). Returns the number deleted, or
 * -1 on a database failure. */
long long idem_key_purge(app_ctx *ctx, int slot, long limit);

#endif
