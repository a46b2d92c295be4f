/* checker_refund.c - closes that hold and the merchant's refunds (issue 22;
 * checker_int.h):
 *  - no_charge_after_close: once the service told a client an order is
 *    closed — 402 payment_closed, or, for an order of the real flows'
 *    customer (payer, payer-edge), a read saying FAILED — the gateway makes
 *    no charge of it: the service says "closed" only after closeorder,
 *    orderquery CLOSED or a reverse fenced the trade at the gateway, and a
 *    fenced trade is never charged. A charge after that answer means the
 *    service called the order closed while its trade was still open (a
 *    refused close read as closed, USERPAYING taken as failure);
 *  - refund_result_reported: every refund the gateway accepted that has
 *    ended is listed by the service with the gateway's result (SUCCESS,
 *    REFUNDCLOSE, CHANGE: the two last reported to the operator), and no
 *    listed refund says SUCCESS unless the gateway's does;
 *  - refund_names_a_charge: an order's duplicate-charge refunds are no more
 *    than its ledger charges that are not the kept one, and a merchant
 *    refund is only listed for an order with a charge;
 *  - refund_made_once: every accepted answer (202) to one Idempotency-Key
 *    of an order names one refund_no; every merchant refund (`RM...`) the
 *    gateway has of the order is one the service answered or lists; the
 *    refunds of a charge that took money (PROCESSING, SUCCESS, CHANGE) add
 *    up to at most its fee.
 * The refund invariants judge only what was read (obs->refunds, listed,
 * list_read); a run without them judges nothing there. */
#include "checker_int.h"

#include <stdio.h>
#include <string.h>

/* Whether a read of order i saying FAILED means "closed for good": the
 * real flows' customer (payer, payer-edge), where a FAILED order is a
 * closed or reversed one. */
static int cr_read_is_close(const chk_ctx *c, long i)
{
    int sc = c->s->orders[i].scenario;
    return sc == SC_PAYER || sc == SC_PAYER_EDGE;
}

/* The end of the first answer that told a client order i is closed, or
 * INT64_MIN; *which gets that op's index. */
static int64_t cr_first_close(const chk_ctx *c, size_t i, size_t *which)
{
    int64_t best = INT64_MIN;
    for (size_t k = c->ops.off[i]; k < c->ops.off[i + 1]; k++) {
        const sim_op *op = &c->o->ops[c->ops.idx[k]];
        int closed = (op->kind == OP_PAY && op->http_code == 402 &&
                      strcmp(op->error, "payment_closed") == 0) ||
                     (op->kind == OP_QUERY && op->http_code == 200 && op->status == OST_FAILED &&
                      cr_read_is_close(c, (long)i));
        if (closed && (best == INT64_MIN || op->end_us < best)) {
            best = op->end_us;
            *which = c->ops.idx[k];
        }
    }
    return best;
}

void chk_no_charge_after_close(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        size_t which = 0;
        int64_t closed = cr_first_close(c, i, &which);
        if (closed == INT64_MIN)
            continue;
        const sim_op *op = &c->o->ops[which];
        for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
            const sim_charge *x = &c->o->charges[c->charges.idx[k]];
            if (!chk_time_known(x->at_us) || x->at_us <= closed + CHK_CLOCK_SLACK_US)
                continue;
            chk_violate(c, INV_NO_CHARGE_AFTER_CLOSE, (long)i, op->token, (long)c->charges.idx[k],
                        "a client was told the order is closed (%s at +%.3f s), yet the gateway "
                        "charged it at +%.3f s (%s, %lld fen): the trade was still open",
                        op->kind == OP_PAY ? "402 payment_closed" : "a read said FAILED",
                        chk_s(closed), chk_s(x->at_us), x->transaction_id, (long long)x->total_fee);
            break;
        }
    }
}

/* The refund the service listed for order with refund_no, or NULL. */
static const sim_refund *cr_listed(const chk_ctx *c, long order, const char *refund_no)
{
    for (size_t k = 0; k < c->o->nlisted; k++) {
        const sim_refund *l = &c->o->listed[k];
        if (l->order == order && strcmp(l->refund_no, refund_no) == 0)
            return l;
    }
    return NULL;
}

