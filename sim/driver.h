/* driver - the phase sequencer: runs a schedule's client traffic against
 * the payment service, phase by phase. A phase thread issues each phase's
 * tokens, applies its mock config (through the caller's callback) and
 * releases it once the previous phase's budget is used up; the worker pool
 * (pool.h), one client each (client.h), takes the tasks in release order and
 * runs each at its phase's start + start_ms: a paying client, a burst, a
 * mismatch, a forgery or a second charge (forge.h), pings.
 *
 * Every client operation lands in its worker's own history; latency goes
 * into per-worker histograms (pings are counted, not kept one by one).
 * Not re-entrant: one thread (the caller) drives segments one at a time,
 * and driver_free only after the last one returned. */
#ifndef IDEMPAY_SIM_DRIVER_H
#define IDEMPAY_SIM_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "history.h"
#include "profile.h"
#include "report.h"
#include "schedule.h"

typedef struct {
    const char *target; /* service base URL, no trailing slash */
    const char *prefix; /* order-number prefix of this run */
    const sim_schedule *sched;
    int workers;                      /* threads (--concurrency) */
    const char *gateway;              /* the mock gateway (the payer's second charges), no slash */
    const char *notify_url;           /* the service's notification URL, for those charges */
    int v3_forgeries;                 /* the schedule has APIv3 forgeries: the driver loads the
                                         platform's material for them (forge_v3_load), and
                                         driver_new fails without it; they go to
                                         IDEMPAY_WX_V3_NOTIFY_URL, else notify_url + "/v3" */
    const char *appid, *mch_id, *key; /* merchant credentials (forged callbacks, charges) */
    volatile int *stop;               /* set (e.g. by SIGINT) to skip the remaining tasks */
    const sim_profile *profile;       /* how to speak to the target: every request is built and
                                         every answer read through it (NULL: the built-in idempay
                                         profile); tokens, Idempotency-Keys and forged callbacks
                                         are sent only when it has them */
} driver_config;

typedef struct {
    uint64_t tasks_done, tasks_total;
    uint64_t outcome[OUT_COUNT];
} driver_progress_t;

typedef struct driver driver;

/* Starts the worker threads. http_client_global_init must have been called.
 * Returns NULL with a message in err (OOM, thread creation). */
driver *driver_new(const driver_config *cfg, char *err, size_t errlen);
/* Stops the workers and frees everything. NULL accepted. */
void driver_free(driver *d);

/* Microseconds since driver_new on the monotonic clock. */
int64_t driver_now_us(const driver *d);

/* The wall clock (CLOCK_REALTIME, microseconds since 1970) at the run's
 * time 0: ledger times minus this are on the run's clock. */
int64_t driver_origin_epoch_us(const driver *d);

/* Called by the driver when phase p is about to start (after its tokens
 * are issued): applies the phase's mock config. Returns 0, or -1 to stop the
 * run (the remaining tasks are skipped). */
typedef int (*driver_phase_fn)(void *arg, size_t phase);

/* Runs phases [first, last) as one segment and returns when all of their
 * tasks are done. A phase's tokens are issued (GET /api/pay/token) just
 * before it starts; tasks are released at the phase's start + start_ms. The
 * first phase starts at once; each next one when the previous phase's budget
 * is used up, while the previous phase's late clients finish under the new
 * mock config. on_phase runs on the driver's phase thread. */
void driver_run_segment(driver *d, size_t first, size_t last, driver_phase_fn on_phase, void *arg);

/* When phase p started (driver_now_us), or -1 when it has not. */
int64_t driver_phase_start_us(const driver *d, size_t p);

/* Runs fn(client, i, arg) for every i in [0, n) on the workers, each with
 * its worker's client, and returns when all are done (readback.h). Not
 * while a segment runs. */
void driver_each(driver *d, size_t n, void (*fn)(sim_client *c, size_t i, void *arg), void *arg);

/* Snapshot of the progress counters (any thread). */
void driver_progress(driver *d, driver_progress_t *out);

/* After the traffic: moves every worker's ops into out (unsorted) and adds
 * the request counters and latency histograms into rep. Returns 0 or -1 (OOM). */
int driver_collect(driver *d, sim_history *out, sim_report *rep);

#endif
