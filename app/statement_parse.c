/* statement_parse.c - WeChat Pay v2 downloadbill text into records (see
 * statement_parse.h). Bounded everywhere: a field is copied only into a
 * buffer it fits, the record count has a hard limit. */
#include "statement_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "text_copy.h"
#include "text_token.h"

enum { COL_TXID = 0, COL_OUT_TRADE_NO, COL_STATE, COL_TOTAL, COL_REFUND, COL_COUNT };

static const char *const bill_col_names[COL_COUNT] = {
    "微信订单号", "商户订单号", "交易状态", "订单金额", "退款金额",
};

#define BILL_MAX_FIELDS 64

typedef struct {
    const char *p;
    size_t len;
} bill_span;

typedef struct {
    bill_record *v;
    size_t n, cap;
} bill_list;

/* The next line of text from *pos, without its "\r\n" / "\n". false at the end. */
static bool bill_next_line(const char *text, size_t len, size_t *pos, bill_span *line)
{
    size_t start = *pos, end;

    if (start >= len)
        return false;
    end = start;
    while (end < len && text[end] != '\n')
        end++;
    *pos = end < len ? end + 1 : end;
    if (end > start && text[end - 1] == '\r')
        end--;
    line->p = text + start;
    line->len = end - start;
    return true;
}

static bool bill_span_is(bill_span s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}

/* Splits line at every occurrence of sep (1 or 2 bytes) into at most max
 * fields. Returns the number of fields. */
static int bill_split(bill_span line, const char *sep, bill_span *fields, int max)
{
    size_t seplen = strlen(sep), i = 0, start = 0;
    int n = 0;

    while (n < max) {
        if (i + seplen > line.len || memcmp(line.p + i, sep, seplen) == 0) {
            size_t end = i + seplen > line.len ? line.len : i;
            fields[n].p = line.p + start;
            fields[n].len = end - start;
            n++;
            if (end == line.len)
                break;
            i += seplen;
            start = i;
            continue;
        }
        i++;
    }
    return n;
}

/* The column index of each required name in the header line, or -1. */
static int bill_header(bill_span line, int idx[COL_COUNT], char *err, size_t errlen)
{
    bill_span fields[BILL_MAX_FIELDS];
    int n;

    if (line.len >= 3 && memcmp(line.p, "\xEF\xBB\xBF", 3) == 0) {
        line.p += 3;
        line.len -= 3;
    }
    n = bill_split(line, ",", fields, BILL_MAX_FIELDS);
    for (int c = 0; c < COL_COUNT; c++) {
        idx[c] = -1;
        for (int f = 0; f < n && idx[c] < 0; f++)
            if (bill_span_is(fields[f], bill_col_names[c]))
                idx[c] = f;
        if (idx[c] < 0) {
            snprintf(err, errlen, "statement header lacks the column %s", bill_col_names[c]);
            return -1;
        }
    }
    return 0;
}

static bool bill_txid_valid(const char *s)
{
    return text_token_valid(s, 1, BILL_TXID_MAX, "_-");
}

static bool bill_amount(bill_span s, long long *fen)
{
    char buf[MONEY_STR_MAX + 1];
    int64_t v;

    if (!text_copy_n(buf, sizeof(buf), s.p, s.len) || money_parse_yuan(buf, &v) != 0)
        return false;
    *fen = (long long)v;
    return true;
}

static int bill_push(bill_list *l, const bill_record *r, char *err, size_t errlen)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        bill_record *v;
        if (l->n >= BILL_MAX_RECORDS) {
            snprintf(err, errlen, "statement has more than %d records", BILL_MAX_RECORDS);
            return -1;
        }
        v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *r;
    return 0;
}

/* One record line (starts with a backtick): 1 parsed into *r, 0 skipped
 * (another trade state), -1 malformed (*why says how). */
static int bill_record_line(bill_span line, const int idx[COL_COUNT], bill_record *r,
                            const char **why)
{
    bill_span f[BILL_MAX_FIELDS];
    bill_span body = { line.p + 1, line.len - 1 };
    int n = bill_split(body, ",`", f, BILL_MAX_FIELDS);

    *why = "too few fields";
    for (int c = 0; c < COL_COUNT; c++)
        if (idx[c] >= n)
            return -1;
    memset(r, 0, sizeof(*r));
    if (bill_span_is(f[idx[COL_STATE]], "REFUND"))
        r->refund = true;
    else if (!bill_span_is(f[idx[COL_STATE]], "SUCCESS"))
        return 0;
    *why = "bad transaction_id";
    if (!text_copy_n(r->transaction_id, sizeof(r->transaction_id), f[idx[COL_TXID]].p,
                     f[idx[COL_TXID]].len) ||
        !bill_txid_valid(r->transaction_id))
        return -1;
    *why = "bad out_trade_no";
    if (!text_copy_n(r->out_trade_no, sizeof(r->out_trade_no), f[idx[COL_OUT_TRADE_NO]].p,
                     f[idx[COL_OUT_TRADE_NO]].len) ||
        !order_no_valid(r->out_trade_no))
        return -1;
    *why = "bad amount";
    if (!bill_amount(f[idx[COL_TOTAL]], &r->total_fee) ||
        (r->refund && !bill_amount(f[idx[COL_REFUND]], &r->refund_fee)))
        return -1;
    return 1;
}

int bill_parse(const char *text, size_t len, bill_record **records, size_t *n, char *err,
               size_t errlen)
{
    return bill_parse_lines(text, len, records, n, NULL, NULL, err, errlen);
}

int bill_parse_lines(const char *text, size_t len, bill_record **records, size_t *n,
                     bill_bad_fn bad, void *arg, char *err, size_t errlen)
{
    bill_list l = { NULL, 0, 0 };
    bill_span line;
    bill_record r;
    size_t pos = 0, lineno = 0;
    int idx[COL_COUNT];
    bool header = false;

    *records = NULL;
    *n = 0;
    while (bill_next_line(text, len, &pos, &line)) {
        lineno++;
        if (!header) {
            if (line.len == 0)
                continue;
            if (bill_header(line, idx, err, errlen) != 0)
                goto fail;
            header = true;
            continue;
        }
        if (line.len == 0 || line.p[0] != '`')
            break; /* the summary follows the records */
        const char *why = NULL;
        int got = bill_record_line(line, idx, &r, &why);
        if (got < 0 && bad != NULL) {
            bill_bad_line b = { lineno, line.p, line.len, why };
            bad(arg, &b);
            continue;
        }
        if (got < 0) {
            snprintf(err, errlen, "statement line %zu is malformed (%s)", lineno, why);
            goto fail;
        }
        if (got == 1 && bill_push(&l, &r, err, errlen) != 0)
            goto fail;
    }
    *records = l.v;
    *n = l.n;
    return 0;

fail:
    free(l.v);
    return -1;
}
