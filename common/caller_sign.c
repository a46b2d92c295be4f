/* caller_sign - HMAC-SHA256 request signatures of the merchant door. */
#include "caller_sign.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "http_msg.h"

static int sign_char_ok(char ch, int dot)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || (dot && ch == '.');
}

static int sign_text_valid(const char *s, size_t min, size_t max, int dot)
{
    size_t n = 0;

    if (s == NULL)
        return 0;
    for (; s[n] != '\0'; n++)
        if (n >= max || !sign_char_ok(s[n], dot))
            return 0;
    return n >= min;
}

int caller_sign_name_valid(const char *s)
{
    return sign_text_valid(s, 1, CALLER_NAME_MAX, 1);
}

int caller_sign_nonce_valid(const char *s)
{
    return sign_text_valid(s, CALLER_NONCE_MIN, CALLER_NONCE_MAX, 0);
}

int caller_sign_key_from_hex(const char *hex, unsigned char key[CALLER_KEY_LEN])
{
    unsigned char tmp[CALLER_KEY_LEN];

    if (hex == NULL || strlen(hex) != CALLER_KEY_HEX_LEN)
        return -1;
    for (size_t i = 0; i < CALLER_KEY_LEN; i++) {
        int hi = http_hex_digit((unsigned char)hex[2 * i]);
        int lo = http_hex_digit((unsigned char)hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        tmp[i] = (unsigned char)(hi << 4 | lo);
    }
    memcpy(key, tmp, sizeof(tmp));
    return 0;
}

int caller_sign_compute(const unsigned char key[CALLER_KEY_LEN], const char *method,
                        const char *path, const char *query, const char *timestamp,
                        const char *nonce, const char *body, size_t body_len,
                        char out[CALLER_SIG_HEX_LEN + 1])
{
    unsigned char digest[SHA256_DIGEST_LENGTH], mac[EVP_MAX_MD_SIZE];
    char body_hex[2 * SHA256_DIGEST_LENGTH + 1];
    unsigned int mac_len = 0;
    char *text = NULL;
    size_t cap;
    int n, rc = -1;

    out[0] = '\0';
    if (key == NULL || method == NULL || path == NULL || timestamp == NULL || nonce == NULL ||
        (body == NULL && body_len > 0))
        return -1;
    if (query == NULL)
        query = "";
    if (SHA256((const unsigned char *)(body ? body : ""), body_len, digest) == NULL)
        return -1;
    hex_lower(digest, sizeof(digest), body_hex);
    cap = strlen(CALLER_SIGN_PREFIX) + strlen(method) + strlen(path) + strlen(query) +
          strlen(timestamp) + strlen(nonce) + sizeof(body_hex) + 8;
    text = malloc(cap);
    if (text == NULL)
        return -1;
    n = snprintf(text, cap, "%s\n%s\n%s%s%s\n%s\n%s\n%s", CALLER_SIGN_PREFIX, method, path,
                 query[0] ? "?" : "", query, timestamp, nonce, body_hex);
    if (n < 0 || (size_t)n >= cap)
        goto done;
    if (HMAC(EVP_sha256(), key, CALLER_KEY_LEN, (const unsigned char *)text, (size_t)n, mac,
             &mac_len) == NULL ||
        mac_len != 32)
        goto done;
    hex_lower(mac, mac_len, out);
    rc = 0;
done:
    free(text);
    return rc;
}

int caller_sign_headers(const char *name, const char *key_hex, long long now, const char *method,
                        const char *path, const char *query, const char *body, size_t body_len,
                        char lines[4][CALLER_HEADER_LINE_MAX])
{
    unsigned char key[CALLER_KEY_LEN], raw[16];
    char nonce[2 * sizeof(raw) + 1], ts[24], sig[CALLER_SIG_HEX_LEN + 1];

    if (!caller_sign_name_valid(name) || caller_sign_key_from_hex(key_hex, key) != 0 ||
        RAND_bytes(raw, sizeof(raw)) != 1)
        return -1;
    hex_lower(raw, sizeof(raw), nonce);
    snprintf(ts, sizeof(ts), "%lld", now);
    if (caller_sign_compute(key, method, path, query, ts, nonce, body, body_len, sig) != 0)
        return -1;
    snprintf(lines[0], CALLER_HEADER_LINE_MAX, "X-Idempay-Caller: %s", name);
    snprintf(lines[1], CALLER_HEADER_LINE_MAX, "X-Idempay-Timestamp: %s", ts);
    snprintf(lines[2], CALLER_HEADER_LINE_MAX, "X-Idempay-Nonce: %s", nonce);
    snprintf(lines[3], CALLER_HEADER_LINE_MAX, "X-Idempay-Signature: %s", sig);
    return 0;
}
