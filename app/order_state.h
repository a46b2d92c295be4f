/* order_state - the payment order's states (the seed article's numbers) and
 * the transitions a request may make: PENDING->PROCESSING, PROCESSING->PAID,
 * PROCESSING->FAILED, FAILED->PROCESSING (a retry, only of a FAILED order
 * whose final_reason is ORDER_RETRYABLE). PAID is terminal, and so is a
 * FAILED order with another final_reason (docs/FENCE.md).
 * Outside this table, FAILED->PAID happens only on the gateway's proof that
 * a retryable FAILED order was charged after it failed (a verified
 * notification in callback.c, the reconciler's recheck, the statement job):
 * the money was taken, so the order is paid. A final FAILED order never
 * becomes PAID: any charge of it is refunded. */
#ifndef IDEMPAY_ORDER_STATE_H
#define IDEMPAY_ORDER_STATE_H

#include <stdbool.h>

typedef enum {
    ORDER_PENDING = 0,
    ORDER_PROCESSING = 1,
    ORDER_PAID = 2,
    ORDER_FAILED = 3
} order_status;

#define ORDER_STATUS_COUNT 4

/* payment_order.final_reason: why a FAILED order can never be paid. */
typedef enum {
    ORDER_RETRYABLE = 0,         /* not final: a later POST may try again */
    ORDER_FINAL_CLOSED = 1,      /* its uncertain attempt was closed at the gateway */
    ORDER_FINAL_WRONG_AMOUNT = 2 /* charged another amount; that charge is refunded */
} order_final_reason;

/* The contract's name of s ("PENDING", "PROCESSING", "PAID", "FAILED"), or
 * "UNKNOWN" for a value outside the enum. Never NULL. */
const char *order_state_name(int s);

/* true when v (as stored in payment_order.status) is one of the four
 * states; *out is then set. false leaves *out untouched. */
bool order_state_from_int(long long v, order_status *out);

/* true when the transition from -> to is in the table above. Any value
 * outside the enum (on either side) is false, as is from == to. */
bool order_state_can_transition(int from, int to);

#endif
