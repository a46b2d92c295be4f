/* app_ctx - what one service worker thread owns: its MariaDB connection and
 * prepared statements, its Redis connection, its gateway HTTP client.
 * Never shared between threads. Connections are opened lazily and replaced
 * after a failure, so a dependency that comes back is used again without a
 * restart. */
#ifndef IDEMPAY_APP_CTX_H
#define IDEMPAY_APP_CTX_H

#include <mysql.h>
#include <hiredis/hiredis.h>
#include "config.h"
#include "db_conn.h"
#include "http_client.h"

/* Prepared statement slots, one range per module (see app_ctx_stmt). */
enum {
    STMT_ORDER_BASE = 0,      /* order_store: 0..23 */
    STMT_IDEM_BASE = 24,      /* idem_key: 24..39 */
    STMT_CALLBACK_BASE = 40,  /* callback: 40..55 */
    STMT_RECON_BASE = 56,     /* reconciler: 56..71 */
    STMT_REFUND_BASE = 72,    /* refund_queue: 72..87 */
    STMT_HEALTH_BASE = 88,    /* health: 88..91 */
    STMT_STATEMENT_BASE = 92, /* statement: 92..95 */
    STMT_TRADE_BASE = 96,     /* trade_store: 96..103 */
    STMT_CALLER_BASE = 104,   /* caller_store: 104..107 */
    STMT_ARCHIVE_BASE = 108,  /* order_archive: 108..123 */
    STMT_MAX = 124
};

typedef struct app_ctx {
    const app_config *cfg;
    int thread_index;
    MYSQL *db;                      /* NULL while down */
    MYSQL_STMT *stmt[STMT_MAX];     /* prepared lazily, closed with the connection */
    unsigned long db_generation;    /* bumped at each (re)connect */
    redisContext *redis;            /* NULL while down */
    unsigned long redis_generation; /* bumped at each (re)connect: re-load scripts */
    char redis_primary[80];         /* "host:port" of the primary last found through Sentinel */
    http_client *gateway;           /* reused keep-alive handle */
    const char *db_name;            /* the MariaDB database; NULL: "idempay" (the seed
                                       fixture sets "idempay_seed" after app_ctx_new) */
    db_account db_account;          /* whose account: DB_ACCOUNT_SERVICE (0) unless the seed
                                       fixture sets another after app_ctx_new */
    char err[256];                  /* last dependency error, for logs */
} app_ctx;

/* A context for one thread; connections are not opened yet. NULL on OOM. */
app_ctx *app_ctx_new(const app_config *cfg, int thread_index);
/* Closes everything. NULL accepted. */
void app_ctx_free(app_ctx *c);

/* Makes sure the MariaDB connection is up (connecting if needed).
 * Returns 0, or -1 with c->err set (the caller answers 503). */
int app_ctx_db(app_ctx *c);
/* The prepared statement in slot id for sql, preparing it on first use
 * (the same slot must always be used with the same sql). Connects if needed.
 * Returns NULL with c->err set when the database is down or prepare fails. */
MYSQL_STMT *app_ctx_stmt(app_ctx *c, int id, const char *sql);
/* Call after any MariaDB error: when the error means the connection is gone
 * (db_conn_lost), closes it and all statements, so the next call reconnects.
 * Returns 1 when the connection was dropped, 0 otherwise. */
int app_ctx_db_error(app_ctx *c, unsigned int mysql_errno);

/* Sentinels a thread asks, at most. */
#define APP_CTX_SENTINELS_MAX 8

/* Makes sure the Redis connection is up. Returns 0 or -1 (c->err set).
 * Every new connection authenticates first (IDEMPAY_REDIS_USER /
 * IDEMPAY_REDIS_PASSWORD; redis_auth in app_ctx.c): refused credentials,
 * or a Redis that wants a password none is configured for, is -1 with a
 * message naming the settings, logged as an ERROR (fail closed).
 * Without IDEMPAY_REDIS_SENTINELS: IDEMPAY_REDIS_HOST:IDEMPAY_REDIS_PORT.
 * With IDEMPAY_REDIS_SENTINELS ("host:port,host:port,..."; docs/CLUSTER.md):
 * asks the Sentinels, one after another, for the primary named
 * IDEMPAY_REDIS_MASTER (default "idempay"), connects to it and checks that
 * it says ROLE master (during a failover an answer may be stale: then -1,
 * and the caller answers 503). Every reconnect asks again, so a failover is
 * followed as soon as the old connection fails: the old primary killed,
 * demoted (Sentinel closes its clients), or answering READONLY (any error
 * reply drops the connection: app_ctx_redis_lost). */
int app_ctx_redis(app_ctx *c);
/* Call when a redis reply is NULL or c->redis->err is set: frees the
 * context so the next call reconnects. */
void app_ctx_redis_lost(app_ctx *c);

#endif
