/* rate_limit.c - one-second windows counted in Redis (MULTI, INCR, EXPIRE,
 * EXEC, pipelined: one round trip). */
#include "rate_limit.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define RATE_WINDOW_KEEP_S "2" /* a window's key lives past its second, then goes */

char *rate_limit_key(char *out, size_t outlen, const char *class_name, const char *caller,
                     long long now_s)
{
    snprintf(out, outlen, RATE_KEY_PREFIX "%s:%s:%lld", class_name, caller, now_s);
    return out;
}

/* Sends the transaction and reads its four replies; returns the EXEC reply
 * (an array of INCR's and EXPIRE's answers) or NULL; the caller frees it.
 * *dropped is set when the connection failed (the caller drops it). */
static redisReply *rate_exec(redisContext *rc, const char *key, int *dropped)
{
    redisReply *r = NULL, *exec = NULL;
    int ok = 1;

    *dropped = 0;
    redisAppendCommand(rc, "MULTI");
    redisAppendCommand(rc, "INCR %s", key);
    redisAppendCommand(rc, "EXPIRE %s " RATE_WINDOW_KEEP_S, key);
    redisAppendCommand(rc, "EXEC");
    for (int i = 0; i < 4; i++) {
        if (redisGetReply(rc, (void **)&r) != REDIS_OK || r == NULL) {
            *dropped = 1;
            freeReplyObject(exec);
            return NULL;
        }
        if (i < 3) {
            if (r->type == REDIS_REPLY_ERROR)
                ok = 0;
            freeReplyObject(r);
        } else {
            exec = r;
        }
    }
    if (!ok || exec->type != REDIS_REPLY_ARRAY || exec->elements != 2 ||
        exec->element[0]->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(exec);
        return NULL;
    }
    return exec;
}

rate_result rate_limit_take(app_ctx *ctx, const char *class_name, const char *caller, long per_s,
                            long *retry_after_s)
{
    char key[160];
    struct timespec ts;
    int dropped = 0;
    rate_result res = RATE_UNCOUNTED;
    redisReply *exec;

    if (per_s <= 0)
        return RATE_OK;
    clock_gettime(CLOCK_REALTIME, &ts);
    rate_limit_key(key, sizeof(key), class_name, caller, (long long)ts.tv_sec);
    if (app_ctx_redis(ctx) != 0)
        return RATE_UNCOUNTED;
    exec = rate_exec(ctx->redis, key, &dropped);
    if (exec == NULL) {
        if (dropped)
            app_ctx_redis_lost(ctx);
        return RATE_UNCOUNTED;
    }
    res = exec->element[0]->integer > per_s ? RATE_LIMITED : RATE_OK;
    if (res == RATE_LIMITED && retry_after_s != NULL)
        *retry_after_s = 1; /* the next window starts within the second */
    freeReplyObject(exec);
    return res;
}
