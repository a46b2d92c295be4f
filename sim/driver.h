/* driver - runs a schedule's client traffic against the payment service:
 * a pool of worker threads, each with its own keep-alive http_client, taking
 * tasks in release order and acting like a careful client (retries with
 * backoff, honouring Retry-After, polling PROCESSING orders). Every client
 * operation lands in the worker's own history; latency goes into per-worker
 * histograms (pings are counted but not kept one by one).
 *
 * Not re-entrant: one thread (the caller) drives phases one at a time. */
#ifndef IDEMPAY_SIM_DRIVER_H
#define IDEMPAY_SIM_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "profile.h"
#include "report.h"
#include "schedule.h"

typedef struct {
    const char *target;        /* service base URL, no trailing slash */
    const char *prefix;        /* order-number prefix of this run */
    const sim_schedule *sched;
    int workers;               /* threads (--concurrency) */
    const char *gateway;       /* the mock gateway (the payer's second charges), no slash */
    const char *notify_url;    /* the service's notification URL, for those charges */
    const char *appid, *mch_id, *key; /* merchant credentials (forged callbacks, charges) */
    volatile int *stop;        /* set (e.g. by SIGINT) to skip the remaining tasks */
    const sim_profile *profile; /* how to speak to the target: every request is built and
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
void driver_run_segment(driver *d, size_t first, size_t last, driver_phase_fn on_phase,
                        void *arg);

/* When phase p started (driver_now_us), or -1 when it has not. */
int64_t driver_phase_start_us(const driver *d, size_t p);

/* Reads the orders idx[0..n) through the profile's read (GET /api/pay/orders/{no}) into rows
 * (indexed by order, i.e. rows[idx[i]]), with a few retries each; a row that
 * cannot be read is ROW_ERROR. These reads are the checker's, not clients':
 * they are not recorded. Returns the number of ROW_ERROR rows. */
size_t driver_read_orders(driver *d, const size_t *idx, size_t n, sim_row *rows);

/* Snapshot of the progress counters (any thread). */
void driver_progress(driver *d, driver_progress_t *out);

/* After the traffic: moves every worker's ops into out (unsorted) and adds
 * the request counters and latency histograms into rep. Returns 0 or -1 (OOM). */
int driver_collect(driver *d, sim_history *out, sim_report *rep);

/* Parses an idempay order body (GET /api/pay/orders/{no}, a 200) into row
 * through the built-in profile. Returns 0, or -1 when it is not such a body
 * (row->state = ROW_ERROR). */
int driver_parse_order(const char *body, size_t len, sim_row *row);

#endif
