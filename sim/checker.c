/* checker.c - the invariant checks. Each check walks the observations once
 * (with per-order indexes of ops and charges built up front) and records
 * each violation with the order it concerns. Rows that could not be read are
 * never judged (they are counted in `unreadable`). */
#include "checker.h"
#include "checker_int.h"
#include "clocks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const inv_names[INV_COUNT] = {
    "no_double_charge", "charge_has_paid_order", "paid_has_charge", "client_paid_is_final",
    "token_single_order", "forged_callback_no_effect", "mismatch_no_effect", "all_settled",
    "no_402_after_charge", "no_paid_after_402", "no_failed_read_after_charge",
    "paid_answer_has_charge", "refusal_no_effect", "second_charge_refunded",
    "closed_after_doubt", "payment_kept_or_refunded", "one_kept_charge",
    "closed_client_not_charged", "refund_within_charge", "no_charge_after_close",
    "refund_result_reported", "refund_names_a_charge", "refund_made_once",
};

static const char *const inv_texts[INV_COUNT] = {
    "no order charged twice by the gateway (a refunded second charge still counts)",
    "every ledger charge has a PAID order of the same amount",
    "every PAID order has a ledger charge with its transaction_id",
    "every 200 PAID a client saw is PAID, with the same transaction_id, at the end",
    "every token accepted for at most one order, only of its own user, never unknown or expired",
    "forged callbacks change nothing",
    "requests with another amount or user for an existing order are refused and change nothing",
    "no order left PROCESSING after the settle period",
    "no 402 (\"nothing was charged\") answered once a charge of the order existed",
    "after a 402 the order turns PAID only by a charge for a request sent after it",
    "no order read showed FAILED once a charge of the order existed",
    "every PAID a client was told names a charge the gateway had already made",
    "403/409/422 change nothing: every charge has a request the service took; an order only "
    "refused does not exist",
    "a second charge the payer made at the gateway is refunded by the end",
    "402 payment_closed only once a request of the order was left in doubt (no answer, 5xx, or "
    "its own attempt's 202)",
    "every customer payment (the service's, the payer's) ends as its order's one kept charge or "
    "refunded",
    "no order keeps two charges",
    "a client told 402 (closed, declined) or that read FAILED, with no later request of the "
    "order, never ends with a kept charge",
    "no refund exceeds its charge, and no charge is refunded twice",
    "once the service said an order is closed (402 payment_closed, or a FAILED read of a real "
    "flows' customer), the gateway makes no charge of it",
    "every refund the gateway accepted ends SUCCESS in the service only when it succeeded, and "
    "REFUNDCLOSE / CHANGE are reported as such",
    "the service refunds only charges the gateway made",
    "one Idempotency-Key makes one refund; every merchant refund at the gateway is one the "
    "service answered; the refunds that took money stay within the charge",
};

const char *checker_invariant_name(int inv)
{
    return (inv >= 0 && inv < INV_COUNT) ? inv_names[inv] : "?";
}

const char *checker_invariant_text(int inv)
{
    return (inv >= 0 && inv < INV_COUNT) ? inv_texts[inv] : "?";
}

int checker_pay_accepted(const sim_op *op)
{
    return op->kind == OP_PAY &&
           (op->http_code == 200 || op->http_code == 202 || op->http_code == 402);
}

int checker_pay_refused(const sim_op *op)
{
    return op->kind == OP_PAY &&
           (op->http_code == 403 || op->http_code == 409 || op->http_code == 422);
}


static int chk_index_build(chk_index *ix, size_t norders, size_t n,
                           long (*order_of)(const void *, size_t), const void *arr)
{
    ix->off = calloc(norders + 2, sizeof(size_t));
    ix->idx = malloc((n ? n : 1) * sizeof(size_t));
    if (ix->off == NULL || ix->idx == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        long o = order_of(arr, i);
        if (o >= 0 && (size_t)o < norders)
            ix->off[o + 2]++;
    }
    for (size_t i = 2; i < norders + 2; i++)
        ix->off[i] += ix->off[i - 1];
    for (size_t i = 0; i < n; i++) {
        long o = order_of(arr, i);
        if (o >= 0 && (size_t)o < norders)
            ix->idx[ix->off[o + 1]++] = i;
    }
    return 0;
}

