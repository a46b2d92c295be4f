/* token.c - single-use, user-bound payment tokens in Redis: issue with SET NX,
 * consume with one Lua script (EVALSHA, loaded once per connection, reloaded
 * on NOSCRIPT). A consumed token is rewritten to "used:<user>:<order_no>" and
 * kept, never deleted, so retries of the same order are recognised. */
#include "token.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "log.h"
#include "log_budget.h"
#include "metrics.h"
#include "order_no.h"
#include "redis_room.h"

#define TOKEN_KEY_MAX (sizeof(TOKEN_KEY_PREFIX) + 22 + TOKEN_TEXT_LEN)
#define TOKEN_ISSUE_ATTEMPTS 4
#define TOKEN_LOG_MAX 16

/* KEYS[1] pay:token:<t>; ARGV[1] user_id, ARGV[2] order_no, ARGV[3] seconds
 * to keep a consumed token. Returns 1 bound now, 2 already bound to this
 * (user, order): a retry, -1 unknown or expired, -2 another user's unused
 * token (left untouched), -3 bound to another order or user. */
static const char token_lua[] = "local v = redis.call('GET', KEYS[1])\n"
                                "if not v then return -1 end\n"
                                "local used = 'used:' .. ARGV[1] .. ':' .. ARGV[2]\n"
                                "if v == ARGV[1] then\n"
                                "  redis.call('SET', KEYS[1], used, 'EX', ARGV[3])\n"
                                "  return 1\n"
                                "end\n"
                                "if v == used then return 2 end\n"
                                "if string.sub(v, 1, 5) == 'used:' then return -3 end\n"
                                "return -2\n";

/* The script's SHA1 as loaded on this thread's current Redis connection.
 * Valid only while ctx, its redisContext and its generation are unchanged;
 * a NOSCRIPT reply reloads it in any case. */
static _Thread_local struct {
    const app_ctx *ctx;
    const redisContext *conn;
    unsigned long generation;
    char sha[48];
} token_script;

