/* test_mock_bill.c - CUnit suite for gateway-mock/bill: China-time parsing,
 * the exact text of a charge line and a refund line (27 backtick-prefixed
 * fields), the summary's totals, restart, the hard size limit and a
 * statement of 50,000 lines; a day's readiness (WeChat: D+1 from the ready
 * hour, "Bill Creating" before), the range extension only behind its knob,
 * tar_type and gzip, the forged line's transaction_id. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bill.h"

#define APPID "wx0000000000000000"
#define MCHID "1900000109"

static ledger_bill_record charge_record(const char *otn, long long fee)
{
    ledger_bill_record r;
    memset(&r, 0, sizeof(r));
    snprintf(r.time, sizeof(r.time), "2026-12-01 12:00:00");
    snprintf(r.transaction_id, sizeof(r.transaction_id), "4200202612011234567890123456");
    snprintf(r.out_trade_no, sizeof(r.out_trade_no), "%s", otn);
    r.total_fee = fee;
    snprintf(r.trade_type, sizeof(r.trade_type), "NATIVE");
    snprintf(r.openid, sizeof(r.openid), "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o");
    return r;
}

static ledger_bill_record refund_record(const char *otn, long long fee, long long refund)
{
    ledger_bill_record r = charge_record(otn, fee);
    r.refund = true;
    snprintf(r.time, sizeof(r.time), "2026-12-01 12:05:00");
    snprintf(r.refund_id, sizeof(r.refund_id), "5030202612019876543210987654");
    snprintf(r.out_refund_no, sizeof(r.out_refund_no), "R-%s", otn);
    r.refund_fee = refund;
    return r;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s != '\0'; s++)
        n += *s == c;
    return n;
}

static void test_parse_cst(void)
{
    time_t t = 0;
    CU_ASSERT_EQUAL(bill_parse_cst("19700101", 8, &t), 0);
    CU_ASSERT_EQUAL(t, -8 * 3600);
    CU_ASSERT_EQUAL(bill_parse_cst("20240229", 8, &t), 0); /* a leap day */
    CU_ASSERT_EQUAL(t, 1709164800 - 8 * 3600);
    CU_ASSERT_EQUAL(bill_parse_cst("20240301235959", 14, &t), 0);
    CU_ASSERT_EQUAL(t, 1709251200 + 86399 - 8 * 3600);
    time_t keep = 42;
    static const char *const bad[] = {
        "20230229", "20240431",       "20240001",       "20240100",       "00000101", "2024030",
        "2024030a", "20240301240000", "20240301006000", "20240301000060", "+2024030", "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        t = keep;
        CU_ASSERT_EQUAL(bill_parse_cst(bad[i], strlen(bad[i]), &t), -1);
        CU_ASSERT_EQUAL(t, keep);
    }
    CU_ASSERT_EQUAL(bill_parse_cst("20240301", 14, &t), -1); /* len must match */
    CU_ASSERT_EQUAL(bill_parse_cst(NULL, 8, &t), -1);
}

