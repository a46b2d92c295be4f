/* fuzz_statement.c - libFuzzer harness for the statement parser
 * (app/statement_parse.c): any text either fails with a reason or yields
 * records every one of which the statement job may trust as far as the
 * parser promises: a valid transaction_id and out_trade_no, a total_fee in
 * range, a refund_fee only on refund records; never more records than
 * lines. The same text through bill_parse_lines (bad lines set aside):
 * every bad line lies inside the text, and good records plus bad lines
 * never outnumber the lines. The input is the downloadbill body as
 * received. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "money.h"
#include "order_no.h"
#include "statement_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool txid_ok(const char *s)
{
    size_t n = strlen(s);

    if (n < 1 || n > BILL_TXID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

typedef struct {
    const uint8_t *data;
    size_t size, bad;
} bad_sink;

static void on_bad(void *arg, const bill_bad_line *b)
{
    bad_sink *s = arg;

    FUZZ_CHECK(b->reason != NULL && b->line_no >= 2);
    FUZZ_CHECK((const uint8_t *)b->text >= s->data &&
               (const uint8_t *)b->text + b->len <= s->data + s->size);
    s->bad++;
}

static void check_lines(const uint8_t *data, size_t size, size_t lines)
{
    bill_record *r = NULL;
    size_t n = 0;
    char err[160];
    bad_sink sink = { data, size, 0 };

    if (bill_parse_lines((const char *)data, size, &r, &n, on_bad, &sink, err, sizeof(err)) != 0) {
        FUZZ_CHECK(r == NULL && n == 0);
        return;
    }
    FUZZ_CHECK(n + sink.bad < lines);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(txid_ok(r[i].transaction_id) && order_no_valid(r[i].out_trade_no));
    free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bill_record *r = NULL;
    size_t n = 0, lines = 1;
    char err[160];

    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    check_lines(data, size, lines);
    if (bill_parse((const char *)data, size, &r, &n, err, sizeof(err)) != 0) {
        FUZZ_CHECK(r == NULL && n == 0 && err[0] != '\0');
        return 0;
    }
    FUZZ_CHECK(n < lines);
    FUZZ_CHECK((n == 0) == (r == NULL));
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(txid_ok(r[i].transaction_id));
        FUZZ_CHECK(order_no_valid(r[i].out_trade_no));
        FUZZ_CHECK(r[i].total_fee >= MONEY_MIN_FEN && r[i].total_fee <= MONEY_MAX_FEN);
        if (r[i].refund)
            FUZZ_CHECK(r[i].refund_fee >= MONEY_MIN_FEN && r[i].refund_fee <= MONEY_MAX_FEN);
        else
            FUZZ_CHECK(r[i].refund_fee == 0);
    }
    free(r);
    return 0;
}
