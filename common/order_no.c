/* order_no.c - the order number rule (WeChat Pay's out_trade_no):
 * 6 to 32 characters of [0-9A-Za-z_|*-], ASCII only. */
#include "order_no.h"

#include "text_token.h"

bool order_no_valid(const char *s)
{
    return text_token_valid(s, ORDER_NO_MIN, ORDER_NO_MAX, "_|*-");
}
