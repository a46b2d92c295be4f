/* test_statement.c - CUnit suite of the statement: bill_parse on WeChat's
 * downloadbill text (the boundaries: BOM, LF or CRLF, the summary lines,
 * missing columns, short lines, bad fields, other trade states), then
 * statement_judge (and so settle_charge) against a real MariaDB
 * (IDEMPAY_DB_* as ./stack sets them): a charge makes a PROCESSING order
 * PAID, a second charge and a charge of a closed order are queued for
 * refund once, a charge of another amount is refunded and fails the order
 * for good, a refunded charge is skipped, a charge of an order under a live
 * lease is left to its holder, a charge without an order is only counted;
 * every change waits for the confirmation (a line the gateway does not know
 * changes nothing; a confirmation that does not come keeps the day open);
 * the days: when a day is ready and re-read; bad lines set aside
 * (bill_parse_lines) while the rest is read. No database: the suite FAILS. */
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

#define HEADER                                                                                                                         \
    "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易" \
    "状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券" \
    "退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
#define SUMMARY                                                                                                                                   \
    "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n" \
    "`2,`24.60,`0.00,`0.00,`0.00,`24.60,`0.00\r\n"

static app_config cfg;
static app_ctx *ctx;
static char base[16];   /* the suite's orders and transaction ids */
static char prefix[24]; /* this round's: base and the round */

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
    snprintf(text, sizeof(text), "\xEF\xBB\xBF" HEADER "\r\n%s\r\n%s\r\n%s\r\n" SUMMARY, l1, l2,
             l3);
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
    CU_ASSERT_EQUAL(parse("交易时间,微信订单号,商户订单号,交易状态\r\n`x,`1,`ORDER-1,`SUCCESS\r\n",
                          &r, &n),
                    -1);
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

static int bad_count;
static size_t bad_line_no[8];

static void on_bad(void *arg, const bill_bad_line *b)
{
    (void)arg;
    if (bad_count < 8)
        bad_line_no[bad_count] = b->line_no;
    bad_count++;
    CU_ASSERT_PTR_NOT_NULL(b->reason);
    CU_ASSERT(b->len > 0 && b->text[0] == '`');
}

static void test_parse_sets_bad_lines_aside(void)
{
    char good[512], bad1[512], bad2[512], text[4096], err[160];
    bill_record *r = NULL;
    size_t n = 0;

    line(good, sizeof(good), "4200000001", "ORDER-0001", "SUCCESS", "12.30", "0.00");
    line(bad1, sizeof(bad1), "42 00", "ORDER-0002", "SUCCESS", "1.00", "0.00");
    line(bad2, sizeof(bad2), "4200000003", "ORDER-0003", "SUCCESS", "1.005", "0.00");
    snprintf(text, sizeof(text), HEADER "\r\n%s\r\n%s\r\n`short,`line\r\n%s\r\n%s\r\n" SUMMARY,
             bad1, good, bad2, good);
    bad_count = 0;
    CU_ASSERT_EQUAL_FATAL(bill_parse_lines(text, strlen(text), &r, &n, on_bad, NULL, err,
                                           sizeof(err)),
                          0);
    CU_ASSERT_EQUAL(n, 2); /* the good lines are read */
    CU_ASSERT_EQUAL(bad_count, 3);
    CU_ASSERT_EQUAL(bad_line_no[0], 2);
    CU_ASSERT_EQUAL(bad_line_no[1], 4);
    CU_ASSERT_EQUAL(bad_line_no[2], 5);
    free(r);
    /* without a sink, one bad line fails the text (as bill_parse) */
    CU_ASSERT_EQUAL(bill_parse_lines(text, strlen(text), &r, &n, NULL, NULL, err, sizeof(err)), -1);
    /* a header without the columns still fails the whole text */
    static const char headless[] = "交易时间,微信订单号\r\n`x,`1\r\n";
    CU_ASSERT_EQUAL(bill_parse_lines(headless, strlen(headless), &r, &n, on_bad, NULL, err,
                                     sizeof(err)),
                    -1);
}

/* ---- days ------------------------------------------------------------------ */

/* Unix ms of China time y-m-d h:mi. */
static long long china_ms(int y, int m, int d, int h, int mi)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    return ((long long)timegm(&tm) - 8 * 3600) * 1000;
}

