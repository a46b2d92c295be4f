/* checker_money.c - the invariants of every customer payment and its
 * refunds (checker_int.h), for the real flows where the customer pays a
 * prepay in WeChat (the mock's payer) and may pay twice, late, or into a
 * close (docs/FLOWS.md):
 *  - payment_kept_or_refunded: every ledger charge of a run order is the
 *    order's kept charge (the order ends PAID with its transaction id) or
 *    is refunded;
 *  - one_kept_charge: no order ends with two charges not refunded;
 *  - closed_client_not_charged: a client told 402 (or that read FAILED)
 *    whose order got no later request the service took ends with no kept
 *    charge;
 *  - refund_within_charge: the gateway refunded no charge beyond its fee,
 *    and no charge the order does not keep twice (the service refunds such
 *    a charge once, whole; the kept one may be refunded in parts).
 * Rows that could not be read are not judged. */
#include "checker_int.h"

#include <stdio.h>
#include <string.h>

/* Whether charge x is the order's kept charge in every known row; -1 when
 * no row of the order is known. */
static int cm_kept(const chk_ctx *c, const sim_charge *x, char *why, size_t len)
{
    const sim_row *rows[2];
    const char *names[2];
    int n = chk_rows(c, (size_t)x->order, rows, names), known = 0;
    for (int k = 0; k < n; k++) {
        const sim_row *row = rows[k];
        if (!chk_row_known(row))
            continue;
        known = 1;
        if (row->state == ROW_PRESENT && row->status == OST_PAID &&
            strcmp(row->transaction_id, x->transaction_id) == 0)
            continue;
        if (row->state == ROW_ABSENT)
            snprintf(why, len, "the order does not exist (%s)", names[k]);
        else if (row->status == OST_PAID)
            snprintf(why, len, "the order is PAID with %s (%s)",
                     row->transaction_id[0] ? row->transaction_id : "(none)", names[k]);
        else
            snprintf(why, len, "the order is %s (%s)", history_status_name(row->status), names[k]);
        return 0;
    }
    return known ? 1 : -1;
}

void chk_payment_kept_or_refunded(chk_ctx *c)
{
    char why[96];
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (x->order < 0 || x->refunded || cm_kept(c, x, why, sizeof(why)) != 0)
            continue;
        chk_violate(c, INV_PAYMENT_KEPT_OR_REFUNDED, x->order, -1, (long)i,
                    "%s %s (%lld fen, at +%.3f s) is neither kept nor refunded: %s",
                    c->stray[i] ? "the customer's payment" : "charge", x->transaction_id,
                    (long long)x->total_fee, chk_time_known(x->at_us) ? chk_s(x->at_us) : -1.0,
                    why);
    }
}

void chk_one_kept_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        size_t kept = 0;
        long second = -1;
        const char *first = "";
        for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
            const sim_charge *x = &c->o->charges[c->charges.idx[k]];
            if (x->refunded)
                continue;
            if (kept++ == 0)
                first = x->transaction_id;
            else if (second < 0)
                second = (long)c->charges.idx[k];
        }
        if (kept > 1)
            chk_violate(c, INV_ONE_KEPT_CHARGE, (long)i, -1, second,
                        "the order keeps %zu charges, none refunded: %s and %s%s", kept, first,
                        c->o->charges[second].transaction_id, kept > 2 ? " ..." : "");
    }
}

/* Whether op told its client that nothing is (or will be) charged: a POST
 * answered 402, or a read saying FAILED. */
static int cm_told_final_no(const sim_op *op)
{
    if (op->flags & OPF_MISMATCH)
        return 0;
    return (op->kind == OP_PAY && op->http_code == 402) ||
           (op->kind == OP_QUERY && op->http_code == 200 && op->status == OST_FAILED);
}

/* Whether a POST of order i other than a, that the service took, was still
 * in the service after a began (it may have paid the order anew). */
