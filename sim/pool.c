/* pool.c - workers wait on a generation counter: pool_run publishes
 * (fn, arg, n), bumps the generation and waits until every worker has run
 * out of indices (an atomic counter) and gone idle again. Tasks are sorted
 * by release time, so copies of one double-click meant to be concurrent are
 * taken by different workers within microseconds. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    sim_pool *p;
    int index;
    pthread_t thread;
    int started;
} pool_worker;

struct sim_pool {
    int nworkers;
    pool_worker *w;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    unsigned long gen; /* bumped by each job */
    int quit;
    pool_job_fn fn;
    void *arg;
    size_t n;
    atomic_size_t next; /* the next index to take */
    int active;         /* workers still in the current job */
};

/* Takes indices of the current job until there are none left. */
static void pool_drain(pool_worker *w, pool_job_fn fn, void *arg, size_t n)
{
    for (;;) {
        size_t i = atomic_fetch_add(&w->p->next, 1);
        if (i >= n)
            break;
        fn(w->index, i, arg);
    }
}

static void *pool_worker_main(void *arg)
{
    pool_worker *w = arg;
    sim_pool *p = w->p;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        seen = p->gen;
        pool_job_fn fn = p->fn;
        void *fnarg = p->arg;
        size_t n = p->n;
        pthread_mutex_unlock(&p->mu);
        pool_drain(w, fn, fnarg, n);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

sim_pool *pool_new(int nworkers, char *err, size_t errlen)
{
    sim_pool *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->nworkers = nworkers > 0 ? nworkers : 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->w = calloc((size_t)p->nworkers, sizeof(*p->w));
    if (p->w == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int i = 0; i < p->nworkers; i++) {
        p->w[i] = (pool_worker){ .p = p, .index = i };
        if (pthread_create(&p->w[i].thread, NULL, pool_worker_main, &p->w[i]) != 0) {
            snprintf(err, errlen, "cannot start worker thread %d", i);
            goto fail;
        }
        p->w[i].started = 1;
    }
    return p;
fail:
    pool_free(p);
    return NULL;
}

void pool_run(sim_pool *p, size_t n, pool_job_fn fn, void *arg)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    atomic_store(&p->next, 0);
    p->active = p->nworkers;
    p->gen++;
    pthread_cond_broadcast(&p->work_cv);
    while (p->active > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int pool_size(const sim_pool *p)
{
    return p->nworkers;
}

void pool_free(sim_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; p->w != NULL && i < p->nworkers; i++)
        if (p->w[i].started)
            pthread_join(p->w[i].thread, NULL);
    free(p->w);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