static void chk_index_free(chk_index *ix)
{
    free(ix->off);
    free(ix->idx);
}

static long chk_op_order(const void *arr, size_t i)
{
    return ((const sim_op *)arr)[i].order;
}

static long chk_charge_order(const void *arr, size_t i)
{
    return ((const sim_charge *)arr)[i].order;
}

static int chk_scenario_of_order(const chk_ctx *c, long order)
{
    if (order < 0 || (size_t)order >= c->s->norders)
        return CHK_UNATTRIBUTED;
    int sc = c->s->orders[order].scenario;
    return sc < SC_COUNT ? sc : CHK_UNATTRIBUTED;
}

void chk_violate(chk_ctx *c, int inv, long order, long token, long charge,
                        const char *fmt, ...)
{
    chk_result *r = c->r;
    int sc;
    if (order >= 0)
        sc = chk_scenario_of_order(c, order);
    else if (token >= 0 && (size_t)token < c->s->ntokens)
        sc = c->s->tokens[token].scenario;
    else
        sc = CHK_UNATTRIBUTED;
    r->count[sc][inv]++;
    r->ran[sc] = 1;
    r->total++;
    if (r->nv == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        chk_violation *p = realloc(r->v, cap * sizeof(*p));
        if (p == NULL) {
            c->oom = 1;
            return;
        }
        r->v = p;
        r->cap = cap;
    }
    chk_violation *v = &r->v[r->nv++];
    memset(v, 0, sizeof(*v));
    v->invariant = (uint8_t)inv;
    v->scenario = (uint8_t)sc;
    v->order = order;
    v->token = token;
    v->charge = charge;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->message, sizeof(v->message), fmt, ap);
    va_end(ap);
}

int chk_row_known(const sim_row *row)
{
    return row != NULL && (row->state == ROW_PRESENT || row->state == ROW_ABSENT);
}

/* The rows to judge for order i: the API row, and the DB row when read. */
int chk_rows(const chk_ctx *c, size_t i, const sim_row *rows[2], const char *names[2])
{
    int n = 0;
    rows[n] = &c->o->api_rows[i];
    names[n++] = "API";
    if (c->o->db_rows != NULL) {
        rows[n] = &c->o->db_rows[i];
        names[n++] = "DB";
    }
    return n;
}

static void chk_no_double_charge(chk_ctx *c)
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

static void chk_charge_has_paid_order(chk_ctx *c)
{
    for (size_t i = 0; i < c->o->ncharges; i++) {
        const sim_charge *x = &c->o->charges[i];
        if (c->stray[i])
            continue; /* the payer's own second charge: second_charge_refunded judges it */
        if (x->order < 0) {
            chk_violate(c, INV_CHARGE_HAS_PAID_ORDER, -1, -1, (long)i,
                        "charge %s for %s, an order number this run never made",
                        x->transaction_id, x->out_trade_no);
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
                            x->transaction_id, (long long)x->total_fee,
                            (long long)row->amount_fen, names[k]);
            } else {
                continue;
            }
            break; /* one violation per charge */
        }
    }
}

static void chk_paid_has_charge(chk_ctx *c)
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
                    strcmp(c->o->charges[c->charges.idx[j]].transaction_id,
                           row->transaction_id) == 0)
                    found = 1;
            if (found)
                continue;
            chk_violate(c, INV_PAID_HAS_CHARGE, (long)i, -1, -1,
                        "order PAID with transaction_id %s (%s) but the ledger has %s",
                        row->transaction_id[0] ? row->transaction_id : "(none)", names[k],
                        c->charges.off[i + 1] > c->charges.off[i] ? "another charge"
                                                                  : "no charge");
            break;
        }
    }
}

static void chk_client_paid_is_final(chk_ctx *c)
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
                                row->state == ROW_ABSENT ? "gone" : history_status_name(row->status),
                                names[k]);
                    done = 1;
                } else if (op->txn[0] && strcmp(op->txn, row->transaction_id) != 0) {
                    chk_violate(c, INV_CLIENT_PAID_IS_FINAL, (long)i, op->token, -1,
                                "a client saw PAID with txn %s but the order ends PAID with %s (%s)",
                                op->txn, row->transaction_id, names[k]);
                    done = 1;
                }
            }
        }
    }
}

