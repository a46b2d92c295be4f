/* test_order_archive.c - CUnit suite for order_archive against the stack's
 * MariaDB (IDEMPAY_DB_* as ./stack sets them). Orders are made old by
 * backdating their rows 401 days under the default retention of 400: an
 * old PAID order moves with its trade row, its SUCCESS refund and its
 * notification record; an old order with a refund not finished, or with a
 * refund changed recently, a FAILED order with its recheck due later and a
 * PROCESSING order under a live lease stay; a batch moves at most max
 * orders; order_store_insert refuses an archived order_no (ARCHIVED,
 * nothing written); the archived row reads back; forget_trade deletes only
 * a trade row no live order owns. The stack's own reconcilers run the same
 * job: the tests judge where each order ends, which is the same whoever
 * moved it. Without the stack the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_ctx.h"
#include "config.h"
#include "db_conn.h"
#include "db_suite.h"
#include "order_archive.h"
#include "order_store.h"
#include "trade_store.h"

#define RETENTION 400
#define OLD "NOW(3) - INTERVAL 401 DAY"

static app_config cfg;
static app_ctx *ctx;
static char prefix[16];

static const char *order_no(int n, char buf[ORDER_NO_MAX + 1])
{
    snprintf(buf, ORDER_NO_MAX + 1, "%s%03d", prefix, n);
    return buf;
}

static int suite_init(void)
{
    return db_suite_init(&cfg, &ctx, prefix, sizeof(prefix), "UTOA");
}

static int suite_clean(void)
{
    static const char *const sql[] = {
        "DELETE FROM payment_order WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_trade WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_refund WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_callback_record WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_order_archive WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_trade_archive WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_refund_archive WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_callback_record_archive WHERE order_no LIKE CONCAT(?, '%')",
    };
    return db_suite_clean(ctx, prefix, sql, sizeof(sql) / sizeof(sql[0]));
}

/* Runs one formatted statement on the suite's connection. 0 or -1. */
static int sql(const char *fmt, ...)
{
    char q[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    if (app_ctx_db(ctx) != 0 || mysql_query(ctx->db, q) != 0) {
        fprintf(stderr, "\n  %s: %s\n", q, ctx->db ? mysql_error(ctx->db) : ctx->err);
        return -1;
    }
    MYSQL_RES *r = mysql_store_result(ctx->db);
    mysql_free_result(r);
    return 0;
}

/* SELECT COUNT(*) FROM table WHERE order_no = no; -1 on error. */
static long count(const char *table, const char *no)
{
    char q[256];
    long n = -1;

    snprintf(q, sizeof(q), "SELECT COUNT(*) FROM %s WHERE order_no = '%s'", table, no);
    if (app_ctx_db(ctx) != 0 || mysql_query(ctx->db, q) != 0)
        return -1;
    MYSQL_RES *r = mysql_store_result(ctx->db);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    if (row != NULL)
        n = atol(row[0]);
    mysql_free_result(r);
    return n;
}

/* A PAID order no (amount 1.00, transaction "TX" + no) with a trade row. */
static void make_paid(const char *no)
{
    char txid[40];

    snprintf(txid, sizeof(txid), "TX%s", no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 7, 100, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_paid(ctx, no, txid, 100), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(sql("INSERT INTO payment_trade (order_no, trade_type) VALUES ('%s', 2)", no),
                    0);
}

static void backdate(const char *no)
{
    CU_ASSERT_EQUAL(sql("UPDATE payment_order SET create_time = " OLD ", update_time = " OLD
                        " WHERE order_no = '%s'",
                        no),
                    0);
}

/* A refund of no in state, last changed at `when` (SQL). */
static void add_refund(const char *no, int state, const char *when)
{
    CU_ASSERT_EQUAL(sql("INSERT INTO payment_refund (transaction_id, order_no, kind, out_refund_no,"
                        " total_fee, refund_fee, state, create_time, update_time) VALUES"
                        " ('TX%s', '%s', 1, 'RM%s', 100, 100, %d, %s, %s)",
                        no, no, no, state, when, when),
                    0);
}

/* Runs batches until no is archived or 20 rounds passed; true when it is. */
static bool archive_until(const char *no)
{
    for (int i = 0; i < 20; i++) {
        int rc = order_archive_run(ctx, RETENTION, ORDER_ARCHIVE_BATCH);
        CU_ASSERT_TRUE(rc >= 0);
        if (count("payment_order_archive", no) == 1)
            return true;
    }
    return false;
}

/* Runs three batches (nothing left to move that may move). */
static void archive_rounds(void)
{
    for (int i = 0; i < 3; i++)
        CU_ASSERT_TRUE(order_archive_run(ctx, RETENTION, ORDER_ARCHIVE_BATCH) >= 0);
}

static void test_database_reachable(void)
{
    int rc = app_ctx_db(ctx);
    if (rc != 0)
        fprintf(stderr, "\n  MariaDB not reachable (run ./stack up): %s\n", ctx->err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_old_paid_order_moves_with_what_it_owns(void)
{
    char no[ORDER_NO_MAX + 1];

    make_paid(order_no(1, no));
    CU_ASSERT_EQUAL(sql("INSERT INTO payment_callback_record (third_party_no, order_no, total_fee,"
                        " outcome) VALUES ('TX%s', '%s', 100, 0)",
                        no, no),
                    0);
    add_refund(no, 1, OLD);
    backdate(no);
    CU_ASSERT_TRUE(archive_until(no));
    CU_ASSERT_EQUAL(count("payment_order", no), 0);
    CU_ASSERT_EQUAL(count("payment_trade", no), 0);
    CU_ASSERT_EQUAL(count("payment_trade_archive", no), 1);
    CU_ASSERT_EQUAL(count("payment_refund", no), 0);
    CU_ASSERT_EQUAL(count("payment_refund_archive", no), 1);
    CU_ASSERT_EQUAL(count("payment_callback_record", no), 0);
    CU_ASSERT_EQUAL(count("payment_callback_record_archive", no), 1);
}

static void test_archived_order_reads_back(void)
{
    char no[ORDER_NO_MAX + 1], at[ORDER_TIME_MAX] = "";
    order_row row;
    char *body;

    order_no(1, no);
    CU_ASSERT_EQUAL_FATAL(order_archive_get(ctx, no, &row, at), ORDER_STORE_OK);
    CU_ASSERT_STRING_EQUAL(row.order_no, no);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_EQUAL(row.amount_fen, 100);
    CU_ASSERT_EQUAL(row.user_id, 7);
    CU_ASSERT_FALSE(row.lease_live);
    CU_ASSERT_EQUAL(strncmp(row.transaction_id, "TX", 2), 0);
    CU_ASSERT_EQUAL(strlen(at), 24); /* 2024-01-02T03:04:05.678Z */
    body = order_archive_body(&row, at);
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"archived\":true"));
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"status\":\"PAID\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(body, "\"amount\":\"1.00\""));
    free(body);
    CU_ASSERT_EQUAL(order_archive_get(ctx, order_no(999, no), &row, at), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(order_store_get(ctx, order_no(1, no), &row), ORDER_STORE_MISS);
}

static void test_insert_of_archived_order_is_refused(void)
{
    char no[ORDER_NO_MAX + 1];
    order_row row;

    order_no(1, no);
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 7, 100, 60000), ORDER_STORE_ARCHIVED);
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 8, 999, 60000), ORDER_STORE_ARCHIVED);
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_MISS);
    CU_ASSERT_EQUAL(count("payment_order", no), 0);
    /* a new order_no is unaffected */
    CU_ASSERT_EQUAL(order_store_insert(ctx, order_no(2, no), 7, 100, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_store_insert(ctx, no, 7, 100, 60000), ORDER_STORE_DUPLICATE);
}

