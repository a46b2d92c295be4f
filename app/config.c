/* config - the service's configuration from IDEMPAY_* variables. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dev_merchant.h"
#include "env.h"
#include "service_ports.h"
#include "service_windows.h"
#include "text_copy.h"

/* Fail closed (docs/SECURITY.md): without the merchant's own key the
 * service does not start; the public development key, and a gateway
 * reached over plain http, only under IDEMPAY_DEVELOPMENT=1. 0, or -1 with
 * the reason on stderr naming the setting. */
static int config_check_secrets(const app_config *c, int key_set)
{
    if (!key_set && !c->development) {
        fprintf(stderr, "IDEMPAY_WX_KEY is not set (nor IDEMPAY_WX_KEY_FILE): the service does not"
                        " start without the merchant key (IDEMPAY_DEVELOPMENT=1 runs with the"
                        " documented development key, for development only)\n");
        return -1;
    }
    if (!c->development && !strcmp(c->key, IDEMPAY_DEV_KEY)) {
        fprintf(stderr, "IDEMPAY_WX_KEY is the published development key: set the merchant's own"
                        " key (IDEMPAY_WX_KEY_FILE), or IDEMPAY_DEVELOPMENT=1 for development\n");
        return -1;
    }
    if (!c->development && strncmp(c->gateway_url, "https://", 8) != 0) {
        fprintf(stderr,
                "IDEMPAY_GATEWAY_URL=%s is not https: outside development"
                " (IDEMPAY_DEVELOPMENT=1) the gateway is reached over TLS only\n",
                c->gateway_url);
        return -1;
    }
    return 0;
}

/* IDEMPAY_DOOR and IDEMPAY_AUTH_WINDOW_S. 0, or -1 with the reason on stderr. */
static int config_door(app_config *c, const char *door, long window_s)
{
    if (!strcmp(door, "merchant"))
        c->door = DOOR_MERCHANT;
    else if (!strcmp(door, "public"))
        c->door = DOOR_PUBLIC;
    else {
        fprintf(stderr, "IDEMPAY_DOOR must be merchant (the API) or public (the gateway's"
                        " notifications only)\n");
        return -1;
    }
    if (window_s < 1 || window_s > 3600) {
        fprintf(stderr, "IDEMPAY_AUTH_WINDOW_S must be 1..3600 seconds\n");
        return -1;
    }
    return 0;
}

long app_config_lease_min_ms(const app_config *c)
{
    return service_windows_lease_min_ms(c->gateway_timeout_ms);
}

/* The merchant, the gateway's URLs and the Redis account (strings). -1
 * with the reason on stderr. */
static int config_read_merchant(app_config *c, const char *state, long long public_port)
{
    char dflt[256];

    snprintf(c->appid, sizeof(c->appid), "%s", env_str("IDEMPAY_WX_APPID", IDEMPAY_DEV_APPID));
    snprintf(c->mch_id, sizeof(c->mch_id), "%s", env_str("IDEMPAY_WX_MCHID", IDEMPAY_DEV_MCHID));
    c->development = env_int("IDEMPAY_DEVELOPMENT", 0) == 1;
    snprintf(c->key, sizeof(c->key), "%s", env_str("IDEMPAY_WX_KEY", IDEMPAY_DEV_KEY));
    if (wx_sign_type_parse(env_str("IDEMPAY_WX_SIGN_TYPE", "MD5"), &c->sign_type) != 0) {
        fprintf(stderr, "IDEMPAY_WX_SIGN_TYPE must be MD5 or HMAC-SHA256\n");
        return -1;
    }
    snprintf(dflt, sizeof(dflt), "http://127.0.0.1:%lld", service_mock_port());
    snprintf(c->gateway_url, sizeof(c->gateway_url), "%s", env_str("IDEMPAY_GATEWAY_URL", dflt));
    snprintf(dflt, sizeof(dflt), "http://127.0.0.1:%lld/api/pay/callback/wechat", public_port);
    snprintf(c->notify_url, sizeof(c->notify_url), "%s", env_str("IDEMPAY_NOTIFY_URL", dflt));
    snprintf(c->redis_host, sizeof(c->redis_host), "%s",
             env_str("IDEMPAY_REDIS_HOST", "127.0.0.1"));
    snprintf(c->redis_user, sizeof(c->redis_user), "%s", env_str("IDEMPAY_REDIS_USER", ""));
    snprintf(c->redis_password, sizeof(c->redis_password), "%s",
             env_str("IDEMPAY_REDIS_PASSWORD", ""));
    snprintf(dflt, sizeof(dflt), "%s/run/metrics.bin", state);
    snprintf(c->metrics_path, sizeof(c->metrics_path), "%s", env_str("IDEMPAY_METRICS_FILE", dflt));
    return 0;
}