static int cm_later_request(const chk_ctx *c, size_t i, const sim_op *a)
{
    for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
        const sim_op *p = &c->o->ops[c->ops.idx[j]];
        if (p == a || p->kind != OP_PAY || (p->flags & OPF_MISMATCH) || checker_pay_refused(p))
            continue;
        if (chk_op_busy_until(c, p) > a->start_us &&
            !(p->http_code == 402 && p->end_us <= a->end_us))
            return 1;
    }
    return 0;
}

void chk_closed_client_not_charged(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        const sim_op *last = NULL;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if (cm_told_final_no(op) && (last == NULL || op->end_us > last->end_us))
                last = op;
        }
        if (last == NULL || cm_later_request(c, i, last))
            continue;
        for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
            const sim_charge *x = &c->o->charges[c->charges.idx[k]];
            if (x->refunded)
                continue;
            chk_violate(c, INV_CLOSED_CLIENT_NOT_CHARGED, (long)i, last->token,
                        (long)c->charges.idx[k],
                        "a client was told %s%s%s at +%.3f s and asked no more, but the order "
                        "keeps charge %s (%lld fen)",
                        last->kind == OP_PAY ? "402 " : "FAILED",
                        last->kind == OP_PAY ? (last->error[0] ? last->error : "FAILED") : "",
                        last->kind == OP_PAY ? "" : " (a read)", chk_s(last->end_us),
                        x->transaction_id, (long long)x->total_fee);
            break;
        }
    }
}

void chk_refund_within_charge(chk_ctx *c)
{
    char why[96];
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (x->refunded_fee > x->total_fee && x->total_fee >= 0)
            chk_violate(c, INV_REFUND_WITHIN_CHARGE, x->order, -1, (long)i,
                        "charge %s of %lld fen was refunded %lld fen", x->transaction_id,
                        (long long)x->total_fee, (long long)x->refunded_fee);
        /* A charge the order does not keep is refunded once, whole; the kept
         * one may be refunded in parts (the merchant's refunds). */
        else if (x->refund_count > 1 && (x->order < 0 || cm_kept(c, x, why, sizeof(why)) == 0))
            chk_violate(c, INV_REFUND_WITHIN_CHARGE, x->order, -1, (long)i,
                        "charge %s (%lld fen) was refunded %d times (%lld fen in all)",
                        x->transaction_id, (long long)x->total_fee, x->refund_count,
                        (long long)x->refunded_fee);
    }
}

void chk_mark_payer_payments(chk_ctx *c)
{
    char why[96];
    for (size_t j = 0; j < c->o->nops; j++) {
        const sim_op *op = &c->o->ops[j];
        if (op->kind != OP_PAYER || op->outcome == OUT_FAIL || op->order < 0)
            continue;
        for (size_t k = c->charges.off[op->order]; k < c->charges.off[op->order + 1]; k++) {
            size_t ci = c->charges.idx[k];
            const sim_charge *x = &c->o->charges[ci];
            int mine = op->txn[0] ? strcmp(op->txn, x->transaction_id) == 0
                                  : chk_time_known(x->at_us) &&
                                        x->at_us >= op->start_us - CHK_CLOCK_SLACK_US &&
                                        x->at_us <= op->end_us + CHK_CLOCK_SLACK_US;
            if (mine && cm_kept(c, x, why, sizeof(why)) == 0)
                c->stray[ci] = 1;
        }
    }
}

void chk_money_stats(chk_ctx *c)
{
    chk_result *r = c->r;
    for (size_t i = 0; i < c->o->nops; i++) {
        const sim_op *op = &c->o->ops[i];
        if (op->kind != OP_PAYER)
            continue;
        chk_stats *st = &r->stats[op->scenario < SC_COUNT ? op->scenario : CHK_UNATTRIBUTED];
        if (op->outcome == OUT_OK)
            st->payer_paid++;
        else if (op->outcome == OUT_FAIL)
            st->payer_refused++;
        else
            st->payer_unknown++;
    }
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (!x->refunded)
            continue;
        long o = x->order;
        int sc = o >= 0 && (size_t)o < c->s->norders && c->s->orders[o].scenario < SC_COUNT
                     ? c->s->orders[o].scenario
                     : CHK_UNATTRIBUTED;
        r->stats[sc].refunds++;
    }
}
