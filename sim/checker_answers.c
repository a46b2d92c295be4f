/* checker_answers.c - what the service says, judged against the times of
 * the ledger's charges: no 402 or FAILED read once a charge exists, PAID after
 * a 402 only by a later request's charge, every PAID answer naming a charge
 * already made, closes only after a request was left in doubt (checker.h
 * has the invariants). */
#include "checker.h"
#include "checker_int.h"

#include <string.h>

/* The earliest charge of order i (any, the payer's too) made before t, or -1.
 * A payment of the customer the order did not keep and the service refunded
 * (one a close let through) is no charge of the order: a closed order that
 * refunded it may say FAILED / 402. */
static long chk_charge_before(const chk_ctx *c, size_t i, int64_t t)
{
    long best = -1;
    for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
        const sim_charge *x = &c->o->charges[c->charges.idx[k]];
        if (c->stray[c->charges.idx[k]] && x->refunded)
            continue;
        /* refunded and not the order's: the gateway's reverse returned it (a
         * payment code's fence, docs/FENCE.md) or the service refunded it; the
         * money invariants (checker_money.c) judge it, not the answers */
        if (x->refunded && strcmp(c->o->api_rows[i].transaction_id, x->transaction_id) != 0)
            continue;
        if (chk_time_known(x->at_us) && x->at_us < t &&
            (best < 0 || x->at_us < c->o->charges[best].at_us))
            best = (long)c->charges.idx[k];
    }
    return best;
}

/* The ledger charge of order i with transaction_id txn, or -1. */
static long chk_charge_of(const chk_ctx *c, size_t i, const char *txn)
{
    for (size_t k = c->charges.off[i]; txn[0] && k < c->charges.off[i + 1]; k++)
        if (strcmp(c->o->charges[c->charges.idx[k]].transaction_id, txn) == 0)
            return (long)c->charges.idx[k];
    return -1;
}

/* A 402 says nothing was charged: no charge of the order may exist by then. */
void chk_no_402_after_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++)
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if (op->kind != OP_PAY || op->http_code != 402 || (op->flags & OPF_MISMATCH))
                continue;
            long k = chk_charge_before(c, i, op->end_us - CHK_ANSWER_SLACK_US);
            if (k < 0)
                continue;
            const sim_charge *x = &c->o->charges[k];
            chk_violate(c, INV_NO_402_AFTER_CHARGE, (long)i, op->token, k,
                        "answered 402 %s (+%.3f..+%.3f s) though the gateway had charged %s at "
                        "+%.3f s%s",
                        op->error[0] ? op->error : "FAILED", chk_s(op->start_us), chk_s(op->end_us),
                        x->transaction_id, chk_s(x->at_us),
                        (op->flags & OPF_REPLAYED) ? " (a replayed answer)" : "");
            break; /* one per order */
        }
}

/* Whether a POST of order i other than the 402 a, which the service took
 * (not refused, not itself a 402), was still in the service after a began
 * and was sent before the charge at t. */
static int chk_new_request(const chk_ctx *c, size_t i, const sim_op *a, int64_t t)
{
    for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
        const sim_op *p = &c->o->ops[c->ops.idx[j]];
        if (p == a || p->kind != OP_PAY || (p->flags & OPF_MISMATCH) || checker_pay_refused(p) ||
            p->http_code == 402)
            continue;
        if (p->start_us < t + CHK_CLOCK_SLACK_US && chk_op_busy_until(c, p) > a->start_us)
            return 1;
    }
    return 0;
}

/* After a 402, PAID needs a charge made for a request sent after it. */
void chk_no_paid_after_402(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        const sim_row *row = &c->o->api_rows[i];
        if (row->state != ROW_PRESENT || row->status != OST_PAID)
            continue;
        long k = chk_charge_of(c, i, row->transaction_id);
        if (k < 0 || !chk_time_known(c->o->charges[k].at_us))
            continue; /* paid_has_charge judges that */
        int64_t t = c->o->charges[k].at_us;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *a = &c->o->ops[c->ops.idx[j]];
            if (a->kind != OP_PAY || a->http_code != 402 || (a->flags & OPF_MISMATCH) ||
                t < a->end_us - CHK_ANSWER_SLACK_US || chk_new_request(c, i, a, t))
                continue;
            chk_violate(c, INV_NO_PAID_AFTER_402, (long)i, a->token, k,
                        "answered 402 %s at +%.3f s, then PAID by %s charged at +%.3f s with no "
                        "request of the order sent in between",
                        a->error[0] ? a->error : "FAILED", chk_s(a->end_us),
                        c->o->charges[k].transaction_id, chk_s(t));
            break;
        }
    }
}

