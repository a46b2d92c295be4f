/* wx3_platform.c - the platform's APIv3 key pairs and the APIv3 key, read
 * from the stack's settings (wx3_platform.h). */
#include "wx3_platform.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "env.h"

int wx3_platform_load(wx3_platform *p, const char *role, char *why, size_t whylen)
{
    const char *apikey = env_str("IDEMPAY_WX_APIV3_KEY", NULL);
    const char *cert2 = env_str("IDEMPAY_MOCK_V3_PLATFORM2_CERT", NULL);

    memset(p, 0, sizeof(*p));
    if (wx3_pair_load(env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT", NULL),
                      env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY", NULL), &p->cert[0],
                      &p->key[0]) != 0) {
        snprintf(why, whylen, "IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY%s are unset or unreadable",
                 role);
        return -1;
    }
    if (apikey == NULL || strlen(apikey) != WX3_AEAD_KEY_LEN) {
        snprintf(why, whylen, "IDEMPAY_WX_APIV3_KEY is %s",
                 apikey == NULL ? "unset" : "not 32 characters");
        return -1;
    }
    snprintf(p->apiv3_key, sizeof(p->apiv3_key), "%s", apikey);
    p->pairs = 1;
    if (cert2 != NULL) {
        if (wx3_pair_load(cert2, env_str("IDEMPAY_MOCK_V3_PLATFORM2_CERT_KEY", NULL), &p->cert[1],
                          &p->key[1]) == 0)
            p->pairs = 2;
        else
            p->second_unreadable = true;
    }
    return 0;
}

void wx3_platform_free(wx3_platform *p)
{
    if (p == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        wx3_cert_free(&p->cert[i]);
        EVP_PKEY_free(p->key[i]);
        p->key[i] = NULL;
    }
    OPENSSL_cleanse(p->apiv3_key, sizeof(p->apiv3_key));
}
