/* checker_charges.c - the ledger against the final order rows: no order
 * charged twice, every charge with its PAID order and every PAID order with
 * its charge, what a client saw PAID stays PAID, nothing left PROCESSING, the
 * payer's own second charges refunded (checker.h has the invariants). */
#include "checker.h"
#include "checker_int.h"

#include <stdio.h>
#include <string.h>

void chk_no_double_charge(chk_ctx *c)
{
    const sim_charge *ch = c->o->charges;
    for (size_t i = 0; i < c->s->norders; i++) {
        size_t a = c->charges.off[i], b = c->charges.off[i + 1], own = 0;
        long second = -1;
        for (size_t k = a; k < b; k++)
            if (!c->stray[c->charges.idx[k]] && own++ == 1)
                second = (long)c->charges.idx[k];
        if (own < 2)
            continue;
        char list[160] = "";
        size_t used = 0, refunded = 0;
        for (size_t k = a; k < b; k++) {
            const sim_charge *x = &ch[c->charges.idx[k]];
            if (c->stray[c->charges.idx[k]])
                continue;
            refunded += x->refunded != 0;
            int n = snprintf(list + used, sizeof(list) - used, "%s%s%s", k > a ? ", " : "",
                             x->transaction_id, x->refunded ? " (refunded)" : "");
            if (n < 0 || (size_t)n >= sizeof(list) - used)
                break;
            used += (size_t)n;
        }
        chk_violate(c, INV_NO_DOUBLE_CHARGE, (long)i, -1, second,
                    "charged %zu times (%zu refunded): %s", own, refunded, list);
    }
    /* Charges of order numbers we never made: group by out_trade_no. */
    for (size_t i = 0; i < c->o->ncharges; i++) {
        if (ch[i].order >= 0)
            continue;
        size_t same = 0, first = i;
        for (size_t k = 0; k < c->o->ncharges; k++) {
            if (ch[k].order >= 0 || strcmp(ch[k].out_trade_no, ch[i].out_trade_no) != 0)
                continue;
            if (same++ == 0)
                first = k;
        }
        if (same > 1 && first == i)
            chk_violate(c, INV_NO_DOUBLE_CHARGE, -1, -1, (long)i,
                        "unknown order %s charged %zu times", ch[i].out_trade_no, same);
    }
}

void chk_charge_has_paid_order(chk_ctx *c)
{
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (c->stray[i])
            continue; /* the payer's own second charge: second_charge_refunded judges it */
        if (x->order < 0) {
            chk_violate(c, INV_CHARGE_HAS_PAID_ORDER, -1, -1, (long)i,
                        "charge %s for %s, an order number this run never made", x->transaction_id,
                        x->out_trade_no);
            continue;
        }
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, (size_t)x->order, rows, names);
        for (int k = 0; k < n; k++) {
            const sim_row *row = rows[k];
            if (!chk_row_known(row))
                continue;
            if (row->state == ROW_ABSENT) {
                chk_violate(c, INV_CHARGE_HAS_PAID_ORDER, x->order, -1, (long)i,
                            "charge %s (%lld fen) but the order does not exist (%s)",
                            x->transaction_id, (long long)x->total_fee, names[k]);
            } else if (row->status != OST_PAID) {
                if (x->refunded)
                    continue; /* no charge without a PAID order or a refund: a payment
                               * code's reverse returned it (payment_kept_or_refunded) */
                chk_violate(c, INV_CHARGE_HAS_PAID_ORDER, x->order, -1, (long)i,
                            "charge %s (%lld fen) but the order is %s (%s)", x->transaction_id,
                            (long long)x->total_fee, history_status_name(row->status), names[k]);
            } else if (row->amount_fen != x->total_fee) {
                chk_violate(c, INV_CHARGE_HAS_PAID_ORDER, x->order, -1, (long)i,
                            "charge %s of %lld fen but the PAID order's amount is %lld fen (%s)",
                            x->transaction_id, (long long)x->total_fee, (long long)row->amount_fen,
                            names[k]);
            } else {
                continue;
            }
            break; /* one violation per charge */
        }
    }
}

void chk_paid_has_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, i, rows, names);
        for (int k = 0; k < n; k++) {
            const sim_row *row = rows[k];
            if (row->state != ROW_PRESENT || row->status != OST_PAID)
                continue;
            int found = 0;
            for (size_t j = c->charges.off[i]; j < c->charges.off[i + 1]; j++)
                if (row->transaction_id[0] != '\0' &&
                    strcmp(c->o->charges[c->charges.idx[j]].transaction_id, row->transaction_id) ==
                        0)
                    found = 1;
            if (found)
                continue;
            chk_violate(c, INV_PAID_HAS_CHARGE, (long)i, -1, -1,
                        "order PAID with transaction_id %s (%s) but the ledger has %s",
                        row->transaction_id[0] ? row->transaction_id : "(none)", names[k],
                        c->charges.off[i + 1] > c->charges.off[i] ? "another charge" : "no charge");
            break;
        }
    }
}

void chk_client_paid_is_final(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, i, rows, names);
        int done = 0;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1] && !done; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if ((op->kind != OP_PAY && op->kind != OP_QUERY) || op->http_code != 200 ||
                op->status != OST_PAID)
                continue;
            for (int k = 0; k < n && !done; k++) {
                const sim_row *row = rows[k];
                if (!chk_row_known(row))
                    continue;
                if (row->state == ROW_ABSENT || row->status != OST_PAID) {
                    chk_violate(c, INV_CLIENT_PAID_IS_FINAL, (long)i, op->token, -1,
                                "a client saw 200 PAID (txn %s at +%.3f s) but the order is %s "
                                "at the end (%s)",
                                op->txn[0] ? op->txn : "-", (double)op->start_us / 1e6,
                                row->state == ROW_ABSENT ? "gone"
                                                         : history_status_name(row->status),
                                names[k]);
                    done = 1;
                } else if (op->txn[0] && strcmp(op->txn, row->transaction_id) != 0) {
                    chk_violate(
                        c, INV_CLIENT_PAID_IS_FINAL, (long)i, op->token, -1,
                        "a client saw PAID with txn %s but the order ends PAID with %s (%s)",
                        op->txn, row->transaction_id, names[k]);
                    done = 1;
                }
            }
        }
    }
}

void chk_all_settled(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, i, rows, names);
        for (int k = 0; k < n; k++) {
            if (rows[k]->state == ROW_PRESENT && rows[k]->status == OST_PROCESSING) {
                chk_violate(c, INV_ALL_SETTLED, (long)i, -1, -1,
                            "order still PROCESSING after the settle period (%s, updated %s)",
                            names[k], rows[k]->updated_at[0] ? rows[k]->updated_at : "?");
                break;
            }
        }
    }
}

/* The payer's own second charges end refunded. */
void chk_second_charge_refunded(chk_ctx *c)
{
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (!c->stray[i] || x->refunded)
            continue;
        chk_violate(c, INV_SECOND_CHARGE_REFUNDED, x->order, -1, (long)i,
                    "the payer paid a second time (%s, %lld fen, at +%.3f s) and it was not "
                    "refunded",
                    x->transaction_id, (long long)x->total_fee,
                    chk_time_known(x->at_us) ? chk_s(x->at_us) : -1.0);
    }
}
