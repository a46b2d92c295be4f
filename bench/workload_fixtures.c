/* workload_fixtures.c - what the bench's workloads need in place, and
 * taking it away after (see workload.h: wl_fixtures_setup,
 * wl_fixtures_teardown, wl_pool_paid): the mock reset with no latency,
 * notifications or journal; the raw-DB table; the notification pools'
 * PROCESSING orders; the orders paid once for the repeat workload. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "db_conn.h"
#include "workload_int.h"
#include "workload_v3.h"

static int wl_sql_simple(MYSQL *db, const char *q, char *err, size_t errlen)
{
    if (db_exec_simple(db, q) != 0) {
        snprintf(err, errlen, "%.120s...: %s", q, mysql_error(db));
        return -1;
    }
    return 0;
}

/* One admin call to the mock; the reply body into *body (caller frees)
 * when body is not NULL. 0 when it answered 200. */
static int wl_mock_admin(const char *method, const char *path, const char *json, char **body,
                         char *err, size_t errlen)
{
    char url[600];
    http_client *c = http_client_new(2000, 30000);
    http_reply rep;
    int rc = -1;

    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(url, sizeof(url), "%s%s", wl_cfg->gateway, path);
    if (http_client_request(c, method, url, json ? "application/json" : NULL, json,
                            json ? strlen(json) : 0, NULL, 0, &rep) != HTTP_OK)
        snprintf(err, errlen, "mock %s %s: no answer: %s", method, path, rep.error);
    else if (rep.code != 200)
        snprintf(err, errlen, "mock %s %s: HTTP %ld: %.200s", method, path, rep.code,
                 rep.body ? rep.body : "");
    else {
        rc = 0;
        if (body != NULL)
            *body = strdup(rep.body ? rep.body : "");
    }
    http_client_free(c);
    return rc;
}

/* The mock as the bench wants it: reset, no latency, no notifications,
 * and no journal when this mock keeps one (its knob is then in
 * /mock/config; an older mock refuses unknown knobs). */
static int wl_mock_setup(char *err, size_t errlen)
{
    char *cfg = NULL;
    json_t *j;
    bool journal = false;

    if (wl_mock_admin("POST", "/mock/reset", NULL, NULL, err, errlen) != 0 ||
        wl_mock_admin("GET", "/mock/config", NULL, &cfg, err, errlen) != 0)
        return -1;
    j = json_loads(cfg ? cfg : "", 0, NULL);
    journal = j != NULL && json_object_get(j, "journal") != NULL;
    json_decref(j);
    free(cfg);
    return wl_mock_admin(
        "PUT", "/mock/config",
        journal ? "{\"latency_ms\":0,\"jitter_ms\":0,\"notify_enabled\":false,\"journal\":false}"
                : "{\"latency_ms\":0,\"jitter_ms\":0,\"notify_enabled\":false}",
        NULL, err, errlen);
}

/* PROCESSING orders of 1.00 waiting for their notification; the hour's
 * lease keeps the reconciler away. */
