/* caller_sign - the merchant door's request signature (docs/API.md,
 * "Authentication"), shared by the service that checks it and by every
 * client that makes it (the simulator, the bench; tests/integration/lib.py
 * is the Python twin). Pure: no I/O, no clock; OpenSSL's SHA-256/HMAC only.
 *
 * A caller signs with its 32-byte key (given to it as 64 hex digits):
 *
 *   signature = hex(HMAC-SHA256(key, string_to_sign))
 *   string_to_sign = "IDEMPAY-HMAC-SHA256\n" method "\n" target "\n"
 *                    timestamp "\n" nonce "\n" hex(SHA-256(body))
 *
 * target is the request path as sent (not decoded) followed by "?" and the
 * query string when there is one; timestamp the Unix time in seconds
 * (decimal); nonce 16..64 characters of [A-Za-z0-9_-], fresh per request.
 * Headers: X-Idempay-Caller, X-Idempay-Timestamp, X-Idempay-Nonce,
 * X-Idempay-Signature (lower-case hex). */
#ifndef IDEMPAY_CALLER_SIGN_H
#define IDEMPAY_CALLER_SIGN_H

#include <stddef.h>

#define CALLER_KEY_LEN 32     /* bytes of a caller key */
#define CALLER_KEY_HEX_LEN 64 /* its hex form, the "secret" a caller holds */
#define CALLER_SIG_HEX_LEN 64 /* hex digits of a signature */
#define CALLER_NAME_MAX 64    /* characters of a caller name */
#define CALLER_NONCE_MIN 16
#define CALLER_NONCE_MAX 64
#define CALLER_TIMESTAMP_MAX 12 /* decimal digits of a timestamp */
#define CALLER_SIGN_PREFIX "IDEMPAY-HMAC-SHA256"

/* 1 when s is a caller name: 1..CALLER_NAME_MAX of [A-Za-z0-9_.-]; NULL: 0. */
int caller_sign_name_valid(const char *s);
/* 1 when s is a nonce: CALLER_NONCE_MIN..MAX of [A-Za-z0-9_-]; NULL: 0. */
int caller_sign_nonce_valid(const char *s);

/* Decodes CALLER_KEY_HEX_LEN hex digits (either case) into key. Returns 0,
 * or -1 when hex is NULL, of another length or not hex (key untouched). */
int caller_sign_key_from_hex(const char *hex, unsigned char key[CALLER_KEY_LEN]);

/* Writes the lower-case hex HMAC-SHA256 signature of the request into
 * out (CALLER_SIG_HEX_LEN + 1 bytes). query may be NULL or "" (no '?').
 * body may be NULL when body_len is 0. Returns 0, or -1 when an argument is
 * NULL or the crypto library fails (out is then ""). */
int caller_sign_compute(const unsigned char key[CALLER_KEY_LEN], const char *method,
                        const char *path, const char *query, const char *timestamp,
                        const char *nonce, const char *body, size_t body_len,
                        char out[CALLER_SIG_HEX_LEN + 1]);

/* The four header lines ("Name: value", no CR/LF) a client adds, for
 * key_hex (the caller's secret) at Unix time now with a fresh random nonce.
 * lines[i] holds CALLER_HEADER_LINE_MAX bytes. Returns 0, or -1 when
 * key_hex or name is invalid or the random source or crypto fails. */
#define CALLER_HEADER_LINE_MAX 96
int caller_sign_headers(const char *name, const char *key_hex, long long now, const char *method,
                        const char *path, const char *query, const char *body, size_t body_len,
                        char lines[4][CALLER_HEADER_LINE_MAX]);

#endif
