/* api_call - one WeChat call being served, shared by the files that serve
 * the endpoints (api_handle.c: the pipeline, unifiedorder's instant charge,
 * orderquery, refund, closeorder, downloadbill; flows.c: prepay,
 * micropay, reverse, closeorder's age). Internal to the mock's API. */
#ifndef IDEMPAY_MOCK_API_CALL_H
#define IDEMPAY_MOCK_API_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "journal.h"

typedef struct {
    mock_app *app;
    ledger *l;
    http_response *resp;
    wx_msg m; /* the request's fields once parsed */
    api_verdict v;
    fault_decision fd;
    long long hold_ms; /* a withheld reply's longest hold (hold_max_ms or the rule's) */
    journal_entry je;
    bool journaled; /* the entry went out already (a withheld reply) */
    /* APIv3 (v3_api.c): the flows run unchanged, but api_send and the
     * statement record their outcome in `out` instead of answering XML;
     * v3_api.c answers in v3's JSON. Cut and withheld replies are the
     * same in both dialects. */
    bool v3;
    struct {
        bool set;             /* api_send ran */
        const char *fail_msg; /* return_code FAIL (static text) */
        const char *err_code; /* result_code FAIL (static text) */
        char err_des[160];
        wx_msg extra;    /* the reply's fields (initialised with m; freed with it) */
        char *statement; /* downloadbill's text (malloc'd), statement_len bytes */
        size_t statement_len;
    } out;
} api_call;

/* snprintf(dst, cap, "%s", src or ""). */
void api_copy(char *dst, size_t cap, const char *src);
/* A signed XML reply (api_build_reply's arguments), noted in the journal entry. */
void api_send(api_call *c, const char *fail_msg, const char *err_code, const char *err_des,
              const wx_msg *extra);
/* result_code FAIL with err_code. */
void api_fail(api_call *c, const char *err_code, const char *err_des);
/* A reply cut mid-body (the reset fault; also "charged but no reply"). */
void api_cut(api_call *c);
/* timeout_after_charge: journal now, withhold the reply up to hold_max_ms, cut it. */
void api_withhold(api_call *c, const char *otn, long long hold_max_ms);
/* The request's openid when it is a valid one, else the mock payer's. */
void api_openid(const wx_msg *req, char out[129]);

/* Draws the call's faults (api_handle's order: unifiedorder and micropay
 * from the main PRNG, the others from the auxiliary one), then lets the
 * first live targeted rule matching otn (may be "" or NULL) decide
 * instead. Sets c->fd, c->hold_ms, c->je.rule and c->je.fault. */
void api_draw_otn(api_call *c, api_endpoint ep, const char *otn);
/* Runs endpoint ep's flow on a validated call (c->m, c->v filled; the
 * faults of the non-charging endpoints already applied): what api_handle
 * does after validation. */
void api_run(api_call *c, api_endpoint ep);

/* flows.c: the payment flows (docs/MOCK.md "Payment flows"). */
/* unifiedorder with instant_charge off: a prepay order, no charge. */
void flows_unifiedorder(api_call *c);
/* /pay/micropay: the payment code charged at once, or USERPAYING. */
void flows_micropay(api_call *c);
/* /secapi/pay/reverse: micropay's fence. */
void flows_reverse(api_call *c);
/* closeorder's rules for the orders of the flows (minimum age, the payment
 * confirmed at the instant of the close): true when the reply is set;
 * false to close as before. */
bool flows_closeorder(api_call *c);
/* orderquery of an order of the flows: resolves a due USERPAYING first;
 * its trade_state when the flows' state says more than the ledger's
 * (USERPAYING, REVOKED), into state (cap 16), else "". 0 or -1 (SYSTEMERROR). */
int flows_query_state(api_call *c, const char *otn, char *state);

#endif
