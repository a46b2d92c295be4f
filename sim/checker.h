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

/* The invariants, in contract order (the order of the report's columns,
 * its JSON and JUnit): one row each,
 *     X(ID, name, short, text)
 * ID gives the enum constant INV_<ID>; name is the contract name
 * ("no_double_charge") and names the check, chk_<name>(chk_ctx *), in one of
 * the checker_*.c files (checker_int.h declares it from this row); short is
 * the report table's column head (at most 9 characters); text the
 * one-line description the report and its JSON print. Adding an invariant
 * is one row here plus its check (docs/SIMULATOR.md, "Adding an
 * invariant"); appending keeps the numbers of the others. */
#define CHECKER_INVARIANTS(X)                                                                       \
    /* <= 1 ledger charge per out_trade_no (refunded or not) */                                     \
    X(NO_DOUBLE_CHARGE, no_double_charge, "no-dbl",                                                 \
      "no order charged twice by the gateway (a refunded second charge still counts)")              \
    /* every charge: the order is PAID with the same amount */                                      \
    X(CHARGE_HAS_PAID_ORDER, charge_has_paid_order, "chg>paid",                                     \
      "every ledger charge has a PAID order of the same amount")                                    \
    /* every PAID order: a charge with its transaction_id */                                        \
    X(PAID_HAS_CHARGE, paid_has_charge, "paid>chg",                                                 \
      "every PAID order has a ledger charge with its transaction_id")                               \
    /* every 200 PAID a client saw is PAID (same txn) at the end */                                 \
    X(CLIENT_PAID_IS_FINAL, client_paid_is_final, "client",                                         \
      "every 200 PAID a client saw is PAID, with the same transaction_id, at the end")              \
    /* a token is accepted for at most one order, of its own user, before it expires; unknown       \
     * tokens never */                                                                              \
    X(TOKEN_SINGLE_ORDER, token_single_order, "token",                                              \
      "every token accepted for at most one order, only of its own user, never unknown or expired") \
    /* orders named by forged callbacks are unchanged */                                            \
    X(FORGED_CALLBACK_NO_EFFECT, forged_callback_no_effect, "forged",                               \
      "forged callbacks change nothing")                                                            \
    /* another amount/user for an order is refused; rows keep the user and amount the order         \
     * was created with */                                                                          \
    X(MISMATCH_NO_EFFECT, mismatch_no_effect, "mismatch",                                           \
      "requests with another amount or user for an existing order are refused and change nothing")  \
    /* no order left PROCESSING */                                                                  \
    X(ALL_SETTLED, all_settled, "settled", "no order left PROCESSING after the settle period")      \
    /* what the service says, judged against the ledger's charge times: a 402 ("nothing was         \
     * charged") is never answered once a charge of the order exists */                             \
    X(NO_402_AFTER_CHARGE, no_402_after_charge, "402-lie",                                          \
      "no 402 (\"nothing was charged\") answered once a charge of the order existed")               \
    /* after a 402 the order turns PAID only by a charge made for a request sent after it */        \
    X(NO_PAID_AFTER_402, no_paid_after_402, "402-paid",                                             \
      "after a 402 the order turns PAID only by a charge for a request sent after it")              \
    /* no order read shows FAILED once a charge exists */                                           \
    X(NO_FAILED_READ_AFTER_CHARGE, no_failed_read_after_charge, "fail-rd",                          \
      "no order read showed FAILED once a charge of the order existed")                             \
    /* every PAID a client was told names a charge the gateway had made by then */                  \
    X(PAID_ANSWER_HAS_CHARGE, paid_answer_has_charge, "paid-ans",                                   \
      "every PAID a client was told names a charge the gateway had already made")                   \
    /* 403/409/422 change nothing: every charge has a request the service took; an order only       \
     * refused does not exist */                                                                    \
    X(REFUSAL_NO_EFFECT, refusal_no_effect, "refusal",                                              \
      "403/409/422 change nothing: every charge has a request the service took; an order only "     \
      "refused does not exist")                                                                     \
    /* a second charge the payer made at the gateway is refunded */                                 \
    X(SECOND_CHARGE_REFUNDED, second_charge_refunded, "2nd-rfd",                                    \
      "a second charge the payer made at the gateway is refunded by the end")                       \
    /* 402 payment_closed only after a request of the order was left in doubt (no answer,           \
     * 5xx, or its own attempt's 202) at least a lease (obs->lease_us) before */                    \
    X(CLOSED_AFTER_DOUBT, closed_after_doubt, "closed",                                             \
      "402 payment_closed only once a request of the order was left in doubt (no answer, 5xx, or "  \
      "its own attempt's 202)")                                                                     \
    /* every customer payment and its refunds (the real flows, docs/FLOWS.md;                       \
     * checker_money.c): every charge is its order's kept charge or refunded */                     \
    X(PAYMENT_KEPT_OR_REFUNDED, payment_kept_or_refunded, "kept|rfd",                               \
      "every customer payment (the service's, the payer's) ends as its order's one kept charge or " \
      "refunded")                                                                                   \
    /* no order keeps two charges (unrefunded) */                                                   \
    X(ONE_KEPT_CHARGE, one_kept_charge, "one-kept", "no order keeps two charges")                   \
    /* a client told 402 / read FAILED, with no later request of the order, never ends with a       \
     * kept charge */                                                                               \
    X(CLOSED_CLIENT_NOT_CHARGED, closed_client_not_charged, "told-no",                              \
      "a client told 402 (closed, declined) or that read FAILED, with no later request of the "     \
      "order, never ends with a kept charge")                                                       \
    /* no refund exceeds its charge, none is made twice */                                          \
    X(REFUND_WITHIN_CHARGE, refund_within_charge,                                                   \
      "refund<=", "no refund exceeds its charge, and no charge is refunded twice")                  \
    /* the real flows' edges and the merchant's refunds (issue 22; checker_refund.c): once          \
     * the service said an order is closed (402 payment_closed; a FAILED read of a                  \
     * payer(-edge) order) the gateway makes no charge of it */                                     \
    X(NO_CHARGE_AFTER_CLOSE, no_charge_after_close, "closed$",                                      \
      "once the service said an order is closed (402 payment_closed, or a FAILED read of a real "   \
      "flows' customer), the gateway makes no charge of it")                                        \
    /* every refund the gateway accepted is listed by the service with the gateway's result:        \
     * SUCCESS only when it succeeded, REFUNDCLOSE / CHANGE reported as such */                     \
    X(REFUND_RESULT_REPORTED, refund_result_reported, "rfd-rep",                                    \
      "every refund the gateway accepted ends SUCCESS in the service only when it succeeded, and "  \
      "REFUNDCLOSE / CHANGE are reported as such")                                                  \
    /* the service refunds only charges the gateway made: no more duplicate-charge refunds          \
     * than second charges */                                                                       \
    X(REFUND_NAMES_A_CHARGE, refund_names_a_charge, "rfd-chg",                                      \
      "the service refunds only charges the gateway made")                                          \
    /* one Idempotency-Key, one refund (every answer names the same refund_no); every refund        \
     * of the merchant at the gateway is one the service answered; the refunds that took            \
     * money stay within the charge */                                                              \
    X(REFUND_MADE_ONCE, refund_made_once, "rfd-once",                                               \
      "one Idempotency-Key makes one refund; every merchant refund at the gateway is one the "      \
      "service answered; the refunds that took money stay within the charge")                       \
    /* the lease covers the service's own calls (checker_fence.c): no closeorder / reverse of       \
     * an out_trade_no arrives while its payment call is still at the gateway, less than the        \
     * gateway timeout after it arrived (the mock's journal) */                                     \
    X(NO_FENCE_WITHIN_CALL, no_fence_within_call, "fence<T",                                        \
      "no close or reverse of an attempt reaches the gateway while the service still waits for "    \
      "that attempt's own payment call (within its gateway timeout)")