static void test_charge_line(void)
{
    char line[1024];
    long long fee = -1;
    ledger_bill_record r = charge_record("ORDER-1", 1230);
    int n = bill_format_line(APPID, MCHID, &r, line, sizeof(line), &fee);
    CU_ASSERT_EQUAL(n, (int)strlen(line));
    CU_ASSERT_STRING_EQUAL(
        line,
        "`2026-12-01 12:00:00,`wx0000000000000000,`1900000109,`0,`,`4200202612011234567890123456,"
        "`ORDER-1,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`NATIVE,`SUCCESS,`OTHERS,`CNY,`12.30,`0.00,`0,`0,"
        "`0.00,`0.00,`,`,`idempay,`,`0.07,`0.60%,`12.30,`0.00,`");
    CU_ASSERT_EQUAL(fee, 7);
    CU_ASSERT_EQUAL(count_char(line, '`'), 27);
    CU_ASSERT_EQUAL(count_char(line, ','), 26);
    /* Rounding half up to the fen; no openid gives the mock payer. */
    r = charge_record("ORDER-2", 250); /* 1.5 fen */
    r.openid[0] = '\0';
    bill_format_line(APPID, MCHID, &r, line, sizeof(line), &fee);
    CU_ASSERT_EQUAL(fee, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "`" BILL_DEFAULT_OPENID ","));
    r = charge_record("ORDER-3", 1);
    bill_format_line(APPID, MCHID, &r, line, sizeof(line), &fee);
    CU_ASSERT_EQUAL(fee, 0);
    r = charge_record("ORDER-4", 9999999999LL);
    bill_format_line(APPID, MCHID, &r, line, sizeof(line), &fee);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, ",`99999999.99,`0.00,`0,`0,"));
    CU_ASSERT_EQUAL(fee, 60000000);
    /* Too small a buffer: refused. */
    CU_ASSERT_EQUAL(bill_format_line(APPID, MCHID, &r, line, 40, &fee), -1);
    /* Separators inside a value cannot break the columns. */
    CU_ASSERT_EQUAL(bill_format_line("wx,1`2\r\n", MCHID, &r, line, sizeof(line), &fee) > 0, 1);
    CU_ASSERT_EQUAL(count_char(line, ','), 26);
    CU_ASSERT_EQUAL(count_char(line, '`'), 27);
}

static void test_refund_line(void)
{
    char line[1024];
    long long fee = -1;
    ledger_bill_record r = refund_record("ORDER-1", 1230, 230);
    bill_format_line(APPID, MCHID, &r, line, sizeof(line), &fee);
    CU_ASSERT_STRING_EQUAL(
        line,
        "`2026-12-01 12:05:00,`wx0000000000000000,`1900000109,`0,`,`4200202612011234567890123456,"
        "`ORDER-1,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`NATIVE,`REFUND,`OTHERS,`CNY,`0.00,`0.00,"
        "`5030202612019876543210987654,`R-ORDER-1,`2.30,`0.00,`ORIGINAL,`SUCCESS,`idempay,`,"
        "`0.00,`0.60%,`12.30,`2.30,`");
    CU_ASSERT_EQUAL(fee, 0);
}

/* Splits text into lines at "\r\n"; returns the count (at most max). */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    char *p = text;
    while (*p != '\0' && n < max) {
        char *e = strstr(p, "\r\n");
        if (e == NULL)
            break;
        *e = '\0';
        lines[n++] = p;
        p = e + 2;
    }
    CU_ASSERT_EQUAL(*p, '\0'); /* every line ends with CRLF, nothing after */
    return n;
}

