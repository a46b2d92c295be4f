/* flows - what the payment flows share with the admin side (the payer,
 * GET /mock/ledger): resolving due USERPAYING micropays, and the payment
 * notification of a charge made for a prepay order. The WeChat endpoints
 * themselves are in api_call.h (flows.c). */
#ifndef IDEMPAY_MOCK_FLOWS_H
#define IDEMPAY_MOCK_FLOWS_H

#include <time.h>

#include "ledger.h"
#include "mock.h"
#include "prepay.h"

/* Resolves every USERPAYING micropay whose time came (at most 64 a call). */
void flows_sweep(ledger *l);
/* flows_sweep at most every FLOWS_SWEEP_EVERY_MS per process (every WeChat
 * call asks; an order's own calls resolve it anyway through flows_resolve). */
#define FLOWS_SWEEP_EVERY_MS 250
void flows_sweep_now_and_then(ledger *l);
/* Resolves out_trade_no's USERPAYING when its time came. 0 or -1 (store or
 * ledger failed). */
int flows_resolve(ledger *l, const char *otn);
/* Queues the payment notification of the charge txid (made at charged_at)
 * of the prepay order row, paid by openid (NULL or "": the order's, else
 * the mock payer's). */
void flows_notify(mock_app *app, const prepay_row *row, const char *txid, time_t charged_at,
                  const char *openid);

#endif
