/* redis_room - whether Redis has room for new keys: its used_memory below
 * a share of its maxmemory. The stack (and docs/DEPLOY.md) runs Redis with
 * maxmemory-policy noeviction, so a full Redis refuses writes instead of
 * dropping live tokens; the service stops issuing new tokens before that
 * point and keeps the rest for consuming the tokens already issued.
 *
 * INFO memory is asked at most once a second per thread; between two asks
 * the last answer stands. */
#ifndef IDEMPAY_REDIS_ROOM_H
#define IDEMPAY_REDIS_ROOM_H

#include "app_ctx.h"

typedef enum {
    REDIS_ROOM_OK = 0, /* below pct of maxmemory, or no maxmemory set */
    REDIS_ROOM_FULL,   /* at or above it: issue nothing new */
    REDIS_ROOM_UNKNOWN /* Redis did not answer: the caller's own call will fail too */
} redis_room;

/* Judges ctx's Redis against pct (1..99) percent of its maxmemory. A Redis
 * without maxmemory (0) always has room; the first such answer is logged
 * once per process as a warning (nothing bounds the tokens then). */
redis_room redis_room_check(app_ctx *ctx, long pct);

/* Parses "used_memory:" and "maxmemory:" out of an INFO memory text.
 * Returns 0 with both set, or -1 when either is missing (pure; for tests). */
int redis_room_parse(const char *info, unsigned long long *used, unsigned long long *max);

#endif
