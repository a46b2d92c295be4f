/* db_suite - the set-up and clean-up every CUnit suite that needs MariaDB
 * shares (test_order_store, test_callback_apply, test_statement): the
 * client library, the configuration from the environment, one app_ctx
 * (connected lazily by app_ctx_db), and a run-unique order-number prefix
 * whose rows are deleted at the end, so reruns and parallel suites never
 * see each other's rows. */
#ifndef IDEMPAY_DB_SUITE_H
#define IDEMPAY_DB_SUITE_H

#include <mysql.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_ctx.h"
#include "config.h"
#include "db_conn.h"

/* Loads cfg, makes *ctx and writes tag + pid + time into prefix (the tag:
 * 4 letters naming the suite). Returns 0, or -1 (the suite cannot run). */
static inline int db_suite_init(app_config *cfg, app_ctx **ctx, char *prefix, size_t len,
                                const char *tag)
{
    if (mysql_library_init(0, NULL, NULL) != 0 || app_config_load(cfg) != 0)
        return -1;
    *ctx = app_ctx_new(cfg, 0);
    if (*ctx == NULL)
        return -1;
    snprintf(prefix, len, "%s%05d%04ld", tag, (int)(getpid() % 100000), (long)(time(NULL) % 10000));
    return 0;
}

/* Runs each of the n statements in sql (one '?', bound to prefix) to
 * delete the suite's rows, then frees ctx and ends the client library.
 * Best effort: a statement that fails is skipped. Returns 0. */
static inline int db_suite_clean(app_ctx *ctx, const char *prefix, const char *const *sql, size_t n)
{
    for (size_t i = 0; ctx != NULL && ctx->db != NULL && i < n; i++) {
        MYSQL_STMT *st = mysql_stmt_init(ctx->db);
        if (st != NULL && mysql_stmt_prepare(st, sql[i], (unsigned long)strlen(sql[i])) == 0)
            db_stmt_exec(st, "s", prefix);
        if (st != NULL)
            mysql_stmt_close(st);
    }
    app_ctx_free(ctx);
    mysql_library_end();
    return 0;
}

#endif
