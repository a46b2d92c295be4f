/* text_token - the one check of the identifiers WeChat Pay and idempay
 * pass as text (out_trade_no, transaction_id, out_refund_no, openid, the
 * mock's rule patterns ...): ASCII letters and digits, and the few
 * punctuation characters the field allows, within a length range. */
#ifndef IDEMPAY_TEXT_TOKEN_H
#define IDEMPAY_TEXT_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

/* true when s is min..max characters long, each an ASCII letter or digit
 * or one of the characters of punct (e.g. "_-"). s NULL: false. Reads s no
 * further than its first max + 1 characters. */
bool text_token_valid(const char *s, size_t min, size_t max, const char *punct);

#endif
