/* config_refund.c - the refund settings, checked at start-up. */
#include "config_refund.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "env.h"

/* A named file must be readable by this process. */
static int cr_readable(const char *name, const char *path)
{
    if (path[0] == '\0' || access(path, R_OK) == 0)
        return 0;
    fprintf(stderr,
            "%s=%s cannot be read by this process: refunds need it (or set "
            "IDEMPAY_REFUNDS=off)\n",
            name, path);
    return -1;
}

int config_refund_has_cert(const refund_config *rc)
{
    return rc->cert[0] != '\0' && rc->cert_key[0] != '\0';
}

int config_refund_load(refund_config *rc, const char *gateway_url, long long public_port)
{
    const char *on = env_str("IDEMPAY_REFUNDS", "on");
    char dflt[256];

    memset(rc, 0, sizeof(*rc));
    snprintf(dflt, sizeof(dflt), "http://127.0.0.1:%lld/api/pay/callback/wechat/refund",
             public_port);
    if (app_config_copy(rc->cert, sizeof(rc->cert), "IDEMPAY_WX_CERT",
                        env_str("IDEMPAY_WX_CERT", "")) ||
        app_config_copy(rc->cert_key, sizeof(rc->cert_key), "IDEMPAY_WX_CERT_KEY",
                        env_str("IDEMPAY_WX_CERT_KEY", "")) ||
        app_config_copy(rc->gateway_ca, sizeof(rc->gateway_ca), "IDEMPAY_GATEWAY_CA",
                        env_str("IDEMPAY_GATEWAY_CA", "")) ||
        app_config_copy(rc->secapi_url, sizeof(rc->secapi_url), "IDEMPAY_GATEWAY_SECAPI_URL",
                        env_str("IDEMPAY_GATEWAY_SECAPI_URL", gateway_url)) ||
        app_config_copy(rc->notify_url, sizeof(rc->notify_url), "IDEMPAY_REFUND_NOTIFY_URL",
                        env_str("IDEMPAY_REFUND_NOTIFY_URL", dflt)))
        return -1;
    rc->query_interval_ms = env_int("IDEMPAY_REFUND_QUERY_INTERVAL_MS", 60000);
    if (!strcmp(on, "on"))
        rc->enabled = 1;
    else if (strcmp(on, "off") != 0) {
        fprintf(stderr, "IDEMPAY_REFUNDS must be on or off\n");
        return -1;
    }
    if (rc->query_interval_ms < 10) {
        fprintf(stderr, "IDEMPAY_REFUND_QUERY_INTERVAL_MS must be at least 10\n");
        return -1;
    }
    if ((rc->cert[0] == '\0') != (rc->cert_key[0] == '\0')) {
        fprintf(stderr, "IDEMPAY_WX_CERT and IDEMPAY_WX_CERT_KEY go together: set both or "
                        "neither\n");
        return -1;
    }
    if (!rc->enabled)
        return 0;
    if (!config_refund_has_cert(rc) && strncasecmp(rc->secapi_url, "http://", 7) != 0) {
        fprintf(stderr,
                "refunds are on and IDEMPAY_WX_CERT / IDEMPAY_WX_CERT_KEY are not set: "
                "WeChat's /secapi/pay/refund (%s) needs the merchant certificate and key (PEM); "
                "set them, or IDEMPAY_REFUNDS=off\n",
                rc->secapi_url);
        return -1;
    }
    if (cr_readable("IDEMPAY_WX_CERT", rc->cert) != 0 ||
        cr_readable("IDEMPAY_WX_CERT_KEY", rc->cert_key) != 0 ||
        cr_readable("IDEMPAY_GATEWAY_CA", rc->gateway_ca) != 0)
        return -1;
    return 0;
}
