/* checker_int - what the checker's files share (checker.c and the checks in
 * checker_charges.c, checker_clients.c, checker_answers.c, checker_money.c,
 * checker_refund.c):
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
    chk_index ops;     /* ops per order */
    chk_index charges; /* charges per order */
    unsigned char
        *stray; /* per ledger charge: made by the payer (the simulator), not the service */
    int oom;
} chk_ctx;

/* Records a violation of inv for order (or token) and ledger charge. */
__attribute__((format(printf, 6, 7))) void chk_violate(chk_ctx *c, int inv, long order, long token,
                                                       long charge, const char *fmt, ...);
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

/* The checks, one per row of CHECKER_INVARIANTS: chk_<name> judges the
 * invariant of that name, recording each violation with chk_violate; sets
 * c->oom when it runs out of memory. */
#define CHK_DECLARE_CHECK(id, name, short, text) void chk_##name(chk_ctx *c);
CHECKER_INVARIANTS(CHK_DECLARE_CHECK)
#undef CHK_DECLARE_CHECK

/* ---- checker_money.c: every customer payment, its refunds ---- */

/* Marks the customer's own payments through the payer (OP_PAYER) that are
 * not the order's kept charge as the payer's (c->stray): like a second
 * charge of the nemesis' payer, they are not the service's doing and must
 * be refunded. */
void chk_mark_payer_payments(chk_ctx *c);
/* The payer's payments and the refunds, per scenario (chk_stats). */
void chk_money_stats(chk_ctx *c);

#endif
