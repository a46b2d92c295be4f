/* config_report - the effective settings, secrets masked, and warnings. */
#include "config_report.h"

#include <string.h>
#include <unistd.h>

#include "db_conn.h"
#include "dev_merchant.h"
#include "env.h"

/* Every setting an idempay program reads (service, mock gateway, simulator,
 * tools): a config-file key outside this list earns a warning. */
static const char *const known_keys[] = {
    "IDEMPAY_STATE_DIR",
    "IDEMPAY_HTTP_PORT",
    "IDEMPAY_MOCK_PORT",
    "IDEMPAY_DB_SOCKET",
    "IDEMPAY_DB_HOST",
    "IDEMPAY_DB_PORT",
    "IDEMPAY_DB_USER",
    "IDEMPAY_DB_PASSWORD",
    "IDEMPAY_DB_CONNECT_TIMEOUT",
    "IDEMPAY_DB_RW_TIMEOUT",
    "IDEMPAY_REDIS_HOST",
    "IDEMPAY_REDIS_PORT",
    "IDEMPAY_REDIS_TIMEOUT_MS",
    "IDEMPAY_WX_APPID",
    "IDEMPAY_WX_MCHID",
    "IDEMPAY_WX_KEY",
    "IDEMPAY_WX_SIGN_TYPE",
    "IDEMPAY_DEVELOPMENT",
    "IDEMPAY_GATEWAY_URL",
    "IDEMPAY_NOTIFY_URL",
    "IDEMPAY_GATEWAY_TIMEOUT_MS",
    "IDEMPAY_GATEWAY_CONNECT_TIMEOUT_MS",
    "IDEMPAY_LEASE_MS",
    "IDEMPAY_RECONCILE_INTERVAL_MS",
    "IDEMPAY_FAILED_RECHECK_MS",
    "IDEMPAY_STATEMENT_INTERVAL_MS",
    "IDEMPAY_RETRY_AFTER",
    "IDEMPAY_TOKEN_MODE",
    "IDEMPAY_TOKEN_TTL",
    "IDEMPAY_IDEMPOTENCY_TTL",
    "IDEMPAY_THREADS",
    "IDEMPAY_GATEWAY_MAX_INFLIGHT",
    "IDEMPAY_SERVICE_PROCS",
    "IDEMPAY_METRICS_FILE",
    "IDEMPAY_LOG_LEVEL",
    "IDEMPAY_LOG_FILE",
    "IDEMPAY_SHUTDOWN_TIMEOUT_MS",
    "IDEMPAY_MOCK_THREADS",
    "IDEMPAY_MOCK_DB",
    "IDEMPAY_MOCK_NOTIFY_TIMEOUT_MS",
    "IDEMPAY_MIGRATE_DATABASES",
    "IDEMPAY_MIGRATE_DB_USER",
    "IDEMPAY_MIGRATE_DB_PASSWORD",
    "IDEMPAY_MOCK_DB_USER",
    "IDEMPAY_MOCK_DB_PASSWORD",
    "IDEMPAY_SIM_DB_USER",
    "IDEMPAY_SIM_DB_PASSWORD",
    "IDEMPAY_REDIS_USER",
    "IDEMPAY_REDIS_PASSWORD",
    "IDEMPAY_REDIS_SENTINELS",
    "IDEMPAY_REDIS_MASTER",
    "IDEMPAY_DB_SYNC_WAIT",
    "IDEMPAY_REFUNDS",
    "IDEMPAY_WX_CERT",
    "IDEMPAY_WX_CERT_KEY",
    "IDEMPAY_GATEWAY_CA",
    "IDEMPAY_GATEWAY_SECAPI_URL",
    "IDEMPAY_REFUND_NOTIFY_URL",
    "IDEMPAY_REFUND_QUERY_INTERVAL_MS",
    "IDEMPAY_SOCKET_MODE",
    "IDEMPAY_RATE_TOKENS_PER_S",
    "IDEMPAY_RATE_ORDERS_PER_S",
    "IDEMPAY_TOKEN_ROOM_PCT",
    "IDEMPAY_LOG_REJECTS_PER_S",
    "IDEMPAY_MOCK_REFUND_DELAY_MS",
    "IDEMPAY_MOCK_REQUIRE_CLIENT_CERT",
    "IDEMPAY_MOCK_REFUND_NOTIFY_URL",
    "IDEMPAY_DOOR",
    "IDEMPAY_PUBLIC_PORT",
    "IDEMPAY_AUTH_WINDOW_S",
    "IDEMPAY_CALLER",
    "IDEMPAY_CALLER_SECRET_FILE",
    "IDEMPAY_ORDER_RETENTION_DAYS",
    /* APIv3 (config_v3.h; the mock's in docs/MOCK.md) */
    "IDEMPAY_WX_API",
    "IDEMPAY_WX_V3_CERT",
    "IDEMPAY_WX_V3_CERT_KEY",
    "IDEMPAY_WX_APIV3_KEY",
    "IDEMPAY_WX_V3_PLATFORM_CERT",
    "IDEMPAY_WX_V3_NOTIFY_URL",
    "IDEMPAY_WX_V3_TIME_WINDOW_S",
    "IDEMPAY_MOCK_V3_PLATFORM_CERT",
    "IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY",
    "IDEMPAY_MOCK_V3_PLATFORM2_CERT",
    "IDEMPAY_MOCK_V3_PLATFORM2_CERT_KEY",
};

