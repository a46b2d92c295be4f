/* v3_api - WeChat Pay APIv3 beside v2 on the mock's front (docs/MOCK.md
 * "WeChat Pay APIv3"): JSON in and out, every request signed by the
 * merchant (Authorization: WECHATPAY2-SHA256-RSA2048 ..., checked against
 * the merchant's certificate; otherwise 401 SIGN_ERROR), every reply signed
 * by the platform (Wechatpay-Serial, -Signature, -Timestamp, -Nonce over
 * "timestamp\nnonce\nbody\n"), except a bill file, which WeChat does not
 * sign either.
 *
 *   POST /v3/pay/transactions/native | jsapi       -> code_url | prepay_id
 *   GET  /v3/pay/transactions/out-trade-no/{no}?mchid=, /id/{txid}?mchid=
 *   POST /v3/pay/transactions/out-trade-no/{no}/close   -> 204
 *   POST /v3/refund/domestic/refunds, GET .../refunds/{out_refund_no}
 *   GET  /v3/bill/tradebill?bill_date=yyyy-MM-dd   -> download_url + SHA1
 *   GET  /v3/billdownload/file?token=...           -> the bill (unsigned)
 *   GET  /v3/certificates                          -> platform certificates
 *
 * Each call runs the v2 endpoint's flow (api_run: the same prepay, payer,
 * ledger, refunds, bills, clock, faults, targeted rules and journal; an
 * order placed here is paid by POST /mock/payer/pay and notified in v3's
 * form, v3_notify.h); only the request's parsing and the reply's shape
 * differ. Business errors are v3's HTTP status with {"code","message"}. */
#ifndef IDEMPAY_MOCK_V3_API_H
#define IDEMPAY_MOCK_V3_API_H

#include <stdbool.h>

#include "http_msg.h"
#include "ledger.h"
#include "mock.h"

/* true when path belongs to APIv3 ("/v3/..."). */
bool v3_api_path(const char *path);

/* Serves one /v3/ request with the thread's ledger. Without v3 material
 * (app->v3 NULL) every call is 404 {"code":"NOT_FOUND"}. */
void v3_api_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp);

#endif
