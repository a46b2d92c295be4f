/* order_state - the payment order's states (the seed article's numbers) and
 * the transitions a request may make: PENDING->PROCESSING, PROCESSING->PAID,
 * PROCESSING->FAILED, FAILED->PROCESSING (a retry). PAID is terminal.
 * Outside this table, FAILED->PAID happens only on the gateway's proof that
 * the order was charged after it failed (a verified notification in
 * callback.c, the reconciler's recheck in order_store_recheck_paid): the
 * money was taken, so the order is paid. */
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
