/* checker.c - the invariants' table and the run that judges them. Each
 * check (checker_charges.c, checker_clients.c, checker_answers.c,
 * checker_money.c, checker_refund.c) walks the observations once, with the
 * per-order indexes of ops and charges built here up front, and records each
 * violation with the order it concerns. Rows that could not be read are
 * never judged (they are counted in `unreadable`). */
#include "checker.h"
#include "checker_int.h"
#include "clocks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The descriptor of each invariant: its row of CHECKER_INVARIANTS. */
typedef struct {
    const char *name;       /* contract name */
    const char *short_name; /* report column head */
    const char *text;       /* one-line description */
    void (*check)(chk_ctx *c);
} chk_invariant;

#define CHK_INVARIANT_ROW(id, name, short, text) [INV_##id] = { #name, short, text, chk_##name },
static const chk_invariant chk_invariants[INV_COUNT] = { CHECKER_INVARIANTS(CHK_INVARIANT_ROW) };
#undef CHK_INVARIANT_ROW

const char *checker_invariant_name(int inv)
{
    return (inv >= 0 && inv < INV_COUNT) ? chk_invariants[inv].name : "?";
}

const char *checker_invariant_short(int inv)
{
    return (inv >= 0 && inv < INV_COUNT) ? chk_invariants[inv].short_name : "?";
}

const char *checker_invariant_text(int inv)
{
    return (inv >= 0 && inv < INV_COUNT) ? chk_invariants[inv].text : "?";
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

void chk_violate(chk_ctx *c, int inv, long order, long token, long charge, const char *fmt, ...)
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

int chk_time_known(int64_t t)
{
    return t != INT64_MIN;
}

double chk_s(int64_t us)
{
    return (double)us / 1e6;
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
            if (op->txn[0]
                    ? strcmp(op->txn, x->transaction_id) == 0
                    : chk_time_known(x->at_us) && x->at_us >= op->start_us - CHK_CLOCK_SLACK_US &&
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
        if (!chk_row_known(row) || (c->o->db_rows != NULL && !chk_row_known(&c->o->db_rows[i])))
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

int checker_run(const sim_schedule *s, const sim_observations *obs, chk_result *out)
{
    chk_ctx c;
    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.o = obs;
    c.r = out;
    if (chk_index_build(&c.ops, s->norders, obs->nops, chk_op_order, obs->ops) < 0 ||
        chk_index_build(&c.charges, s->norders, obs->ncharges, chk_charge_order, obs->charges) <
            0 ||
        chk_mark_strays(&c) < 0) {
        c.oom = 1;
        goto done;
    }
    chk_mark_payer_payments(&c);
    chk_stats_fill(&c);
    chk_money_stats(&c);
    for (int i = 0; i < INV_COUNT; i++) {
        double t0 = clocks_mono_s();
        chk_invariants[i].check(&c);
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
