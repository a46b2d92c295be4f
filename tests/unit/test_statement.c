/* test_statement.c - CUnit suite of the statement: bill_parse on WeChat's
 * downloadbill text (the boundaries: BOM, LF or CRLF, the summary lines,
 * missing columns, short lines, bad fields, other trade states), then
 * statement_judge (and so settle_charge) against a real MariaDB
 * (IDEMPAY_DB_* as ./stack sets them): a charge makes a PROCESSING order
 * PAID, a second charge and a charge of a closed order are queued for
 * refund once, a charge of another amount is refunded and fails the order
 * for good, a refunded charge is skipped, a charge of an order under a live
 * lease is left to its holder, a charge without an order is only counted. No database: the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
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
#include "statement.h"
#include "statement_parse.h"

#define HEADER                                                                                  \
    "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易" \
    "状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券" \
    "退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
#define SUMMARY                                                                                 \
    "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n" \
    "`2,`24.60,`0.00,`0.00,`0.00,`24.60,`0.00\r\n"

static app_config cfg;
static app_ctx *ctx;
static char base[16];     /* the suite's orders and transaction ids */
static char prefix[24];   /* this round's: base and the round */

/* One record line: txid, out_trade_no, trade state, total yuan, refund yuan. */
static void line(char *buf, size_t cap, const char *txid, const char *out, const char *state,
                 const char *total, const char *refund)
{
    snprintf(buf, cap,
             "`2026-12-01 12:00:00,`wx0000000000000000,`1900000109,`0,`,`%s,`%s,`oUpF8u,`NATIVE,"
             "`%s,`CFT,`CNY,`%s,`0.00,`0,`0,`%s,`0.00,`,`,`idempay,`,`0.00,`0.60%%,`%s,`%s,`",
             txid, out, state, total, refund, total, refund);
}

static int parse(const char *text, bill_record **r, size_t *n)
{
    char err[160];
    return bill_parse(text, strlen(text), r, n, err, sizeof(err));
}

