/* config_v3.c - the dialect setting and the APIv3 material, checked at
 * start-up (see config_v3.h). */
#include "config_v3.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "env.h"

const char *config_v3_api_name(wx_api api)
{
    return api == WX_API_V3 ? "v3" : "v2";
}

/* The settings as text; nothing loaded yet. */
static int cv_read(v3_config *vc, long long public_port)
{
    const char *api = env_str("IDEMPAY_WX_API", "v2");
    char dflt[256];

    if (strcmp(api, "v3") == 0)
        vc->api = WX_API_V3;
    else if (strcmp(api, "v2") != 0) {
        fprintf(stderr, "IDEMPAY_WX_API must be v2 or v3\n");
        return -1;
    }
    snprintf(dflt, sizeof(dflt), "http://127.0.0.1:%lld/api/pay/callback/wechat/v3", public_port);
    vc->window_s = env_int("IDEMPAY_WX_V3_TIME_WINDOW_S", 300);
    if (vc->window_s < 1 || vc->window_s > 3600) {
        fprintf(stderr, "IDEMPAY_WX_V3_TIME_WINDOW_S must be 1..3600\n");
        return -1;
    }
    if (app_config_copy(vc->cert, sizeof(vc->cert), "IDEMPAY_WX_V3_CERT",
                        env_str("IDEMPAY_WX_V3_CERT", "")) ||
        app_config_copy(vc->cert_key, sizeof(vc->cert_key), "IDEMPAY_WX_V3_CERT_KEY",
                        env_str("IDEMPAY_WX_V3_CERT_KEY", env_str("IDEMPAY_WX_CERT_KEY", ""))) ||
        app_config_copy(vc->platform_cert, sizeof(vc->platform_cert), "IDEMPAY_WX_V3_PLATFORM_CERT",
                        env_str("IDEMPAY_WX_V3_PLATFORM_CERT", "")) ||
        app_config_copy(vc->notify_url, sizeof(vc->notify_url), "IDEMPAY_WX_V3_NOTIFY_URL",
                        env_str("IDEMPAY_WX_V3_NOTIFY_URL", dflt)))
        return -1;
    return 0;
}

/* The merchant's certificate and key: both load, and the key is the
 * certificate's. */
static int cv_merchant(v3_config *vc)
{
    wx3_cert c;
    int rc = -1;

    if (vc->cert[0] == '\0' || wx3_cert_load(vc->cert, &c) != 0) {
        fprintf(stderr,
                "IDEMPAY_WX_API=v3 needs IDEMPAY_WX_V3_CERT, the merchant API certificate "
                "(PEM)%s%s: %s\n",
                vc->cert[0] ? ", readable: " : "", vc->cert,
                vc->cert[0] ? "cannot be loaded" : "not set");
        return -1;
    }
    snprintf(vc->serial, sizeof(vc->serial), "%s", c.serial);
    if (vc->cert_key[0] == '\0' || wx3_key_load(vc->cert_key, &vc->key) != 0)
        fprintf(stderr,
                "IDEMPAY_WX_API=v3 needs IDEMPAY_WX_V3_CERT_KEY (default "
                "IDEMPAY_WX_CERT_KEY), the merchant's private key (PEM): %s\n",
                vc->cert_key[0] ? "cannot be loaded" : "not set");
    else if (EVP_PKEY_eq(vc->key, c.pub) != 1)
        fprintf(stderr, "IDEMPAY_WX_V3_CERT_KEY is not the private key of IDEMPAY_WX_V3_CERT\n");
    else
        rc = 0;
    if (rc != 0) {
        EVP_PKEY_free(vc->key);
        vc->key = NULL;
    }
    wx3_cert_free(&c);
    return rc;
}

int config_v3_load(v3_config *vc, long long public_port)
{
    const char *apiv3 = env_str("IDEMPAY_WX_APIV3_KEY", "");
    wx3_cert pinned;

    memset(vc, 0, sizeof(*vc));
    if (cv_read(vc, public_port) != 0)
        return -1;
    if (vc->api != WX_API_V3)
        return 0;
    if (strlen(apiv3) != 32) {
        fprintf(stderr,
                "IDEMPAY_WX_API=v3 needs IDEMPAY_WX_APIV3_KEY (or IDEMPAY_WX_APIV3_KEY_FILE):"
                " the 32-character APIv3 key%s\n",
                apiv3[0] ? " (wrong length)" : " (not set)");
        return -1;
    }
    memcpy(vc->apiv3_key, apiv3, 33);
    if (cv_merchant(vc) != 0)
        return -1;
    if (vc->platform_cert[0] != '\0') {
        if (wx3_cert_load(vc->platform_cert, &pinned) != 0) {
            fprintf(stderr, "IDEMPAY_WX_V3_PLATFORM_CERT=%s cannot be loaded (PEM certificate)\n",
                    vc->platform_cert);
            return -1;
        }
        wx3_cert_free(&pinned);
    }
    return 0;
}
