/* health - liveness (ping), dependency health (healthz) and /metrics. */
#include "health.h"

#include <string.h>

#include "db_conn.h"
#include "log.h"
#include "metrics.h"
#include "order_state.h"

static const char PING_BODY[] = "{\"ok\":true}";

void health_handle_ping(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    (void)req;
    http_response_set(resp, 200, "application/json", PING_BODY, sizeof(PING_BODY) - 1);
}

/* 1 when MariaDB answers a trivial statement on this thread's connection. */
static int db_ok(app_ctx *ctx)
{
    MYSQL_STMT *st = app_ctx_stmt(ctx, STMT_HEALTH_BASE, "SELECT 1");
    long long one = 0;

    if (!st)
        return 0;
    if (db_stmt_exec(st, "") != 0 || db_stmt_fetch(st, "l", &one) != 1) {
        app_ctx_db_error(ctx, mysql_stmt_errno(st));
        return 0;
    }
    db_stmt_done(st);
    return one == 1;
}

/* 1 when Redis answers PING on this thread's connection. */
static int redis_ok(app_ctx *ctx)
{
    redisReply *r;
    int ok;

    if (app_ctx_redis(ctx) != 0)
        return 0;
    r = redisCommand(ctx->redis, "PING");
    if (!r) {
        app_ctx_redis_lost(ctx);
        return 0;
    }
    ok = r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
    freeReplyObject(r);
    return ok;
}

void health_handle_healthz(app_ctx *ctx, const http_request *req, http_response *resp)
{
    int db = db_ok(ctx);
    int redis = redis_ok(ctx);
    json_t *o;

    (void)req;
    if (db && redis) {
        o = json_pack("{s:s, s:s}", "db", "ok", "redis", "ok");
        http_response_json(resp, 200, o);
        return;
    }
    o = json_pack("{s:s, s:s, s:s, s:s}", "error", "unavailable", "message",
                  !db && !redis ? "MariaDB and Redis are down"
                  : !db         ? "MariaDB is down"
                                : "Redis is down",
                  "db", db ? "ok" : "down", "redis", redis ? "ok" : "down");
    http_response_json(resp, 503, o);
    http_response_header(resp, "Retry-After", "1");
}

/* One count of the PROCESSING orders into *n: 0, 1 when the connection was
 * lost (dropped: the next use opens another), -1 on any other failure. */
static int orders_processing_once(app_ctx *ctx, long long *n)
{
    bool had = ctx->db != NULL; /* a connection to lose (not one that cannot open) */
    MYSQL_STMT *st = app_ctx_stmt(ctx, STMT_HEALTH_BASE + 1,
                                  "SELECT COUNT(*) FROM payment_order WHERE status = ?");

    if (!st)
        return had && ctx->db == NULL ? 1 : -1;
    if (db_stmt_exec(st, "l", (long long)ORDER_PROCESSING) != 0 || db_stmt_fetch(st, "l", n) != 1)
        return app_ctx_db_error(ctx, mysql_stmt_errno(st)) == 1 ? 1 : -1;
    db_stmt_done(st);
    return 0;
}

/* PROCESSING orders now (an index range of idx_status_lease), or -1 when
 * MariaDB does not answer: the gauge is then left out of the scrape. A read:
 * a connection lost since this thread last used it (a MariaDB restart) is
 * opened again and asked once more. */
static long long orders_processing(app_ctx *ctx)
{
    long long n = -1;
    int rc = orders_processing_once(ctx, &n);

    if (rc == 1)
        rc = orders_processing_once(ctx, &n);
    return rc == 0 ? n : -1;
}

void health_handle_metrics(app_ctx *ctx, const http_request *req, http_response *resp)
{
    metrics_scrape scrape = { orders_processing(ctx) };

    (void)req;
    metrics_handle(resp, &scrape);
}
