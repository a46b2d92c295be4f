/* checker_int - what the checker's files share (checker.c, checker_money.c):
 * the per-order indexes, the context of one run of the checker and the
 * helpers every invariant uses. Internal to the checker. */
#ifndef IDEMPAY_SIM_CHECKER_INT_H
#define IDEMPAY_SIM_CHECKER_INT_H

#include "checker.h"

/* Per-order lists (compressed rows): for order i, items idx[off[i] .. off[i+1]). */
typedef struct {
    size_t *off;
    size_t *idx;
} chk_index;

typedef struct {
    const sim_schedule *s;
    const sim_observations *o;
    chk_result *r;
    chk_index ops;      /* ops per order */
    chk_index charges;  /* charges per order */
    unsigned char *stray; /* per ledger charge: made by the payer (the simulator), not the service */
    int oom;
} chk_ctx;

/* Records a violation of inv for order (or token) and ledger charge. */
__attribute__((format(printf, 6, 7)))
void chk_violate(chk_ctx *c, int inv, long order, long token, long charge, const char *fmt, ...);
/* Whether a final row was read (present or absent). */
int chk_row_known(const sim_row *row);
/* The rows to judge for order i: the API row, and the DB row when read. */
int chk_rows(const chk_ctx *c, size_t i, const sim_row *rows[2], const char *names[2]);
/* Whether a time on the run's clock is known (not INT64_MIN). */
int chk_time_known(int64_t t);
/* Microseconds as seconds. */
double chk_s(int64_t us);
/* When the service may still be working on POST p (its end, or a while
 * after it was sent when its client got no answer). */
int64_t chk_op_busy_until(const chk_ctx *c, const sim_op *p);

/* ---- checker_money.c: every customer payment, its refunds ---- */

void chk_payment_kept_or_refunded(chk_ctx *c);
void chk_one_kept_charge(chk_ctx *c);
void chk_closed_client_not_charged(chk_ctx *c);
void chk_refund_within_charge(chk_ctx *c);
/* Marks the customer's own payments through the payer (OP_PAYER) that are
 * not the order's kept charge as the payer's (c->stray): like a second
 * charge of the nemesis' payer, they are not the service's doing and must
 * be refunded. */
void chk_mark_payer_payments(chk_ctx *c);
/* The payer's payments and the refunds, per scenario (chk_stats). */
void chk_money_stats(chk_ctx *c);

/* ---- checker_refund.c: closes that hold, the merchant's refunds ---- */

void chk_no_charge_after_close(chk_ctx *c);
void chk_refund_result_reported(chk_ctx *c);
void chk_refund_names_a_charge(chk_ctx *c);
void chk_refund_made_once(chk_ctx *c);

#endif
