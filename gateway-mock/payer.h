/* payer - the mock's customer (mock-only JSON API, docs/MOCK.md "The
 * payer"): POST /mock/payer/pay pays a prepay order in "the WeChat app", by
 * prepay_id (JSAPI) or code_url (NATIVE, scanned), as openid, optionally
 * slowly (delay_ms: confirmed that much later; the answer comes after the
 * confirmation). Answers 200 {"result":"SUCCESS","transaction_id",
 * "out_trade_no"} or 200 {"result":"FAIL","err_code","err_code_des"} with
 * ORDERPAID (paid before: a second payment is refused), ORDERCLOSED,
 * ORDER_EXPIRED (after time_expire), ORDERNOTEXIST, OPENID_MISMATCH
 * (JSAPI: not the order's openid); 400 for a bad body. The charge goes
 * through the ledger (ledger_attempt), so it races a close on the ledger's
 * row; the payment notification follows as after any charge. Each call is
 * journaled (GET /mock/requests, endpoint "payer"). */
#ifndef IDEMPAY_MOCK_PAYER_H
#define IDEMPAY_MOCK_PAYER_H

#include "http_msg.h"
#include "ledger.h"
#include "mock.h"

/* The longest delay_ms accepted (a request thread sleeps it). */
#define PAYER_MAX_DELAY_MS 120000

/* Serves POST /mock/payer/pay. */
void payer_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp);

#endif
