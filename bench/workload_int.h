/* workload_int - what the bench's workload files share (workload.c: the
 * requests; workload_fixtures.c: the rows and the mock state they need):
 * the configuration wl_init kept, the notification pools' bookkeeping, the
 * repeat workload's orders and the payment request that places them.
 * Internal to the workloads: bench.c sees workload.h only. */
#ifndef IDEMPAY_BENCH_WORKLOAD_INT_H
#define IDEMPAY_BENCH_WORKLOAD_INT_H

#include <stdbool.h>

#include "workload.h"

#define WL_AMOUNT "1.00"     /* every bench order's amount */
#define WL_REPEAT_ORDERS 256 /* paid once by the fixtures, repeated by WL_REPEAT */

/* What wl_init kept (NULL before it). */
extern const wl_config *wl_cfg;

/* Every notification pool's next order back to its first. */
void wl_pools_reset(void);
/* The order-number prefix of the pool of w ("CB", "RC", "C3", "R3"). */
const char *wl_pool_prefix_of(wl_kind w);

/* One payment of order_no by user (MICROPAY: charged with the reply) that
 * must answer 200 PAID (with Idempotent-Replayed: true when repeat).
 * Returns 0, or -1 counted in wk->errors. */
int wl_pay(wl_worker *wk, const char *order_no, long user, bool repeat);

#endif
