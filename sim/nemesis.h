/* nemesis - the timing nemesis: a scenario whose every phase draws, from
 * the seed, a fault schedule across each dimension the system has, aimed at
 * the service's own windows (sim/windows.h) so that its faults cross them
 * on purpose.
 *
 * The run is a series of episodes. An episode opens with a short onset
 * during which its held orders are first sent while the gateway holds every
 * unifiedorder for a drawn time (a hold class: under the gateway timeout,
 * straddling it, between it and the lease, past the lease plus reconciler
 * ticks, spread over all of them, or past the FAILED recheck when the mock
 * allows that long), then an aftermath with its own faults (resets,
 * SYSTEMERROR, declines, charges whose reply is withheld for a drawn time)
 * that lasts until every held call has landed. Each episode draws its
 * safety nets (gateway dedupe on or off; notifications normal, delayed past
 * the timeout or the lease, duplicated and concurrent, slowly retried, or
 * dropped), a chaos action (kill -9 of a service process, a mock restart
 * while replies are held, Redis or MariaDB restarts) and, per order, a
 * client behaviour (patient, retrying at once, timing out before the
 * gateway does, giving up, coming back after the lease, after the
 * Idempotency-Key claim or after the held charge, with the same key or
 * token). One episode of every run has the nets removed together: dedupe
 * off, notifications dropped, holds past the lease, clients coming back as
 * the lease runs out; with three episodes or more another is aimed at the
 * lease with dedupe off.
 * A last phase has payers pay some PAID orders a second time at the gateway
 * itself (dedupe off), which the service must refund.
 *
 * Everything is drawn from the generator's PRNG: the same seed and windows
 * give the same schedule. */
#ifndef IDEMPAY_SIM_NEMESIS_H
#define IDEMPAY_SIM_NEMESIS_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"
#include "windows.h"

/* Client behaviours (sched_task.behaviour). */
typedef enum {
    NM_CLIENT_NONE = 0,
    NM_CLIENT_PATIENT,      /* honours Retry-After, polls, stays past the lease */
    NM_CLIENT_HASTY,        /* retries at once, ignoring Retry-After */
    NM_CLIENT_IMPATIENT,    /* its own timeout is shorter than the gateway's */
    NM_CLIENT_GIVE_UP,      /* one POST, then gone */
    NM_CLIENT_RETURN_LEASE, /* gives up, comes back after the lease ran out */
    NM_CLIENT_RETURN_CLAIM, /* gives up, comes back after the key's claim ran out */
    NM_CLIENT_RETURN_LATE,  /* gives up, comes back after the held charge landed */
    NM_CLIENT_RETURNING,    /* the second visit of a returning client */
    NM_CLIENT_STRAY,        /* the payer paying a second time at the gateway */
    NM_CLIENT_COUNT
} nm_client;

/* Words for a behaviour ("comes back after the lease" ...). */
const char *nemesis_behaviour_name(int behaviour);

typedef struct {
    size_t orders; /* the scenario's share of --orders */
    int episodes;  /* 2 .. 6 */
    int chaos;     /* a chaos command is configured */
    sim_windows w; /* the windows aimed at */
} nm_params;

/* Parameters for a run of duration_s (episodes: 2 + duration_s / 15, at
 * most 6) with orders orders. windows NULL: the service defaults. */
void nemesis_defaults(nm_params *p, size_t orders, double duration_s, int chaos,
                      const sim_windows *windows);

/* Appends the nemesis' phases, orders, tokens, tasks and chaos plan to
 * g->s. 0, or -1 with a message in g->err. */
int nemesis_generate(gen_ctx *g, const nm_params *p);

#endif
