/* progress - the run's progress on stderr while the traffic runs, for a
 * person and for a CI log alike. On a terminal: one line redrawn twice a
 * second. Otherwise (a file, a pipe, a CI runner): plain lines, one when a
 * phase starts and one at least every PROGRESS_LOG_EVERY_S seconds, and a
 * last one when the traffic is over; then one as often while the orders
 * settle, so a long run never goes silent.
 *
 * A thread of its own reads the driver's counters; the caller reports phase
 * starts with progress_phase and stops it with progress_stop before the
 * driver is freed. */
#ifndef IDEMPAY_SIM_PROGRESS_H
#define IDEMPAY_SIM_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "driver.h"
#include "schedule.h"

#define PROGRESS_LOG_EVERY_S 5.0

typedef struct progress progress;

/* Starts reporting the traffic of d (schedule s) on out: redrawn in place
 * when tty, else as log lines. Returns NULL when it cannot (OOM, thread):
 * the run goes on without a progress line. */
progress *progress_start(driver *d, const sim_schedule *s, FILE *out, int tty);

/* The phase that is starting now (any thread). NULL accepted. */
void progress_phase(progress *p, size_t phase);

/* One line while the orders settle (every PROGRESS_LOG_EVERY_S seconds):
 * "settling: +10 s of up to 77 s, 12 order(s) still moving". */
void progress_settling(FILE *out, double elapsed_s, double limit_s, size_t moving);

/* Stops the thread (after a last log line, or clearing the terminal line)
 * and frees p. NULL accepted. */
void progress_stop(progress *p);

#endif
