/* witness.c - witness text (see witness.h). */
#include "witness.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "nemesis.h"
#include "scenarios.h"

void witness_order_no(const sim_report *r, long order, char *out, size_t len)
{
    if (order < 0 ||
        sched_order_no(r->sched, r->prefix ? r->prefix : "", (size_t)order, out, len) < 0)
        snprintf(out, len, "-");
}

static void witness_op_line(const sim_report *r, FILE *f, const sim_op *op)
{
    char amt[MONEY_STR_MAX];
    fprintf(f, "    +%.6fs..+%.6fs %-8s", (double)op->start_us / 1e6, (double)op->end_us / 1e6,
            history_kind_name(op->kind));
    if (op->task >= 0)
        fprintf(f, " client#%d", op->task);
    if (op->kind == OP_PAY || op->kind == OP_TOKEN)
        fprintf(f, " user=%lld", (long long)op->user_id);
    if (op->kind == OP_STRAY)
        fprintf(f, " (the payer pays a second time, at the gateway)");
    if (op->kind == OP_PAYER)
        fprintf(f, " (the customer pays the prepay, through the mock's payer)");
    if (op->kind == OP_PAY || op->kind == OP_CALLBACK || op->kind == OP_STRAY ||
        op->kind == OP_PAYER) {
        if (op->amount_fen >= 0)
            fprintf(f, " amount=%s", money_format(op->amount_fen, amt));
    }
    if (op->kind == OP_PAY) {
        if (op->token_use == TOK_SLOT)
            fprintf(f, " token=#%d", op->token);
        else if (op->token_use == TOK_UNKNOWN)
            fprintf(f, " token=made-up");
        if (op->idem)
            fprintf(f, " idem-key=%u", op->idem);
        fprintf(f, " try=%u", op->attempt);
    }
    if (op->kind == OP_TOKEN && op->token >= 0)
        fprintf(f, " slot=#%d", op->token);
    if (op->kind == OP_CALLBACK) {
        fprintf(f, " forged=%s", sched_forge_name(op->forge));
        if (op->txn[0])
            fprintf(f, " txn=%s", op->txn);
    }
    if (op->flags & OPF_MISMATCH)
        fprintf(f, " (mismatch)");
    if (op->flags & OPF_FOREIGN)
        fprintf(f, " (another user's token)");
    if (op->flags & OPF_EXPIRED)
        fprintf(f, " (expired token)");
    fprintf(f, " -> ");
    if (op->http_code)
        fprintf(f, "%u", op->http_code);
    else
        fprintf(f, "no answer");
    if (op->status != OST_NONE)
        fprintf(f, " %s", history_status_name(op->status));
    if (op->kind != OP_CALLBACK && op->txn[0])
        fprintf(f, " txn=%s", op->txn);
    if (op->error[0])
        fprintf(f, " %s", op->error);
    if (op->flags & OPF_REPLAYED)
        fprintf(f, " replayed");
    if (op->kind == OP_CALLBACK)
        fprintf(f, " %s", (op->flags & OPF_CALLBACK_SUCCESS) ? "SUCCESS" : "FAIL");
    fprintf(f, " [%s]\n", history_outcome_name(op->outcome));
}

static void witness_row_line(FILE *f, const char *name, const sim_row *row)
{
    char amt[MONEY_STR_MAX];
    switch (row->state) {
    case ROW_ABSENT:
        fprintf(f, "  final row (%s): none (404)\n", name);
        break;
    case ROW_PRESENT:
        fprintf(f, "  final row (%s): %s user=%lld amount=%s txn=%s updated=%s\n", name,
                history_status_name(row->status), (long long)row->user_id,
                row->amount_fen >= 0 ? money_format(row->amount_fen, amt) : "?",
                row->transaction_id[0] ? row->transaction_id : "null",
                row->updated_at[0] ? row->updated_at : "?");
        break;
    default:
        fprintf(f, "  final row (%s): could not be read\n", name);
    }
}

/* Two ops that say the same thing: one line for a run of them. */
static int witness_same(const sim_op *a, const sim_op *b)
{
    return a->task >= 0 && a->task == b->task && a->kind == b->kind &&
           a->http_code == b->http_code && a->status == b->status && a->flags == b->flags &&
           a->transport == b->transport && a->token_use == b->token_use && a->idem == b->idem &&
           strcmp(a->error, b->error) == 0 && strcmp(a->txn, b->txn) == 0;
}

