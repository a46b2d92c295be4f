/* prepay - the mock's store of payment orders as WeChat keeps them before
 * money moves: prepay orders (unifiedorder: prepay_id, code_url, expiry),
 * and payment-code orders (micropay: USERPAYING, reverse), in the table
 * mock_prepay (sql/009_mock_flows.sql).
 *
 * The money is not here: a payment is a charge in the ledger (ledger.h,
 * ledger_attempt), a close or a reverse sets the ledger's closed_at, so the
 * race of a payment and a close stays decided on the ledger's mock_trade
 * row. This store only says which order a prepay_id / code_url names, what
 * parameters created it, until when it lives, and the micropay's
 * USERPAYING / REVOKED state.
 *
 * Each thread has its own MariaDB connection (opened lazily, the ledger's
 * database; dropped and reopened after a lost connection); prepay_thread_end
 * closes it. Every int function returns 0, or -1 with the reason in
 * prepay_error(); nothing is retried here (callers answer SYSTEMERROR). */
#ifndef IDEMPAY_MOCK_PREPAY_H
#define IDEMPAY_MOCK_PREPAY_H

#include <stdbool.h>

#include "txid.h"

#define PREPAY_ID_BUF 65
#define PREPAY_TOKEN_BUF 33

typedef struct {
    bool found;
    char out_trade_no[33];
    bool micropay;
    char prepay_id[PREPAY_ID_BUF];     /* "" for micropay */
    char code_token[PREPAY_TOKEN_BUF]; /* NATIVE only */
    char trade_type[16];
    char openid[129];
    long long total_fee;
    char fingerprint[33];
    char notify_url[257];
    long long created_ms, expire_ms, prepay_until_ms;
    char state[16]; /* NOTPAY, USERPAYING, PAID, PAYERROR, REVOKED */
    long long resolve_ms;
    bool resolve_pay;
    long long answered_ms;
    long long paying_until_ms;
    char race_txid[TXID_BUF];
    int api_version; /* 2, or 3: created by APIv3 (its notifications are v3's) */
} prepay_row;

typedef enum { PREPAY_BY_OTN = 0, PREPAY_BY_ID, PREPAY_BY_TOKEN } prepay_key;

/* Reads the row named by key (out->found false when none). */
int prepay_get(prepay_key by, const char *key, prepay_row *out);

/* Inserts r unless its out_trade_no (or prepay_id / code_token) exists:
 * *inserted says which. */
int prepay_insert(const prepay_row *r, bool *inserted);

/* state from -> to on out_trade_no; *changed says whether it moved. */
int prepay_cas_state(const char *otn, const char *from, const char *to, bool *changed);

/* state -> to whatever it was. */
int prepay_set_state(const char *otn, const char *to);
/* NOTPAY -> USERPAYING resolving at resolve_ms to paid (pay) or not. */
int prepay_set_userpaying(const char *otn, long long resolve_ms, bool pay);

/* Sets answered_ms (micropay) / paying_until_ms (the payer) / race_txid. */
int prepay_set_answered(const char *otn, long long ms);
int prepay_set_paying(const char *otn, long long until_ms);
int prepay_set_race(const char *otn, const char *txid);

/* Up to max out_trade_no of USERPAYING orders whose resolve_ms <= now_ms,
 * into otns[i][33]; *n receives how many. */
int prepay_due(long long now_ms, char (*otns)[33], int max, int *n);

/* Empties the table (POST /mock/reset). */
int prepay_reset(void);

/* The last error of this thread ("" after success). */
const char *prepay_error(void);

/* Closes this thread's connection. */
void prepay_thread_end(void);

#endif