#define CHECKER_INVARIANT_ENUM(id, name, short, text) INV_##id,
typedef enum { CHECKER_INVARIANTS(CHECKER_INVARIANT_ENUM) INV_COUNT } sim_invariant;
#undef CHECKER_INVARIANT_ENUM

/* Times compared across the simulator and the ledger allow for the two
 * clocks' reading (one machine, but the ledger takes its time just before
 * its commit): */
#define CHK_CLOCK_SLACK_US 50000   /* a charge "before" a time is before it minus this */
#define CHK_ANSWER_SLACK_US 250000 /* a 402 is judged this much before the client got it */
/* How long the service may go on with a request whose client gave up
 * without an answer (two gateway calls and a second), when obs does not say. */
#define CHK_DEFAULT_SERVICE_CALL_US 7000000

/* Row index of violations that belong to no scenario (a charge for an order
 * number the simulator never made). */
#define CHK_UNATTRIBUTED SC_COUNT

typedef struct {
    uint8_t invariant;
    uint8_t scenario; /* 0..SC_COUNT (CHK_UNATTRIBUTED) */
    long order;       /* schedule order index, -1 none */
    long token;       /* token slot, -1 none */
    long charge;      /* ledger index of the charge concerned, -1 none */
    char message[256];
} chk_violation;

typedef struct {
    size_t orders; /* schedule orders of the scenario */
    uint64_t ops;  /* client operations */
    uint64_t outcome[OUT_COUNT];
    uint64_t posts;         /* POST /api/pay */
    uint64_t duplicates;    /* POSTs of an order after its first */
    uint64_t replayed;      /* answers with Idempotent-Replayed: true */
    uint64_t absorbed;      /* duplicates of orders the gateway charged at most once */
    uint64_t charges;       /* ledger charges of the scenario's orders */
    uint64_t paid;          /* orders PAID at the end (API view) */
    uint64_t failed;        /* orders FAILED at the end */
    uint64_t payer_paid;    /* the customer's payments through the mock's payer: charged */
    uint64_t payer_refused; /*   refused (ORDERPAID, ORDERCLOSED, ORDER_EXPIRED ...) */
    uint64_t payer_unknown; /*   no answer */
    uint64_t refunds;       /* ledger charges of the scenario's orders refunded at the end */
} chk_stats;

typedef struct {
    chk_violation *v;
    size_t nv, cap;
    size_t count[SC_COUNT + 1][INV_COUNT]; /* violations per scenario x invariant */
    int ran[SC_COUNT + 1];                 /* the scenario had phases (or violations) */
    chk_stats stats[SC_COUNT + 1];
    size_t unreadable;         /* orders whose final row could not be read */
    size_t total;              /* violations */
    double check_s[INV_COUNT]; /* seconds spent judging each invariant */
} chk_result;

/* An invariant's contract name ("no_double_charge" ...), its report column
 * head ("no-dbl") and its one-line description: its row of
 * CHECKER_INVARIANTS; "?" for a number out of range. */
const char *checker_invariant_name(int inv);
const char *checker_invariant_short(int inv);
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
