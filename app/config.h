/* config - the service's configuration, read once from IDEMPAY_* variables
 * at start-up and read-only afterwards (shared by all threads). */
#ifndef IDEMPAY_APP_CONFIG_H
#define IDEMPAY_APP_CONFIG_H

#include "config_limits.h"
#include "config_refund.h"
#include "config_v3.h"
#include "wx_sign.h"

typedef enum {
    TOKEN_MODE_OFF = 0,      /* tokens ignored */
    TOKEN_MODE_OPTIONAL = 1, /* checked when present (default) */
    TOKEN_MODE_REQUIRED = 2  /* a POST /api/pay without a token is 403 */
} token_mode;

/* Which listener this process serves (IDEMPAY_DOOR; docs/SECURITY.md,
 * "Doors"): the door is a property of the process, never of a request. */
typedef enum {
    DOOR_MERCHANT = 0, /* the API (signed callers), /api/ping, /healthz, /metrics */
    DOOR_PUBLIC = 1    /* the gateway's notifications only */
} app_door;

typedef struct {
    app_door door;          /* IDEMPAY_DOOR merchant|public, default merchant */
    long auth_window_s;     /* IDEMPAY_AUTH_WINDOW_S, 300: a signed request's timestamp
                               may differ from the clock by this much */
    char appid[64];         /* IDEMPAY_WX_APPID */
    char mch_id[64];        /* IDEMPAY_WX_MCHID */
    char key[128];          /* IDEMPAY_WX_KEY - never log */
    wx_sign_type sign_type; /* IDEMPAY_WX_SIGN_TYPE MD5|HMAC-SHA256, MD5: what the service
                             * signs its requests with; with HMAC-SHA256 a reply or a
                             * notification signed with MD5 is refused
                             * (wx_sign_type_allowed) */
    int development;        /* IDEMPAY_DEVELOPMENT=1: the documented development key
                             * and a plain-http gateway are allowed (./stack sets it) */
    char gateway_url[256];  /* IDEMPAY_GATEWAY_URL, default http://127.0.0.1:$IDEMPAY_MOCK_PORT */
    /* IDEMPAY_NOTIFY_URL, default http://127.0.0.1:$IDEMPAY_PUBLIC_PORT/api/pay/callback/wechat
     * (IDEMPAY_PUBLIC_PORT: the public door, default IDEMPAY_HTTP_PORT + 4) */
    char notify_url[256];
    long gateway_connect_timeout_ms; /* IDEMPAY_GATEWAY_CONNECT_TIMEOUT_MS, 1000 */
    long gateway_timeout_ms;         /* IDEMPAY_GATEWAY_TIMEOUT_MS, 3000: total per gateway call */
    long lease_ms;                   /* IDEMPAY_LEASE_MS, 10000: PROCESSING lease; longer than the
                                        gateway calls one holder makes (config_lease_min_ms) */
    long reconcile_interval_ms;      /* IDEMPAY_RECONCILE_INTERVAL_MS, 2000 */
    long failed_recheck_ms;          /* IDEMPAY_FAILED_RECHECK_MS, 60000: a FAILED order is
                                        asked about once more this long after failing */
    long statement_interval_ms;      /* IDEMPAY_STATEMENT_INTERVAL_MS, 300000: the statement
                                        job's period */
    long statement_ready_hour;       /* IDEMPAY_STATEMENT_READY_HOUR, 10: day D's bill is read from
                                        D+1 at this hour, China time (WeChat: after 10:00); -24..23,
                                        a negative value reads before the day ends (a test stack) */
    long statement_reread_days; /* IDEMPAY_STATEMENT_REREAD_DAYS, 3: a day is read again on every
                                   run for this many days after it became ready */
    long retry_after_s;         /* IDEMPAY_RETRY_AFTER, 1: Retry-After on 202/409/503 */
    token_mode token_mode;      /* IDEMPAY_TOKEN_MODE off|optional|required */
    long token_ttl_s;           /* IDEMPAY_TOKEN_TTL, 900 */
    long idempotency_ttl_s;     /* IDEMPAY_IDEMPOTENCY_TTL, 86400 */
    int threads;                /* IDEMPAY_THREADS, 32 */
    int gateway_max_inflight;   /* IDEMPAY_GATEWAY_MAX_INFLIGHT, threads - 4 (>= 1): request
                                 * threads of one process that may wait on the gateway at once */
    char redis_host[64];        /* IDEMPAY_REDIS_HOST, 127.0.0.1 */
    int redis_port;             /* IDEMPAY_REDIS_PORT, 16379 */
    long redis_timeout_ms;      /* IDEMPAY_REDIS_TIMEOUT_MS, 1000 */
    char redis_user[64];        /* IDEMPAY_REDIS_USER, "": the service's Redis ACL user */
    char redis_password[256];   /* IDEMPAY_REDIS_PASSWORD[_FILE], "": none (no AUTH) - never
                                 * log; with it every connection (also after a failover or a
                                 * Redis restart) authenticates first */
    char metrics_path[256];     /* IDEMPAY_METRICS_FILE, $IDEMPAY_STATE_DIR/run/metrics.bin */
    v3_config v3;               /* IDEMPAY_WX_API, IDEMPAY_WX_V3_*, IDEMPAY_WX_APIV3_KEY
                                 * (config_v3.h): which dialect the gateway calls speak */
    refund_config refund;       /* IDEMPAY_REFUNDS, IDEMPAY_WX_CERT, ... (config_refund.h) */
    limits_config limits;       /* IDEMPAY_RATE_*, IDEMPAY_TOKEN_ROOM_PCT, ... (config_limits.h) */
    /* The flows (docs/FLOWS.md); defaults are WeChat's documented values. */
    long prepay_ttl_ms;         /* IDEMPAY_PREPAY_TTL_MS, 7200000: time_expire - creation of a
                                   NATIVE/JSAPI prepay (WeChat: 2 h; at least 5 min) */
    long close_min_age_ms;      /* IDEMPAY_CLOSE_MIN_AGE_MS, 300000: closeorder is refused
                                   before the order is this old (WeChat: 5 min) */
    long close_margin_ms;       /* IDEMPAY_CLOSE_MARGIN_MS, 10000: the prepay's lease runs this
                                   much past max(time_expire, creation + close_min_age) */
    long query_min_interval_ms; /* IDEMPAY_QUERY_MIN_INTERVAL_MS, 2000: at most one orderquery
                                   per order this often from client polls */
    long micropay_poll_ms;      /* IDEMPAY_MICROPAY_POLL_MS, 5000 (WeChat: every 5 s) */
    long micropay_window_ms;    /* IDEMPAY_MICROPAY_WINDOW_MS, 30000 (WeChat: 30 s) */
    long reverse_min_wait_ms;   /* IDEMPAY_REVERSE_MIN_WAIT_MS, 15000 (WeChat: 15 s after the
                                   micropay) */
} app_config;

/* The shortest lease c accepts: SERVICE_GATEWAY_CALLS_PER_LEASE gateway
 * timeouts (orderquery, closeorder, orderquery in settle_resolve, or
 * unifiedorder, orderquery in the pay flow) plus a second for the database
 * writes around them (common/service_windows.h). A shorter lease could run
 * out while its holder still waits on the gateway. */
long app_config_lease_min_ms(const app_config *c);

/* Copies the value v of setting name into dst[len] (text_copy). Returns 0,
 * or -1 when it does not fit whole (a message naming the setting on
 * stderr; dst then holds a cut copy the caller must not use). */
int app_config_copy(char *dst, size_t len, const char *name, const char *v);

/* Fills c from the environment over the configuration file (common/env;
 * the windows' defaults are common/service_windows.c's, the development
 * merchant common/dev_merchant.h's). Returns 0, or -1 when a
 * value is invalid (message on stderr). */
int app_config_load(app_config *c);

#endif