/* The gateway's refund refund_no, or NULL. */
static const sim_refund *cr_ledger(const chk_ctx *c, const char *refund_no)
{
    for (size_t k = 0; k < c->o->nrefunds; k++)
        if (strcmp(c->o->refunds[k].refund_no, refund_no) == 0)
            return &c->o->refunds[k];
    return NULL;
}

static int cr_list_read(const chk_ctx *c, long order)
{
    return c->o->list_read != NULL && order >= 0 && (size_t)order < c->s->norders &&
           c->o->list_read[order];
}

/* A refund the gateway made by itself (a reverse of a paid micropay). */
static int cr_gateway_own(const sim_refund *r)
{
    return strncmp(r->refund_no, "REVERSE", 7) == 0;
}

void chk_refund_result_reported(chk_ctx *c)
{
    for (size_t k = 0; k < c->o->nrefunds; k++) {
        const sim_refund *r = &c->o->refunds[k];
        if (r->status == RST_PROCESSING || cr_gateway_own(r) || !cr_list_read(c, r->order))
            continue;
        const sim_refund *l = cr_listed(c, r->order, r->refund_no);
        if (l == NULL)
            chk_violate(c, INV_REFUND_RESULT_REPORTED, r->order, -1, -1,
                        "the gateway's refund %s of %s (%lld fen) ended %s, but the service "
                        "does not list it",
                        r->refund_no, r->transaction_id, (long long)r->fee,
                        history_refund_status_name(r->status));
        else if (l->status != r->status)
            chk_violate(c, INV_REFUND_RESULT_REPORTED, r->order, -1, -1,
                        "refund %s (%lld fen) ended %s at the gateway, the service says %s",
                        r->refund_no, (long long)r->fee, history_refund_status_name(r->status),
                        history_refund_status_name(l->status));
    }
    for (size_t k = 0; k < c->o->nlisted; k++) {
        const sim_refund *l = &c->o->listed[k];
        if (l->status != RST_SUCCESS)
            continue;
        const sim_refund *r = cr_ledger(c, l->refund_no);
        if (r == NULL || r->status != RST_SUCCESS)
            chk_violate(c, INV_REFUND_RESULT_REPORTED, l->order, -1, -1,
                        "the service says refund %s (%lld fen) succeeded; the gateway %s%s",
                        l->refund_no, (long long)l->fee, r == NULL ? "has no such refund" : "says ",
                        r == NULL ? "" : history_refund_status_name(r->status));
    }
}

/* Ledger charges of order i that are not its kept one (the API row's
 * transaction id when PAID). */
static size_t cr_second_charges(const chk_ctx *c, size_t i)
{
    size_t n = 0;
    const sim_row *row = c->o->api_rows != NULL ? &c->o->api_rows[i] : NULL;
    for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
        const sim_charge *x = &c->o->charges[c->charges.idx[k]];
        if (row == NULL || row->state != ROW_PRESENT || row->status != OST_PAID ||
            strcmp(row->transaction_id, x->transaction_id) != 0)
            n++;
    }
    return n;
}

void chk_refund_names_a_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        if (!cr_list_read(c, (long)i))
            continue;
        size_t dup = 0, merchant = 0;
        for (size_t k = 0; k < c->o->nlisted; k++) {
            const sim_refund *l = &c->o->listed[k];
            if (l->order == (long)i)
                l->duplicate ? dup++ : merchant++;
        }
        size_t second = cr_second_charges(c, i), all = c->charges.off[i + 1] - c->charges.off[i];
        if (dup > second)
            chk_violate(c, INV_REFUND_NAMES_A_CHARGE, (long)i, -1, -1,
                        "the service lists %zu duplicate-charge refund(s), the gateway has %zu "
                        "charge(s) of the order besides its kept one: it refunds a charge that "
                        "does not exist",
                        dup, second);
        else if (merchant > 0 && all == 0)
            chk_violate(c, INV_REFUND_NAMES_A_CHARGE, (long)i, -1, -1,
                        "the service lists %zu merchant refund(s) of an order the gateway never "
                        "charged",
                        merchant);
    }
}