/* The numbers: the service windows (common/service_windows), the flows'
 * times, the statement's schedule, TTLs, threads and Redis. Checked by
 * config_check_numbers. */
static void config_read_numbers(app_config *c)
{
    service_windows w;

    service_windows_load(&w);
    c->gateway_connect_timeout_ms = env_int("IDEMPAY_GATEWAY_CONNECT_TIMEOUT_MS", 1000);
    c->gateway_timeout_ms = w.gateway_timeout_ms;
    c->lease_ms = w.lease_ms;
    c->reconcile_interval_ms = w.reconcile_interval_ms;
    c->failed_recheck_ms = w.failed_recheck_ms;
    c->statement_interval_ms = w.statement_interval_ms;
    c->retry_after_s = w.retry_after_s;
    c->prepay_ttl_ms = w.prepay_ttl_ms;
    c->statement_ready_hour = env_int("IDEMPAY_STATEMENT_READY_HOUR", 10);
    c->statement_reread_days = env_int("IDEMPAY_STATEMENT_REREAD_DAYS", 3);
    c->token_ttl_s = env_int("IDEMPAY_TOKEN_TTL", 900);
    c->idempotency_ttl_s = env_int("IDEMPAY_IDEMPOTENCY_TTL", 86400);
    c->threads = (int)env_int("IDEMPAY_THREADS", 32);
    c->gateway_max_inflight = (int)env_int("IDEMPAY_GATEWAY_MAX_INFLIGHT",
                                           c->threads > 5 ? c->threads - 4 : 1);
    c->redis_port = (int)env_int("IDEMPAY_REDIS_PORT", 16379);
    c->redis_timeout_ms = env_int("IDEMPAY_REDIS_TIMEOUT_MS", 1000);
    c->close_min_age_ms = env_int("IDEMPAY_CLOSE_MIN_AGE_MS", 300000);
    c->close_margin_ms = env_int("IDEMPAY_CLOSE_MARGIN_MS", 10000);
    c->query_min_interval_ms = env_int("IDEMPAY_QUERY_MIN_INTERVAL_MS", 2000);
    c->micropay_poll_ms = env_int("IDEMPAY_MICROPAY_POLL_MS", 5000);
    c->micropay_window_ms = env_int("IDEMPAY_MICROPAY_WINDOW_MS", 30000);
    c->reverse_min_wait_ms = env_int("IDEMPAY_REVERSE_MIN_WAIT_MS", 15000);
    c->auth_window_s = env_int("IDEMPAY_AUTH_WINDOW_S", 300);
}

/* The numbers' ranges, and the lease against the gateway timeout. -1 with
 * the reason on stderr. */