char *config_report_mask(const char *secret, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "<masked, %zu characters>", secret ? strlen(secret) : (size_t)0);
    return buf;
}

static const char *source_of(const char *key)
{
    const char *s = env_source(key);
    return s ? s : "default";
}

static void line_s(FILE *out, const char *key, const char *value)
{
    int n = fprintf(out, "%s=%s", key, value ? value : "");
    fprintf(out, "%*s# %s\n", n < 48 ? 48 - n : 1, "", source_of(key));
}

static void line_l(FILE *out, const char *key, long long value)
{
    char v[32];
    snprintf(v, sizeof(v), "%lld", value);
    line_s(out, key, v);
}

static int known(const char *key)
{
    size_t n = strlen(key);

    for (size_t i = 0; i < sizeof(known_keys) / sizeof(known_keys[0]); i++) {
        size_t k = strlen(known_keys[i]);
        if (!strcmp(key, known_keys[i]) ||
            (n == k + 5 && !strncmp(key, known_keys[i], k) && !strcmp(key + k, "_FILE")))
            return 1;
    }
    return 0;
}

/* The merchant, the gateway and the service windows. */
static void report_merchant(const app_config *c, long drain_ms, FILE *out)
{
    static const char *const modes[] = { "off", "optional", "required" };
    char masked[64];

    line_s(out, "IDEMPAY_WX_APPID", c->appid);
    line_s(out, "IDEMPAY_WX_MCHID", c->mch_id);
    line_s(out, "IDEMPAY_WX_KEY", config_report_mask(c->key, masked, sizeof(masked)));
    line_s(out, "IDEMPAY_WX_SIGN_TYPE", wx_sign_type_name(c->sign_type));
    line_s(out, "IDEMPAY_DEVELOPMENT",
           c->development ? "1 (development: the published key and an http gateway allowed)" : "0");
    line_s(out, "IDEMPAY_GATEWAY_URL", c->gateway_url);
    line_s(out, "IDEMPAY_DOOR", c->door == DOOR_PUBLIC ? "public" : "merchant");
    line_l(out, "IDEMPAY_AUTH_WINDOW_S", c->auth_window_s);
    line_s(out, "IDEMPAY_NOTIFY_URL", c->notify_url);
    line_l(out, "IDEMPAY_GATEWAY_CONNECT_TIMEOUT_MS", c->gateway_connect_timeout_ms);
    line_l(out, "IDEMPAY_GATEWAY_TIMEOUT_MS", c->gateway_timeout_ms);
    line_l(out, "IDEMPAY_GATEWAY_MAX_INFLIGHT", c->gateway_max_inflight);
    line_l(out, "IDEMPAY_LEASE_MS", c->lease_ms);
    line_l(out, "IDEMPAY_RECONCILE_INTERVAL_MS", c->reconcile_interval_ms);
    line_l(out, "IDEMPAY_FAILED_RECHECK_MS", c->failed_recheck_ms);
    line_l(out, "IDEMPAY_PREPAY_TTL_MS", c->prepay_ttl_ms);
    line_l(out, "IDEMPAY_CLOSE_MIN_AGE_MS", c->close_min_age_ms);
    line_l(out, "IDEMPAY_CLOSE_MARGIN_MS", c->close_margin_ms);
    line_l(out, "IDEMPAY_QUERY_MIN_INTERVAL_MS", c->query_min_interval_ms);
    line_l(out, "IDEMPAY_MICROPAY_POLL_MS", c->micropay_poll_ms);
    line_l(out, "IDEMPAY_MICROPAY_WINDOW_MS", c->micropay_window_ms);
    line_l(out, "IDEMPAY_REVERSE_MIN_WAIT_MS", c->reverse_min_wait_ms);
    line_l(out, "IDEMPAY_RETRY_AFTER", c->retry_after_s);
    line_s(out, "IDEMPAY_TOKEN_MODE", modes[c->token_mode]);
    line_l(out, "IDEMPAY_TOKEN_TTL", c->token_ttl_s);
    line_l(out, "IDEMPAY_IDEMPOTENCY_TTL", c->idempotency_ttl_s);
    line_l(out, "IDEMPAY_THREADS", c->threads);
    line_l(out, "IDEMPAY_SHUTDOWN_TIMEOUT_MS", drain_ms);
}

