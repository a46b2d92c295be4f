/* pool - a fixed set of worker threads that run one job at a time: a job is
 * (fn, n), and the workers call fn for every index 0..n-1, each index
 * exactly once, taken in increasing order from a shared counter. pool_run
 * returns only when every index is done, so nothing of a job outlives it.
 *
 * One caller thread runs jobs; fn runs on the workers (worker numbers
 * 0..nworkers-1, one thread each, so per-worker state needs no lock). */
#ifndef IDEMPAY_SIM_POOL_H
#define IDEMPAY_SIM_POOL_H

#include <stddef.h>

typedef struct sim_pool sim_pool;

/* Called on worker thread `worker` for index i of the job. */
typedef void (*pool_job_fn)(int worker, size_t i, void *arg);

/* Starts nworkers (>= 1) threads, idle until a job comes. Returns NULL with
 * a message in err (out of memory, a thread that cannot start); the threads
 * already started are then stopped. */
sim_pool *pool_new(int nworkers, char *err, size_t errlen);
/* Runs fn(worker, i, arg) for every i in [0, n) on the workers and returns
 * when all are done. n == 0 returns at once. */
void pool_run(sim_pool *p, size_t n, pool_job_fn fn, void *arg);
/* How many workers the pool has. */
int pool_size(const sim_pool *p);
/* Stops the (idle) workers and frees the pool. NULL accepted. */
void pool_free(sim_pool *p);

#endif
