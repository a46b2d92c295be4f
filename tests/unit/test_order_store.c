/* test_order_store.c - CUnit suite for order_store against a real MariaDB
 * (IDEMPAY_DB_* as ./stack sets them): the insert that decides concurrent
 * first requests, every compare-and-set move, the attempt fence, lease
 * expiry and the reconciler's listing. No database: the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_ctx.h"
#include "db_suite.h"
#include "config.h"
#include "db_conn.h"
#include "order_store.h"

static app_config cfg;
static app_ctx *ctx;
static char prefix[16];

/* A fresh order number of this run: prefix + n. */
static const char *order_no(int n, char buf[ORDER_NO_MAX + 1])
{
    snprintf(buf, ORDER_NO_MAX + 1, "%s%03d", prefix, n);
    return buf;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int suite_init(void)
{
    return db_suite_init(&cfg, &ctx, prefix, sizeof(prefix), "UTOS");
}

/* Deletes this run's rows (through a statement of its own). */
static int suite_clean(void)
{
    static const char *const sql[] = {
        "DELETE FROM payment_order WHERE order_no LIKE CONCAT(?, '%')",
    };
    return db_suite_clean(ctx, prefix, sql, sizeof(sql) / sizeof(sql[0]));
}

static void test_database_reachable(void)
{
    int rc = app_ctx_db(ctx);
    if (rc != 0)
        fprintf(stderr, "\n  MariaDB not reachable (set IDEMPAY_DB_SOCKET or run ./stack up): %s\n",
                ctx->err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_insert_and_read(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    order_no(1, no);
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 1230, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_STRING_EQUAL(row.order_no, no);
    CU_ASSERT_EQUAL(row.user_id, 42);
    CU_ASSERT_EQUAL(row.amount_fen, 1230);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "");
    CU_ASSERT_TRUE(row.lease_live);
    CU_ASSERT_EQUAL(row.attempts, 1);
    CU_ASSERT_EQUAL(strlen(row.created_at), 24); /* 2024-01-02T03:04:05.678Z */
    CU_ASSERT_EQUAL(row.created_at[10], 'T');
    CU_ASSERT_EQUAL(row.created_at[23], 'Z');
    /* the unique key decides: a second insert is a duplicate, whatever it says */
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 42, 1230, 10000), ORDER_STORE_DUPLICATE);
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 7, 1, 10000), ORDER_STORE_DUPLICATE);
}

static void test_amount_limits(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    order_no(2, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 9223372036854775807LL, 9999999999LL, 10000),
                          ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.amount_fen, 9999999999LL);
    CU_ASSERT_EQUAL(row.user_id, 9223372036854775807LL);
    order_no(3, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 1, 1, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.amount_fen, 1);
}

static void test_decline_and_retry(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    order_no(4, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    /* a stale attempt cannot record a decline */
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 2, 0), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_FALSE(row.lease_live);
    /* FAILED -> PAID does not exist */
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, "TX_FAILED_1", 500), ORDER_STORE_MISS);
    /* 3 -> 1 by CAS at the read attempt; the loser of two retries misses */
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
    CU_ASSERT_EQUAL(row.attempts, 2);
    CU_ASSERT_TRUE(row.lease_live);
    /* the first attempt's late decline is fenced off */
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_MISS);
}

/* The fence: a closed attempt makes the order FAILED for good; nothing
 * moves it any more (no retry, no PAID, no recheck), and only the holder of
 * the current attempt can close. */
static void test_closed_is_final(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    order_no(20, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 700, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_final(ctx, no, 2, ORDER_FINAL_CLOSED), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_mark_final(ctx, no, 1, ORDER_FINAL_CLOSED), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_CLOSED);
    CU_ASSERT_FALSE(row.lease_live);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 1, "TX_CLOSED_1"), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, "TX_CLOSED_1", 700), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_mark_wrong_amount(ctx, no), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_CLOSED);

    /* a charge of another amount closes a PROCESSING or retryable FAILED order */
    order_no(21, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 700, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_wrong_amount(ctx, no), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_WRONG_AMOUNT);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_MISS);
    order_no(22, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 700, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_paid(ctx, no, "TX_PAID_22", 700), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_wrong_amount(ctx, no), ORDER_STORE_MISS); /* PAID stays */
}

static bool listed(const char *no, char (*nos)[ORDER_NO_MAX + 1], int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(nos[i], no) == 0)
            return true;
    return false;
}

static void test_failed_recheck(void)
{
    char no[ORDER_NO_MAX + 1], nos[64][ORDER_NO_MAX + 1], txid[ORDER_TXID_MAX + 3];
    long long att[64];
    order_row row;
    int n;

    order_no(10, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    /* FAILED with a recheck a minute away: held (lease_until set), not due */
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_TRUE(row.lease_live);
    n = order_store_recheck_due(ctx, nos, att, 64);
    CU_ASSERT_TRUE(n >= 0);
    CU_ASSERT_FALSE(listed(no, nos, n));
    /* only the current attempt ends the recheck, once */
    CU_ASSERT_EQUAL(order_store_recheck_done(ctx, no, 2), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_recheck_done(ctx, no, 1), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_recheck_done(ctx, no, 1), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_FALSE(row.lease_live);
    /* a recheck is taken only when due, at its attempt */
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 60000),
                    ORDER_STORE_MISS); /* FAILED already */
    CU_ASSERT_EQUAL(order_store_recheck_take(ctx, no, 1, 10000), ORDER_STORE_MISS); /* final */

    order_no(11, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_recheck_take(ctx, no, 1, 10000), ORDER_STORE_MISS); /* not due */
    snprintf(txid, sizeof(txid), "TR%.30s", no);
    /* the charge found by the recheck: FAILED -> PAID at the same attempt only */
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 2, txid), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 1, ""), ORDER_STORE_ERROR);
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 1, txid), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 1, txid), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, txid);
    CU_ASSERT_FALSE(row.lease_live);
    CU_ASSERT_EQUAL(order_store_recheck_done(ctx, no, 1), ORDER_STORE_MISS);

    /* no new attempt while a recheck is to come (its attempt was not
     * fenced: it may still charge); once the recheck found nothing, a
     * client's retry takes the order back to PROCESSING */
    order_no(12, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_TRUE(row.lease_set);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_recheck_done(ctx, no, 1), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_FALSE(row.lease_set);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_recheck_paid(ctx, no, 1, txid), ORDER_STORE_MISS);
}

