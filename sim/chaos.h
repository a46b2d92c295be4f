/* chaos - runs the --chaos-cmd command at the times the schedule planned,
 * each run with its planned action as the command's last word
 * (`sh -c "CMD ACTION"`: ./stack chaos kill-worker ...), on a thread of
 * its own while the phases holding the runs are in progress, and records
 * each run (when, which action, exit status). A run whose time comes after
 * chaos_stop is not made. */
#ifndef IDEMPAY_SIM_CHAOS_H
#define IDEMPAY_SIM_CHAOS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "schedule.h"

typedef struct chaos chaos;

/* When phase p started on the run's clock (us), or -1 while it has not. */
typedef int64_t (*chaos_phase_start_fn)(void *arg, size_t phase);

/* A chaos runner for cmd; clock() gives the run's time in us. NULL on OOM. */
chaos *chaos_new(const char *cmd, int64_t (*clock)(void *), void *clock_arg);
/* Starts running ev[0..n) (in time order: phase, then at_ms), each at its
 * phase's start (phase_start) plus at_ms. The array must stay valid until
 * chaos_stop. Returns 0, or -1 when the thread cannot start (or one runs). */
int chaos_start(chaos *c, const sched_chaos *ev, size_t n, chaos_phase_start_fn phase_start,
                void *arg);
/* Stops: runs not yet due are dropped; a command in progress is waited for. */
void chaos_stop(chaos *c);
/* The runs so far (valid until chaos_free). */
const sim_chaos_event *chaos_events(const chaos *c, size_t *n);
void chaos_free(chaos *c);

#endif