static void test_statement_and_summary(void)
{
    bill *b = bill_new(APPID, MCHID, BILL_MAX_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    ledger_bill_record c1 = charge_record("ORDER-1", 1230);
    ledger_bill_record c2 = charge_record("ORDER-2", 99999);
    ledger_bill_record r1 = refund_record("ORDER-1", 1230, 230);
    /* A restart forgets what came before it. */
    CU_ASSERT_EQUAL(bill_add(b, &c2), 0);
    bill_restart(b);
    CU_ASSERT_EQUAL(bill_lines(b), 0);
    CU_ASSERT_EQUAL(bill_add(b, &c1), 0);
    CU_ASSERT_EQUAL(bill_add(b, &c2), 0);
    CU_ASSERT_EQUAL(bill_add(b, &r1), 0);
    CU_ASSERT_EQUAL(bill_lines(b), 3);
    size_t len = 0;
    char *text = bill_finish(b, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(len, strlen(text));
    char *lines[16];
    int n = split_lines(text, lines, 16);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    CU_ASSERT_STRING_EQUAL(lines[0], BILL_HEADER);
    CU_ASSERT_EQUAL(count_char(lines[0], ','), 26);
    CU_ASSERT_PTR_NOT_NULL(strstr(lines[1], "`ORDER-1,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(lines[3], "`REFUND,"));
    CU_ASSERT_STRING_EQUAL(lines[4], BILL_SUMMARY_HEADER);
    /* 3 lines; 12.30 + 999.99 settled; 2.30 refunded; fees 0.07 + 6.00;
     * orders 12.30 + 999.99 (charge lines); 2.30 asked. */
    CU_ASSERT_STRING_EQUAL(lines[5], "`3,`1012.29,`2.30,`0.00,`6.07,`1012.29,`2.30");
    free(text);
    bill_free(b);
    bill_free(NULL);
}

static void test_limit(void)
{
    /* Room for the header, the summary's reserve and about two lines. */
    bill *b = bill_new(APPID, MCHID, strlen(BILL_HEADER) + 2 + 512 + 500);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    ledger_bill_record c = charge_record("ORDER-1", 100);
    int added = 0;
    while (added < 10 && bill_add(b, &c) == 0)
        added++;
    CU_ASSERT_EQUAL(added, 2);
    CU_ASSERT_EQUAL(bill_lines(b), 2); /* the refused line left nothing behind */
    size_t len = 0;
    char *text = bill_finish(b, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "`2,`2.00,`0.00,`0.00,`0.02,`2.00,`0.00\r\n"));
    free(text);
    bill_free(b);
    /* Not even the header fits. */
    CU_ASSERT_PTR_NULL(bill_new(APPID, MCHID, 10));
}

static void test_fifty_thousand_lines(void)
{
    bill *b = bill_new(APPID, MCHID, BILL_MAX_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    long long sum = 0;
    for (int i = 0; i < 50000; i++) {
        char otn[33];
        snprintf(otn, sizeof(otn), "BULK-%06d", i);
        ledger_bill_record c = charge_record(otn, 100 + i);
        sum += 100 + i;
        if (bill_add(b, &c) != 0) {
            CU_FAIL("a line of 50,000 refused");
            break;
        }
    }
    size_t len = 0;
    char *text = bill_finish(b, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char want[128];
    snprintf(want, sizeof(want), "\r\n`50000,`%lld.%02lld,`0.00,", sum / 100, sum % 100);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    CU_ASSERT_TRUE(len > 50000 * 200 && len < BILL_MAX_BYTES);
    free(text);
    bill_free(b);
}

static void test_day_readiness(void)
{
    bill_query q;
    const char *code = NULL;
    char why[160];
    time_t day, at;

    CU_ASSERT_EQUAL_FATAL(bill_parse_query("20261201", NULL, NULL, NULL, &q, &code, why,
                                           sizeof(why)),
                          0);
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261201", 8, &day), 0);
    CU_ASSERT_TRUE(q.has_day);
    CU_ASSERT_FALSE(q.ranged);
    CU_ASSERT_EQUAL(bill_ready_at(day, 10), day + 34 * 3600);
    /* the day itself, and D+1 09:59:59 China time: not ready */
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261201235959", 14, &at), 0);
    CU_ASSERT_EQUAL(bill_select(&q, at, BILL_READY_HOUR_DEFAULT, false), BILL_NOT_READY);
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261202095959", 14, &at), 0);
    CU_ASSERT_EQUAL(bill_select(&q, at, 10, false), BILL_NOT_READY);
    /* from 10:00: the whole day */
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261202100000", 14, &at), 0);
    CU_ASSERT_EQUAL(bill_select(&q, at, 10, false), BILL_SERVE);
    CU_ASSERT_EQUAL(q.from, day);
    CU_ASSERT_EQUAL(q.to, day + 24 * 3600);
    /* another hour by the knob */
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261202080000", 14, &at), 0);
    CU_ASSERT_EQUAL(bill_select(&q, at, 10, false), BILL_NOT_READY);
    CU_ASSERT_EQUAL(bill_select(&q, at, 0, false), BILL_SERVE);
    CU_ASSERT_EQUAL(BILL_READY_HOUR_DEFAULT, 10);
}

static void test_range_behind_knob(void)
{
    bill_query q;
    const char *code = NULL;
    char why[160];
    time_t from, now = time(NULL);

    /* a range alone: LACK_PARAMS bill_date unless the extension is on */
    CU_ASSERT_EQUAL_FATAL(bill_parse_query(NULL, NULL, "20261201080000", "20261201090000", &q,
                                           &code, why, sizeof(why)),
                          0);
    CU_ASSERT_TRUE(q.ranged);
    CU_ASSERT_EQUAL(bill_select(&q, now, 10, false), BILL_NO_DATE);
    CU_ASSERT_EQUAL(bill_select(&q, now, 10, true), BILL_SERVE);
    CU_ASSERT_EQUAL_FATAL(bill_parse_cst("20261201080000", 14, &from), 0);
    CU_ASSERT_EQUAL(q.from, from);
    CU_ASSERT_EQUAL(q.to, from + 3600);
    /* with a bill_date and the extension off: the range is ignored, the whole day served */
    CU_ASSERT_EQUAL_FATAL(bill_parse_query("20261201", NULL, "20261201080000", "20261201090000", &q,
                                           &code, why, sizeof(why)),
                          0);
    CU_ASSERT_EQUAL(bill_select(&q, now, 10, false), BILL_SERVE);
    CU_ASSERT_EQUAL(q.to - q.from, 24 * 3600);
}

static void test_tar_type_and_gzip(void)
{
    bill_query q;
    char why[160], back[256];
    char *gz = NULL;
    size_t gzlen = 0;
    static const char text[] = "交易时间,公众账号ID\r\n`2026-12-01 12:00:00,`wx0\r\n";

    memset(&q, 0, sizeof(q));
    CU_ASSERT_EQUAL(bill_parse_tar_type(NULL, &q, why, sizeof(why)), 0);
    CU_ASSERT_FALSE(q.gzip);
    CU_ASSERT_EQUAL(bill_parse_tar_type("GZIP", &q, why, sizeof(why)), 0);
    CU_ASSERT_TRUE(q.gzip);
    CU_ASSERT_EQUAL(bill_parse_tar_type("gzip", &q, why, sizeof(why)), -1);
    CU_ASSERT_EQUAL_FATAL(bill_gzip(text, sizeof(text) - 1, &gz, &gzlen), 0);
    CU_ASSERT_TRUE(gzlen > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
    z_stream z;
    memset(&z, 0, sizeof(z));
    CU_ASSERT_EQUAL_FATAL(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = (Bytef *)back;
    z.avail_out = sizeof(back);
    CU_ASSERT_EQUAL(inflate(&z, Z_FINISH), Z_STREAM_END);
    CU_ASSERT_EQUAL(z.total_out, sizeof(text) - 1);
    CU_ASSERT_EQUAL(memcmp(back, text, sizeof(text) - 1), 0);
    inflateEnd(&z);
    free(gz);
}

static void test_forged_txid(void)
{
    char out[TXID_BUF];
    bill_forged_txid("4200202612011234567890123456", out, sizeof(out));
    CU_ASSERT_STRING_EQUAL(out, "F200202612011234567890123456");
    CU_ASSERT_EQUAL(strlen(out), 28);
}

int main(void)
{
    static const cu_test tests[] = {
        { "China times and days parse, real dates only", test_parse_cst },
        { "a charge line has 27 fields and a 0.6 % fee rounded half up", test_charge_line },
        { "a refund line has the refund's fields", test_refund_line },
        { "a statement has a header, its lines and summary totals, and can restart",
          test_statement_and_summary },
        { "a line that does not fit the hard limit is refused", test_limit },
        { "a statement of 50,000 lines is written", test_fifty_thousand_lines },
        { "day D is ready from D+1 at the ready hour", test_day_readiness },
        { "the range extension is served only behind its knob", test_range_behind_knob },
        { "tar_type GZIP answers a gzip stream of the text", test_tar_type_and_gzip },
        { "a forged line carries a transaction_id the ledger has not", test_forged_txid },
    };
    return CU_SUITE_RUN("mock_bill", NULL, NULL, tests);
}
