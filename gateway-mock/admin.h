/* admin - the mock's JSON admin API under /mock/:
 *   GET  /mock/ledger[?out_trade_no=X]  charges, notifications_sent, closed trades
 *   GET  /mock/requests[?out_trade_no=X][&limit=N]  the journal
 *   GET  /mock/config                   every knob, and the rules with their counts
 *   PUT  /mock/config                   merge a partial JSON object of knobs; "rules"
 *                                       replaces the targeted rules (gateway-mock/rules.h)
 *   POST /mock/reset                    defaults, no rules, empty ledger and journal,
 *                                       no pending notifications
 *   POST /mock/payer/pay                the customer pays a prepay order (payer.h)
 * Errors are {"error","message"} with 400 (bad knob or JSON), 404, 405, 503
 * (ledger unavailable). */
#ifndef IDEMPAY_MOCK_ADMIN_H
#define IDEMPAY_MOCK_ADMIN_H

#include "http_msg.h"
#include "ledger.h"
#include "mock.h"

/* Serves one request whose path starts with "/mock/". */
void admin_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp);

/* Loads the persisted config (if any) into app->faults and reseeds. Returns
 * 0 (loaded or nothing stored), -1 when the ledger is unavailable (the
 * current config stays). */
int admin_load_config(mock_app *app, ledger *l);

#endif
