/* flows_rules - the pure rules of WeChat's payment flows the mock plays
 * (docs/MOCK.md "Payment flows"), without a database or a clock, so they are
 * unit-tested alone: the payment code (auth_code) rule, the mock's test
 * payment codes, time_expire's format, and the fingerprint that tells "the
 * same unifiedorder again" from "another one with this out_trade_no". */
#ifndef IDEMPAY_MOCK_FLOWS_RULES_H
#define IDEMPAY_MOCK_FLOWS_RULES_H

#include <stdbool.h>

#include "wx_xml.h"

/* WeChat's payment code: 18 digits starting with 10..15. */
bool flows_auth_code_valid(const char *s);

/* What a micropay does with a payment code. */
typedef enum {
    MP_DRAW = 0,        /* not a test code: the knobs decide */
    MP_SUCCESS,         /* charged at once */
    MP_USERPAYING_PAY,  /* USERPAYING, then paid after userpaying_ms */
    MP_USERPAYING_FAIL, /* USERPAYING, then not paid */
    MP_UNKNOWN_CHARGED, /* an unknown answer (err_code) though the charge was made */
    MP_UNKNOWN_NONE,    /* an unknown answer (err_code), nothing charged */
    MP_DECLINED         /* a definitive error (err_code): nothing charged, never will be */
} mp_outcome;

typedef struct {
    const char *suffix; /* the last 4 digits of the auth_code */
    mp_outcome outcome;
    const char *err_code; /* NULL for SUCCESS / USERPAYING */
    const char *err_des;
} mp_test_code;

/* The mock's test payment code whose last four digits are the suffix of
 * a valid auth_code (like a card network's test card numbers), or NULL
 * when the code is not one. The table is in docs/MOCK.md. */
const mp_test_code *flows_test_code(const char *auth_code);

/* Every test code (for the docs and tests), n entries in *n. */
const mp_test_code *flows_test_codes(int *n);

/* Parses WeChat's yyyyMMddHHmmss in China Standard Time (UTC+8) into ms
 * since the epoch. 0, or -1 when it is not a real date and time. */
int flows_parse_cst(const char *s, long long *ms);

/* The fingerprint of a request: an MD5 over every field except nonce_str,
 * sign and sign_type (WeChat: a repeat must carry the very same
 * parameters). out receives 32 hex digits. 0, or -1 on OOM. */
int flows_fingerprint(const wx_msg *m, char out[33]);

#endif