/* MariaDB, Redis, metrics and logs. */
static void report_stores(const app_config *c, FILE *out)
{
    db_conn_params db;
    char masked[64];

    db_conn_params_get(&db);
    line_s(out, "IDEMPAY_DB_SOCKET", db.socket ? db.socket : "");
    line_s(out, "IDEMPAY_DB_HOST", db.host);
    line_l(out, "IDEMPAY_DB_PORT", db.port);
    line_s(out, "IDEMPAY_DB_USER", db.user);
    line_s(out, "IDEMPAY_DB_PASSWORD", config_report_mask(db.password, masked, sizeof(masked)));
    line_l(out, "IDEMPAY_DB_CONNECT_TIMEOUT", db.connect_timeout_s);
    line_l(out, "IDEMPAY_DB_RW_TIMEOUT", db.rw_timeout_s);
    line_s(out, "IDEMPAY_REDIS_HOST", c->redis_host);
    line_l(out, "IDEMPAY_REDIS_PORT", c->redis_port);
    line_l(out, "IDEMPAY_REDIS_TIMEOUT_MS", c->redis_timeout_ms);
    line_s(out, "IDEMPAY_REDIS_USER", c->redis_user);
    line_s(out, "IDEMPAY_REDIS_PASSWORD",
           c->redis_password[0] != '\0'
               ? config_report_mask(c->redis_password, masked, sizeof(masked))
               : "");
    line_s(out, "IDEMPAY_METRICS_FILE", c->metrics_path);
    line_s(out, "IDEMPAY_LOG_LEVEL", env_str("IDEMPAY_LOG_LEVEL", "info"));
    line_s(out, "IDEMPAY_LOG_FILE", env_str("IDEMPAY_LOG_FILE", ""));
    line_s(out, "IDEMPAY_SOCKET_MODE", env_str("IDEMPAY_SOCKET_MODE", "0600"));
}