static void chk_token_single_order(chk_ctx *c)
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
                        (long long)c->s->tokens[t].user_id, (long long)op->user_id,
                        op->http_code);
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

static void chk_forged_callback_no_effect(chk_ctx *c)
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

static void chk_mismatch_no_effect(chk_ctx *c)
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

static void chk_all_settled(chk_ctx *c)
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

/* ---- what the service says, against the ledger's times ---- */

int chk_time_known(int64_t t)
{
    return t != INT64_MIN;
}

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

double chk_s(int64_t us)
{
    return (double)us / 1e6;
}

/* A 402 says nothing was charged: no charge of the order may exist by then. */
static void chk_no_402_after_charge(chk_ctx *c)
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
                        op->error[0] ? op->error : "FAILED", chk_s(op->start_us),
                        chk_s(op->end_us), x->transaction_id, chk_s(x->at_us),
                        (op->flags & OPF_REPLAYED) ? " (a replayed answer)" : "");
            break; /* one per order */
        }
}

/* When the service may still be working on p: its end, or, when its client
 * gave up without an answer, a while after it was sent. */
int64_t chk_op_busy_until(const chk_ctx *c, const sim_op *p)
{
    if (p->http_code != 0)
        return p->end_us;
    int64_t call = c->o->service_call_us > 0 ? c->o->service_call_us : CHK_DEFAULT_SERVICE_CALL_US;
    return p->start_us + call > p->end_us ? p->start_us + call : p->end_us;
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
static void chk_no_paid_after_402(chk_ctx *c)
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
static void chk_no_failed_read_after_charge(chk_ctx *c)
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
static void chk_paid_answer_has_charge(chk_ctx *c)
{
    for (size_t i = 0; i < c->s->norders; i++)
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++) {
            const sim_op *op = &c->o->ops[c->ops.idx[j]];
            if ((op->kind != OP_PAY && op->kind != OP_QUERY) || op->http_code != 200 ||
                op->status != OST_PAID)
                continue;
            long k = chk_charge_of(c, i, op->txn);
            const sim_charge *x = k >= 0 ? &c->o->charges[k] : NULL;
            if (x != NULL && (!chk_time_known(x->at_us) ||
                              x->at_us <= op->end_us + CHK_CLOCK_SLACK_US))
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

/* Refusals change nothing: a charge needs a POST the service took, sent
 * before it; an order whose every POST was refused does not exist. */
static void chk_refusal_no_effect(chk_ctx *c)
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

/* The payer's own second charges end refunded. */
static void chk_second_charge_refunded(chk_ctx *c)
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
static void chk_closed_after_doubt(chk_ctx *c)
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
            chk_violate(c, INV_CLOSED_AFTER_DOUBT, (long)i, p->token, -1,
                        "answered 402 payment_closed at +%.3f s, but no request of the order had "
                        "been left in doubt (answered, or begun a lease of %.1f s) before: an "
                        "attempt was closed while its request may still have waited for the gateway",
                        chk_s(p->end_us), chk_s(c->o->lease_us));
            break;
        }
}

/* Marks the ledger charges the payer made (OP_STRAY): by transaction id,
 * or, for a call whose answer was lost, every charge of its order made
 * while it was under way. */
static int chk_mark_strays(chk_ctx *c)
{
    c->stray = calloc(c->o->ncharges ? c->o->ncharges : 1, 1);
    if (c->stray == NULL)
        return -1;
    for (size_t j = 0; j < c->o->nops; j++) {
        const sim_op *op = &c->o->ops[j];
        if (op->kind != OP_STRAY || op->outcome == OUT_FAIL)
            continue;
        for (size_t k = 0; k < c->o->ncharges; k++) {
            const sim_charge *x = &c->o->charges[k];
            if (x->order != op->order)
                continue;
            if (op->txn[0] ? strcmp(op->txn, x->transaction_id) == 0
                           : chk_time_known(x->at_us) &&
                                 x->at_us >= op->start_us - CHK_CLOCK_SLACK_US &&
                                 x->at_us <= op->end_us + CHK_CLOCK_SLACK_US)
                c->stray[k] = 1;
        }
    }
    return 0;
}

