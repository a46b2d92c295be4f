/* chaos.c - a thread that waits (on a condition variable, so stop is
 * immediate) for each planned run and makes it with posix_spawn, waiting
 * for the command. Its output (stdout too) goes to the simulator's stderr,
 * so it never lands in the middle of the report on stdout. */
#include "chaos.h"

#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CHAOS_POLL_US 50000 /* how often a wait looks at the clock */

struct chaos {
    char *cmd;
    int64_t (*clock)(void *);
    void *clock_arg;
    const sched_chaos *plan;
    size_t nplan;
    chaos_phase_start_fn phase_start;
    void *phase_arg;
    pthread_t thread;
    int running;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sim_chaos_event *ev;
    size_t nev, cap;
};

chaos *chaos_new(const char *cmd, int64_t (*clock)(void *), void *clock_arg)
{
    chaos *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->cmd = strdup(cmd);
    if (c->cmd == NULL) {
        free(c);
        return NULL;
    }
    c->clock = clock;
    c->clock_arg = clock_arg;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    return c;
}

static int chaos_run_cmd(const char *cmd, const char *action)
{
    pid_t pid;
    size_t len = strlen(cmd) + strlen(action) + 2;
    char *line = malloc(len);
    if (line == NULL)
        return -1;
    snprintf(line, len, "%s %s", cmd, action);
    char *argv[] = { (char *)"/bin/sh", (char *)"-c", line, NULL };
    /* The command's stdout goes to our stderr: never into the report. */
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
        if (rc == 0)
            rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    free(line);
    if (rc != 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

/* Sleeps up to us on the condition variable (c->mu held). */
static void chaos_nap(chaos *c, int64_t us)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long ns = (long long)until.tv_nsec + us * 1000LL;
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&c->cv, &c->mu, &until);
}

/* Waits (c->mu held) until run e is due. 0 when it is, -1 when stopped. */
static int chaos_wait_due(chaos *c, const sched_chaos *e)
{
    for (;;) {
        if (c->stop)
            return -1;
        int64_t start = c->phase_start(c->phase_arg, e->phase);
        int64_t now = c->clock(c->clock_arg);
        int64_t left = start < 0 ? CHAOS_POLL_US : start + (int64_t)e->at_ms * 1000 - now;
        if (start >= 0 && left <= 0)
            return 0;
        chaos_nap(c, left < CHAOS_POLL_US ? left : CHAOS_POLL_US);
    }
}

static void chaos_record(chaos *c, const sim_chaos_event *e)
{
    if (c->nev == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        sim_chaos_event *p = realloc(c->ev, cap * sizeof(*p));
        if (p == NULL)
            return;
        c->ev = p;
        c->cap = cap;
    }
    c->ev[c->nev++] = *e;
}

static void *chaos_main(void *arg)
{
    chaos *c = arg;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->nplan && chaos_wait_due(c, &c->plan[i]) == 0; i++) {
        const sched_chaos *p = &c->plan[i];
        pthread_mutex_unlock(&c->mu);
        sim_chaos_event e;
        memset(&e, 0, sizeof(e));
        e.action = p->action;
        e.phase = p->phase;
        e.at_us = c->clock(c->clock_arg);
        e.exit_status = chaos_run_cmd(c->cmd, sched_chaos_name(p->action));
        e.duration_us = c->clock(c->clock_arg) - e.at_us;
        pthread_mutex_lock(&c->mu);
        chaos_record(c, &e);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int chaos_start(chaos *c, const sched_chaos *ev, size_t n, chaos_phase_start_fn phase_start,
                void *arg)
{
    if (c->running)
        return -1;
    if (n == 0)
        return 0;
    c->plan = ev;
    c->nplan = n;
    c->phase_start = phase_start;
    c->phase_arg = arg;
    c->stop = 0;
    if (pthread_create(&c->thread, NULL, chaos_main, c) != 0)
        return -1;
    c->running = 1;
    return 0;
}

void chaos_stop(chaos *c)
{
    if (c == NULL || !c->running)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    c->running = 0;
}

const sim_chaos_event *chaos_events(const chaos *c, size_t *n)
{
    *n = c ? c->nev : 0;
    return c ? c->ev : NULL;
}

void chaos_free(chaos *c)
{
    if (c == NULL)
        return;
    chaos_stop(c);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->ev);
    free(c->cmd);
    free(c);
}