static int wl_pool_setup(MYSQL *db, const char *prefix, char *err, size_t errlen)
{
    char q[512];

    for (long from = 0; from < wl_cfg->pool_orders; from += 50000) {
        long to = from + 50000 < wl_cfg->pool_orders ? from + 50000 : wl_cfg->pool_orders;
        snprintf(
            q, sizeof(q),
            "INSERT INTO payment_order (order_no, user_id, amount, status, lease_until, attempts) "
            "SELECT CONCAT('%s%s_', seq), 9, " WL_AMOUNT ", 1, NOW(3) + INTERVAL 1 HOUR, 1 "
            "FROM seq_%ld_to_%ld",
            prefix, wl_cfg->run, from, to - 1);
        if (wl_sql_simple(db, q, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int wl_fixtures_setup(MYSQL *db, const bool selected[WL_COUNT], char *err, size_t errlen)
{
    wl_worker wk;
    char e[256];

    wl_pools_reset();
    if (wl_mock_setup(err, errlen) != 0)
        return -1;
    /* every worker prepares rawdb's statements, whatever is selected: its
     * table must exist (a fresh database has none) */
    if (wl_sql_simple(db, "CREATE TABLE IF NOT EXISTS bench_payment_order LIKE payment_order", err,
                      errlen) != 0 ||
        (selected[WL_RAWDB] &&
         wl_sql_simple(db, "TRUNCATE TABLE bench_payment_order", err, errlen)))
        return -1;
    if (selected[WL_CALLBACK] && wl_pool_setup(db, "CB", err, errlen) != 0)
        return -1;
    if (selected[WL_RAWCB] && wl_pool_setup(db, "RC", err, errlen) != 0)
        return -1;
    if ((selected[WL_CALLBACK_V3] || selected[WL_RAWCB_V3]) && wl_v3_load(err, errlen) != 0)
        return -1;
    if ((selected[WL_CALLBACK_V3] && wl_pool_setup(db, "C3", err, errlen) != 0) ||
        (selected[WL_RAWCB_V3] && wl_pool_setup(db, "R3", err, errlen) != 0))
        return -1;
    if (selected[WL_CALLBACK_V3]) {
        char url[320];
        snprintf(url, sizeof(url), "%s/api/pay/callback/wechat/v3", wl_cfg->public_base);
        wl_v3_warm(url, wl_cfg->appid, wl_cfg->mchid, wl_cfg->run);
    }
    if (!selected[WL_REPEAT])
        return 0;
    /* orders paid once, for the repeat workload */
    if (wl_worker_open(&wk, 0, e, sizeof(e)) != 0) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    for (int i = 0; i < WL_REPEAT_ORDERS; i++) {
        char no[64];
        snprintf(no, sizeof(no), "BR%s_%d", wl_cfg->run, i);
        if (wl_pay(&wk, no, 7, false) != 0) {
            snprintf(err, errlen, "could not pay %s: %s", no, wk.first_error);
            wl_worker_close(&wk);
            return -1;
        }
    }
    wl_worker_close(&wk);
    return 0;
}

int wl_fixtures_teardown(MYSQL *db)
{
    char q[256], err[300];
    int problems = 0;
    /* the notification pools, and the prepay rows (BN, RN: open NATIVE
     * orders no customer will pay, which the reconciler would close one by
     * one at the gateway for minutes after the bench) */
    static const char *const prefixes[] = { "BN", "RN", "CB", "RC", "C3", "R3" };

    if (wl_cfg == NULL)
        return 0;
    wl_v3_free();
    if (wl_mock_admin("POST", "/mock/reset", NULL, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        problems++;
    }
    /* orders left PROCESSING (and the prepays' trade rows): the reconciler
     * would work through them once their lease ran out */
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        snprintf(q, sizeof(q),
                 "DELETE FROM payment_order WHERE order_no LIKE '%s%s\\_%%' AND status = 1",
                 prefixes[i], wl_cfg->run);
        int rc = wl_sql_simple(db, q, err, sizeof(err));
        if (rc == 0 && i < 2) {
            snprintf(q, sizeof(q), "DELETE FROM payment_trade WHERE order_no LIKE '%s%s\\_%%'",
                     prefixes[i], wl_cfg->run);
            rc = wl_sql_simple(db, q, err, sizeof(err));
        }
        if (rc != 0) {
            fprintf(stderr, "bench: could not remove the orders left open: %s\n", err);
            problems++;
        }
    }
    return problems;
}

long wl_pool_paid(MYSQL *db, wl_kind w)
{
    char q[256];
    MYSQL_RES *res;
    MYSQL_ROW row;
    long n = -1;

    snprintf(q, sizeof(q),
             "SELECT COUNT(*) FROM payment_order WHERE order_no LIKE '%s%s\\_%%' AND status = 2",
             wl_pool_prefix_of(w), wl_cfg->run);
    if (mysql_query(db, q) != 0 || (res = mysql_store_result(db)) == NULL)
        return -1;
    if ((row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        n = strtol(row[0], NULL, 10);
    mysql_free_result(res);
    return n;
}