static void chk_stats_fill(chk_ctx *c)
{
    chk_result *r = c->r;
    for (size_t p = 0; p < c->s->nphases; p++)
        if (c->s->phases[p].scenario < SC_COUNT)
            r->ran[c->s->phases[p].scenario] = 1;
    for (size_t i = 0; i < c->s->norders; i++) {
        int sc = chk_scenario_of_order(c, (long)i);
        chk_stats *st = &r->stats[sc];
        st->orders++;
        size_t nch = c->charges.off[i + 1] - c->charges.off[i];
        st->charges += nch;
        uint64_t posts = 0;
        for (size_t j = c->ops.off[i]; j < c->ops.off[i + 1]; j++)
            if (c->o->ops[c->ops.idx[j]].kind == OP_PAY &&
                !(c->o->ops[c->ops.idx[j]].flags & OPF_MISMATCH))
                posts++;
        if (posts > 1) {
            st->duplicates += posts - 1;
            if (nch <= 1)
                st->absorbed += posts - 1;
        }
        const sim_row *row = &c->o->api_rows[i];
        if (row->state == ROW_PRESENT && row->status == OST_PAID)
            st->paid++;
        if (row->state == ROW_PRESENT && row->status == OST_FAILED)
            st->failed++;
        if (!chk_row_known(row) ||
            (c->o->db_rows != NULL && !chk_row_known(&c->o->db_rows[i])))
            r->unreadable++;
    }
    for (size_t i = 0; i < c->o->nops; i++) {
        const sim_op *op = &c->o->ops[i];
        int sc = op->scenario < SC_COUNT ? op->scenario : CHK_UNATTRIBUTED;
        chk_stats *st = &r->stats[sc];
        st->ops++;
        if (op->outcome < OUT_COUNT)
            st->outcome[op->outcome]++;
        if (op->kind == OP_PAY)
            st->posts++;
        if (op->flags & OPF_REPLAYED)
            st->replayed++;
    }
}

/* The invariants in sim_invariant order. */
static void (*const chk_invariants[INV_COUNT])(chk_ctx *) = {
    chk_no_double_charge,         chk_charge_has_paid_order,   chk_paid_has_charge,
    chk_client_paid_is_final,     chk_token_single_order,      chk_forged_callback_no_effect,
    chk_mismatch_no_effect,       chk_all_settled,             chk_no_402_after_charge,
    chk_no_paid_after_402,        chk_no_failed_read_after_charge, chk_paid_answer_has_charge,
    chk_refusal_no_effect,        chk_second_charge_refunded,  chk_closed_after_doubt,
    chk_payment_kept_or_refunded, chk_one_kept_charge,         chk_closed_client_not_charged,
    chk_refund_within_charge,     chk_no_charge_after_close,   chk_refund_result_reported,
    chk_refund_names_a_charge,    chk_refund_made_once,
};

int checker_run(const sim_schedule *s, const sim_observations *obs, chk_result *out)
{
    chk_ctx c;
    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.o = obs;
    c.r = out;
    if (chk_index_build(&c.ops, s->norders, obs->nops, chk_op_order, obs->ops) < 0 ||
        chk_index_build(&c.charges, s->norders, obs->ncharges, chk_charge_order, obs->charges) < 0 ||
        chk_mark_strays(&c) < 0) {
        c.oom = 1;
        goto done;
    }
    chk_mark_payer_payments(&c);
    chk_stats_fill(&c);
    chk_money_stats(&c);
    for (int i = 0; i < INV_COUNT; i++) {
        double t0 = clocks_mono_s();
        chk_invariants[i](&c);
        out->check_s[i] = clocks_mono_s() - t0;
    }
done:
    chk_index_free(&c.ops);
    chk_index_free(&c.charges);
    free(c.stray);
    return c.oom ? -1 : 0;
}

void checker_result_free(chk_result *r)
{
    if (r == NULL)
        return;
    free(r->v);
    r->v = NULL;
    r->nv = r->cap = 0;
}
