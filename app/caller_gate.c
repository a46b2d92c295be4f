/* caller_gate - headers, caller, signature, nonce (see caller_gate.h). */
#include "caller_gate.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "caller_auth.h"
#include "caller_store.h"
#include "log.h"
#include "metrics.h"

#define GATE_NONCE_PREFIX "idempay:nonce:"

static void gate_refuse(http_response *resp, const char *code, const char *message)
{
    metrics_inc(MET_AUTH_REFUSED);
    http_response_error(resp, 401, code, message);
    http_response_header(resp, "WWW-Authenticate", "Idempay-HMAC-SHA256");
}

static void gate_unavailable(app_ctx *ctx, http_response *resp, const char *what)
{
    char secs[24];

    log_msg(LOG_WARN, "caller check: %s unavailable: %s", what, ctx->err);
    http_response_error(resp, 503, "unavailable", "the caller check cannot be made now; retry");
    snprintf(secs, sizeof(secs), "%ld", ctx->cfg->retry_after_s);
    http_response_header(resp, "Retry-After", secs);
}

/* SET NX of the nonce: 1 first use, 0 seen before, -1 Redis failed. One
 * reconnect when a kept connection was found closed. */
static int gate_nonce_fresh(app_ctx *ctx, long long caller_id, const char *nonce)
{
    char key[sizeof(GATE_NONCE_PREFIX) + 24 + CALLER_NONCE_MAX], ttl[24];
    const char *argv[6];
    size_t argl[6];
    int rc = -1;

    snprintf(key, sizeof(key), "%s%lld:%s", GATE_NONCE_PREFIX, caller_id, nonce);
    snprintf(ttl, sizeof(ttl), "%ld", 2 * ctx->cfg->auth_window_s);
    argv[0] = "SET";
    argv[1] = key;
    argv[2] = "1";
    argv[3] = "EX";
    argv[4] = ttl;
    argv[5] = "NX";
    for (size_t i = 0; i < 6; i++)
        argl[i] = strlen(argv[i]);
    for (int attempt = 0; attempt < 2 && rc < 0; attempt++) {
        if (app_ctx_redis(ctx) != 0)
            return -1;
        redisReply *reply = redisCommandArgv(ctx->redis, 6, argv, argl);
        if (reply != NULL && reply->type == REDIS_REPLY_STATUS)
            rc = 1;
        else if (reply != NULL && reply->type == REDIS_REPLY_NIL)
            rc = 0;
        else {
            snprintf(ctx->err, sizeof(ctx->err), "redis SET nonce: %s",
                     reply != NULL && reply->str != NULL ? reply->str
                     : ctx->redis->errstr[0]             ? ctx->redis->errstr
                                                         : "no reply");
            app_ctx_redis_lost(ctx);
        }
        freeReplyObject(reply);
    }
    return rc;
}

long long caller_gate_check(app_ctx *ctx, const http_request *req, long long now,
                            http_response *resp)
{
    caller_record rec;
    caller_auth_result ar = caller_auth_screen(req, now, ctx->cfg->auth_window_s, NULL);
    long long id = 0;
    int fresh;

    if (ar != CALLER_AUTH_OK) {
        gate_refuse(resp, caller_auth_code(ar), caller_auth_message(ar));
        return 0;
    }
    switch (caller_store_find(ctx, req->auth_caller, &rec)) {
    case CALLER_STORE_OK:
        break;
    case CALLER_STORE_MISS:
        gate_refuse(resp, "bad_signature", caller_auth_message(CALLER_AUTH_BAD_SIGNATURE));
        return 0;
    default:
        gate_unavailable(ctx, resp, "the caller table");
        return 0;
    }
    if (!rec.key_ok)
        log_msg(LOG_ERROR,
                "caller %s: its key was made under another IDEMPAY_WX_KEY;"
                " re-issue it (--disable-caller, --add-caller)",
                rec.name);
    ar = rec.enabled && rec.key_ok ? caller_auth_verify(req, rec.key) : CALLER_AUTH_BAD_SIGNATURE;
    OPENSSL_cleanse(rec.key, sizeof(rec.key));
    if (ar != CALLER_AUTH_OK) {
        gate_refuse(resp, caller_auth_code(ar), caller_auth_message(ar));
        return 0;
    }
    fresh = gate_nonce_fresh(ctx, rec.id, req->auth_nonce);
    if (fresh < 0)
        gate_unavailable(ctx, resp, "redis");
    else if (fresh == 0)
        gate_refuse(resp, "replayed",
                    "this X-Idempay-Nonce was used before: a replayed request"
                    " is refused (sign every request with a fresh nonce)");
    else
        id = rec.id;
    return id;
}