static void test_days(void)
{
    char name[9];
    long long d = statement_china_day(china_ms(2026, 12, 1, 0, 0));

    CU_ASSERT_EQUAL(statement_china_day(china_ms(2026, 12, 1, 23, 59) + 59999), d);
    CU_ASSERT_EQUAL(statement_china_day(china_ms(2026, 12, 2, 0, 0)), d + 1);
    /* 2026-12-01 16:00 UTC is already 2 December in China */
    CU_ASSERT_EQUAL(statement_china_day(china_ms(2026, 12, 1, 23, 59) + 60000), d + 1);
    statement_day_name(d, name);
    CU_ASSERT_STRING_EQUAL(name, "20261201");
    statement_day_name(statement_china_day(0), name);
    CU_ASSERT_STRING_EQUAL(name, "19700101");

    /* WeChat's hour: day D from D+1 10:00, re-read 3 days, then past. */
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 1, 23, 0), 10, 3),
                    STATEMENT_DAY_NOT_READY);
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 2, 9, 59), 10, 3),
                    STATEMENT_DAY_NOT_READY);
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 2, 10, 0), 10, 3),
                    STATEMENT_DAY_REREAD);
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 5, 9, 59), 10, 3),
                    STATEMENT_DAY_REREAD);
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 5, 10, 0), 10, 3),
                    STATEMENT_DAY_PAST);
    /* -24 (a test stack): the day is asked for from its own start. */
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 11, 30, 23, 59), -24, 3),
                    STATEMENT_DAY_NOT_READY);
    CU_ASSERT_EQUAL(statement_day_phase_at(d, china_ms(2026, 12, 1, 0, 0), -24, 3),
                    STATEMENT_DAY_REREAD);
}

/* ---- statement_judge against MariaDB ------------------------------------ */

/* The gateway confirms every line as it reads. */
static gw_outcome confirm_as_line(app_ctx *c, const bill_record *l, gw_result *out)
{
    (void)c;
    gateway_result_init(out);
    snprintf(out->transaction_id, sizeof(out->transaction_id), "%s", l->transaction_id);
    out->total_fee = l->total_fee;
    out->outcome = GW_CHARGED;
    return GW_CHARGED;
}

/* The gateway knows no such charge (a forged line). */
static gw_outcome confirm_none(app_ctx *c, const bill_record *l, gw_result *out)
{
    (void)c;
    (void)l;
    gateway_result_init(out);
    snprintf(out->err_code, sizeof(out->err_code), "ORDERNOTEXIST");
    out->outcome = GW_NOT_CHARGED;
    return GW_NOT_CHARGED;
}

/* The gateway does not answer. */
static gw_outcome confirm_unknown(app_ctx *c, const bill_record *l, gw_result *out)
{
    (void)c;
    (void)l;
    gateway_result_init(out);
    return GW_UNKNOWN;
}

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
    static const char sql[] =
        "SELECT COUNT(*) FROM payment_refund WHERE transaction_id = CONCAT(?, ?)";
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
        CU_ASSERT_EQUAL_FATAL(order_store_mark_final(ctx, b, 1, ORDER_FINAL_CLOSED),
                              ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, e, 1, 300, 60000), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, d, 1, 100, 60000), ORDER_STORE_OK);
        snprintf(txa, sizeof(txa), "%sD1", prefix);
        CU_ASSERT_EQUAL_FATAL(order_store_mark_paid(ctx, d, txa, 100), ORDER_STORE_OK);
        /* a and c: PROCESSING whose holder's lease has run out (1 ms) */
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, a, 1, 1230, 1), ORDER_STORE_OK);
        CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, c, 1, 700, 1), ORDER_STORE_OK);
        struct timespec pause = { 0, 3 * 1000000L };
        nanosleep(&pause, NULL);
        bill_record r[] = {
            charge(a, "A1", 1230, 0),  charge(a, "A2", 1230, 0),
            charge(b, "B1", 500, 0),   charge(c, "C1", 701, 0),
            charge(d, "D1", 100, 0),   charge(d, "D2", 100, 0),
            charge(d, "D2", 100, 100), charge("NOSUCHORDER1", "X1", 100, 0),
            charge(e, "E1", 300, 0),
        };
        memcpy(recs, r, sizeof(recs));
        memset(&t, 0, sizeof(t));
        CU_ASSERT_EQUAL(statement_judge(ctx, recs, sizeof(recs) / sizeof(recs[0]), confirm_as_line,
                                        &t),
                        0);
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
    CU_ASSERT_EQUAL(t.unconfirmed, 0);
    CU_ASSERT_EQUAL(t.open, 1); /* e, under its live lease: the day stays open */

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
    CU_ASSERT_EQUAL(statement_judge(ctx, NULL, 0, confirm_as_line, &t), 0);

    /* The same statement again: nothing new (every action is idempotent). */
    memset(&t, 0, sizeof(t));
    CU_ASSERT_EQUAL(statement_judge(ctx, recs, sizeof(recs) / sizeof(recs[0]), confirm_as_line, &t),
                    0);
    CU_ASSERT_EQUAL(t.matched, 2);
    CU_ASSERT_EQUAL(t.made_paid, 0);
    CU_ASSERT_EQUAL(refunds_of("A2"), 1);
    CU_ASSERT_EQUAL(refunds_of("B1"), 1);
}