/* A read of the order saying FAILED once a charge of it existed. */
void chk_no_failed_read_after_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++)
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if (op->kind != OP_QUERY || op->http_code != 200 || op->status != OST_FAILED)
                continue;
            long k = chk_charge_before(c, i, op->start_us - CHK_CLOCK_SLACK_US);
            if (k < 0)
                continue;
            const sim_charge *x = &c->o->charges[k];
            chk_violate(c, INV_NO_FAILED_READ_AFTER_CHARGE, (long)i, -1, k,
                        "GET said FAILED at +%.3f s though the gateway had charged %s at +%.3f s",
                        chk_s(op->start_us), x->transaction_id, chk_s(x->at_us));
            break;
        }
}

/* Every PAID told to a client names a charge made before the answer. */
void chk_paid_answer_has_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++)
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if ((op->kind != OP_PAY && op->kind != OP_QUERY) || op->http_code != 200 ||
                op->status != OST_PAID)
                continue;
            long k = chk_charge_of(c, i, op->txn);
            const sim_charge *x = k >= 0 ? &c->o->charges[k] : NULL;
            if (x != NULL &&
                (!chk_time_known(x->at_us) || x->at_us <= op->end_us + CHK_CLOCK_SLACK_US))
                continue;
            if (x != NULL)
                chk_violate(c, INV_PAID_ANSWER_HAS_CHARGE, (long)i, op->token, k,
                            "%s said PAID with %s at +%.3f s, before the gateway charged it "
                            "(+%.3f s)",
                            history_kind_name(op->kind), op->txn, chk_s(op->end_us),
                            chk_s(x->at_us));
            else
                chk_violate(c, INV_PAID_ANSWER_HAS_CHARGE, (long)i, op->token, -1,
                            "%s said PAID with transaction_id %s at +%.3f s, which the ledger "
                            "does not have for this order",
                            history_kind_name(op->kind), op->txn[0] ? op->txn : "(none)",
                            chk_s(op->end_us));
            break;
        }
}

/* Whether POST q left its order in doubt: no answer, a 5xx, or a 202 of
 * its own attempt (not a replayed "still in flight"). */
static int chk_left_in_doubt(const sim_op *q)
{
    if (q->kind != OP_PAY || (q->flags & OPF_MISMATCH))
        return 0;
    return q->http_code == 0 || q->http_code >= 500 ||
           (q->http_code == 202 && !(q->flags & OPF_REPLAYED));
}

/* Whether the doubtful POST q can explain a close answered to p at its
 * end: q's request was over (answered) by then — its lease was given back
 * or its holder no longer waited for the gateway — or, when its client got
 * no answer, q began at least a lease before (a takeover comes only once
 * the lease has run out). */
static int chk_doubt_before(const chk_ctx *c, const sim_op *q, const sim_op *p)
{
    if (q == p || !chk_left_in_doubt(q))
        return 0;
    if (q->http_code != 0)
        return q->end_us <= p->end_us;
    return q->start_us < p->end_us - c->o->lease_us;
}

/* An order is closed only after its attempt was in doubt: its holder left
 * it (no answer, 5xx, its own 202), and another request or the reconciler
 * took it over. So a 402 payment_closed needs another POST of the order
 * left in doubt before it (chk_doubt_before). A close of an attempt whose
 * own request was still waiting for the gateway is a close too early. */
void chk_closed_after_doubt(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++)
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *p = &c->o->ops[c->ops.idx[j]];
            if (p->kind != OP_PAY || p->http_code != 402 || strcmp(p->error, "payment_closed") != 0)
                continue;
            int doubt = 0;
            for (size_t k = c->ops.off[i]; k < c->ops.off[i + 1] && !doubt; k++)
                doubt = chk_doubt_before(c, &c->o->ops[c->ops.idx[k]], p);
            if (doubt)
                continue;
            chk_violate(
                c, INV_CLOSED_AFTER_DOUBT, (long)i, p->token, -1,
                "answered 402 payment_closed at +%.3f s, but no request of the order had "
                "been left in doubt (answered, or begun a lease of %.1f s) before: an "
                "attempt was closed while its request may still have waited for the gateway",
                chk_s(p->end_us), chk_s(c->o->lease_us));
            break;
        }
}
