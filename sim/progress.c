/* progress.c - the progress line on a terminal, progress lines in a log
 * (see progress.h). */
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "clocks.h"

#define PROGRESS_POLL_NS 500000000L

struct progress {
    driver *d;
    const sim_schedule *s;
    FILE *out;
    int tty;
    atomic_size_t phase;
    atomic_int stop;
    pthread_t thread;
    uint64_t last_ops; /* for the request rate */
    double last_at;    /* seconds, when last_ops was read */
    double t0;
};

/* One report: "[3/9 double-click/fast] tasks 120/800  ok 100 fail 3 unknown 17  412 req/s". */
static void progress_print(progress *p, size_t ph, const char *lead, const char *tail)
{
    driver_progress_t pr;
    driver_progress(p->d, &pr);
    double now = clocks_mono_s(), dt = now - p->last_at;
    uint64_t ops = pr.outcome[OUT_OK] + pr.outcome[OUT_FAIL] + pr.outcome[OUT_UNKNOWN];
    const sched_phase *sp = &p->s->phases[ph];
    fprintf(p->out,
            "%s+%.1f s [%zu/%zu %s/%s] tasks %llu/%llu  ok %llu fail %llu unknown %llu"
            "  %.0f req/s%s",
            lead, now - p->t0, ph + 1, p->s->nphases, sched_scenario_name(sp->scenario), sp->label,
            (unsigned long long)pr.tasks_done, (unsigned long long)p->s->ntasks,
            (unsigned long long)pr.outcome[OUT_OK], (unsigned long long)pr.outcome[OUT_FAIL],
            (unsigned long long)pr.outcome[OUT_UNKNOWN],
            dt > 0 ? (double)(ops - p->last_ops) / dt : 0.0, tail);
    fflush(p->out);
    p->last_ops = ops;
    p->last_at = now;
}

static size_t progress_current(progress *p)
{
    size_t ph = atomic_load(&p->phase);
    return ph < p->s->nphases ? ph : p->s->nphases - 1;
}

static void *progress_main(void *arg)
{
    progress *p = arg;
    size_t shown = (size_t)-1;
    double logged = p->t0;
    while (!atomic_load(&p->stop)) {
        struct timespec ts = { .tv_sec = 0, .tv_nsec = PROGRESS_POLL_NS };
        nanosleep(&ts, NULL);
        size_t ph = progress_current(p);
        if (p->tty) {
            progress_print(p, ph, "\r\033[K", "");
        } else if (ph != shown || clocks_mono_s() - logged >= PROGRESS_LOG_EVERY_S) {
            progress_print(p, ph, "progress: ", "\n");
            shown = ph;
            logged = p->last_at;
        }
    }
    if (p->tty)
        fprintf(p->out, "\r\033[K");
    else
        progress_print(p, progress_current(p), "progress: traffic done ", "\n");
    fflush(p->out);
    return NULL;
}

progress *progress_start(driver *d, const sim_schedule *s, FILE *out, int tty)
{
    if (s->nphases == 0)
        return NULL;
    progress *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->d = d;
    p->s = s;
    p->out = out;
    p->tty = tty;
    p->t0 = p->last_at = clocks_mono_s();
    atomic_init(&p->phase, 0);
    atomic_init(&p->stop, 0);
    if (pthread_create(&p->thread, NULL, progress_main, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void progress_phase(progress *p, size_t phase)
{
    if (p != NULL)
        atomic_store(&p->phase, phase);
}

void progress_stop(progress *p)
{
    if (p == NULL)
        return;
    atomic_store(&p->stop, 1);
    pthread_join(p->thread, NULL);
    free(p);
}

void progress_settling(FILE *out, double elapsed_s, double limit_s, size_t moving)
{
    fprintf(out, "settling: +%.0f s of up to %.0f s, %zu order(s) still moving\n", elapsed_s,
            limit_s, moving);
    fflush(out);
}
