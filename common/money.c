/* money.c - amounts as integer fen, parsed from and printed as exact decimal
 * text; never floating point. Parsers bound the digit count before
 * accumulating, so no input can overflow. */
#include "money.h"

#include <stdbool.h>
#include <stdio.h>

static bool money_digit(char c)
{
    return c >= '0' && c <= '9'; /* not isdigit(): locale-independent, ASCII only */
}

int money_parse_yuan(const char *s, int64_t *fen)
{
    int64_t yuan = 0, frac = 0;
    int int_digits = 0, frac_digits = 0;

    if (s == NULL)
        return -1;
    /* Integer part: 1..8 digits, no leading zero unless it is the only digit. */
    if (s[0] == '0' && money_digit(s[1]))
        return -1;
    for (; money_digit(*s); s++) {
        if (++int_digits > 8)
            return -1;
        yuan = yuan * 10 + (*s - '0');
    }
    if (int_digits == 0)
        return -1;
    if (*s == '.') {
        s++;
        for (; money_digit(*s); s++) {
            if (++frac_digits > 2)
                return -1;
            frac = frac * 10 + (*s - '0');
        }
        if (frac_digits == 0)
            return -1;
        if (frac_digits == 1)
            frac *= 10;
    }
    if (*s != '\0')
        return -1;
    int64_t total = yuan * 100 + frac;
    if (total < MONEY_MIN_FEN || total > MONEY_MAX_FEN)
        return -1;
    *fen = total;
    return 0;
}

int money_parse_fen(const char *s, int64_t *fen)
{
    int64_t total = 0;
    int digits = 0;

    if (s == NULL || s[0] == '0')
        return -1;
    for (; money_digit(*s); s++) {
        if (++digits > 10)
            return -1;
        total = total * 10 + (*s - '0');
    }
    if (digits == 0 || *s != '\0')
        return -1;
    if (total < MONEY_MIN_FEN || total > MONEY_MAX_FEN)
        return -1;
    *fen = total;
    return 0;
}

char *money_format(int64_t fen, char out[MONEY_STR_MAX])
{
    /* Outside [0, 999999999999] the text would not fit: "" is written,
     * which every parser refuses. */
    if (fen < 0 || fen > 999999999999LL) {
        out[0] = '\0';
        return out;
    }
    snprintf(out, MONEY_STR_MAX, "%lld.%02lld", (long long)(fen / 100), (long long)(fen % 100));
    return out;
}