static const char token_b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Fills buf with n bytes from the OS random source. Returns 0 or -1. */
static int token_os_random(unsigned char *buf, size_t n)
{
    size_t have = 0;
    while (have < n) {
        ssize_t r = getrandom(buf + have, n - have, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        have += (size_t)r;
    }
    return 0;
}

int token_generate(char out[TOKEN_TEXT_MAX])
{
    unsigned char raw[TOKEN_RANDOM_BYTES];
    size_t at = 0;

    out[0] = '\0';
    if (token_os_random(raw, sizeof(raw)) != 0)
        return -1;
    /* TOKEN_RANDOM_BYTES is a multiple of 3: no padding, no partial group */
    for (size_t i = 0; i + 2 < sizeof(raw); i += 3) {
        unsigned long g = ((unsigned long)raw[i] << 16) | ((unsigned long)raw[i + 1] << 8) |
                          raw[i + 2];
        out[at++] = token_b64url[(g >> 18) & 63];
        out[at++] = token_b64url[(g >> 12) & 63];
        out[at++] = token_b64url[(g >> 6) & 63];
        out[at++] = token_b64url[g & 63];
    }
    out[at] = '\0';
    explicit_bzero(raw, sizeof(raw));
    return 0;
}

int token_text_valid(const char *s)
{
    if (s == NULL)
        return 0;
    size_t n = 0;
    for (; s[n] != '\0'; n++) {
        unsigned char ch = (unsigned char)s[n];
        if (n >= TOKEN_TEXT_LEN)
            return 0;
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_'))
            return 0;
    }
    return n == TOKEN_TEXT_LEN;
}

/* How long a consumed token is kept: long enough to recognise retries. */
static long token_keep_s(const app_config *cfg)
{
    long keep = TOKEN_USED_KEEP_MIN_S;
    if (cfg != NULL) {
        if (cfg->idempotency_ttl_s > keep)
            keep = cfg->idempotency_ttl_s;
        if (cfg->token_ttl_s > keep)
            keep = cfg->token_ttl_s;
    }
    return keep;
}

/* Records a Redis failure (reply NULL, error reply) in ctx->err and the log,
 * and drops the connection so the next call reconnects. */
static void token_redis_failed(app_ctx *ctx, const char *what, const redisReply *reply)
{
    const char *why = "no reply";
    if (reply != NULL && reply->type == REDIS_REPLY_ERROR && reply->str != NULL)
        why = reply->str;
    else if (ctx->redis != NULL && ctx->redis->err)
        why = ctx->redis->errstr;
    snprintf(ctx->err, sizeof(ctx->err), "redis %s: %s", what, why);
    log_msg(LOG_WARN, "token: %s", ctx->err);
    app_ctx_redis_lost(ctx);
}

/* SCRIPT LOAD on ctx's connection. Returns 0, or -1 with the failed reply
 * (NULL when none came; the caller frees it) in *fail; the connection is left
 * as it is for the caller to judge. */
static int token_script_load(app_ctx *ctx, redisReply **fail)
{
    redisReply *reply = redisCommand(ctx->redis, "SCRIPT LOAD %s", token_lua);
    *fail = NULL;
    if (reply == NULL || reply->type != REDIS_REPLY_STRING || reply->str == NULL ||
        reply->len == 0 || reply->len >= sizeof(token_script.sha)) {
        token_script.ctx = NULL;
        *fail = reply;
        return -1;
    }
    memcpy(token_script.sha, reply->str, reply->len);
    token_script.sha[reply->len] = '\0';
    token_script.ctx = ctx;
    token_script.conn = ctx->redis;
    token_script.generation = ctx->redis_generation;
    freeReplyObject(reply);
    return 0;
}

static int token_script_current(const app_ctx *ctx)
{
    return token_script.ctx == ctx && token_script.conn == ctx->redis &&
           token_script.generation == ctx->redis_generation && token_script.sha[0] != '\0';
}

static redisReply *token_evalsha(app_ctx *ctx, const char *key, const char *user,
                                 const char *order_no, const char *keep)
{
    const char *argv[7] = { "EVALSHA", token_script.sha, "1", key, user, order_no, keep };
    size_t argl[7];
    for (size_t i = 0; i < 7; i++)
        argl[i] = strlen(argv[i]);
    return redisCommandArgv(ctx->redis, 7, argv, argl);
}

static int token_is_noscript(const redisReply *reply)
{
    return reply != NULL && reply->type == REDIS_REPLY_ERROR && reply->str != NULL &&
           strncmp(reply->str, "NOSCRIPT", 8) == 0;
}

/* Runs the consume script on ctx's (open) connection: loads it first when
 * this connection has not loaded it, and once more on NOSCRIPT (Redis
 * restarted or SCRIPT FLUSH). Returns the reply: an integer on success,
 * anything else (NULL included) on failure; the caller frees it. */
static redisReply *token_run_script(app_ctx *ctx, const char *key, const char *user,
                                    const char *order_no, const char *keep)
{
    redisReply *reply = NULL;

    if (!token_script_current(ctx) && token_script_load(ctx, &reply) != 0)
        return reply;
    reply = token_evalsha(ctx, key, user, order_no, keep);
    if (token_is_noscript(reply)) {
        freeReplyObject(reply);
        if (token_script_load(ctx, &reply) != 0)
            return reply;
        reply = token_evalsha(ctx, key, user, order_no, keep);
    }
    return reply;
}

/* 1 when a command failed without a reply because the peer had closed a
 * connection opened earlier (Redis restarted since): worth one more try on a
 * new connection. Running a step twice is harmless here: the consume script
 * answers a retry for the same (user, order), and an issue draws a new token. */
static int token_conn_went_away(const app_ctx *ctx, const redisReply *reply, int reused)
{
    if (!reused || reply != NULL || ctx->redis == NULL)
        return 0;
    if (ctx->redis->err == REDIS_ERR_EOF)
        return 1;
    return ctx->redis->err == REDIS_ERR_IO && (strstr(ctx->redis->errstr, "reset") != NULL ||
                                               strstr(ctx->redis->errstr, "Broken pipe") != NULL);
}

/* A refusal's line, within the process' budget of refusal lines (a flood
 * of bad tokens must not push the real ERROR lines out of the journal). */
static token_result token_rejected(const app_ctx *ctx, const char *token, long long user_id,
                                   const char *order_no, const char *why)
{
    static log_budget lines = LOG_BUDGET_INIT;
    char shown[TOKEN_LOG_MAX];
    long per_s = ctx->cfg != NULL ? ctx->cfg->limits.log_rejects_per_s : 20;

    metrics_inc(MET_TOKEN_REJECTED);
    if (!log_budget_take(&lines, per_s, NULL)) {
        metrics_inc(MET_LOG_SUPPRESSED);
        return TOKEN_INVALID;
    }
    log_msg(LOG_INFO, "token rejected: %s (token=%s user=%lld order=%s)", why,
            log_token(token != NULL ? token : "", shown, sizeof(shown)), user_id,
            order_no_valid(order_no) ? order_no : "(invalid)");
    return TOKEN_INVALID;
}

/* The Redis key of token for caller_id: pay:token:<t> for caller 0 (no
 * caller: the modules called directly), pay:token:c<id>:<t> otherwise, so
 * a caller never finds another caller's token. */
static void token_key(long long caller_id, const char *token, char key[TOKEN_KEY_MAX])
{
    if (caller_id > 0)
        snprintf(key, TOKEN_KEY_MAX, "%sc%lld:%s", TOKEN_KEY_PREFIX, caller_id, token);
    else
        snprintf(key, TOKEN_KEY_MAX, "%s%s", TOKEN_KEY_PREFIX, token);
}

token_result token_consume(app_ctx *ctx, const char *token, long long user_id, const char *order_no)
{
    return token_consume_for(ctx, 0, token, user_id, order_no);
}

token_result token_consume_for(app_ctx *ctx, long long caller_id, const char *token,
                               long long user_id, const char *order_no)
{
    char key[TOKEN_KEY_MAX], user[24], keep[24], shown[TOKEN_LOG_MAX];
    redisReply *reply = NULL;
    token_result res = TOKEN_UNAVAILABLE;

    if (!token_text_valid(token))
        return token_rejected(ctx, token, user_id, order_no, "malformed");
    if (user_id < 1 || !order_no_valid(order_no))
        return token_rejected(ctx, token, user_id, order_no, "bad user_id or order_no");

    token_key(caller_id, token, key);
    snprintf(user, sizeof(user), "%lld", user_id);
    snprintf(keep, sizeof(keep), "%ld", token_keep_s(ctx->cfg));

    for (int attempt = 0;; attempt++) {
        int reused = ctx->redis != NULL;
        if (app_ctx_redis(ctx) != 0) {
            log_msg(LOG_WARN, "token: redis unavailable for order %s: %s", order_no, ctx->err);
            return TOKEN_UNAVAILABLE;
        }
        reply = token_run_script(ctx, key, user, order_no, keep);
        if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
            break;
        token_script.ctx = NULL;
        if (attempt == 0 && token_conn_went_away(ctx, reply, reused)) {
            log_msg(LOG_INFO, "token: redis connection went away (%s); reconnecting",
                    ctx->redis->errstr);
            app_ctx_redis_lost(ctx);
            continue;
        }
        token_redis_failed(ctx, "EVALSHA", reply);
        goto done;
    }

    switch (reply->integer) {
    case 1:
        log_msg(LOG_DEBUG, "token %s bound to order %s (user %lld)",
                log_token(token, shown, sizeof(shown)), order_no, user_id);
        res = TOKEN_ACCEPTED;
        break;
    case 2:
        log_msg(LOG_DEBUG, "token %s: retry of order %s (user %lld)",
                log_token(token, shown, sizeof(shown)), order_no, user_id);
        res = TOKEN_RETRY;
        break;
    case -1:
        res = token_rejected(ctx, token, user_id, order_no, "unknown or expired");
        break;
    case -2:
        res = token_rejected(ctx, token, user_id, order_no, "issued to another user");
        break;
    case -3:
        res = token_rejected(ctx, token, user_id, order_no, "already used for another order");
        break;
    default:
        snprintf(ctx->err, sizeof(ctx->err), "redis EVALSHA: unexpected result %lld",
                 reply->integer);
        log_msg(LOG_ERROR, "token: %s", ctx->err);
        res = TOKEN_UNAVAILABLE;
        break;
    }

done:
    freeReplyObject(reply);
    return res;
}

int token_issue(app_ctx *ctx, long long user_id, long ttl_s, char out[TOKEN_TEXT_MAX])
{
    return token_issue_for(ctx, 0, user_id, ttl_s, out);
}

int token_issue_for(app_ctx *ctx, long long caller_id, long long user_id, long ttl_s,
                    char out[TOKEN_TEXT_MAX])
{
    char key[TOKEN_KEY_MAX], user[24], ttl[24];

    out[0] = '\0';
    if (ctx == NULL || user_id < 1 || ttl_s < 1)
        return -2;
    snprintf(user, sizeof(user), "%lld", user_id);
    snprintf(ttl, sizeof(ttl), "%ld", ttl_s);
    for (int attempt = 0, reconnected = 0; attempt < TOKEN_ISSUE_ATTEMPTS; attempt++) {
        int reused = ctx->redis != NULL;
        if (app_ctx_redis(ctx) != 0) {
            log_msg(LOG_WARN, "token: redis unavailable for issue: %s", ctx->err);
            return -1;
        }
        if (token_generate(out) != 0) {
            snprintf(ctx->err, sizeof(ctx->err), "getrandom: %s", strerror(errno));
            log_msg(LOG_ERROR, "token: OS random source failed: %s", ctx->err);
            return -2;
        }
        token_key(caller_id, out, key);
        const char *argv[6] = { "SET", key, user, "EX", ttl, "NX" };
        size_t argl[6];
        for (size_t i = 0; i < 6; i++)
            argl[i] = strlen(argv[i]);
        redisReply *reply = redisCommandArgv(ctx->redis, 6, argv, argl);
        if (reply != NULL && reply->type == REDIS_REPLY_STATUS) {
            freeReplyObject(reply);
            return 0;
        }
        if (reply != NULL && reply->type == REDIS_REPLY_NIL) {
            /* NX clash with an existing token: draw another one */
            char shown[TOKEN_LOG_MAX];
            log_msg(LOG_WARN, "token: clash on %s, drawing again",
                    log_token(out, shown, sizeof(shown)));
            freeReplyObject(reply);
            continue;
        }
        if (!reconnected && token_conn_went_away(ctx, reply, reused)) {
            log_msg(LOG_INFO, "token: redis connection went away (%s); reconnecting",
                    ctx->redis->errstr);
            app_ctx_redis_lost(ctx);
            reconnected = 1;
            attempt--;
            continue;
        }
        token_redis_failed(ctx, "SET", reply);
        freeReplyObject(reply);
        out[0] = '\0';
        return -1;
    }
    snprintf(ctx->err, sizeof(ctx->err), "token: %d clashes in a row", TOKEN_ISSUE_ATTEMPTS);
    log_msg(LOG_ERROR, "%s", ctx->err);
    out[0] = '\0';
    return -1;
}

/* Parses a decimal user id 1..2^63-1 (digits only). Returns 0 or -1. */
static int token_parse_user_id(const char *s, long long *out)
{
    unsigned long long v = 0;
    size_t n = 0;
    if (s == NULL || s[0] == '\0')
        return -1;
    for (; s[n] != '\0'; n++) {
        if (n >= 24 || s[n] < '0' || s[n] > '9')
            return -1;
        unsigned long long d = (unsigned long long)(s[n] - '0');
        if (v > ((unsigned long long)LLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v < 1)
        return -1;
    *out = (long long)v;
    return 0;
}

static void token_unavailable(app_ctx *ctx, http_response *resp)
{
    char retry[24];
    snprintf(retry, sizeof(retry), "%ld",
             ctx->cfg != NULL && ctx->cfg->retry_after_s > 0 ? ctx->cfg->retry_after_s : 1L);
    http_response_error(resp, 503, "unavailable",
                        "the token store (Redis) is unavailable; try again later");
    http_response_header(resp, "Retry-After", retry);
}

/* 503 token_store_full: Redis is near its maxmemory; the room left is kept
 * for consuming the tokens already issued (redis_room.h). */
static void token_store_full(app_ctx *ctx, http_response *resp)
{
    char retry[24];
    snprintf(retry, sizeof(retry), "%ld",
             ctx->cfg != NULL && ctx->cfg->retry_after_s > 0 ? ctx->cfg->retry_after_s : 1L);
    metrics_inc(MET_TOKEN_STORE_FULL);
    http_response_error(resp, 503, "token_store_full",
                        "no new payment tokens for now (the token store is nearly full); the"
                        " tokens already issued still pay; try again later");
    http_response_header(resp, "Retry-After", retry);
}

void token_handle_issue(app_ctx *ctx, const http_request *req, http_response *resp)
{
    char param[32], tok[TOKEN_TEXT_MAX], shown[TOKEN_LOG_MAX];
    long long user_id = 0;
    long ttl = ctx->cfg != NULL && ctx->cfg->token_ttl_s > 0 ? ctx->cfg->token_ttl_s : 900;

    if (http_query_param(req->query, "user_id", param, sizeof(param)) != 0 ||
        token_parse_user_id(param, &user_id) != 0) {
        http_response_error(
            resp, 400, "invalid_request",
            "user_id must be given once, as a decimal integer 1..9223372036854775807");
        return;
    }

    switch (redis_room_check(ctx, ctx->cfg != NULL ? ctx->cfg->limits.token_room_pct : 90)) {
    case REDIS_ROOM_FULL:
        token_store_full(ctx, resp);
        return;
    default: /* room, or Redis did not say: token_issue meets its state itself */
        break;
    }
    int rc = token_issue_for(ctx, req->caller_id, user_id, ttl, tok);
    if (rc == -1) {
        token_unavailable(ctx, resp);
        return;
    }
    if (rc != 0) {
        http_response_error(resp, 500, "internal_error", "could not draw a random token");
        return;
    }

    json_t *body = json_pack("{s:s, s:I}", "token", tok, "expires_in", (json_int_t)ttl);
    if (body == NULL || http_response_json(resp, 200, body) != 0) {
        http_response_error(resp, 500, "internal_error", "out of memory");
        return;
    }
    http_response_header(resp, "Cache-Control", "no-store");
    metrics_inc(MET_TOKEN_ISSUED);
    log_msg(LOG_DEBUG, "token %s issued to user %lld for %ld s",
            log_token(tok, shown, sizeof(shown)), user_id, ttl);
    explicit_bzero(tok, sizeof(tok));
}
