/* fuzz_amount.c - libFuzzer harness for amounts (common/money.c):
 * money_parse_yuan and money_parse_fen against an independent reference
 * reading of the grammar in money.h, and the round trips the service relies
 * on: a parsed amount formats back ("%d.%02d") and re-parses to the same fen,
 * as yuan and as WeChat's total_fee. The input is the text itself (cut at
 * the first NUL, as a C string would be); its first 8 bytes also serve as
 * a raw int64 for money_format. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "money.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reference for money_parse_yuan: returns 1 accepted (value in *fen), 0
 * refused, -1 when the rules leave it open (leading zeros: "007.5" - the
 * header does not say; the value must be right if it is accepted). */
static int ref_yuan(const char *s, int64_t *fen)
{
    size_t i = 0, int_digits = 0, frac_digits = 0;
    int64_t yuan = 0, frac = 0;
    bool leading_zero = s[0] == '0' && digit(s[1]);

    size_t significant = 0;
    for (; digit(s[i]); i++, int_digits++)
        if ((significant > 0 || s[i] != '0') && ++significant <= 12)
            yuan = yuan * 10 + (s[i] - '0');
    if (int_digits == 0)
        return 0; /* empty, sign, space, leading '.', non-ASCII digit */
    if (s[i] == '.') {
        i++;
        for (; digit(s[i]); i++, frac_digits++)
            if (frac_digits < 3)
                frac = frac * 10 + (s[i] - '0');
        if (frac_digits == 0 || frac_digits > 2)
            return 0; /* trailing '.', or more than two fraction digits */
    }
    if (s[i] != '\0')
        return 0; /* exponent, space, second '.', anything else */
    if (frac_digits == 1)
        frac *= 10;
    /* Leading zeros do not count towards the 8 integer digits. */
    if (significant > 8)
        return 0;
    int64_t total = yuan * 100 + frac;
    if (total < MONEY_MIN_FEN || total > MONEY_MAX_FEN)
        return 0;
    *fen = total;
    return leading_zero ? -1 : 1;
}

/* Reference for money_parse_fen: [1-9][0-9]* up to MONEY_MAX_FEN. */
static int ref_fen(const char *s, int64_t *fen)
{
    size_t n = 0;
    int64_t v = 0;

    if (s[0] < '1' || s[0] > '9')
        return 0;
    for (; digit(s[n]); n++) {
        if (n >= 10)
            return 0;
        v = v * 10 + (s[n] - '0');
    }
    if (s[n] != '\0' || v > MONEY_MAX_FEN)
        return 0;
    *fen = v;
    return 1;
}

static void check_round_trip(int64_t fen)
{
    char text[MONEY_STR_MAX], fee[32];
    int64_t back = -1, back_fen = -1;

    money_format(fen, text);
    FUZZ_CHECK(fuzz_terminated(text, sizeof(text)));
    size_t n = strlen(text);
    FUZZ_CHECK(n >= 4 && text[n - 3] == '.' && digit(text[n - 2]) && digit(text[n - 1]));
    FUZZ_CHECK(money_parse_yuan(text, &back) == 0 && back == fen);
    snprintf(fee, sizeof(fee), "%lld", (long long)fen);
    FUZZ_CHECK(money_parse_fen(fee, &back_fen) == 0 && back_fen == fen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size);
    int64_t fen = -7, want = -7;

    /* Yuan text. */
    int rc = money_parse_yuan(s, &fen);
    int ref = ref_yuan(s, &want);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        FUZZ_CHECK(ref != 0);
        FUZZ_CHECK(fen == want);
        FUZZ_CHECK(fen >= MONEY_MIN_FEN && fen <= MONEY_MAX_FEN);
        check_round_trip(fen);
    } else {
        FUZZ_CHECK(ref != 1);
        FUZZ_CHECK(fen == -7); /* untouched on failure */
    }

    /* total_fee text. */
    fen = -7;
    rc = money_parse_fen(s, &fen);
    ref = ref_fen(s, &want);
    FUZZ_CHECK(rc == 0 ? ref == 1 && fen == want : ref == 0 && fen == -7);
    if (rc == 0)
        check_round_trip(fen);

    /* money_format of any int64: text every parser refuses outside the
     * printable range, the exact amount inside it. */
    if (size >= sizeof(int64_t)) {
        int64_t raw;
        char text[MONEY_STR_MAX];
        memcpy(&raw, data, sizeof(raw));
        money_format(raw, text);
        FUZZ_CHECK(fuzz_terminated(text, sizeof(text)));
        if (raw >= MONEY_MIN_FEN && raw <= MONEY_MAX_FEN) {
            check_round_trip(raw);
        } else if (raw < 0 || raw > 999999999999LL) {
            FUZZ_CHECK(text[0] == '\0');
        } else {
            int64_t v = -7;
            FUZZ_CHECK(money_parse_yuan(text, &v) == -1 && v == -7);
        }
        int64_t small = raw % (MONEY_MAX_FEN + 1);
        if (small < 0)
            small = -small;
        if (small >= MONEY_MIN_FEN)
            check_round_trip(small);
    }
    free(s);
    return 0;
}
