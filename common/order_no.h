/* order_no - the order number rule, which is WeChat Pay's out_trade_no rule:
 * 6 to 32 characters of [0-9A-Za-z_|*-]. */
#ifndef IDEMPAY_ORDER_NO_H
#define IDEMPAY_ORDER_NO_H

#include <stdbool.h>

#define ORDER_NO_MIN 6
#define ORDER_NO_MAX 32

/* true when s (NUL-terminated, may be NULL) follows the rule. */
bool order_no_valid(const char *s);

#endif