/* APIv3, refunds and the per-caller limits. */
static void report_v3_refunds_limits(const app_config *c, FILE *out)
{
    char masked[64];

    line_s(out, "IDEMPAY_WX_API", config_v3_api_name(c->v3.api));
    if (c->v3.api == WX_API_V3) {
        line_s(out, "IDEMPAY_WX_V3_CERT", c->v3.cert);
        line_s(out, "IDEMPAY_WX_V3_CERT_KEY", c->v3.cert_key); /* the path, never the key */
        line_s(out, "IDEMPAY_WX_APIV3_KEY",
               config_report_mask(c->v3.apiv3_key, masked, sizeof(masked)));
        line_s(out, "IDEMPAY_WX_V3_PLATFORM_CERT", c->v3.platform_cert);
        line_s(out, "IDEMPAY_WX_V3_NOTIFY_URL", c->v3.notify_url);
        line_l(out, "IDEMPAY_WX_V3_TIME_WINDOW_S", c->v3.window_s);
    }
    line_s(out, "IDEMPAY_REFUNDS", c->refund.enabled ? "on" : "off");
    line_s(out, "IDEMPAY_WX_CERT", c->refund.cert);
    line_s(out, "IDEMPAY_WX_CERT_KEY", c->refund.cert_key); /* the path, never the key */
    line_s(out, "IDEMPAY_GATEWAY_CA", c->refund.gateway_ca);
    line_s(out, "IDEMPAY_GATEWAY_SECAPI_URL", c->refund.secapi_url);
    line_s(out, "IDEMPAY_REFUND_NOTIFY_URL", c->refund.notify_url);
    line_l(out, "IDEMPAY_REFUND_QUERY_INTERVAL_MS", c->refund.query_interval_ms);
    line_l(out, "IDEMPAY_RATE_TOKENS_PER_S", c->limits.tokens_per_s);
    line_l(out, "IDEMPAY_RATE_ORDERS_PER_S", c->limits.orders_per_s);
    line_l(out, "IDEMPAY_TOKEN_ROOM_PCT", c->limits.token_room_pct);
    line_l(out, "IDEMPAY_LOG_REJECTS_PER_S", c->limits.log_rejects_per_s);
    line_l(out, "IDEMPAY_ORDER_RETENTION_DAYS", c->limits.order_retention_days);
}

/* The warnings on err; returns how many. */
static int report_warnings(const app_config *c, long drain_ms, const char *path, FILE *err)
{
    int warnings = 0;

    for (size_t i = 0; env_config_key(i); i++)
        if (!known(env_config_key(i))) {
            fprintf(err, "warning: %s in %s is not a setting any idempay program reads\n",
                    env_config_key(i), path);
            warnings++;
        }
    if (!strcmp(c->key, IDEMPAY_DEV_KEY)) {
        fprintf(err, "warning: IDEMPAY_WX_KEY is the documented development key; set the "
                     "merchant's own (IDEMPAY_WX_KEY_FILE) for anything real\n");
        warnings++;
    }
    {
        char dir[sizeof(c->metrics_path)];
        char *slash;
        snprintf(dir, sizeof(dir), "%s", c->metrics_path);
        slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = '\0';
        else if (!slash)
            snprintf(dir, sizeof(dir), ".");
        if (access(dir, W_OK) != 0) {
            fprintf(err,
                    "warning: IDEMPAY_METRICS_FILE's directory %s is not writable here: "
                    "metrics would count per process only\n",
                    dir);
            warnings++;
        }
    }
    if (c->refund.enabled && !config_refund_has_cert(&c->refund)) {
        fprintf(err, "warning: refunds are on without IDEMPAY_WX_CERT / IDEMPAY_WX_CERT_KEY: "
                     "only a plain-http gateway (the mock without TLS) takes them\n");
        warnings++;
    }
    if (drain_ms <= c->gateway_timeout_ms) {
        fprintf(err,
                "warning: IDEMPAY_SHUTDOWN_TIMEOUT_MS (%ld) is not above the gateway "
                "timeout: a stop may cut payments waiting on the gateway\n",
                drain_ms);
        warnings++;
    }
    return warnings;
}

int config_report_print(const app_config *c, long drain_ms, FILE *out, FILE *err)
{
    const char *path = env_config_path();

    fprintf(out, "# idempay-fcgi effective configuration (config file: %s)\n",
            path ? path : "none");
    report_merchant(c, drain_ms, out);
    report_stores(c, out);
    report_v3_refunds_limits(c, out);
    return report_warnings(c, drain_ms, path, err);
}
