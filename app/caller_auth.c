/* caller_auth - header shape, replay window and signature comparison. */
#include "caller_auth.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <string.h>

static int auth_digits(const char *s, size_t max, long long *out)
{
    long long v = 0;
    size_t n = 0;

    for (; s[n] != '\0'; n++) {
        if (n >= max || s[n] < '0' || s[n] > '9')
            return -1;
        v = v * 10 + (s[n] - '0');
    }
    if (n == 0)
        return -1;
    *out = v;
    return 0;
}

static int auth_hex64(const char *s)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (n >= CALLER_SIG_HEX_LEN || !isxdigit((unsigned char)s[n]))
            return 0;
    return n == CALLER_SIG_HEX_LEN;
}

caller_auth_result caller_auth_screen(const http_request *req, long long now, long window_s,
                                      long long *ts)
{
    long long t;

    if (req->auth_caller == NULL || req->auth_timestamp == NULL || req->auth_nonce == NULL ||
        req->auth_signature == NULL)
        return CALLER_AUTH_MISSING;
    if (!caller_sign_name_valid(req->auth_caller) || !caller_sign_nonce_valid(req->auth_nonce) ||
        !auth_hex64(req->auth_signature) ||
        auth_digits(req->auth_timestamp, CALLER_TIMESTAMP_MAX, &t) != 0)
        return CALLER_AUTH_MALFORMED;
    if (t > now + window_s || t < now - window_s)
        return CALLER_AUTH_STALE;
    if (ts != NULL)
        *ts = t;
    return CALLER_AUTH_OK;
}

caller_auth_result caller_auth_verify(const http_request *req,
                                      const unsigned char key[CALLER_KEY_LEN])
{
    char want[CALLER_SIG_HEX_LEN + 1], got[CALLER_SIG_HEX_LEN + 1];

    if (req->auth_signature == NULL || !auth_hex64(req->auth_signature) ||
        caller_sign_compute(key, req->method, req->path, req->query, req->auth_timestamp,
                            req->auth_nonce, req->body, req->body_len, want) != 0)
        return CALLER_AUTH_BAD_SIGNATURE;
    for (size_t i = 0; i <= CALLER_SIG_HEX_LEN; i++)
        got[i] = (char)tolower((unsigned char)req->auth_signature[i]);
    return CRYPTO_memcmp(want, got, CALLER_SIG_HEX_LEN) == 0 ? CALLER_AUTH_OK
                                                             : CALLER_AUTH_BAD_SIGNATURE;
}

const char *caller_auth_code(caller_auth_result r)
{
    switch (r) {
    case CALLER_AUTH_STALE:
        return "stale_timestamp";
    case CALLER_AUTH_BAD_SIGNATURE:
        return "bad_signature";
    default:
        return "unauthenticated";
    }
}

const char *caller_auth_message(caller_auth_result r)
{
    switch (r) {
    case CALLER_AUTH_MISSING:
        return "sign the request: X-Idempay-Caller, X-Idempay-Timestamp, X-Idempay-Nonce and"
               " X-Idempay-Signature are required (docs/API.md, Authentication)";
    case CALLER_AUTH_MALFORMED:
        return "an X-Idempay-* header is malformed (docs/API.md, Authentication)";
    case CALLER_AUTH_STALE:
        return "X-Idempay-Timestamp is outside the accepted window: check the clock";
    case CALLER_AUTH_BAD_SIGNATURE:
        return "unknown caller or wrong signature";
    default:
        return "authenticated";
    }
}