static void test_paid_is_terminal(void)
{
    char no[ORDER_NO_MAX + 1], txid[ORDER_TXID_MAX + 3];
    order_row row;

    order_no(5, no);
    snprintf(txid, sizeof(txid), "TX%.30s", no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, "", 500), ORDER_STORE_ERROR);
    /* a charge of another amount never pays the order */
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, txid, 499), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, txid, 500), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, txid, 500), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_FAILED, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_retry(ctx, no, ORDER_PAID, 1, 10000), ORDER_STORE_ERROR);
    CU_ASSERT_EQUAL(order_store_take_expired(ctx, no, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, txid);
    CU_ASSERT_FALSE(row.lease_live);
    /* a transaction_id belongs to one order only */
    order_no(6, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_mark_paid(ctx, no, txid, 500), ORDER_STORE_ERROR);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
}

static void test_lease_expiry(void)
{
    char no[ORDER_NO_MAX + 1];
    char(*nos)[ORDER_NO_MAX + 1] = calloc(512, ORDER_NO_MAX + 1);
    long long *att = calloc(512, sizeof(long long));
    order_row row;
    int n, found = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(nos);
    CU_ASSERT_PTR_NOT_NULL_FATAL(att);
    order_no(7, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 10000), ORDER_STORE_OK);
    /* a live lease cannot be taken */
    CU_ASSERT_EQUAL(order_store_take_expired(ctx, no, 1, 10000), ORDER_STORE_MISS);

    /* The running stack's reconciler takes expired leases too (every 2 s):
     * when it wins the race for an order (the order then moves on to attempt
     * 2), try again with a fresh one. */
    for (int tries = 0; tries < 5 && !found; tries++) {
        order_no(8 + 100 * tries, no);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 42, 500, 30), ORDER_STORE_OK);
        sleep_ms(80);
        n = order_store_expired(ctx, nos, att, 512);
        for (int i = 0; i < n; i++)
            if (strcmp(nos[i], no) == 0 && att[i] == 1)
                found = order_store_take_expired(ctx, no, 0, 10000) == ORDER_STORE_MISS &&
                        order_store_take_expired(ctx, no, 1, 10000) == ORDER_STORE_OK;
    }
    /* listed as expired at attempt 1; the wrong attempt missed, the right
     * one took it, and only once */
    CU_ASSERT_TRUE_FATAL(found);
    CU_ASSERT_EQUAL(order_store_take_expired(ctx, no, 1, 10000), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_TRUE(row.lease_live);
    CU_ASSERT_EQUAL(row.attempts, 2);
    /* the holder ends its lease early; only the current attempt can */
    CU_ASSERT_EQUAL(order_store_release_lease(ctx, no, 1), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_release_lease(ctx, no, 2), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_release_lease(ctx, no, 2), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_FALSE(row.lease_live);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
    CU_ASSERT_EQUAL(order_store_take_expired(ctx, no, 2, 10000), ORDER_STORE_OK);
    free(nos);
    free(att);
}

static void test_reconnect_after_loss(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    /* Drop the connection under the store: the next read reconnects. */
    order_no(1, no);
    CU_ASSERT_EQUAL(app_ctx_db_error(ctx, 2006), 1);
    CU_ASSERT_PTR_NULL(ctx->db);
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_PTR_NOT_NULL(ctx->db);
}

/* Kills ctx's connection from another one, as a MariaDB restart would. */
static void kill_store_connection(void)
{
    char err[256], sql[64];
    MYSQL *other = db_conn_open("idempay", err, sizeof(err));

    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx->db);
    snprintf(sql, sizeof(sql), "KILL CONNECTION %lu", mysql_thread_id(ctx->db));
    CU_ASSERT_EQUAL(db_exec_simple(other, sql), 0);
    mysql_close(other);
    sleep_ms(50);
}

static void test_write_after_server_dropped_connection(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    /* The first statement on a connection the server dropped is run again
     * on a new one: an insert, a compare-and-set, a read. */
    order_no(9, no);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_MISS);
    kill_store_connection();
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 42, 900, 10000), ORDER_STORE_OK);
    kill_store_connection();
    CU_ASSERT_EQUAL(order_store_mark_failed(ctx, no, 1, 0), ORDER_STORE_OK);
    kill_store_connection();
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the stack's MariaDB is reachable", test_database_reachable },
        { "an inserted order reads back", test_insert_and_read },
        { "the largest amount and user_id are stored exactly", test_amount_limits },
        { "a declined or fenced attempt allows a retry", test_decline_and_retry },
        { "a FAILED order is rechecked when its recheck is due", test_failed_recheck },
        { "closed is final", test_closed_is_final },
        { "PAID is terminal", test_paid_is_terminal },
        { "an expired lease is found by the reconciler's scan", test_lease_expiry },
        { "the store reconnects after a lost connection", test_reconnect_after_loss },
        { "a write succeeds after the server dropped the connection",
          test_write_after_server_dropped_connection },
    };
    return CU_SUITE_RUN("order_store", suite_init, suite_clean, tests);
}
