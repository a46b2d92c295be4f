/* log_budget - at most so many lines of one kind per second from a process,
 * so a flood of refused requests cannot push the real ERROR lines out of
 * the journal (journald drops a unit's lines past its rate limit). Lines
 * over the budget are not written but counted; the first line written in
 * a later second says how many were left out. Lock-free: any thread may
 * take from one budget. */
#ifndef IDEMPAY_LOG_BUDGET_H
#define IDEMPAY_LOG_BUDGET_H

#include <stdatomic.h>

typedef struct {
    atomic_llong second; /* the second the count belongs to (CLOCK_MONOTONIC) */
    atomic_long used;    /* lines written in it */
    atomic_long dropped; /* lines left out since the last line written */
} log_budget;

/* clang-format off */
#define LOG_BUDGET_INIT { 0, 0, 0 }
/* clang-format on */

/* Takes one line from b for the current second against per_s (>= 1).
 * Returns 1 when the line may be written, then *dropped_before (when not
 * NULL) is the number of lines left out before it (to be said on it), and
 * the count restarts; returns 0 when the line must be left out (it is
 * counted). */
int log_budget_take(log_budget *b, long per_s, long *dropped_before);

#endif
