/* checker_clients.c - what clients sent that must change nothing: tokens
 * used once, by their own user, never unknown or expired; forged
 * notifications; another amount or user for an order; refused requests
 * (checker.h has the invariants). */
#include "checker.h"
#include "checker_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void chk_token_single_order(chk_ctx *c)
{
    const sim_op *ops = c->o->ops;
    size_t nt = c->s->ntokens;
    long *first_order = NULL;
    size_t *first_op = NULL;
    unsigned char *reported = NULL;
    if (nt > 0) {
        first_order = malloc(nt * sizeof(*first_order));
        first_op = malloc(nt * sizeof(*first_op));
        reported = calloc(nt, 1);
        if (first_order == NULL || first_op == NULL || reported == NULL) {
            c->oom = 1;
            goto done;
        }
        for (size_t t = 0; t < nt; t++)
            first_order[t] = -1;
    }
    for (size_t i = 0; i < c->o->nops; i++) {
        const sim_op *op = &ops[i];
        if (!checker_pay_accepted(op))
            continue;
        if (op->token_use == TOK_UNKNOWN) {
            chk_violate(c, INV_TOKEN_SINGLE_ORDER, op->order, -1, -1,
                        "a made-up token was accepted (HTTP %u at +%.3f s)", op->http_code,
                        (double)op->start_us / 1e6);
            continue;
        }
        if (op->token_use != TOK_SLOT || op->token < 0 || (size_t)op->token >= nt)
            continue;
        size_t t = (size_t)op->token;
        if (op->flags & OPF_FOREIGN) {
            chk_violate(c, INV_TOKEN_SINGLE_ORDER, op->order, op->token, -1,
                        "token #%zu of user %lld accepted for user %lld (HTTP %u)", t,
                        (long long)c->s->tokens[t].user_id, (long long)op->user_id, op->http_code);
            continue;
        }
        if (op->flags & OPF_EXPIRED) {
            chk_violate(c, INV_TOKEN_SINGLE_ORDER, op->order, op->token, -1,
                        "token #%zu accepted after it expired (HTTP %u)", t, op->http_code);
            continue;
        }
        if (first_order[t] < 0) {
            first_order[t] = op->order;
            first_op[t] = i;
        } else if (first_order[t] != op->order && !reported[t]) {
            char a[64], b[64];
            if (sched_order_no(c->s, c->o->prefix, (size_t)first_order[t], a, sizeof(a)) < 0)
                snprintf(a, sizeof(a), "#%ld", first_order[t]);
            if (sched_order_no(c->s, c->o->prefix, (size_t)op->order, b, sizeof(b)) < 0)
                snprintf(b, sizeof(b), "#%d", op->order);
            chk_violate(c, INV_TOKEN_SINGLE_ORDER, op->order, op->token, -1,
                        "token #%zu accepted for two orders: %s (HTTP %u) and %s (HTTP %u)", t, a,
                        ops[first_op[t]].http_code, b, op->http_code);
            reported[t] = 1;
        }
    }
done:
    free(first_order);
    free(first_op);
    free(reported);
}

void chk_forged_callback_no_effect(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        int forged = 0;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++)
            if (c->o->ops[c->ops.idx[j]].kind == OP_CALLBACK)
                forged++;
        if (!forged)
            continue;
        size_t ncharges = c->charges.off[i + 1] - c->charges.off[i];
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, i, rows, names);
        int never = (c->s->orders[i].flags & ORD_NEVER_SUBMITTED) != 0;
        for (int k = 0; k < n; k++) {
            const sim_row *row = rows[k];
            if (!chk_row_known(row))
                continue;
            if (never && row->state == ROW_PRESENT) {
                chk_violate(c, INV_FORGED_CALLBACK_NO_EFFECT, (long)i, -1, -1,
                            "%d forged callback(s) for an order no client submitted, and it "
                            "exists (%s, %s)",
                            forged, history_status_name(row->status), names[k]);
                break;
            }
            if (row->state == ROW_PRESENT &&
                (row->status == OST_PAID || row->transaction_id[0] != '\0')) {
                chk_violate(c, INV_FORGED_CALLBACK_NO_EFFECT, (long)i, -1, -1,
                            "%d forged callback(s) for a declined, never charged order, and it "
                            "ends %s with transaction_id %s (%s)",
                            forged, history_status_name(row->status),
                            row->transaction_id[0] ? row->transaction_id : "(none)", names[k]);
                break;
            }
        }
        if (ncharges > 0 && never)
            chk_violate(c, INV_FORGED_CALLBACK_NO_EFFECT, (long)i, -1,
                        (long)c->charges.idx[c->charges.off[i]],
                        "an order no client submitted has %zu ledger charge(s)", ncharges);
    }
}