/* A phase's mock knobs in a few words, for phases without a faults text. */
static void witness_knobs(const sched_phase *ph, char *out, size_t len)
{
    json_t *j = json_loads(ph->mock_config, 0, NULL);
    json_t *dedupe = json_object_get(j, "dedupe"), *notify = json_object_get(j, "notify_enabled");
    snprintf(
        out, len,
        "latency %lld+%lld ms, SYSTEMERROR %.0f%%, decline %.0f%%, reset %.0f%%, charged+reply "
        "withheld %.0f%%, dedupe %s, notifications x%lld%s",
        (long long)json_integer_value(json_object_get(j, "latency_ms")),
        (long long)json_integer_value(json_object_get(j, "jitter_ms")),
        json_number_value(json_object_get(j, "error_rate")) * 100,
        json_number_value(json_object_get(j, "decline_rate")) * 100,
        json_number_value(json_object_get(j, "reset_rate")) * 100,
        json_number_value(json_object_get(j, "timeout_after_charge_rate")) * 100,
        json_is_false(dedupe) ? "off" : "on",
        (long long)json_integer_value(json_object_get(j, "notify_copies")),
        json_is_false(notify) ? " (dropped)" : "");
    json_decref(j);
}

/* When phase p ended (the next phase's start), or INT64_MAX. */
static int64_t witness_phase_end(const sim_report *r, size_t p)
{
    const int64_t *st = r->obs->phase_start_us;
    for (size_t q = p + 1; q < r->sched->nphases; q++)
        if (st[q] >= 0)
            return st[q];
    return INT64_MAX;
}

/* The time span of order's activity: its ops and its charges. */
static int witness_span(const sim_report *r, long order, int64_t *from, int64_t *to)
{
    const sim_observations *o = r->obs;
    *from = INT64_MAX;
    *to = INT64_MIN;
    for (size_t i = 0; i < o->nops; i++)
        if (o->ops[i].order == order) {
            if (o->ops[i].start_us < *from)
                *from = o->ops[i].start_us;
            if (o->ops[i].end_us > *to)
                *to = o->ops[i].end_us;
        }
    for (size_t i = 0; i < o->ncharges; i++)
        if (o->charges[i].order == order && o->charges[i].at_us != INT64_MIN &&
            o->charges[i].at_us > *to)
            *to = o->charges[i].at_us;
    return *from <= *to;
}

static void witness_phases(const sim_report *r, int64_t from, int64_t to, FILE *f)
{
    const int64_t *st = r->obs->phase_start_us;
    for (size_t p = 0; st != NULL && p < r->sched->nphases; p++) {
        int64_t end = witness_phase_end(r, p);
        if (st[p] < 0 || st[p] > to || end < from)
            continue;
        const sched_phase *ph = &r->sched->phases[p];
        char knobs[SCHED_FAULTS_MAX];
        if (!ph->faults[0])
            witness_knobs(ph, knobs, sizeof(knobs));
        fprintf(f, "    phase %s/%s from +%.1f s: %s\n", sched_scenario_name(ph->scenario),
                ph->label, (double)st[p] / 1e6, ph->faults[0] ? ph->faults : knobs);
    }
}

static void witness_chaos(const sim_report *r, int64_t from, int64_t to, FILE *f)
{
    for (size_t i = 0; i < r->nchaos; i++) {
        const sim_chaos_event *e = &r->chaos[i];
        if (e->at_us >= from && e->at_us <= to)
            fprintf(f, "    chaos: %s at +%.1f s (exit %d)\n", sched_chaos_name(e->action),
                    (double)e->at_us / 1e6, e->exit_status);
    }
}

static void witness_clients(const sim_report *r, long order, FILE *f)
{
    const sim_schedule *s = r->sched;
    for (size_t k = 0; k < s->ntasks; k++) {
        const sched_task *t = &s->tasks[k];
        if (t->order != order)
            continue;
        fprintf(f, "    client#%zu: ", k);
        if (t->behaviour)
            fprintf(f, "%s; ", nemesis_behaviour_name(t->behaviour));
        fprintf(f, "timeout %u ms, up to %u POST(s), patience %.1f s%s%s%s", t->timeout_ms,
                t->max_attempts, t->patience_ms / 1000.0, t->hasty ? ", retries at once" : "",
                t->poll && !t->hasty ? ", polls the order" : "",
                t->retry_declined ? ", tries again after a 402" : "");
        if (t->idem)
            fprintf(f, ", Idempotency-Key %u", t->idem);
        if (t->token_use == TOK_SLOT)
            fprintf(f, ", token #%d", t->token);
        fprintf(f, "\n");
    }
}

