/* payer - the customer's side of the real flows (docs/FLOWS.md): the
 * payment code a MICROPAY client shows, and the mock's payer API
 * (POST {gateway}/mock/payer/pay), which plays the customer's WeChat app
 * paying a prepay order by its prepay_id or code_url.
 *
 * The request text and the reading of the answer are pure (unit-tested);
 * payer_pay sends one request on the caller's http_client. What the payer
 * is told:
 *   200 {"result":"SUCCESS","transaction_id","out_trade_no"}  PAYER_PAID
 *   200 {"result":"FAIL","err_code","err_code_des"}           PAYER_REFUSED
 *       (ORDERPAID, ORDERCLOSED, ORDER_EXPIRED, ORDERNOTEXIST ...)
 *   404 (a mock without the payer API)                         PAYER_NO_API
 *   anything else: no answer, a 5xx, an unreadable body       PAYER_UNKNOWN
 * A refusal charged nothing; PAYER_UNKNOWN may have charged (the checker
 * attributes a charge made while the call was under way to it). */
#ifndef IDEMPAY_SIM_PAYER_H
#define IDEMPAY_SIM_PAYER_H

#include <stddef.h>
#include <stdint.h>

#include "http_client.h"

#define PAYER_AUTH_CODE_LEN 18
#define PAYER_FIELD_MAX 256

/* The flows a client asks for (trade_type). FLOW_MICROPAY is 0: every task
 * that does not say otherwise pays with its payment code. */
typedef enum { FLOW_MICROPAY = 0, FLOW_NATIVE, FLOW_JSAPI, FLOW_COUNT } payer_flow;

/* What the customer of a NATIVE/JSAPI order does once the service handed
 * out its prepay (sched_task.payer). */
typedef enum {
    PB_NONE = 0,
    PB_ONCE,         /* pays at once */
    PB_TWICE,        /* pays, then pays again (WeChat refuses the second: ORDERPAID) */
    PB_LATE,         /* pays slowly: the payment is confirmed delay_ms later */
    PB_AFTER_CLOSE,  /* waits until the service reports the order closed, then pays */
    PB_STALE,        /* keeps the code and pays it long after (pay_delay_ms) */
    PB_ABANDON,      /* never pays: the order must end closed after its expiry */
    PB_INTO_CLOSE,   /* starts paying just before the expiry, so slowly (pay_delay_ms) that
                        the merchant's close comes while it is confirmed: refused, or (the
                        mock's close_race_rate) charged at the close, for the merchant to
                        refund */
    PB_ACROSS_CLOSE, /* (payer-edge) starts paying just before the expiry, so slowly
                        (pay_delay_ms) that it is confirmed after the merchant's close
                        was tried; does not wait for the payer's answer: the page polls
                        meanwhile */
    PB_RELOAD,       /* (payer-edge) the page is reloaded (POST /api/pay again) while the
                        prepay is open; the customer pays the code of the second answer,
                        then the first code it kept (refused: ORDERPAID) */
    PB_COUNT
} payer_behaviour;

/* The behaviours the `payer` scenario cycles through (PB_ONCE .. PB_INTO_CLOSE): later
 * ones are payer-edge's, so that payer's schedule stays as it was. */
#define PB_PAYER_COUNT (PB_INTO_CLOSE + 1)

typedef enum { PAYER_PAID = 0, PAYER_REFUSED, PAYER_UNKNOWN, PAYER_NO_API } payer_result;

/* One payment by the customer: by prepay_id or code_url (one of them, the
 * other NULL or ""), openid optional (NULL/""), delay_ms 0 for at once. */
typedef struct {
    const char *prepay_id;
    const char *code_url;
    const char *openid;
    uint32_t delay_ms;
} payer_request;

typedef struct {
    payer_result result;
    char transaction_id[40];
    char out_trade_no[48];
    char err_code[48]; /* FAIL's err_code, or what made the answer unknown */
} payer_reply;

/* "once", "twice", "late", "after-close", "stale", "abandon", "into-close",
 * "across-close", "reload" ("-" none). */
const char *payer_behaviour_name(int b);

/* "MICROPAY", "NATIVE", "JSAPI" ("?" out of range). */
const char *payer_flow_name(int flow);

/* The customer's payment code for order number order_no: 18 digits, prefix
 * 10-15 (WeChat's payment-code rule), derived from the order number only,
 * so every POST of an order shows the same code and the schedule draws
 * nothing for it. out holds PAYER_AUTH_CODE_LEN + 1. Returns out. */
char *payer_auth_code(const char *order_no, char *out);

/* The customer's openid for a user ("osim" + the user id). Returns out. */
char *payer_openid(int64_t user_id, char *out, size_t len);

/* The JSON body of req into out (len bytes). Returns its length, or -1
 * (neither prepay_id nor code_url, or it does not fit). */
int payer_request_json(const payer_request *req, char *out, size_t len);

/* Reads an answer (HTTP code, body[0..len)) into out. Never fails. */
void payer_reply_read(long http_code, const char *body, size_t len, payer_reply *out);

/* POSTs req to {gateway}/mock/payer/pay on h (timeout_ms for the whole call;
 * a delay_ms payment waits for its confirmation, so give it that much more).
 * Fills out (and rep) and returns the transport status. */
http_status payer_pay(http_client *h, const char *gateway, const payer_request *req,
                      long timeout_ms, http_reply *rep, payer_reply *out);

#endif
