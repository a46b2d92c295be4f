/* wx3_platform - the WeChat Pay platform's APIv3 material as the lab's
 * stack exports it (development material ./stack makes under $STATE/tls):
 *
 * - the platform's key pair (IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY),
 *   which signs replies and notifications;
 * - the rotation target (IDEMPAY_MOCK_V3_PLATFORM2_CERT / _CERT_KEY),
 *   optional;
 * - the APIv3 key (IDEMPAY_WX_APIV3_KEY or IDEMPAY_WX_APIV3_KEY_FILE, 32
 *   characters), which encrypts notification resources and certificates.
 *
 * The mock gateway signs with it (gateway-mock/v3_keys); the simulator
 * signs like the mock with it (sim/forge_v3). No key is ever printed. */
#ifndef IDEMPAY_WX3_PLATFORM_H
#define IDEMPAY_WX3_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "wx3_aead.h"
#include "wx3_sign.h"

typedef struct {
    wx3_cert cert[2];
    EVP_PKEY *key[2];
    int pairs;              /* 1, or 2 with the rotation target */
    bool second_unreadable; /* the rotation target is set but does not load */
    char apiv3_key[WX3_AEAD_KEY_LEN + 1];
} wx3_platform;

/* Reads the material above into *p (zeroed first; release it with
 * wx3_platform_free either way). 0, or -1 with why saying which setting is
 * unset or unreadable, without a secret: the first pair (its names, then
 * role, e.g. "" or " (the platform's key, to sign like it)") or the APIv3
 * key. A rotation target that does not load leaves pairs 1 and sets
 * second_unreadable: whether that is an error is the caller's to say. */
int wx3_platform_load(wx3_platform *p, const char *role, char *why, size_t whylen);
/* Frees the keys and certificates and wipes the APIv3 key; p itself is the
 * caller's. NULL accepted. */
void wx3_platform_free(wx3_platform *p);

#endif
