/* gen_clients - the named kinds of client the scenario generators pay
 * with, one table: how often a client brings a payment token and an
 * Idempotency-Key, polls instead of POSTing again and retries a decline;
 * the ranges its attempts, timeout and backoff are drawn from; its patience
 * (how long it waits for an answer in all). A generator picks its kind by
 * name, gen_client_kind(GK_*), and copies the row when it changes a field
 * (retry-storm cuts its timeouts below each phase's latency; payer-edge's
 * slow-close waits longer). A row's numbers are part of the schedules (and
 * their digests) of the scenarios that use it: change one only on purpose,
 * and say so where the digests are documented. A scenario file's client
 * settings (gen_client_override) apply on top of every kind. */
#ifndef IDEMPAY_SIM_GEN_CLIENTS_H
#define IDEMPAY_SIM_GEN_CLIENTS_H

#include "gen.h"

/* X(ID, token, idem, poll, retry_declined, attempts lo, hi, timeout_ms lo, hi,
 *   backoff_ms lo, hi, patience_ms): the kind GK_<ID>. Each row was the
 * client of the scenario in its comment, field for field. */
/* clang-format off */
#define GEN_CLIENT_KINDS(X)                                                                        \
    /* the contract's scenarios: clients of the service's API */                                   \
    X(DOUBLE_CLICKER, 0.5, 0.5, 0.5, 0.0,  3,  6,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    /* retry-storm: times out before the gateway answers */                                        \
    X(IMPATIENT,      0.4, 0.5, 0.4, 0.0,  4, 10,    50,   150,   30, 200, GEN_PATIENCE_MS)        \
    /* callback-storm: polls while the notifications pour in */                                    \
    X(NOTIFIED,       0.3, 0.3, 0.6, 0.0,  3,  6,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    /* gateway-chaos: many attempts, retries some declines */                                      \
    X(DECLINE_RETRY,  0.3, 0.4, 0.5, 0.3,  3,  8,  8000, 10000,   50, 300, GEN_PATIENCE_MS)        \
    /* crash: attempts and patience that outlast a killed worker */                                \
    X(CRASH_SURVIVOR, 0.3, 0.5, 0.5, 0.2,  8, 12,  6000,  8000,  200, 600, 20000)                  \
    /* requests that must change nothing: token-replay (always a token),                           \
     * forged-callback's paid and declined targets, order-mismatch, and                            \
     * v3-attacks' declined targets (one POST) */                                                  \
    X(TOKEN_HOLDER,   1.0, 0.3, 0.5, 0.0,  2,  5,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    X(FORGERY_TARGET, 0.3, 0.3, 0.5, 0.0,  3,  5,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    X(MISMATCHER,     0.4, 0.4, 0.5, 0.0,  3,  5,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    X(ONE_POST,       0.0, 0.0, 0.0, 0.0,  1,  1,  8000, 10000,  100, 300, GEN_PATIENCE_MS)        \
    /* the real flows' customers: payer's prepay and v3-attacks' payers (a                         \
     * browser: no token, no polling), payer-edge's userpaying (a payment code                     \
     * confirmed on the phone), payer's micropay (payment codes, timeouts                          \
     * shorter than USERPAYING), refunds (pays, then the merchant refunds) */                      \
    X(CUSTOMER,       0.0, 0.5, 0.0, 0.0,  3,  6,  4000,  8000,  100, 300, 20000)                  \
    X(PHONE_CONFIRM,  0.0, 0.5, 0.5, 0.0,  3,  8,   300,  1500,  200, 600, 15000)                  \
    X(MICROPAY,       0.0, 0.5, 0.5, 0.0,  2,  6,   300,  2500,  100, 500, 15000)                  \
    X(REFUNDER,       0.3, 0.5, 0.0, 0.0,  3,  6,  2000,  5000,  100, 300, 15000)
/* clang-format on */

#define GK_ENUM_ROW(id, ...) GK_##id,
typedef enum { GEN_CLIENT_KINDS(GK_ENUM_ROW) GK_COUNT } gen_client_kind_id;
#undef GK_ENUM_ROW

/* The row of kind, a GK_* constant (GK_COUNT and beyond: undefined). */
const gen_client *gen_client_kind(gen_client_kind_id kind);

#endif
