/* v3_call - one APIv3 call being served, shared by v3_api.c (routing,
 * signatures, faults, the journal, /v3/certificates) and v3_map.c (v3's
 * JSON to the v2 flows' fields, and the flows' outcome to v3's JSON).
 * Internal to the mock's APIv3. */
#ifndef IDEMPAY_MOCK_V3_CALL_H
#define IDEMPAY_MOCK_V3_CALL_H

#include <jansson.h>

#include "api_call.h"

typedef enum {
    V3_NATIVE = 0,
    V3_JSAPI,
    V3_QUERY_OTN,
    V3_QUERY_ID,
    V3_CLOSE,
    V3_REFUND,
    V3_REFUND_QUERY,
    V3_TRADEBILL,
    V3_BILLFILE,
    V3_CERTIFICATES,
    V3_NONE
} v3_route;

typedef struct {
    api_call c; /* the v2 flow's call (c.v3 true) */
    v3_route route;
    const http_request *req;
    json_t *body;  /* the request's JSON object (POST), or NULL */
    char key[70];  /* the path's {out_trade_no} / {transaction_id} / {out_refund_no} */
    bool answered; /* a reply is set */
} v3_call;

/* Answers status with body (stolen; NULL: an empty body, as a 204), signed
 * with the platform key of the rotation in force. */
void v3_reply(v3_call *vc, int status, json_t *body);
/* Answers status with {"code","message"} (signed), noted in the journal. */
void v3_error(v3_call *vc, int status, const char *code, const char *message);

/* v3_map.c: the request's fields into vc->c.m / vc->c.v (true), or a 400
 * answered (false). */
bool v3_map_request(v3_call *vc);
/* v3_map.c: the flow's outcome (vc->c.out) as v3's reply. */
void v3_map_reply(v3_call *vc);
/* The out_trade_no the call names (path or body), "" when none: for the
 * targeted rules, before the call is judged. */
const char *v3_map_peek_otn(const v3_call *vc);

#endif