/* Unsigned lines change nothing without the gateway's word. */
static void test_judge_needs_confirmation(void)
{
    char f[ORDER_NO_MAX + 1], g[ORDER_NO_MAX + 1], txg[40];
    statement_tally t;
    order_row row;

    CU_ASSERT_EQUAL_FATAL(app_ctx_db(ctx), 0);
    snprintf(prefix, sizeof(prefix), "%sc", base);
    order_no(1, f); /* PROCESSING, lease run out: a forged line would make it PAID */
    order_no(2, g); /* PAID: a forged second charge would be refunded */
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, f, 1, 400, 1), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, g, 1, 200, 60000), ORDER_STORE_OK);
    snprintf(txg, sizeof(txg), "%sG1", prefix);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_paid(ctx, g, txg, 200), ORDER_STORE_OK);
    struct timespec pause = { 0, 3 * 1000000L };
    nanosleep(&pause, NULL);
    bill_record r[] = { charge(f, "F1", 400, 0), charge(g, "G1", 200, 0), charge(g, "FG", 200, 0) };

    memset(&t, 0, sizeof(t));
    CU_ASSERT_EQUAL(statement_judge(ctx, r, 3, confirm_none, &t), 0);
    CU_ASSERT_EQUAL(t.charges, 3);
    CU_ASSERT_EQUAL(t.matched, 1); /* g's own charge: nothing to change, no call */
    CU_ASSERT_EQUAL(t.unconfirmed, 2);
    CU_ASSERT_EQUAL(t.made_paid + t.refunds + t.open, 0);
    CU_ASSERT_EQUAL(order_store_get(ctx, f, &row), ORDER_STORE_OK);
    CU_ASSERT(row.status == ORDER_PROCESSING || row.status == ORDER_FAILED);
    CU_ASSERT_NOT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_EQUAL(refunds_of("FG"), 0);

    /* no answer: nothing changes and the day stays open */
    memset(&t, 0, sizeof(t));
    CU_ASSERT_EQUAL(statement_judge(ctx, r, 3, confirm_unknown, &t), 0);
    CU_ASSERT_EQUAL(t.open, 2);
    CU_ASSERT_EQUAL(refunds_of("FG"), 0);
    CU_ASSERT_EQUAL(order_store_get(ctx, f, &row), ORDER_STORE_OK);
    CU_ASSERT_NOT_EQUAL(row.status, ORDER_PAID);
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
        { "a statement parses into records, refunds and a summary, with a BOM or LF",
          test_parse_records_and_summary },
        { "an empty or broken statement is refused", test_parse_empty_and_broken },
        { "bad lines are set aside and the rest read", test_parse_sets_bad_lines_aside },
        { "days are China days, ready at the ready hour, re-read for the re-read days", test_days },
        { "each line is judged paid, refunded, final, skipped or unmatched", test_judge },
        { "a line changes nothing without the gateway's word", test_judge_needs_confirmation },
    };
    return CU_SUITE_RUN("statement", suite_init, suite_clean, tests);
}
