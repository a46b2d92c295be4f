/* trade_type - the three flows of docs/FLOWS.md and their wire names. Pure
 * (pay_request and trade_store share it). */
#ifndef IDEMPAY_TRADE_TYPE_H
#define IDEMPAY_TRADE_TYPE_H

#include <string.h>

typedef enum {
    TRADE_NATIVE = 0,  /* unifiedorder -> code_url; the customer pays later */
    TRADE_JSAPI = 1,   /* unifiedorder (openid) -> the JS bridge's signed parameters */
    TRADE_MICROPAY = 2 /* micropay (auth_code): the charge itself */
} trade_type;

/* "NATIVE", "JSAPI", "MICROPAY" ("NATIVE" for anything else). */
static inline const char *trade_type_name(trade_type t)
{
    return t == TRADE_JSAPI ? "JSAPI" : t == TRADE_MICROPAY ? "MICROPAY" : "NATIVE";
}

/* 0 with *out, or -1 when s names no flow. */
static inline int trade_type_parse(const char *s, trade_type *out)
{
    static const char *const names[] = { "NATIVE", "JSAPI", "MICROPAY" };

    for (int i = 0; s != NULL && i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (trade_type)i;
            return 0;
        }
    return -1;
}

#endif
