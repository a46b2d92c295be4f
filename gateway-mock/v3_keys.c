/* v3_keys.c - loading the APIv3 material and signing with the platform key
 * the rotation knob names. */
#include "v3_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "env.h"

v3_keys *v3_keys_load(char *why, size_t whylen)
{
    const char *mch = env_str("IDEMPAY_WX_V3_CERT", NULL);
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
    if (wx3_platform_load(&k->platform, "", why, whylen) != 0)
        goto fail;
    if (k->platform.second_unreadable) {
        snprintf(why, whylen, "IDEMPAY_MOCK_V3_PLATFORM2_CERT / _CERT_KEY are unreadable");
        goto fail;
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
    wx3_platform_free(&k->platform);
    free(k);
}

int v3_keys_served(const v3_keys *k, long long rotation)
{
    return rotation >= 1 && k->platform.pairs == 2 ? 2 : 1;
}

int v3_keys_signing(const v3_keys *k, long long rotation)
{
    return rotation >= 2 && k->platform.pairs == 2 ? 1 : 0;
}

int v3_keys_sign(const v3_keys *k, long long rotation, const char *body, size_t len, v3_signed *out)
{
    int i = v3_keys_signing(k, rotation);
    size_t mlen = 0;

    memset(out, 0, sizeof(*out));
    snprintf(out->timestamp, sizeof(out->timestamp), "%lld", (long long)time(NULL));
    snprintf(out->serial, sizeof(out->serial), "%s", k->platform.cert[i].serial);
    if (wx3_nonce(out->nonce, sizeof(out->nonce), 32) != 0)
        return -1;
    char *msg = wx3_response_message(out->timestamp, out->nonce, body, len, &mlen);
    int rc = msg != NULL ? wx3_sign(k->platform.key[i], msg, mlen, &out->signature) : -1;
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