static void test_forget_trade_only_without_live_order(void)
{
    char no[ORDER_NO_MAX + 1];
    trade_row tr;

    /* the refused request's trade row of archived order 1 */
    trade_row_new(&tr, TRADE_MICROPAY, NULL, 0, 0);
    CU_ASSERT_EQUAL(trade_store_insert(ctx, order_no(1, no), &tr), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_archive_forget_trade(ctx, no), 0);
    CU_ASSERT_EQUAL(count("payment_trade", no), 0);
    CU_ASSERT_EQUAL(count("payment_trade_archive", no), 1); /* the archived one stays */
    /* order 2 is live: its trade row is never touched */
    trade_row_new(&tr, TRADE_MICROPAY, NULL, 0, 0);
    CU_ASSERT_EQUAL(trade_store_insert(ctx, order_no(2, no), &tr), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(order_archive_forget_trade(ctx, no), 0);
    CU_ASSERT_EQUAL(count("payment_trade", no), 1);
}

static void test_unfinished_or_recent_refund_keeps_order(void)
{
    char closed[ORDER_NO_MAX + 1], recent[ORDER_NO_MAX + 1];

    /* REFUNDCLOSE (3) waits for an operator; the refund worker leaves it alone */
    make_paid(order_no(3, closed));
    add_refund(closed, 3, OLD);
    backdate(closed);
    /* SUCCESS, but changed now */
    make_paid(order_no(4, recent));
    add_refund(recent, 1, "NOW(3)");
    backdate(recent);
    archive_rounds();
    CU_ASSERT_EQUAL(count("payment_order", closed), 1);
    CU_ASSERT_EQUAL(count("payment_order_archive", closed), 0);
    CU_ASSERT_EQUAL(count("payment_refund", closed), 1);
    CU_ASSERT_EQUAL(count("payment_order", recent), 1);
    CU_ASSERT_EQUAL(count("payment_order_archive", recent), 0);
}

static void test_not_final_orders_stay(void)
{
    char live[ORDER_NO_MAX + 1], recheck[ORDER_NO_MAX + 1], fresh[ORDER_NO_MAX + 1];

    /* PROCESSING under a live lease (one hour) */
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, order_no(5, live), 7, 100, 3600000),
                          ORDER_STORE_OK);
    backdate(live);
    /* FAILED with its recheck due in an hour */
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, order_no(6, recheck), 7, 100, 3600000),
                          ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_failed(ctx, recheck, 1, 3600000), ORDER_STORE_OK);
    backdate(recheck);
    /* PAID, but changed now */
    make_paid(order_no(7, fresh));
    archive_rounds();
    CU_ASSERT_EQUAL(count("payment_order", live), 1);
    CU_ASSERT_EQUAL(count("payment_order", recheck), 1);
    CU_ASSERT_EQUAL(count("payment_order", fresh), 1);
    CU_ASSERT_EQUAL(count("payment_order_archive", live) + count("payment_order_archive", recheck) +
                        count("payment_order_archive", fresh),
                    0);
}

