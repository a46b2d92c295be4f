/* money - amounts as integer fen (1 yuan = 100 fen); never floating point.
 *
 * The service's text form is decimal yuan with at most two fraction digits,
 * "0.01" ... "99999999.99", ASCII digits only: no sign, no exponent, no
 * spaces, no leading '.', no trailing '.'. */
#ifndef IDEMPAY_MONEY_H
#define IDEMPAY_MONEY_H

#include <stdint.h>

#define MONEY_MIN_FEN 1LL
#define MONEY_MAX_FEN 9999999999LL /* 99999999.99 yuan */
#define MONEY_STR_MAX 16           /* "99999999.99" + NUL fits */

/* Parses decimal yuan text. Returns 0 with *fen set, or -1 (bad syntax, more
 * than two fraction digits, out of range) with *fen untouched. */
int money_parse_yuan(const char *s, int64_t *fen);

/* Parses WeChat's total_fee: a positive decimal integer of fen, no sign,
 * no leading zeros, at most MONEY_MAX_FEN. Returns 0 or -1. */
int money_parse_fen(const char *s, int64_t *fen);

/* Writes fen as yuan with exactly two fraction digits ("12.30").
 * fen must be >= 0. Returns out. */
char *money_format(int64_t fen, char out[MONEY_STR_MAX]);

#endif
