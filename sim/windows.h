/* windows - the service's own time windows, which the nemesis aims its
 * faults at: the gateway timeout, the PROCESSING lease, the reconciler's
 * period, the FAILED recheck, the Idempotency-Key claim and the Retry-After
 * it answers.
 *
 * The service exposes no configuration endpoint and /metrics carries no
 * settings, so the windows are read the way the service reads them:
 * common/service_windows (the same IDEMPAY_* names and defaults, through
 * common/env: the environment over the configuration file) and the same
 * derivations (the claim, the longest service call). ./stack passes the
 * environment to the service (lighttpd.conf copies these variables into the
 * FastCGI programs) and to the simulator alike. They shape the schedule, so
 * they are part of the digest. */
#ifndef IDEMPAY_SIM_WINDOWS_H
#define IDEMPAY_SIM_WINDOWS_H

#include <stddef.h>

typedef struct {
    long gateway_timeout_ms; /* IDEMPAY_GATEWAY_TIMEOUT_MS: one gateway call */
    long lease_ms;           /* IDEMPAY_LEASE_MS: a PROCESSING order's lease */
    long reconcile_ms;       /* IDEMPAY_RECONCILE_INTERVAL_MS: reconciler period */
    long failed_recheck_ms;  /* IDEMPAY_FAILED_RECHECK_MS: a FAILED order asked again */
    long retry_after_s;      /* IDEMPAY_RETRY_AFTER: Retry-After of 202/409/503 */
    long statement_ms;       /* IDEMPAY_STATEMENT_INTERVAL_MS (./stack: 30000): how often
                                the statement job reads the gateway's statement */
    long claim_ms;           /* an Idempotency-Key claim's lease (service_windows_claim_ms) */
    long service_call_ms;    /* the longest one payment request keeps the gateway busy
                                (service_windows_call_ms: 2 x timeout + 1 s) */
    long notify_retry_ms;    /* the mock's default first retry step (common/mock_knobs) */
    int from_env;            /* how many of the settings were set (the rest: defaults) */
} sim_windows;

/* Reads the windows through common/service_windows (environment over the
 * configuration file; a value below 1 takes the service's default, as the
 * service would refuse to start with it). Exits with status 2 when the
 * configuration file is broken (common/env); otherwise never fails. */
void windows_load(sim_windows *w);

/* The service defaults only (what an empty environment gives). */
void windows_defaults(sim_windows *w);

/* One line for the report and the schedule's params, e.g.
 * "timeout=3000 lease=10000 reconcile=2000 recheck=60000 claim=10000 retry_after=1s".
 * Returns out. */
char *windows_describe(const sim_windows *w, char *out, size_t len);

/* The longest the service may take to settle an order on its own once
 * the gateway is healthy: a lease, the recheck and two reconciler periods,
 * or a statement period and two reconciler periods (a second charge whose
 * notification was lost is found by the statement job), whichever is
 * longer. */
long windows_settle_ms(const sim_windows *w);

/* The longest an order that failed without a fence (a micropay the gateway
 * did not know, a gateway without closeorder) reads PROCESSING: a lease,
 * the FAILED recheck and two reconciler periods. Every run may have such
 * orders (a reset before the charge is one), so it is the least default
 * settle of every run. */
long windows_recheck_settle_ms(const sim_windows *w);

#endif
