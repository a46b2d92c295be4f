/* app_ctx - one worker thread's connections: MariaDB (with its prepared
 * statements), Redis, and the gateway's curl handle. */
#include "app_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "log.h"

app_ctx *app_ctx_new(const app_config *cfg, int thread_index)
{
    app_ctx *c = calloc(1, sizeof *c);

    if (!c)
        return NULL;
    c->cfg = cfg;
    c->thread_index = thread_index;
    c->gateway = http_client_new(cfg->gateway_connect_timeout_ms, cfg->gateway_timeout_ms);
    if (!c->gateway) {
        free(c);
        return NULL;
    }
    return c;
}

static void db_close(app_ctx *c)
{
    db_conn_close(&c->db, c->stmt, STMT_MAX);
}

void app_ctx_free(app_ctx *c)
{
    if (!c)
        return;
    db_close(c);
    if (c->redis)
        redisFree(c->redis);
    http_client_free(c->gateway);
    free(c);
}

int app_ctx_db(app_ctx *c)
{
    if (c->db)
        return 0;
    c->db = db_conn_open(c->db_name != NULL ? c->db_name : "idempay", c->err, sizeof c->err);
    if (!c->db)
        return -1;
    c->db_generation++;
    return 0;
}

MYSQL_STMT *app_ctx_stmt(app_ctx *c, int id, const char *sql)
{
    MYSQL_STMT *st;
    unsigned int e;

    if (id < 0 || id >= STMT_MAX)
        return NULL;
    if (app_ctx_db(c) != 0)
        return NULL;
    st = db_stmt_slot(c->db, &c->stmt[id], sql, &e, c->err, sizeof c->err);
    if (st == NULL)
        app_ctx_db_error(c, e);
    return st;
}

int app_ctx_db_error(app_ctx *c, unsigned int mysql_errno)
{
    if (!db_conn_lost(mysql_errno))
        return 0;
    if (c->db)
        log_msg(LOG_WARN, "mariadb connection lost (errno %u); reconnecting on next use", mysql_errno);
    db_close(c);
    return 1;
}

int app_ctx_redis(app_ctx *c)
{
    struct timeval tv;

    if (c->redis)
        return 0;
    tv.tv_sec = c->cfg->redis_timeout_ms / 1000;
    tv.tv_usec = (c->cfg->redis_timeout_ms % 1000) * 1000;
    c->redis = redisConnectWithTimeout(c->cfg->redis_host, c->cfg->redis_port, tv);
    if (!c->redis || c->redis->err) {
        snprintf(c->err, sizeof c->err, "redis connect: %s",
                 c->redis ? c->redis->errstr : "out of memory");
        if (c->redis)
            redisFree(c->redis);
        c->redis = NULL;
        return -1;
    }
    redisSetTimeout(c->redis, tv);
    c->redis_generation++;
    return 0;
}

void app_ctx_redis_lost(app_ctx *c)
{
    if (c->redis) {
        snprintf(c->err, sizeof c->err, "redis: %s", c->redis->err ? c->redis->errstr : "error");
        redisFree(c->redis);
    }
    c->redis = NULL;
}
