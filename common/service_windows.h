/* service_windows - the payment service's time windows, defined once: each
 * setting's name and default, read through common/env (the environment over
 * the configuration file), and the windows derived from them.
 *
 * The service (app/config.c) takes these settings from here, and the
 * simulator (sim/windows.c) aims its nemesis at the same numbers, so the two
 * cannot disagree on a default, on where a value comes from, or on how a
 * derived window (an Idempotency-Key claim, the longest service call, the
 * shortest lease) is computed. */
#ifndef IDEMPAY_SERVICE_WINDOWS_H
#define IDEMPAY_SERVICE_WINDOWS_H

typedef struct {
    long gateway_timeout_ms;    /* IDEMPAY_GATEWAY_TIMEOUT_MS, 3000: one gateway call, in total */
    long lease_ms;              /* IDEMPAY_LEASE_MS, 10000: a PROCESSING order's lease */
    long reconcile_interval_ms; /* IDEMPAY_RECONCILE_INTERVAL_MS, 2000: the reconciler's period */
    long failed_recheck_ms;     /* IDEMPAY_FAILED_RECHECK_MS, 60000: a FAILED order asked again */
    long statement_interval_ms; /* IDEMPAY_STATEMENT_INTERVAL_MS, 300000: the statement job's
                                   period */
    long retry_after_s;         /* IDEMPAY_RETRY_AFTER, 1: Retry-After of 202, 409 and 503 */
    long prepay_ttl_ms;         /* IDEMPAY_PREPAY_TTL_MS, 7200000: a prepay's time_expire after
                                   its order's creation (NATIVE/JSAPI) */
} service_windows;

/* Gateway calls one lease holder may make in a row (orderquery, closeorder,
 * orderquery), each up to the gateway timeout: what the lease must cover. */
#define SERVICE_GATEWAY_CALLS_PER_LEASE 3
/* Gateway calls one payment request may make while it holds its
 * Idempotency-Key claim (orderquery + unifiedorder). */
#define SERVICE_GATEWAY_CALLS_PER_REQUEST 2
/* The slack added to a window made of gateway calls (ms). */
#define SERVICE_WINDOW_SLACK_MS 1000

/* The defaults: what an empty environment and no configuration file give. */
void service_windows_defaults(service_windows *w);

/* Each window from the environment over the configuration file (env_int:
 * unset, empty or not a number gives the default). Returns how many of the
 * settings were set (by either source). The values are not validated here:
 * the service refuses bad ones at start (app_config_load); a reader that
 * must go on (the simulator) decides itself. Exits with status 2 when the
 * configuration file is broken (common/env's policy). */
int service_windows_load(service_windows *w);

/* The i-th window's setting name (IDEMPAY_GATEWAY_TIMEOUT_MS, ...), or NULL
 * past the end: the settings service_windows_load reads. */
const char *service_windows_setting(int i);

/* The longest one payment request may keep the gateway busy: its
 * SERVICE_GATEWAY_CALLS_PER_REQUEST calls of up to gateway_timeout_ms each,
 * plus SERVICE_WINDOW_SLACK_MS ("2 x timeout + 1 s"). */
long service_windows_call_ms(long gateway_timeout_ms);

/* How long an Idempotency-Key claim protects its running request: the order
 * lease, and at least service_windows_call_ms. */
long service_windows_claim_ms(long lease_ms, long gateway_timeout_ms);

/* The shortest lease the service accepts: SERVICE_GATEWAY_CALLS_PER_LEASE
 * calls of up to gateway_timeout_ms each, plus SERVICE_WINDOW_SLACK_MS. */
long service_windows_lease_min_ms(long gateway_timeout_ms);

#endif
