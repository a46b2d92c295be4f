/* v3_keys.c - loading the APIv3 material and signing with the platform key
 * the rotation knob names. */
#include "v3_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "env.h"

/* One platform pair (cert and key paths) into slot i; 0 or -1. */
static int keys_platform(v3_keys *k, int i, const char *cert, const char *key)
{
    return wx3_pair_load(cert, key, &k->platform[i], &k->platform_key[i]);
}

v3_keys *v3_keys_load(char *why, size_t whylen)
{
    const char *mch = env_str("IDEMPAY_WX_V3_CERT", NULL);
    const char *apikey = env_str("IDEMPAY_WX_APIV3_KEY", NULL);
    v3_keys *k = calloc(1, sizeof(*k));

    snprintf(why, whylen, "%s", "");
    if (k == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    if (mch == NULL || wx3_cert_load(mch, &k->merchant) != 0) {
        snprintf(why, whylen, "IDEMPAY_WX_V3_CERT (the merchant's APIv3 certificate) is %s",
                 mch == NULL ? "unset" : "not a readable PEM certificate");
        goto fail;
    }
    if (keys_platform(k, 0, env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT", NULL),
                      env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY", NULL)) != 0) {
        snprintf(why, whylen, "IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY are unset or unreadable");
        goto fail;
    }
    if (apikey == NULL || strlen(apikey) != WX3_AEAD_KEY_LEN) {
        snprintf(why, whylen, "IDEMPAY_WX_APIV3_KEY is %s",
                 apikey == NULL ? "unset" : "not 32 characters");
        goto fail;
    }
    snprintf(k->apiv3_key, sizeof(k->apiv3_key), "%s", apikey);
    k->platforms = 1;
    const char *c2 = env_str("IDEMPAY_MOCK_V3_PLATFORM2_CERT", NULL);
    if (c2 != NULL) {
        if (keys_platform(k, 1, c2, env_str("IDEMPAY_MOCK_V3_PLATFORM2_CERT_KEY", NULL)) != 0) {
            snprintf(why, whylen, "IDEMPAY_MOCK_V3_PLATFORM2_CERT / _CERT_KEY are unreadable");
            goto fail;
        }
        k->platforms = 2;
    }
    return k;
fail:
    v3_keys_free(k);
    return NULL;
}

void v3_keys_free(v3_keys *k)
{
    if (k == NULL)
        return;
    wx3_cert_free(&k->merchant);
    for (int i = 0; i < 2; i++) {
        wx3_cert_free(&k->platform[i]);
        EVP_PKEY_free(k->platform_key[i]);
    }
    OPENSSL_cleanse(k->apiv3_key, sizeof(k->apiv3_key));
    free(k);
}

int v3_keys_served(const v3_keys *k, long long rotation)
{
    return rotation >= 1 && k->platforms == 2 ? 2 : 1;
}

int v3_keys_signing(const v3_keys *k, long long rotation)
{
    return rotation >= 2 && k->platforms == 2 ? 1 : 0;
}

int v3_keys_sign(const v3_keys *k, long long rotation, const char *body, size_t len, v3_signed *out)
{
    int i = v3_keys_signing(k, rotation);
    size_t mlen = 0;

    memset(out, 0, sizeof(*out));
    snprintf(out->timestamp, sizeof(out->timestamp), "%lld", (long long)time(NULL));
    snprintf(out->serial, sizeof(out->serial), "%s", k->platform[i].serial);
    if (wx3_nonce(out->nonce, sizeof(out->nonce), 32) != 0)
        return -1;
    char *msg = wx3_response_message(out->timestamp, out->nonce, body, len, &mlen);
    int rc = msg != NULL ? wx3_sign(k->platform_key[i], msg, mlen, &out->signature) : -1;
    free(msg);
    return rc;
}

void v3_signed_free(v3_signed *s)
{
    if (s == NULL)
        return;
    free(s->signature);
    s->signature = NULL;
}
