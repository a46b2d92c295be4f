/* log_budget.c - a per-second line budget (log_budget.h). */
#include "log_budget.h"

#include <time.h>

int log_budget_take(log_budget *b, long per_s, long *dropped_before)
{
    struct timespec ts;
    long long now, seen;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (long long)ts.tv_sec;
    seen = atomic_load(&b->second);
    if (seen != now && atomic_compare_exchange_strong(&b->second, &seen, now))
        atomic_store(&b->used, 0); /* one thread opens the new second */
    if (atomic_fetch_add(&b->used, 1) >= per_s) {
        atomic_fetch_add(&b->dropped, 1);
        return 0;
    }
    if (dropped_before != NULL)
        *dropped_before = atomic_exchange(&b->dropped, 0);
    return 1;
}
