/* rate_limit - per-caller request budgets in Redis: a fixed one-second
 * window per (class, caller), counted with INCR + EXPIRE in one MULTI/EXEC,
 * so every service process and host shares one count and a key never
 * outlives its window (EXPIRE 2 s). A caller may get up to twice its rate
 * across a window boundary; never more.
 *
 * The limit bounds growth, it does not guard money: when Redis cannot
 * count (down, or refusing writes at its maxmemory), the request goes on
 * and idempay_rate_limit_total{outcome="uncounted"} says so (the money
 * paths never depend on this module). */
#ifndef IDEMPAY_RATE_LIMIT_H
#define IDEMPAY_RATE_LIMIT_H

#include "app_ctx.h"

#define RATE_KEY_PREFIX "rl:"

typedef enum {
    RATE_OK = 0,   /* within the budget (or no limit): go on */
    RATE_LIMITED,  /* over it: answer 429 with Retry-After */
    RATE_UNCOUNTED /* Redis could not count: go on, counted in metrics */
} rate_result;

/* Takes one unit of class's budget (a short name: "tokens", "orders") for
 * caller in the current second, against per_s units per second (0: no
 * limit, RATE_OK without asking Redis). On RATE_LIMITED *retry_after_s
 * (when not NULL) is the whole seconds until the next window (>= 1). A
 * connection closed by the peer is replaced on the next call; nothing is
 * retried here. */
rate_result rate_limit_take(app_ctx *ctx, const char *class_name, const char *caller, long per_s,
                            long *retry_after_s);

/* The window key for (class, caller) at second now_s into out (pure; for
 * tests). Returns out. */
char *rate_limit_key(char *out, size_t outlen, const char *class_name, const char *caller,
                     long long now_s);

#endif
