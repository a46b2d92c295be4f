/* gateway_v3_reply - what a verified WeChat Pay APIv3 reply means, without
 * I/O. A v3 reply (HTTP status + JSON, or a 204's empty body) is put into
 * the words of the v2 reply of the same endpoint (gw3_reply_to_v2), and
 * the v2 meaning (gateway_reply.h, gateway_refund.h) decides the outcome:
 * one set of rules for both dialects, so a v3 merchant's orders settle
 * exactly as a v2 merchant's. v3's error codes become v2's err_codes
 * (gw3_v2_code); a 5xx (whatever its code), a 429, an unknown shape or
 * another merchant's reply is GW_UNKNOWN, never a decline. gateway_v3.c checks the platform
 * signature before anything here runs. */
#ifndef IDEMPAY_GATEWAY_V3_REPLY_H
#define IDEMPAY_GATEWAY_V3_REPLY_H

#include <stddef.h>

#include "gateway_reply.h"

/* The endpoints, by the v2 meaning that reads them. */
typedef enum {
    GW3_PREPAY_NATIVE = 0, /* POST /v3/pay/transactions/native -> unifiedorder */
    GW3_PREPAY_JSAPI,      /* POST /v3/pay/transactions/jsapi -> unifiedorder */
    GW3_QUERY,             /* GET /v3/pay/transactions/out-trade-no/{no} -> orderquery */
    GW3_CLOSE,             /* POST .../out-trade-no/{no}/close -> closeorder */
    GW3_REFUND,            /* POST /v3/refund/domestic/refunds -> refund */
    GW3_REFUNDQUERY        /* GET /v3/refund/domestic/refunds/{no} -> refundquery */
} gw3_kind;

/* v2's err_code for v3's error code (SYSTEM_ERROR -> SYSTEMERROR, ORDER_PAID
 * -> ORDERPAID, ...; RESOURCE_NOT_EXISTS -> REFUNDNOTEXIST for a
 * refundquery, ORDERNOTEXIST otherwise); other codes unchanged. */
const char *gw3_v2_code(const char *v3_code, gw3_kind kind);

/* A v3 refund status as v2's refund_status (CLOSED -> REFUNDCLOSE, ABNORMAL
 * -> CHANGE; SUCCESS, PROCESSING unchanged); NULL when it is none of them. */
const char *gw3_v2_refund_status(const char *v3_status);

/* The v3 reply (status, body[0..len), JSON or empty) of kind in v2's words
 * into m (initialised by the caller): result_code SUCCESS with the fields
 * the v2 meaning reads, or FAIL with err_code / err_code_des. appid and
 * mchid: ours; a transaction naming another is refused. Returns 0, or -1
 * with out set to GW_UNKNOWN and the reason (a 2xx that is not the
 * expected JSON, another merchant's transaction, a 5xx without a code is
 * still a FAIL SYSTEMERROR, i.e. 0). */
int gw3_reply_to_v2(long status, const char *body, size_t len, gw3_kind kind, const char *appid,
                    const char *mchid, wx_msg *m, gw_result *out);

#endif