void witness_faults(const sim_report *r, long order, FILE *f)
{
    int64_t from, to;
    if (order < 0 || r->obs == NULL || !witness_span(r, order, &from, &to))
        return;
    fprintf(f, "  faults met:\n");
    witness_phases(r, from, to, f);
    witness_chaos(r, from, to, f);
    witness_clients(r, order, f);
    if (r->journal != NULL && r->journal[order] != NULL && r->journal[order][0]) {
        fprintf(f, "  gateway journal (what the mock did with each call and notification):\n");
        fputs(r->journal[order], f);
    }
}

static void witness_ledger(const sim_report *r, long order, FILE *f)
{
    const sim_observations *o = r->obs;
    size_t nch = 0;
    for (size_t i = 0; o && i < o->ncharges; i++)
        nch += o->charges[i].order == order;
    fprintf(f, "  ledger: %zu charge(s)\n", nch);
    for (size_t i = 0; o && i < o->ncharges; i++) {
        const sim_charge *c = &o->charges[i];
        if (c->order != order)
            continue;
        fprintf(f, "    %s total_fee=%lld%s charged_at=%s", c->transaction_id,
                (long long)c->total_fee, c->refunded ? " REFUNDED" : "", c->charged_at);
        if (c->at_us != INT64_MIN)
            fprintf(f, " (+%.3f s)", (double)c->at_us / 1e6);
        fprintf(f, "\n");
    }
}

static void witness_ops(const sim_report *r, const chk_violation *v, FILE *f)
{
    const sim_observations *o = r->obs;
    size_t shown = 0;
    const sim_op *run = NULL, *last = NULL;
    size_t folded = 0;
    fprintf(f, "  client operations, in time order:\n");
    for (size_t i = 0; o && i < o->nops; i++) {
        const sim_op *op = &o->ops[i];
        int mine = (v->order >= 0 && op->order == v->order) ||
                   (v->token >= 0 && op->token == v->token && op->token_use == TOK_SLOT);
        if (!mine)
            continue;
        if (run != NULL && witness_same(run, op)) {
            folded++;
            last = op;
            continue;
        }
        if (folded > 0)
            fprintf(f, "      ... %zu more like it, the last at +%.3f s\n", folded,
                    (double)last->start_us / 1e6);
        folded = 0;
        if (shown++ == 200) {
            fprintf(f, "    ... (more omitted)\n");
            return;
        }
        if (v->token >= 0 && op->order != v->order && op->order >= 0) {
            char other[64];
            witness_order_no(r, op->order, other, sizeof(other));
            fprintf(f, "    (order %s)\n", other);
        }
        witness_op_line(r, f, op);
        run = op;
    }
    if (folded > 0)
        fprintf(f, "      ... %zu more like it, the last at +%.3f s\n", folded,
                (double)last->start_us / 1e6);
    if (shown == 0)
        fprintf(f, "    (none)\n");
}

char *witness_text(const sim_report *r, const chk_violation *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    const sim_schedule *s = r->sched;
    const sim_observations *o = r->obs;
    char no[64], amt[MONEY_STR_MAX];
    witness_order_no(r, v->order, no, sizeof(no));
    fprintf(f, "[%s] scenario %s, order %s: %s\n", checker_invariant_name(v->invariant),
            sched_scenario_name(v->scenario), no, v->message);
    fprintf(f, "  seed: %llu", (unsigned long long)r->seed);
    if (r->replay_cmd)
        fprintf(f, "  (replay: %s)", r->replay_cmd);
    fprintf(f, "\n");
    if (v->order >= 0 && (size_t)v->order < s->norders) {
        const sched_order *so = &s->orders[v->order];
        fprintf(f, "  order: user=%lld amount=%s%s\n", (long long)so->user_id,
                money_format(so->amount_fen, amt),
                (so->flags & ORD_NEVER_SUBMITTED) ? " (never submitted by a client)" : "");
        witness_ledger(r, v->order, f);
        if (o && o->api_rows)
            witness_row_line(f, "API", &o->api_rows[v->order]);
        if (o && o->db_rows)
            witness_row_line(f, "DB", &o->db_rows[v->order]);
        witness_faults(r, v->order, f);
    } else if (v->charge >= 0 && o && (size_t)v->charge < o->ncharges) {
        const sim_charge *c = &o->charges[v->charge];
        fprintf(f, "  ledger: %s out_trade_no=%s total_fee=%lld%s charged_at=%s\n",
                c->transaction_id, c->out_trade_no, (long long)c->total_fee,
                c->refunded ? " REFUNDED" : "", c->charged_at);
    }
    if (v->token >= 0 && (size_t)v->token < s->ntokens)
        fprintf(f, "  token #%ld: issued to user %lld\n", v->token,
                (long long)s->tokens[v->token].user_id);
    witness_ops(r, v, f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
