/* config_refund - the refund settings of the service: the merchant's client
 * certificate for WeChat's /secapi/... (mutual TLS), the gateway's CA, where
 * /secapi/... lives, the refund notification URL and the worker's polling.
 * Read once at start-up by app_config_load; read-only afterwards. The key
 * file's content is never read into memory by us nor logged: only its path
 * is handed to libcurl. */
#ifndef IDEMPAY_CONFIG_REFUND_H
#define IDEMPAY_CONFIG_REFUND_H

#include <stddef.h>

typedef struct {
    int enabled;            /* IDEMPAY_REFUNDS on|off, on: the worker submits refunds */
    char cert[256];         /* IDEMPAY_WX_CERT: merchant certificate (PEM) */
    char cert_key[256];     /* IDEMPAY_WX_CERT_KEY: its private key (PEM) - never log */
    char gateway_ca[256];   /* IDEMPAY_GATEWAY_CA: CA bundle (PEM) the gateway's server
                               certificate is checked against; "": the system's CAs */
    char secapi_url[256];   /* IDEMPAY_GATEWAY_SECAPI_URL: base URL of /secapi/...
                               (default IDEMPAY_GATEWAY_URL) */
    char notify_url[256];   /* IDEMPAY_REFUND_NOTIFY_URL, default
                               http://127.0.0.1:$IDEMPAY_HTTP_PORT/api/pay/callback/wechat/refund */
    long query_interval_ms; /* IDEMPAY_REFUND_QUERY_INTERVAL_MS, 60000: refundquery period
                               of an accepted refund */
} refund_config;

/* Fills rc from the environment; gateway_url and public_port (the public door) give the
 * defaults. Returns 0, or -1 with a message naming the setting on stderr:
 * refunds on and IDEMPAY_WX_CERT / IDEMPAY_WX_CERT_KEY unset while /secapi/
 * is https (a plain-http gateway, the mock without TLS, cannot ask for a
 * client certificate), a named file that cannot be read, an https
 * IDEMPAY_GATEWAY_CA that cannot be read, or a bad number. */
int config_refund_load(refund_config *rc, const char *gateway_url, long long public_port);

/* 1 when /secapi/ calls carry the client certificate (both files set). */
int config_refund_has_cert(const refund_config *rc);

#endif
