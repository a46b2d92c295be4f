/* chaos - runs the --chaos-cmd command every --chaos-every seconds on a
 * thread of its own while a phase with chaos runs, recording each run. */
#ifndef IDEMPAY_SIM_CHAOS_H
#define IDEMPAY_SIM_CHAOS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

typedef struct chaos chaos;

/* A chaos runner for `/bin/sh -c cmd` every every_s seconds; clock() gives
 * the run's time in us (for the event record). NULL on OOM. */
chaos *chaos_new(const char *cmd, double every_s, int64_t (*clock)(void *), void *clock_arg);
/* Starts the periodic runs (the first after every_s). Returns 0 or -1. */
int chaos_start(chaos *c);
/* Stops the periodic runs and waits for a command in progress. */
void chaos_stop(chaos *c);
/* The runs so far (valid until chaos_free). */
const sim_chaos_event *chaos_events(const chaos *c, size_t *n);
void chaos_free(chaos *c);

#endif
