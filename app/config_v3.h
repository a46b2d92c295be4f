/* config_v3 - the merchant's WeChat Pay dialect (IDEMPAY_WX_API v2|v3) and
 * its APIv3 material: the merchant API certificate (its serial names our
 * key), the merchant's private key (signs every v3 request and the JSAPI
 * paySign), the 32-character APIv3 key (decrypts notification resources
 * and /v3/certificates), an optional pinned platform certificate, the v3
 * notification URL and the reply/notification timestamp window.
 *
 * Read once at start-up by app_config_load; read-only afterwards. With v3
 * chosen every piece must load (fail closed: -1 with a message naming the
 * setting); with v2 nothing v3 is read. The keys are never logged. */
#ifndef IDEMPAY_CONFIG_V3_H
#define IDEMPAY_CONFIG_V3_H

#include <openssl/evp.h>

#include "wx3_sign.h"

typedef enum {
    WX_API_V2 = 0, /* XML, MD5/HMAC-SHA256 (default) */
    WX_API_V3 = 1  /* JSON, SHA256withRSA, AEAD_AES_256_GCM */
} wx_api;

typedef struct {
    wx_api api;                  /* IDEMPAY_WX_API v2|v3, v2 */
    char cert[256];              /* IDEMPAY_WX_V3_CERT: the merchant API certificate (PEM) */
    char cert_key[256];          /* IDEMPAY_WX_V3_CERT_KEY, default IDEMPAY_WX_CERT_KEY: its
                                  * private key (PEM path) */
    char platform_cert[256];     /* IDEMPAY_WX_V3_PLATFORM_CERT, "": a platform certificate
                                  * trusted from the start (else fetched from /v3/certificates,
                                  * authenticated by the APIv3 key) */
    char notify_url[256];        /* IDEMPAY_WX_V3_NOTIFY_URL, default
                                  * http://127.0.0.1:$IDEMPAY_PUBLIC_PORT/api/pay/callback/wechat/v3
                                  * (payment and refund notifications) */
    long window_s;               /* IDEMPAY_WX_V3_TIME_WINDOW_S, 300: a reply's or
                                  * notification's Wechatpay-Timestamp may differ from the
                                  * clock by this much */
    char apiv3_key[33];          /* IDEMPAY_WX_APIV3_KEY[_FILE]: 32 characters - never log */
    char serial[WX3_SERIAL_BUF]; /* the merchant certificate's serial (upper-case hex) */
    EVP_PKEY *key;               /* the loaded private key (v3 only; lives as long as the
                                  * process) */
} v3_config;

/* Fills vc from the environment; public_port gives the notify URL's default.
 * With IDEMPAY_WX_API=v3: the certificate and key load and belong together,
 * the APIv3 key is 32 characters, a pinned platform certificate loads.
 * Returns 0, or -1 with a message naming the setting on stderr. */
int config_v3_load(v3_config *vc, long long public_port);

/* "v2" or "v3". */
const char *config_v3_api_name(wx_api api);

#endif