static int config_check_numbers(const app_config *c)
{
    if (c->threads < 1 || c->threads > 256 || c->gateway_max_inflight < 1 ||
        c->gateway_timeout_ms < 1 || c->token_ttl_s < 1 || c->idempotency_ttl_s < 1 ||
        c->reconcile_interval_ms < 10 || c->failed_recheck_ms < 1 ||
        c->statement_interval_ms < 100) {
        fprintf(stderr, "invalid IDEMPAY_* numbers (threads 1..256; intervals and timeouts > 0)\n");
        return -1;
    }
    if (c->prepay_ttl_ms < 1000 || c->close_min_age_ms < 0 || c->close_margin_ms < 0 ||
        c->query_min_interval_ms < 0 || c->micropay_poll_ms < 10 || c->micropay_window_ms < 0 ||
        c->reverse_min_wait_ms < 0) {
        fprintf(stderr, "invalid IDEMPAY_* flow numbers (IDEMPAY_PREPAY_TTL_MS >= 1000,"
                        " IDEMPAY_MICROPAY_POLL_MS >= 10, the others >= 0)\n");
        return -1;
    }
    if (c->statement_ready_hour < -24 || c->statement_ready_hour > 23 ||
        c->statement_reread_days < 1 || c->statement_reread_days > 60) {
        fprintf(stderr, "IDEMPAY_STATEMENT_READY_HOUR must be -24..23 (hours after the end of the"
                        " bill's China day) and IDEMPAY_STATEMENT_REREAD_DAYS 1..60\n");
        return -1;
    }
    if (c->lease_ms < app_config_lease_min_ms(c)) {
        fprintf(stderr,
                "IDEMPAY_LEASE_MS=%ld is too short: one lease holder may wait on %d gateway"
                " calls of up to IDEMPAY_GATEWAY_TIMEOUT_MS=%ld each (orderquery, closeorder,"
                " orderquery); set IDEMPAY_LEASE_MS to at least %ld\n",
                c->lease_ms, SERVICE_GATEWAY_CALLS_PER_LEASE, c->gateway_timeout_ms,
                app_config_lease_min_ms(c));
        return -1;
    }
    return 0;
}

/* IDEMPAY_TOKEN_MODE into c->token_mode. -1 with the reason on stderr. */
static int config_token_mode(app_config *c, const char *mode)
{
    if (!strcmp(mode, "off"))
        c->token_mode = TOKEN_MODE_OFF;
    else if (!strcmp(mode, "optional"))
        c->token_mode = TOKEN_MODE_OPTIONAL;
    else if (!strcmp(mode, "required"))
        c->token_mode = TOKEN_MODE_REQUIRED;
    else {
        fprintf(stderr, "IDEMPAY_TOKEN_MODE must be off, optional or required\n");
        return -1;
    }
    return 0;
}

int app_config_load(app_config *c)
{
    long long public_port = service_public_port();

    memset(c, 0, sizeof(*c));
    if (config_read_merchant(c, env_str("IDEMPAY_STATE_DIR", ".stack"), public_port) != 0)
        return -1;
    config_read_numbers(c);
    if (config_token_mode(c, env_str("IDEMPAY_TOKEN_MODE", "optional")) != 0)
        return -1;
    if (config_door(c, env_str("IDEMPAY_DOOR", "merchant"), c->auth_window_s) != 0)
        return -1;
    if (config_check_secrets(c, env_str("IDEMPAY_WX_KEY", NULL) != NULL) != 0)
        return -1;
    if (config_refund_load(&c->refund, c->gateway_url, public_port) != 0)
        return -1;
    if (config_limits_load(&c->limits) != 0)
        return -1;
    if (config_v3_load(&c->v3, public_port) != 0)
        return -1;
    if (c->redis_user[0] != '\0' && c->redis_password[0] == '\0') {
        fprintf(stderr, "IDEMPAY_REDIS_USER is set without IDEMPAY_REDIS_PASSWORD"
                        " (or IDEMPAY_REDIS_PASSWORD_FILE)\n");
        return -1;
    }
    if (strlen(c->key) != 32) {
        fprintf(stderr, "IDEMPAY_WX_KEY must be 32 characters\n");
        return -1;
    }
    return config_check_numbers(c);
}

int app_config_copy(char *dst, size_t len, const char *name, const char *v)
{
    if (text_copy(dst, len, v))
        return 0;
    fprintf(stderr, "%s is longer than %zu characters\n", name, len > 0 ? len - 1 : 0);
    return -1;
}
