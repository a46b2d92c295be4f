/* app_ctx - one worker thread's connections: MariaDB (with its prepared
 * statements), Redis (directly, or the primary found through Redis
 * Sentinel), and the gateway's curl handle. */
#include "app_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "env.h"
#include "log.h"

app_ctx *app_ctx_new(const app_config *cfg, int thread_index)
{
    app_ctx *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->cfg = cfg;
    c->thread_index = thread_index;
    c->gateway = http_client_new(cfg->gateway_connect_timeout_ms, cfg->gateway_timeout_ms);
    /* The merchant certificate for /secapi/... (mutual TLS) and the gateway's
     * CA, on every thread's handle: checked readable at start-up. */
    if (!c->gateway || http_client_set_tls(c->gateway, cfg->refund.cert, cfg->refund.cert_key,
                                           cfg->refund.gateway_ca) != 0) {
        http_client_free(c->gateway);
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
    c->db = db_conn_open_as(c->db_account, c->db_name != NULL ? c->db_name : "idempay", c->err,
                            sizeof(c->err));
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
    st = db_stmt_slot(c->db, &c->stmt[id], sql, &e, c->err, sizeof(c->err));
    if (st == NULL)
        app_ctx_db_error(c, e);
    return st;
}

int app_ctx_db_error(app_ctx *c, unsigned int mysql_errno)
{
    if (!db_conn_lost(mysql_errno))
        return 0;
    if (c->db)
        log_msg(LOG_WARN, "mariadb connection lost (errno %u); reconnecting on next use",
                mysql_errno);
    db_close(c);
    return 1;
}

/* A connection to host:port with every call bounded by tv, or NULL with the
 * reason in err. */
static redisContext *redis_open(const char *host, int port, struct timeval tv, char *err,
                                size_t errlen)
{
    redisContext *r = redisConnectWithTimeout(host, port, tv);

    if (!r || r->err) {
        snprintf(err, errlen, "redis connect %s:%d: %s", host, port,
                 r ? r->errstr : "out of memory");
        if (r)
            redisFree(r);
        return NULL;
    }
    redisSetTimeout(r, tv);
    return r;
}

/* Authenticates a new connection to the data node (docs/SECURITY.md):
 * AUTH with cfg's user (or the default user) and password when one is
 * configured; without one, a PING tells a Redis that wants a password
 * (NOAUTH) from one that does not, so the service fails closed with a
 * message naming the settings. The password never reaches err or a log.
 * 0, or -1 with the reason in err. */
static int redis_auth(redisContext *r, const app_config *cfg, char *err, size_t errlen)
{
    redisReply *rep;
    int ok;

    if (cfg->redis_password[0] != '\0') {
        if (cfg->redis_user[0] != '\0')
            rep = redisCommand(r, "AUTH %s %s", cfg->redis_user, cfg->redis_password);
        else
            rep = redisCommand(r, "AUTH %s", cfg->redis_password);
        ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
        if (!ok) {
            int n = snprintf(err, errlen,
                             "redis AUTH as %.64s refused (check IDEMPAY_REDIS_USER and"
                             " IDEMPAY_REDIS_PASSWORD): ",
                             cfg->redis_user[0] ? cfg->redis_user : "default");
            if (n > 0 && (size_t)n < errlen)
                snprintf(err + n, errlen - (size_t)n, "%.120s",
                         rep != NULL && rep->type == REDIS_REPLY_ERROR ? rep->str : r->errstr);
        }
    } else {
        rep = redisCommand(r, "PING");
        ok = rep != NULL && rep->type != REDIS_REPLY_ERROR;
        if (!ok)
            snprintf(err, errlen,
                     "redis refuses the connection without a password (%.60s): set"
                     " IDEMPAY_REDIS_USER and IDEMPAY_REDIS_PASSWORD (or _FILE)",
                     rep != NULL ? rep->str : r->errstr);
    }
    if (rep)
        freeReplyObject(rep);
    return ok ? 0 : -1;
}

/* Asks the Sentinels in list ("host:port,host:port,...") where the primary
 * named master is, starting at the first'th (threads spread over them).
 * Returns 0 with host and *port, or -1 with the reason in err. */
static int redis_sentinel_primary(const char *list, const char *master, unsigned first,
                                  struct timeval tv, char *host, size_t hostlen, int *port,
                                  char *err, size_t errlen)
{
    char addrs[APP_CTX_SENTINELS_MAX][80];
    int n = 0;
    const char *p = list;

    while (*p != '\0' && n < APP_CTX_SENTINELS_MAX) {
        size_t len = strcspn(p, ",");
        if (len > 0 && len < sizeof(addrs[n])) {
            memcpy(addrs[n], p, len);
            addrs[n][len] = '\0';
            n++;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    snprintf(err, errlen, "redis: no Sentinel in IDEMPAY_REDIS_SENTINELS");
    for (int k = 0; k < n; k++) {
        char *a = addrs[(first + (unsigned)k) % (unsigned)n];
        char *colon = strrchr(a, ':');
        redisContext *s;
        redisReply *r;

        if (colon == NULL)
            continue;
        *colon = '\0';
        s = redis_open(a, atoi(colon + 1), tv, err, errlen);
        *colon = ':';
        if (s == NULL)
            continue;
        r = redisCommand(s, "SENTINEL get-master-addr-by-name %s", master);
        if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[0]->type == REDIS_REPLY_STRING &&
            r->element[1]->type == REDIS_REPLY_STRING) {
            snprintf(host, hostlen, "%s", r->element[0]->str);
            *port = atoi(r->element[1]->str);
            freeReplyObject(r);
            redisFree(s);
            return 0;
        }
        snprintf(err, errlen, "redis: Sentinel %s does not know the primary '%s'", a, master);
        if (r)
            freeReplyObject(r);
        redisFree(s);
    }
    return -1;
}

/* 1 when r says ROLE master; a replica (or an old primary the Sentinels have
 * demoted) is not written to. */
static int redis_is_primary(redisContext *r)
{
    redisReply *rep = redisCommand(r, "ROLE");
    int ok = rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements > 0 &&
             rep->element[0]->type == REDIS_REPLY_STRING &&
             strcmp(rep->element[0]->str, "master") == 0;

    if (rep)
        freeReplyObject(rep);
    return ok;
}

int app_ctx_redis(app_ctx *c)
{
    struct timeval tv;
    const char *sentinels = env_str("IDEMPAY_REDIS_SENTINELS", NULL);
    char host[64];
    int port;

    if (c->redis)
        return 0;
    tv.tv_sec = c->cfg->redis_timeout_ms / 1000;
    tv.tv_usec = (c->cfg->redis_timeout_ms % 1000) * 1000;
    if (sentinels == NULL) {
        snprintf(host, sizeof(host), "%s", c->cfg->redis_host);
        port = c->cfg->redis_port;
    } else if (redis_sentinel_primary(sentinels, env_str("IDEMPAY_REDIS_MASTER", "idempay"),
                                      (unsigned)c->thread_index, tv, host, sizeof(host), &port,
                                      c->err, sizeof(c->err)) != 0) {
        return -1;
    }
    c->redis = redis_open(host, port, tv, c->err, sizeof(c->err));
    if (!c->redis)
        return -1;
    if (redis_auth(c->redis, c->cfg, c->err, sizeof(c->err)) != 0) {
        log_msg(LOG_ERROR, "%s", c->err);
        redisFree(c->redis);
        c->redis = NULL;
        return -1;
    }
    if (sentinels != NULL) {
        char addr[sizeof(c->redis_primary)];
        if (!redis_is_primary(c->redis)) {
            snprintf(c->err, sizeof(c->err),
                     "redis %s:%d is not the primary (yet): a failover is under way", host, port);
            redisFree(c->redis);
            c->redis = NULL;
            return -1;
        }
        snprintf(addr, sizeof(addr), "%s:%d", host, port);
        if (c->redis_primary[0] != '\0' && strcmp(addr, c->redis_primary) != 0)
            log_msg(LOG_WARN, "redis: the Sentinels moved the primary from %s to %s",
                    c->redis_primary, addr);
        snprintf(c->redis_primary, sizeof(c->redis_primary), "%s", addr);
    }
    c->redis_generation++;
    return 0;
}

void app_ctx_redis_lost(app_ctx *c)
{
    if (c->redis) {
        snprintf(c->err, sizeof(c->err), "redis: %s", c->redis->err ? c->redis->errstr : "error");
        redisFree(c->redis);
    }
    c->redis = NULL;
}
