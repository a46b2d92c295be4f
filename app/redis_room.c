/* redis_room.c - INFO memory, cached per thread for a second. */
#include "redis_room.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "log.h"

#define REDIS_ROOM_CACHE_MS 1000

static _Thread_local struct {
    const app_ctx *ctx;
    long long at_ms;
    redis_room last;
} room_cache;

static atomic_int room_unbounded_logged;

/* The number after "\nname:" (or at the start), or -1 when absent. */
static int room_field(const char *info, const char *name, unsigned long long *out)
{
    size_t n = strlen(name);
    for (const char *p = info; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, name, n) == 0 && p[n] == ':') {
            char *end;
            unsigned long long v = strtoull(p + n + 1, &end, 10);
            if (end == p + n + 1)
                return -1;
            *out = v;
            return 0;
        }
    }
    return -1;
}

int redis_room_parse(const char *info, unsigned long long *used, unsigned long long *max)
{
    if (info == NULL)
        return -1;
    return room_field(info, "used_memory", used) == 0 && room_field(info, "maxmemory", max) == 0
               ? 0
               : -1;
}

static redis_room room_ask(app_ctx *ctx, long pct)
{
    unsigned long long used = 0, max = 0;
    redis_room res = REDIS_ROOM_UNKNOWN;
    redisReply *r;

    if (app_ctx_redis(ctx) != 0)
        return REDIS_ROOM_UNKNOWN;
    r = redisCommand(ctx->redis, "INFO memory");
    if (r == NULL) {
        app_ctx_redis_lost(ctx);
        return REDIS_ROOM_UNKNOWN;
    }
    if (r->type == REDIS_REPLY_STRING && redis_room_parse(r->str, &used, &max) == 0) {
        if (max == 0 && !atomic_exchange(&room_unbounded_logged, 1))
            log_msg(LOG_WARN, "redis has no maxmemory: nothing bounds the tokens it keeps"
                              " (docs/DEPLOY.md: maxmemory with maxmemory-policy noeviction)");
        res = max == 0 || used * 100 < max * (unsigned long long)pct ? REDIS_ROOM_OK
                                                                     : REDIS_ROOM_FULL;
    } else {
        log_msg(LOG_WARN, "redis INFO memory: %s",
                r->type == REDIS_REPLY_ERROR && r->str ? r->str : "unexpected reply");
    }
    freeReplyObject(r);
    return res;
}

redis_room redis_room_check(app_ctx *ctx, long pct)
{
    long long now = clocks_mono_ms();

    if (room_cache.ctx == ctx && room_cache.last != REDIS_ROOM_UNKNOWN &&
        now - room_cache.at_ms < REDIS_ROOM_CACHE_MS)
        return room_cache.last;
    room_cache.ctx = ctx;
    room_cache.at_ms = now;
    room_cache.last = room_ask(ctx, pct);
    return room_cache.last;
}
