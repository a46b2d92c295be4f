/* scenario_edge - the generators of the real flows' edges (issue 22):
 *  - `payer-edge`: NATIVE/JSAPI customers who pay slowly across a close the
 *    gateway refuses (its minimum age longer than the service's: the knob
 *    closeorder_min_age_ms), or reload the page while the prepay is open and
 *    pay both codes; payment-code clients whose customer stays USERPAYING
 *    past the service's first polls;
 *  - `refunds`: merchant refunds (POST /api/pay/orders/{no}/refunds) twice,
 *    concurrently, partial and full, with the mock's refund faults (delays,
 *    REFUNDCLOSE, CHANGE, NOTENOUGH, refund endpoint errors).
 * Neither is in `all` (their draws would change the documented digests). */
#ifndef IDEMPAY_SIM_SCENARIO_EDGE_H
#define IDEMPAY_SIM_SCENARIO_EDGE_H

#include "gen.h"

/* The gateway's minimum age of a close in payer-edge's `slow-close` phase:
 * longer than the stack's prepay (8 s), margin (2 s) and the slowest
 * payment across the close (confirmed by 16.4 s). */
#define EDGE_CLOSE_MIN_AGE_MS 20000

/* How long `slow-close` lasts past its last order's start, so that the
 * gateway's 20 s rule is still the phase's when the service first closes
 * that order (the stack's prepay 8 s + margin 2 s + up to two reconciler
 * periods + 2 s): a phase's knobs last until the next phase, and without it
 * the next phase's minimum age (3 s) let every close through, so no close
 * was refused (the `close-refusal-closed` mutant survived). */
#define EDGE_CLOSE_TAIL_MS 16000

/* The generators gen_payer_edge and gen_refunds are declared by their rows
 * of scenario_table.h (scenarios.h). */

#endif