void chk_mismatch_no_effect(chk_ctx *c)
{
    for (size_t i = 0; i < c->o->nops; i++) {
        const sim_op *op = &c->o->ops[i];
        /* The order can only exist with the user and amount its own
         * requests carry: refusing one of those as a mismatch is wrong. */
        if (op->kind == OP_PAY && !(op->flags & OPF_MISMATCH) && op->http_code == 422 &&
            strcmp(op->error, "order_mismatch") == 0) {
            chk_violate(c, INV_MISMATCH_NO_EFFECT, op->order, op->token, -1,
                        "a request with the order's own user and amount was refused 422 "
                        "order_mismatch (+%.3f s)",
                        (double)op->start_us / 1e6);
            continue;
        }
        if (!(op->flags & OPF_MISMATCH) || !checker_pay_accepted(op))
            continue;
        chk_violate(c, INV_MISMATCH_NO_EFFECT, op->order, -1, -1,
                    "POST with user %lld amount %lld fen (the order has user %lld, %lld fen) "
                    "answered %u %s instead of 422",
                    (long long)op->user_id, (long long)op->amount_fen,
                    op->order >= 0 ? (long long)c->s->orders[op->order].user_id : 0LL,
                    op->order >= 0 ? (long long)c->s->orders[op->order].amount_fen : 0LL,
                    op->http_code, history_status_name(op->status));
    }
    for (size_t i = 0; i < c->s->norders; i++) {
        const sched_order *o = &c->s->orders[i];
        const sim_row *rows[2];
        const char *names[2];
        int n = chk_rows(c, i, rows, names);
        for (int k = 0; k < n; k++) {
            const sim_row *row = rows[k];
            if (row->state != ROW_PRESENT)
                continue;
            if (row->user_id != o->user_id || row->amount_fen != o->amount_fen) {
                chk_violate(c, INV_MISMATCH_NO_EFFECT, (long)i, -1, -1,
                            "order row has user %lld amount %lld fen, created as user %lld "
                            "amount %lld fen (%s)",
                            (long long)row->user_id, (long long)row->amount_fen,
                            (long long)o->user_id, (long long)o->amount_fen, names[k]);
                break;
            }
        }
    }
}

/* Refusals change nothing: a charge needs a POST the service took, sent
 * before it; an order whose every POST was refused does not exist. */
void chk_refusal_no_effect(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++) {
        if (c->s->orders[i].flags & ORD_NEVER_SUBMITTED)
            continue; /* forged_callback_no_effect judges those */
        size_t posts = 0, refused = 0;
        int64_t first_taken = INT64_MAX;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *p = &c->o->ops[c->ops.idx[j]];
            if (p->kind != OP_PAY || (p->flags & OPF_MISMATCH))
                continue;
            posts++;
            if (checker_pay_refused(p))
                refused++;
            else if (p->start_us < first_taken)
                first_taken = p->start_us;
        }
        for (size_t k = c->charges.off[i]; k < c->charges.off[i + 1]; k++) {
            const sim_charge *x = &c->o->charges[c->charges.idx[k]];
            if (c->stray[c->charges.idx[k]] || !chk_time_known(x->at_us) ||
                x->at_us + CHK_CLOCK_SLACK_US >= first_taken)
                continue;
            chk_violate(c, INV_REFUSAL_NO_EFFECT, (long)i, -1, (long)c->charges.idx[k],
                        "charge %s at +%.3f s, but no request the service took was sent before "
                        "it (%zu POST(s), %zu refused 403/409/422)",
                        x->transaction_id, chk_s(x->at_us), posts, refused);
            break;
        }
        const sim_row *row = &c->o->api_rows[i];
        if (posts > 0 && refused == posts && row->state == ROW_PRESENT)
            chk_violate(c, INV_REFUSAL_NO_EFFECT, (long)i, -1, -1,
                        "every POST of the order (%zu) was refused 403/409/422, yet it exists "
                        "(%s)",
                        posts, history_status_name(row->status));
    }
}