/* One Idempotency-Key of order i: every accepted answer names one refund_no. */
static void cr_one_refund_per_key(chk_ctx *c, size_t i)
{
    for (size_t k = c->ops.off[i]; k < c->ops.off[i + 1]; k++) {
        const sim_op *a = &c->o->ops[c->ops.idx[k]];
        if (a->kind != OP_REFUND || (a->flags & OPF_LIST) || a->http_code != 202 || !a->txn[0])
            continue;
        for (size_t m = k + 1; m < c->ops.off[i + 1]; m++) {
            const sim_op *b = &c->o->ops[c->ops.idx[m]];
            if (b->kind != OP_REFUND || (b->flags & OPF_LIST) || b->http_code != 202 ||
                b->idem != a->idem || !b->txn[0] || strcmp(a->txn, b->txn) == 0)
                continue;
            chk_violate(c, INV_REFUND_MADE_ONCE, (long)i, -1, -1,
                        "one Idempotency-Key (#%u) was answered two refunds: %s at +%.3f s and "
                        "%s at +%.3f s",
                        a->idem, a->txn, chk_s(a->end_us), b->txn, chk_s(b->end_us));
            return;
        }
    }
}

/* Whether order i's client was answered refund_no (a 202). */
static int cr_answered(const chk_ctx *c, size_t i, const char *refund_no)
{
    for (size_t k = c->ops.off[i]; k < c->ops.off[i + 1]; k++) {
        const sim_op *a = &c->o->ops[c->ops.idx[k]];
        if (a->kind == OP_REFUND && !(a->flags & OPF_LIST) && a->http_code == 202 &&
            strcmp(a->txn, refund_no) == 0)
            return 1;
    }
    return 0;
}

/* The refunds of charge x that took money stay within its fee. */
static void cr_within(chk_ctx *c, size_t ci)
{
    const sim_charge *x = &c->o->charges[ci];
    int64_t taken = 0;
    for (size_t k = 0; k < c->o->nrefunds; k++) {
        const sim_refund *r = &c->o->refunds[k];
        if (strcmp(r->transaction_id, x->transaction_id) == 0 &&
            (r->status == RST_PROCESSING || r->status == RST_SUCCESS || r->status == RST_CHANGE))
            taken += r->fee;
    }
    if (x->total_fee >= 0 && taken > x->total_fee)
        chk_violate(c, INV_REFUND_MADE_ONCE, x->order, -1, (long)ci,
                    "the refunds of charge %s that took money add up to %lld fen, more than its "
                    "%lld fen",
                    x->transaction_id, (long long)taken, (long long)x->total_fee);
}

void chk_refund_made_once(chk_ctx *c)
{
    if (c->o->refunds == NULL && c->o->listed == NULL)
        return;
    for (size_t i = 0; i < c->s->norders; i++)
        cr_one_refund_per_key(c, i);
    for (size_t k = 0; k < c->o->nrefunds; k++) {
        const sim_refund *r = &c->o->refunds[k];
        if (r->order < 0 || strncmp(r->refund_no, "RM", 2) != 0 || !cr_list_read(c, r->order) ||
            cr_answered(c, (size_t)r->order, r->refund_no) ||
            cr_listed(c, r->order, r->refund_no) != NULL)
            continue;
        chk_violate(c, INV_REFUND_MADE_ONCE, r->order, -1, -1,
                    "the gateway has a merchant refund %s (%lld fen, %s) that the service "
                    "neither answered nor lists",
                    r->refund_no, (long long)r->fee, history_refund_status_name(r->status));
    }
    for (size_t i = 0; i < c->o->ncharges; i++)
        if (c->o->charges[i].order >= 0)
            cr_within(c, i);
}