static void test_final_failed_order_moves(void)
{
    char no[ORDER_NO_MAX + 1];

    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, order_no(8, no), 7, 100, 60000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_final(ctx, no, 1, ORDER_FINAL_CLOSED), ORDER_STORE_OK);
    backdate(no);
    CU_ASSERT_TRUE(archive_until(no));
    CU_ASSERT_EQUAL(count("payment_order", no), 0);
}

static void test_batch_is_bounded(void)
{
    char no[ORDER_NO_MAX + 1];
    int moved = 0;

    for (int i = 10; i < 13; i++) {
        make_paid(order_no(i, no));
        backdate(no);
    }
    for (int round = 0; round < 20 && moved < 3; round++) {
        int rc = order_archive_run(ctx, RETENTION, 2);
        CU_ASSERT_TRUE(rc >= 0 && rc <= 2);
        moved = 0;
        for (int i = 10; i < 13; i++)
            moved += count("payment_order_archive", order_no(i, no)) == 1;
    }
    CU_ASSERT_EQUAL(moved, 3);
}

static void test_bad_arguments(void)
{
    CU_ASSERT_EQUAL(order_archive_run(ctx, 0, 10), -1);
    CU_ASSERT_EQUAL(order_archive_run(ctx, RETENTION, 0), -1);
    CU_ASSERT_EQUAL(order_archive_run(ctx, RETENTION, ORDER_ARCHIVE_BATCH + 1), -1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the stack's MariaDB is reachable", test_database_reachable },
        { "an old PAID order moves with what it owns",
          test_old_paid_order_moves_with_what_it_owns },
        { "an archived order reads back", test_archived_order_reads_back },
        { "an insert of an archived order_no is refused",
          test_insert_of_archived_order_is_refused },
        { "forget_trade forgets only a trade without a live order",
          test_forget_trade_only_without_live_order },
        { "an unfinished or recent refund keeps its order",
          test_unfinished_or_recent_refund_keeps_order },
        { "orders that are not final stay", test_not_final_orders_stay },
        { "a final FAILED order moves", test_final_failed_order_moves },
        { "a batch is bounded", test_batch_is_bounded },
        { "bad arguments are refused", test_bad_arguments },
    };
    return CU_SUITE_RUN("order_archive", suite_init, suite_clean, tests);
}
