/* readback.c - the final reads (readback.h): a driver_each job over the
 * orders, each read and parsed through the run's target profile. */
#include "readback.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define READBACK_TRIES 4
#define READBACK_TIMEOUT_MS 5000

int readback_parse_order(const char *body, size_t len, sim_row *row)
{
    profile_answer a;
    profile_answer_read(profile_builtin(), PROF_OP_READ, 200, body, len, &a);
    return profile_answer_row(&a, row) == 1 ? 0 : -1;
}

typedef struct {
    const size_t *idx;
    sim_row *rows;
    atomic_size_t errors;
} readback_job;

static void readback_one(sim_client *c, size_t i, void *arg)
{
    readback_job *job = arg;
    client_world *w = c->world;
    size_t order = job->idx[i];
    sim_row *row = &job->rows[order];
    char no[64];
    sched_order_no(w->sched, w->prefix, order, no, sizeof(no));
    profile_values v = { .order_no = no };
    for (int attempt = 0; attempt < READBACK_TRIES; attempt++) {
        http_reply rep;
        profile_answer a;
        if (attempt > 0)
            client_sleep_ms(w, 250 * attempt);
        http_status hs = client_send(c, PROF_OP_READ, &v, READBACK_TIMEOUT_MS, &rep);
        if (hs != HTTP_OK)
            continue;
        profile_answer_read(w->profile, PROF_OP_READ, rep.code, rep.body, rep.body_len, &a);
        if (profile_answer_row(&a, row) >= 0)
            return;
    }
    history_row_blank(row, ROW_ERROR);
    atomic_fetch_add(&job->errors, 1);
}

size_t readback_orders(driver *d, const size_t *idx, size_t n, sim_row *rows)
{
    readback_job job = { .idx = idx, .rows = rows };
    atomic_store(&job.errors, 0);
    driver_each(d, n, readback_one, &job);
    return atomic_load(&job.errors);
}
