/* checker - the contract's invariants, judged from the schedule, the client
 * history, the gateway ledger and the final order rows (API, and the
 * database when read). Pure: no I/O, so unit tests feed it hand-made
 * histories. Every violation names its invariant, the scenario of the order
 * (or token) and the order, so the report can print a minimal witness. */
#ifndef IDEMPAY_SIM_CHECKER_H
#define IDEMPAY_SIM_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "schedule.h"

typedef enum {
    INV_NO_DOUBLE_CHARGE = 0,      /* <= 1 ledger charge per out_trade_no (refunded or not) */
    INV_CHARGE_HAS_PAID_ORDER,     /* every charge: the order is PAID with the same amount */
    INV_PAID_HAS_CHARGE,           /* every PAID order: a charge with its transaction_id */
    INV_CLIENT_PAID_IS_FINAL,      /* every 200 PAID a client saw is PAID (same txn) at the end */
    INV_TOKEN_SINGLE_ORDER,        /* a token is accepted for at most one order, of its own
                                      user, before it expires; unknown tokens never */
    INV_FORGED_CALLBACK_NO_EFFECT, /* orders named by forged callbacks are unchanged */
    INV_MISMATCH_NO_EFFECT,        /* another amount/user for an order is refused; rows keep
                                      the user and amount the order was created with */
    INV_ALL_SETTLED,               /* no order left PROCESSING */
    /* What the service says, judged against the ledger's charge times: */
    INV_NO_402_AFTER_CHARGE,       /* a 402 ("nothing was charged") is never answered once a
                                      charge of the order exists */
    INV_NO_PAID_AFTER_402,         /* after a 402 the order turns PAID only by a charge made
                                      for a request sent after it */
    INV_NO_FAILED_READ_AFTER_CHARGE, /* no order read shows FAILED once a charge exists */
    INV_PAID_ANSWER_HAS_CHARGE,    /* every PAID a client was told names a charge the gateway
                                      had made by then */
    INV_REFUSAL_NO_EFFECT,         /* 403/409/422 change nothing: every charge has a request
                                      the service took; an order only refused does not exist */
    INV_SECOND_CHARGE_REFUNDED,    /* a second charge the payer made at the gateway is refunded */
    INV_CLOSED_AFTER_DOUBT,        /* 402 payment_closed only after a request of the order was
                                      left in doubt (no answer, 5xx, or its own attempt's 202)
                                      at least a lease (obs->lease_us) before */
    /* Every customer payment and its refunds (the real flows, docs/FLOWS.md): */
    INV_PAYMENT_KEPT_OR_REFUNDED,  /* every charge is its order's kept charge or refunded */
    INV_ONE_KEPT_CHARGE,           /* no order keeps two charges (unrefunded) */
    INV_CLOSED_CLIENT_NOT_CHARGED, /* a client told 402 / read FAILED, with no later request of
                                      the order, never ends with a kept charge */
    INV_REFUND_WITHIN_CHARGE,      /* no refund exceeds its charge, none is made twice */
    /* The real flows' edges and the merchant's refunds (issue 22; checker_refund.c): */
    INV_NO_CHARGE_AFTER_CLOSE,     /* once the service said an order is closed (402
                                      payment_closed; a FAILED read of a payer(-edge) order)
                                      the gateway makes no charge of it */
    INV_REFUND_RESULT_REPORTED,    /* every refund the gateway accepted is listed by the
                                      service with the gateway's result: SUCCESS only when it
                                      succeeded, REFUNDCLOSE / CHANGE reported as such */
    INV_REFUND_NAMES_A_CHARGE,     /* the service refunds only charges the gateway made: no
                                      more duplicate-charge refunds than second charges */
    INV_REFUND_MADE_ONCE,          /* one Idempotency-Key, one refund (every answer names
                                      the same refund_no); every refund of the merchant at the
                                      gateway is one the service answered; the refunds that
                                      took money stay within the charge */
    INV_COUNT
} sim_invariant;

/* Times compared across the simulator and the ledger allow for the two
 * clocks' reading (one machine, but the ledger takes its time just before
 * its commit): */
#define CHK_CLOCK_SLACK_US 50000     /* a charge "before" a time is before it minus this */
#define CHK_ANSWER_SLACK_US 250000   /* a 402 is judged this much before the client got it */
/* How long the service may go on with a request whose client gave up
 * without an answer (two gateway calls and a second), when obs does not say. */
#define CHK_DEFAULT_SERVICE_CALL_US 7000000

/* Row index of violations that belong to no scenario (a charge for an order
 * number the simulator never made). */
#define CHK_UNATTRIBUTED SC_COUNT

typedef struct {
    uint8_t invariant;
    uint8_t scenario;      /* 0..SC_COUNT (CHK_UNATTRIBUTED) */
    long order;            /* schedule order index, -1 none */
    long token;            /* token slot, -1 none */
    long charge;           /* ledger index of the charge concerned, -1 none */
    char message[256];
} chk_violation;

typedef struct {
    size_t orders;         /* schedule orders of the scenario */
    uint64_t ops;          /* client operations */
    uint64_t outcome[OUT_COUNT];
    uint64_t posts;        /* POST /api/pay */
    uint64_t duplicates;   /* POSTs of an order after its first */
    uint64_t replayed;     /* answers with Idempotent-Replayed: true */
    uint64_t absorbed;     /* duplicates of orders the gateway charged at most once */
    uint64_t charges;      /* ledger charges of the scenario's orders */
    uint64_t paid;         /* orders PAID at the end (API view) */
    uint64_t failed;       /* orders FAILED at the end */
    uint64_t payer_paid;   /* the customer's payments through the mock's payer: charged */
    uint64_t payer_refused;/*   refused (ORDERPAID, ORDERCLOSED, ORDER_EXPIRED ...) */
    uint64_t payer_unknown;/*   no answer */
    uint64_t refunds;      /* ledger charges of the scenario's orders refunded at the end */
} chk_stats;

typedef struct {
    chk_violation *v;
    size_t nv, cap;
    size_t count[SC_COUNT + 1][INV_COUNT]; /* violations per scenario x invariant */
    int ran[SC_COUNT + 1];                 /* the scenario had phases (or violations) */
    chk_stats stats[SC_COUNT + 1];
    size_t unreadable;                     /* orders whose final row could not be read */
    size_t total;                          /* violations */
    double check_s[INV_COUNT];             /* seconds spent judging each invariant */
} chk_result;

/* Contract names ("no_double_charge" ...) and one-line descriptions. */
const char *checker_invariant_name(int inv);
const char *checker_invariant_text(int inv);

/* Judges obs against s. Fills *out (initialised here; free with
 * checker_result_free even on failure). Returns 0, or -1 on OOM (then the
 * result is incomplete and must not be trusted). */
int checker_run(const sim_schedule *s, const sim_observations *obs, chk_result *out);
void checker_result_free(chk_result *r);

/* true when a POST /api/pay answer means the service took the request into
 * payment (200, 202 or 402): what counts as a token being accepted. */
int checker_pay_accepted(const sim_op *op);

/* true when a POST /api/pay was refused without effect by contract: 403,
 * 409 or 422. */
int checker_pay_refused(const sim_op *op);

#endif
