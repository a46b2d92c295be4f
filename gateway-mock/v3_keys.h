/* v3_keys - the mock's WeChat Pay APIv3 material, read once at start (all
 * development material that ./stack makes under $STATE/tls):
 *
 * - the merchant's API certificate (IDEMPAY_WX_V3_CERT): its public key
 *   verifies every request's Authorization signature, its serial is the
 *   only serial_no accepted;
 * - the platform's keys and certificates (IDEMPAY_MOCK_V3_PLATFORM_CERT /
 *   _CERT_KEY, and the rotation target IDEMPAY_MOCK_V3_PLATFORM2_CERT /
 *   _CERT_KEY): they sign replies and notifications; /v3/certificates
 *   serves the certificates in use;
 * - the APIv3 key (IDEMPAY_WX_APIV3_KEY or IDEMPAY_WX_APIV3_KEY_FILE, 32
 *   characters): it encrypts notification resources and the served
 *   certificates. Never logged.
 *
 * Which platform key signs follows the knob v3_platform_rotation (faults.h).
 * Read-only after v3_keys_load: safe from any thread. */
#ifndef IDEMPAY_MOCK_V3_KEYS_H
#define IDEMPAY_MOCK_V3_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "wx3_aead.h"
#include "wx3_platform.h"
#include "wx3_sign.h"

typedef struct v3_keys {
    wx3_cert merchant;
    wx3_platform platform; /* the platform's pairs and the APIv3 key */
} v3_keys;

/* The material from the settings above. NULL when v3 is not configured
 * (the merchant certificate, the first platform pair or the APIv3 key is
 * missing or unreadable; why says which, without a secret). A second
 * platform pair is optional. */
v3_keys *v3_keys_load(char *why, size_t whylen);
/* NULL accepted. */
void v3_keys_free(v3_keys *k);

/* How many platform certificates /v3/certificates serves at rotation r
 * (1 at 0; 2 at 1 and 2 when a second pair exists). */
int v3_keys_served(const v3_keys *k, long long rotation);
/* The index of the platform pair that signs at rotation r. */
int v3_keys_signing(const v3_keys *k, long long rotation);

/* The four headers of a signed reply or notification. */
typedef struct {
    char timestamp[21];
    char nonce[33];
    char serial[WX3_SERIAL_BUF];
    char *signature; /* malloc'd base64 (v3_signed_free) */
} v3_signed;

/* Signs body[0..len) now (real time: the SDKs check it against their
 * clocks) with the platform key of rotation r. 0, or -1 (crypto, OOM). */
int v3_keys_sign(const v3_keys *k, long long rotation, const char *body, size_t len,
                 v3_signed *out);
void v3_signed_free(v3_signed *s);

#endif
