/* refund_state - the refund state machine and the amount rule, decided
 * without any I/O (refund_queue.c, refund_api.c and refund_notify.c apply
 * them to payment_refund rows; tests/unit/test_refund_state.c checks them).
 *
 * A refund is PENDING until the gateway accepts it (the refund API's SUCCESS
 * means "accepted", nothing more), ACCEPTED until refundquery or the verified
 * refund notification gives its result, then SUCCESS, or REFUNDCLOSE /
 * CHANGE, which stop it for an operator. A refusal that no retry can cure
 * (USER_ACCOUNT_ABNORMAL, an invalid transaction, ...) is ABNORMAL, also for
 * an operator. The final states are never left by the worker. */
#ifndef IDEMPAY_REFUND_STATE_H
#define IDEMPAY_REFUND_STATE_H

#include <stdint.h>

/* payment_refund.state (sql/012_refunds.sql). */
typedef enum {
    REFUND_PENDING = 0,  /* to submit (again) to the gateway, same out_refund_no */
    REFUND_SUCCESS = 1,  /* refunded: the money is back with the customer */
    REFUND_ACCEPTED = 2, /* accepted by the gateway; result not known yet */
    REFUND_CLOSED = 3,   /* REFUNDCLOSE: the gateway closed it, nothing refunded */
    REFUND_CHANGE = 4,   /* CHANGE: the refund to the customer's account failed */
    REFUND_ABNORMAL = 5  /* refused for good at submission (err_code kept) */
} refund_status;

/* What the worker does with a row after an event. */
typedef enum {
    REFUND_ACT_NONE = 0, /* nothing changes (already final, or an unrelated event) */
    REFUND_ACT_RETRY,    /* same state, next attempt after the backoff */
    REFUND_ACT_POLL,     /* same state (ACCEPTED), refundquery again later */
    REFUND_ACT_MOVE,     /* write the new state */
    REFUND_ACT_STUCK     /* write the new (final) state, count it, log an ERROR */
} refund_action;

typedef struct {
    refund_status next;
    refund_action action;
} refund_step;

/* 1 when s is final (SUCCESS, CLOSED, CHANGE, ABNORMAL). */
int refund_state_final(refund_status s);
/* 1 when s waits for an operator (CLOSED, CHANGE, ABNORMAL). */
int refund_state_stuck(refund_status s);
/* The API's name of s: PROCESSING (PENDING, ACCEPTED), SUCCESS,
 * REFUNDCLOSE, CHANGE, ABNORMAL; "UNKNOWN" for a value out of range. */
const char *refund_state_name(int s);

/* The submission's outcome: the gateway accepted (accepted = 1), or refused
 * with err_code (accepted = 0; NULL or "" when no verified answer came:
 * transport trouble, SYSTEMERROR...). From PENDING: accepted -> ACCEPTED;
 * NOTENOUGH, SYSTEMERROR, BIZERR_NEED_RETRY, FREQUENCY_LIMITED,
 * INVALID_REQ_TOO_MUCH, no err_code -> RETRY; any other err_code ->
 * ABNORMAL (STUCK). From any other state: NONE. */
refund_step refund_state_on_submit(refund_status cur, int accepted, const char *err_code);

/* A verified result (refundquery's refund_status_0 or the notification's
 * refund_status): SUCCESS -> SUCCESS (MOVE); REFUNDCLOSE -> CLOSED, CHANGE
 * -> CHANGE (STUCK); PROCESSING -> POLL from ACCEPTED, RETRY from PENDING
 * (it was accepted: the worker moves it to ACCEPTED by the submit again,
 * which the gateway answers with the same refund); REFUNDNOTEXIST (refundquery
 * of a refund the gateway does not know) -> PENDING (RETRY: submit it again,
 * same out_refund_no); NULL or anything else -> POLL / RETRY (not known).
 * From a final state: NONE. */
refund_step refund_state_on_result(refund_status cur, const char *refund_status_text);

/* The amount rule of a merchant refund of a kept charge: charge_fee fen
 * charged, already_fen the sum of its refunds that are not REFUNDCLOSE
 * (pending, accepted, succeeded or stuck all count: their money may be or
 * is gone), request_fen asked now. */
typedef enum {
    REFUND_AMOUNT_OK = 0,
    REFUND_AMOUNT_INVALID, /* request_fen < 1, or charge/already negative */
    REFUND_AMOUNT_EXCEEDS  /* already_fen + request_fen > charge_fee */
} refund_amount_rule;

refund_amount_rule refund_amount_check(int64_t charge_fee, int64_t already_fen,
                                       int64_t request_fen);

#endif
