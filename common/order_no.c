/* order_no.c - the order number rule (WeChat Pay's out_trade_no):
 * 6 to 32 characters of [0-9A-Za-z_|*-], ASCII only. */
#include "order_no.h"

#include <stddef.h>

static bool order_no_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           c == '|' || c == '*' || c == '-';
}

bool order_no_valid(const char *s)
{
    size_t n = 0;

    if (s == NULL)
        return false;
    for (; s[n] != '\0'; n++)
        if (n >= ORDER_NO_MAX || !order_no_char(s[n]))
            return false;
    return n >= ORDER_NO_MIN;
}