static void test_parse_records_and_summary(void)
{
    char l1[512], l2[512], l3[512], text[4096];
    bill_record *r;
    size_t n;

    line(l1, sizeof(l1), "4200000001", "ORDER-0001", "SUCCESS", "12.30", "0.00");
    line(l2, sizeof(l2), "4200000002", "ORDER|0002", "REFUND", "12.30", "12.30");
    line(l3, sizeof(l3), "4200000003", "ORDER-0003", "CLOSED", "1.00", "0.00");
    snprintf(text, sizeof(text), "\xEF\xBB\xBF" HEADER "\r\n%s\r\n%s\r\n%s\r\n" SUMMARY, l1, l2, l3);
    CU_ASSERT_EQUAL_FATAL(parse(text, &r, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2); /* the CLOSED line and the summary are not records */
    CU_ASSERT_STRING_EQUAL(r[0].transaction_id, "4200000001");
    CU_ASSERT_STRING_EQUAL(r[0].out_trade_no, "ORDER-0001");
    CU_ASSERT_FALSE(r[0].refund);
    CU_ASSERT_EQUAL(r[0].total_fee, 1230);
    CU_ASSERT_EQUAL(r[0].refund_fee, 0);
    CU_ASSERT_TRUE(r[1].refund);
    CU_ASSERT_STRING_EQUAL(r[1].out_trade_no, "ORDER|0002");
    CU_ASSERT_EQUAL(r[1].refund_fee, 1230);
    free(r);

    /* LF only, no summary, no BOM */
    snprintf(text, sizeof(text), HEADER "\n%s\n", l1);
    CU_ASSERT_EQUAL(parse(text, &r, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    free(r);
}

static void test_parse_empty_and_broken(void)
{
    char l1[512], text[4096];
    bill_record *r = (bill_record *)1;
    size_t n = 7;

    CU_ASSERT_EQUAL(parse("", &r, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_EQUAL(parse(HEADER "\r\n" SUMMARY, &r, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    /* a required column missing from the header */
    CU_ASSERT_EQUAL(parse("交易时间,微信订单号,商户订单号,交易状态\r\n`x,`1,`ORDER-1,`SUCCESS\r\n", &r, &n), -1);
    CU_ASSERT_PTR_NULL(r);
    /* a record line cut short */
    CU_ASSERT_EQUAL(parse(HEADER "\r\n`2026-12-01 12:00:00,`wx0,`1900000109\r\n", &r, &n), -1);
    /* bad transaction_id, out_trade_no, amount */
    line(l1, sizeof(l1), "42 00", "ORDER-0001", "SUCCESS", "12.30", "0.00");
    snprintf(text, sizeof(text), HEADER "\r\n%s\r\n", l1);
    CU_ASSERT_EQUAL(parse(text, &r, &n), -1);
    line(l1, sizeof(l1), "4200", "ORD", "SUCCESS", "12.30", "0.00");
    snprintf(text, sizeof(text), HEADER "\r\n%s\r\n", l1);
    CU_ASSERT_EQUAL(parse(text, &r, &n), -1);
    line(l1, sizeof(l1), "4200", "ORDER-0001", "SUCCESS", "12.345", "0.00");
    snprintf(text, sizeof(text), HEADER "\r\n%s\r\n", l1);
    CU_ASSERT_EQUAL(parse(text, &r, &n), -1);
    line(l1, sizeof(l1), "4200", "ORDER-0001", "REFUND", "12.30", "-1");
    snprintf(text, sizeof(text), HEADER "\r\n%s\r\n", l1);
    CU_ASSERT_EQUAL(parse(text, &r, &n), -1);
}

/* ---- statement_judge against MariaDB ------------------------------------ */

static const char *order_no(int n, char buf[ORDER_NO_MAX + 1])
{
    snprintf(buf, ORDER_NO_MAX + 1, "%s%03d", prefix, n);
    return buf;
}

static bill_record charge(const char *out, const char *txid, long long fee, long long refund)
{
    bill_record r;
    memset(&r, 0, sizeof(r));
    snprintf(r.out_trade_no, sizeof(r.out_trade_no), "%s", out);
    snprintf(r.transaction_id, sizeof(r.transaction_id), "%s%s", prefix, txid);
    r.total_fee = fee;
    r.refund = refund > 0;
    r.refund_fee = refund;
    return r;
}

static long long refunds_of(const char *txid)
{
    static const char sql[] = "SELECT COUNT(*) FROM payment_refund WHERE transaction_id = CONCAT(?, ?)";
    MYSQL_STMT *st = mysql_stmt_init(ctx->db);
    long long v = -1;

    if (st != NULL && mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) == 0 &&
        db_stmt_exec(st, "ss", prefix, txid) == 0 && db_stmt_fetch(st, "l", &v) == 1)
        db_stmt_done(st);
    if (st != NULL)
        mysql_stmt_close(st);
    return v;
}

/* The running stack's reconciler takes expired leases too (every 2 s): when
 * it took a or c before the judge (their attempt moved on), the round says
 * so and the test plays it again with fresh orders. */
static int taken_by_reconciler(const char *a, const char *c)
{
    order_row row;
    return (order_store_get(ctx, a, &row) == ORDER_STORE_OK && row.attempts > 1) ||
           (order_store_get(ctx, c, &row) == ORDER_STORE_OK && row.attempts > 1);
}

static void test_judge(void)
{
    char a[ORDER_NO_MAX + 1], b[ORDER_NO_MAX + 1], c[ORDER_NO_MAX + 1], d[ORDER_NO_MAX + 1];
    char e[ORDER_NO_MAX + 1];
    char txa[40];
    statement_tally t;
    order_row row;
    bill_record recs[9];
    int round = 0;

    CU_ASSERT_EQUAL_FATAL(app_ctx_db(ctx), 0);
    for (;; round++) {
        snprintf(prefix, sizeof(prefix), "%sr%d", base, round);
        order_no(1, a); /* PROCESSING: its charge makes it PAID; a second one is refunded */
        order_no(2, b); /* closed: its charge is refunded, the order stays FAILED */
        order_no(3, c); /* charged another amount: refunded, FAILED for good */
        order_no(4, d); /* its second charge was refunded in full: skipped */
        order_no(5, e); /* PROCESSING under a live lease: left to its holder */
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, b, 1, 500, 60000), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_mark_final(ctx, b, 1, ORDER_FINAL_CLOSED), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, e, 1, 300, 60000), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, d, 1, 100, 60000), ORDER_STORE_OK);
        snprintf(txa, sizeof(txa), "%sD1", prefix);
        CU_ASSERT_EQUAL_FATAL(order_store_mark_paid(ctx, d, txa, 100), ORDER_STORE_OK);
        /* a and c: PROCESSING whose holder's lease has run out (1 ms) */
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, a, 1, 1230, 1), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, c, 1, 700, 1), ORDER_STORE_OK);
        struct timespec pause = {0, 3 * 1000000L};
        nanosleep(&pause, NULL);
        bill_record r[] = {
            charge(a, "A1", 1230, 0), charge(a, "A2", 1230, 0), charge(b, "B1", 500, 0),
            charge(c, "C1", 701, 0),  charge(d, "D1", 100, 0),  charge(d, "D2", 100, 0),
            charge(d, "D2", 100, 100), charge("NOSUCHORDER1", "X1", 100, 0), charge(e, "E1", 300, 0),
        };
        memcpy(recs, r, sizeof(recs));
        memset(&t, 0, sizeof(t));
        CU_ASSERT_EQUAL(statement_judge(ctx, recs, sizeof(recs) / sizeof(recs[0]), &t), 0);
        if (!taken_by_reconciler(a, c) || round == 4)
            break;
    }
    CU_ASSERT_FALSE(taken_by_reconciler(a, c));
    CU_ASSERT_EQUAL(t.charges, 7);
    CU_ASSERT_EQUAL(t.in_flight, 1);
    CU_ASSERT_EQUAL(t.made_paid, 1);
    CU_ASSERT_EQUAL(t.matched, 1);
    CU_ASSERT_EQUAL(t.refunds, 3);
    CU_ASSERT_EQUAL(t.already_refunded, 1);
    CU_ASSERT_EQUAL(t.unmatched, 1);

    CU_ASSERT_EQUAL(order_store_get(ctx, a, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT(strcmp(row.transaction_id + strlen(prefix), "A1") == 0); /* sorted: A1 first */
    CU_ASSERT_EQUAL(refunds_of("A2"), 1);
    CU_ASSERT_EQUAL(refunds_of("A1"), 0);
    CU_ASSERT_EQUAL(order_store_get(ctx, b, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(refunds_of("B1"), 1);
    CU_ASSERT_EQUAL(order_store_get(ctx, c, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_WRONG_AMOUNT);
    CU_ASSERT_EQUAL(refunds_of("C1"), 1);
    CU_ASSERT_EQUAL(refunds_of("D2"), 0);
    CU_ASSERT_EQUAL(refunds_of("X1"), 0);
    CU_ASSERT_EQUAL(order_store_get(ctx, e, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);

    /* An empty statement judges nothing. */
    CU_ASSERT_EQUAL(statement_judge(ctx, NULL, 0, &t), 0);

    /* The same statement again: nothing new (every action is idempotent). */
    memset(&t, 0, sizeof(t));
    CU_ASSERT_EQUAL(statement_judge(ctx, recs, sizeof(recs) / sizeof(recs[0]), &t), 0);
    CU_ASSERT_EQUAL(t.matched, 2);
    CU_ASSERT_EQUAL(t.made_paid, 0);
    CU_ASSERT_EQUAL(refunds_of("A2"), 1);
    CU_ASSERT_EQUAL(refunds_of("B1"), 1);
}

static int suite_init(void)
{
    return db_suite_init(&cfg, &ctx, base, sizeof(base), "UTST");
}

static int suite_clean(void)
{
    static const char *const sql[] = {
        "DELETE FROM payment_order WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_refund WHERE transaction_id LIKE CONCAT(?, '%')",
    };
    return db_suite_clean(ctx, base, sql, sizeof(sql) / sizeof(sql[0]));
}

int main(void)
{
    static const cu_test tests[] = {
        {"parse: records, refunds, summary, BOM, LF", test_parse_records_and_summary},
        {"parse: empty and broken statements", test_parse_empty_and_broken},
        {"judge: paid, refunded, final, skipped, unmatched", test_judge},
    };
    return CU_SUITE_RUN("statement", suite_init, suite_clean, tests);
}
