/* api - the WeChat Pay v2 endpoints of the mock: POST /pay/unifiedorder,
 * /pay/orderquery, /secapi/pay/refund, /pay/refundquery, /pay/closeorder,
 * /pay/downloadbill, /pay/micropay and /secapi/pay/reverse, signed XML in;
 * signed XML out (the statement excepted). Micropay, reverse and
 * unifiedorder's prepay orders are flows.c's (api_call.h); refunds and
 * refundquery are refund_flow.h's; every /secapi/ call without the
 * merchant's verified client certificate gets return_code FAIL "证书错误"
 * (require_client_cert).
 *
 * Replies are HTTP 200 with XML, signed with the request's sign_type (MD5
 * unless it declared HMAC-SHA256; then the reply carries sign_type too).
 * A request that cannot be processed at all (not POST, unparsable XML, bad
 * or missing signature, unknown sign_type) gets return_code FAIL and a
 * return_msg, as WeChat answers; the mock signs these too. Everything else
 * gets return_code SUCCESS and result_code SUCCESS, or result_code FAIL with
 * WeChat's err_code and err_code_des (LACK_PARAMS, PARAM_ERROR,
 * APPID_MCHID_NOT_MATCH, ORDERPAID, ORDERCLOSED, INVALID_REQUEST, SYSTEMERROR,
 * NOTENOUGH, ORDERNOTEXIST). Two exceptions: a statement that exists is
 * text/plain (not signed), an empty one is return_code FAIL "No Bill
 * Exist"; and with closeorder_enabled off, /pay/closeorder is an HTTP 404
 * with a text/plain body. */
#ifndef IDEMPAY_MOCK_API_H
#define IDEMPAY_MOCK_API_H

#include <stdbool.h>

#include "bill.h"
#include "http_msg.h"
#include "ledger.h"
#include "mock.h"
#include "wx_endpoint.h"
#include "wx_sign.h"
#include "wx_xml.h"

/* The v2 endpoints the mock serves: common/wx_endpoint's list. */
typedef enum {
    API_UNIFIEDORDER = WX_EP_UNIFIEDORDER,
    API_ORDERQUERY = WX_EP_ORDERQUERY,
    API_REFUND = WX_EP_REFUND,
    API_CLOSEORDER = WX_EP_CLOSEORDER,
    API_DOWNLOADBILL = WX_EP_DOWNLOADBILL,
    API_MICROPAY = WX_EP_MICROPAY,
    API_REVERSE = WX_EP_REVERSE,
    API_REFUNDQUERY = WX_EP_REFUNDQUERY,
    API_NONE = WX_EP_COUNT
} api_endpoint;

/* The endpoint a path names, or API_NONE. */
api_endpoint api_endpoint_of(const char *path);
/* Its name in the journal and the knobs ("unifiedorder", ...); "none". */
const char *api_endpoint_name(api_endpoint ep);

typedef struct {
    /* Non-NULL: answer return_code FAIL with this return_msg. */
    const char *fail_msg;
    /* Non-NULL (and fail_msg NULL): answer result_code FAIL with this err_code. */
    const char *err_code;
    char err_des[160];
    wx_sign_type sign_type; /* for the reply */
    long long total_fee;    /* unifiedorder, refund */
    long long refund_fee;   /* refund */
    bill_query bill;        /* downloadbill */
} api_verdict;

/* Parses and checks one request for endpoint ep against creds: XML, the
 * signature, required fields, appid/mch_id, and the endpoint's field rules
 * (total_fee a positive integer of fen, out_trade_no 6-32 of
 * [0-9A-Za-z_|*-], trade_type, notify_url, out_refund_no, refund_fee; for
 * downloadbill bill_date / begin_time / end_time / bill_type as
 * bill_parse_query checks them, tar_type absent or GZIP).
 * req (initialised by the caller) receives the parsed fields. Fills *v;
 * returns 0 when the request may be processed, -1 otherwise (v says how to
 * answer). Touches no database. */
int api_validate(api_endpoint ep, const char *body, size_t len, const mock_creds *creds,
                 wx_msg *req, api_verdict *v);

/* Builds a signed reply. return_code FAIL with fail_msg when fail_msg is
 * non-NULL; otherwise return_code SUCCESS, result_code FAIL with err_code and
 * err_des when err_code is non-NULL, else result_code SUCCESS; then every
 * field of extra (may be NULL). Returns a malloc'd XML string (caller frees)
 * or NULL on failure. */
char *api_build_reply(const mock_creds *creds, wx_sign_type type, const char *fail_msg,
                      const char *err_code, const char *err_des, const wx_msg *extra);

/* Serves one WeChat endpoint request (ep != API_NONE) with the thread's
 * ledger (api_handle.c). Draws the call's faults (unifiedorder from the main
 * PRNG, the others from the auxiliary one), sleeps the latency, validates,
 * applies the faults to a valid request, then runs the endpoint's flow. May
 * withhold its reply (timeout_after_charge) or answer with a deliberately
 * truncated reply (reset). Appends the call to app->journal before the
 * reply leaves. */
void api_handle(mock_app *app, ledger *l, api_endpoint ep, const http_request *req,
                http_response *resp);

#endif
