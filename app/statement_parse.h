/* statement_parse - reading the gateway's statement: WeChat Pay v2's
 * downloadbill text (bill_type ALL). Pure: no I/O, fuzzed by
 * fuzz/fuzz_statement.c.
 *
 * The format: a header line naming the columns (交易时间,...,微信订单号,
 * 商户订单号,...,交易状态,...,退款金额,...,订单金额,...), then one line per
 * record whose fields each start with a backtick and are joined by commas
 * ("`2026-12-01 12:00:00,`wx...,`...") and, after the records, a summary
 * header and a backtick summary line (not records). Lines end in "\r\n" or
 * "\n"; a UTF-8 byte-order mark before the header is skipped. Columns are
 * found by their names, so extra or reordered columns are fine. */
#ifndef IDEMPAY_STATEMENT_PARSE_H
#define IDEMPAY_STATEMENT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "order_no.h"

#define BILL_TXID_MAX 32
#define BILL_MAX_RECORDS 2000000

typedef struct {
    char transaction_id[BILL_TXID_MAX + 1]; /* 微信订单号 */
    char out_trade_no[ORDER_NO_MAX + 1];    /* 商户订单号 */
    bool refund;          /* 交易状态 REFUND: a refund of that charge; SUCCESS: a charge */
    long long total_fee;  /* 订单金额, fen */
    long long refund_fee; /* 退款金额, fen (refund records; 0 for charges) */
} bill_record;

/* Parses text[0..len) (need not be NUL-terminated). On success returns 0
 * with *records (malloc'd, the caller frees; NULL when there are none) and
 * *n. Records with a 交易状态 other than SUCCESS or REFUND are skipped. -1
 * with a reason in err (nothing to free) when the header lacks a required
 * column, a record line has too few fields, a transaction_id, out_trade_no
 * or amount is not valid, there are more than BILL_MAX_RECORDS records, or
 * memory runs out. An empty text is a statement without records. */
int bill_parse(const char *text, size_t len, bill_record **records, size_t *n, char *err,
               size_t errlen);

/* A record line bill_parse_lines could not read: its number (1-based,
 * the header is line 1), its text (not NUL-terminated, without the line
 * end; valid during the call only) and why. */
typedef struct {
    size_t line_no;
    const char *text;
    size_t len;
    const char *reason;
} bill_bad_line;

typedef void (*bill_bad_fn)(void *arg, const bill_bad_line *bad);

/* bill_parse, except that a malformed record line (too few fields, a bad
 * transaction_id, out_trade_no or amount) is set aside: bad(arg, line) is
 * called and the rest is parsed. A header without a required column, too
 * many records or OOM still fail the whole text (-1). With bad NULL this
 * is bill_parse. */
int bill_parse_lines(const char *text, size_t len, bill_record **records, size_t *n,
                     bill_bad_fn bad, void *arg, char *err, size_t errlen);

#endif
