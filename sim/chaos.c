/* chaos.c - a thread that sleeps on a condition variable (so stop is
 * immediate) and runs the command with posix_spawn, waiting for it. The
 * command's output goes to the simulator's stderr. */
#include "chaos.h"

#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

struct chaos {
    char *cmd;
    double every_s;
    int64_t (*clock)(void *);
    void *clock_arg;
    pthread_t thread;
    int running;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sim_chaos_event *ev;
    size_t nev, cap;
};

chaos *chaos_new(const char *cmd, double every_s, int64_t (*clock)(void *), void *clock_arg)
{
    chaos *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->cmd = strdup(cmd);
    if (c->cmd == NULL) {
        free(c);
        return NULL;
    }
    c->every_s = every_s > 0.05 ? every_s : 0.05;
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

static int chaos_run_cmd(const char *cmd)
{
    pid_t pid;
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL};
    if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0)
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

static void *chaos_main(void *arg)
{
    chaos *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long long ns = (long long)(c->every_s * 1e9);
        until.tv_sec += (time_t)(ns / 1000000000LL);
        until.tv_nsec += (long)(ns % 1000000000LL);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!c->stop) {
            int rc = pthread_cond_timedwait(&c->cv, &c->mu, &until);
            if (rc == ETIMEDOUT)
                break;
        }
        if (c->stop)
            break;
        pthread_mutex_unlock(&c->mu);
        sim_chaos_event e;
        e.at_us = c->clock(c->clock_arg);
        e.exit_status = chaos_run_cmd(c->cmd);
        e.duration_us = c->clock(c->clock_arg) - e.at_us;
        pthread_mutex_lock(&c->mu);
        if (c->nev == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 16;
            sim_chaos_event *p = realloc(c->ev, cap * sizeof(*p));
            if (p != NULL) {
                c->ev = p;
                c->cap = cap;
            }
        }
        if (c->nev < c->cap)
            c->ev[c->nev++] = e;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int chaos_start(chaos *c)
{
    if (c->running)
        return 0;
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
