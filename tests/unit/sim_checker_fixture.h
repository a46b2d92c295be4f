/* sim_checker_fixture - the hand-made run both checker suites judge
 * (test_sim_checker.c, test_sim_checker_money.c): a schedule of 8 orders
 * (setup: 0..3 double-click, 4 and 5 token-replay of user 500 with tokens
 * TOK_A and TOK_B, 6 a declined forged-callback target, 7 a forged-callback
 * target never submitted), the observations a test fills (OPS, CH, API,
 * DB) with add_op, add_charge, set_row and at, the clean world every test
 * starts from (clean_world), one run of the checker over it (run) and the
 * violations it found (count_inv, first_of). One copy a suite: each is its
 * own program. */
#ifndef IDEMPAY_TEST_SIM_CHECKER_FIXTURE_H
#define IDEMPAY_TEST_SIM_CHECKER_FIXTURE_H

#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checker.h"
#include "rng.h"
#include "schedule.h"

#define PFX "t0000001"
#define NORD 8

static sim_schedule S;
static sim_op OPS[64];
static size_t NOPS;
static sim_charge CH[16];
static size_t NCH;
static sim_row API[NORD], DB[NORD];
static int TOK_A, TOK_B;

/* Orders 0..3 double-click, 4 token-replay (user 500), 5 token-replay (user 500),
 * 6 forged-callback declined target, 7 forged-callback never submitted. */
static inline int setup(void)
{
    rng_t r;
    rng_seed(&r, 1);
    sched_init(&S, 1234);
    if (sched_begin_phase(&S, SC_DOUBLE_CLICK, "p", "{}", 0, 0) < 0)
        return -1;
    for (int i = 0; i < 4; i++)
        sched_add_order(&S, &r, SC_DOUBLE_CLICK, 100 + i, 1000 + i, AMT_FIXED2, 0);
    if (sched_begin_phase(&S, SC_TOKEN_REPLAY, "p", "{}", 0, 0) < 0)
        return -1;
    sched_add_order(&S, &r, SC_TOKEN_REPLAY, 500, 700, AMT_SHORT, 0);
    sched_add_order(&S, &r, SC_TOKEN_REPLAY, 500, 800, AMT_SHORT, 0);
    TOK_A = sched_add_token(&S, SC_TOKEN_REPLAY, 500);
    TOK_B = sched_add_token(&S, SC_TOKEN_REPLAY, 777);
    if (sched_begin_phase(&S, SC_FORGED_CALLBACK, "p", "{}", 0, 0) < 0)
        return -1;
    sched_add_order(&S, &r, SC_FORGED_CALLBACK, 600, 900, AMT_FIXED2,
                    ORD_DECLINE | ORD_FORGE_TARGET);
    sched_add_order(&S, &r, SC_FORGED_CALLBACK, 601, 901, AMT_FIXED2,
                    ORD_NEVER_SUBMITTED | ORD_FORGE_TARGET);
    return S.norders == NORD ? 0 : -1;
}

static inline int teardown(void)
{
    sched_free(&S);
    return 0;
}

static inline sim_op *add_op(int kind, int order, uint16_t code, int status, const char *txn)
{
    sim_op *op = &OPS[NOPS];
    memset(op, 0, sizeof(*op));
    op->kind = (uint8_t)kind;
    op->order = order;
    op->token = -1;
    op->task = -1;
    op->scenario = order >= 0 ? S.orders[order].scenario : SC_DOUBLE_CLICK;
    op->user_id = order >= 0 ? S.orders[order].user_id : 0;
    op->amount_fen = order >= 0 ? S.orders[order].amount_fen : -1;
    op->http_code = code;
    op->status = (uint8_t)status;
    op->outcome = code == 200 ? OUT_OK : (code >= 400 && code < 500) ? OUT_FAIL : OUT_UNKNOWN;
    op->start_us = (int64_t)NOPS * 1000;
    op->end_us = op->start_us + 500;
    snprintf(op->txn, sizeof(op->txn), "%s", txn ? txn : "");
    NOPS++;
    return op;
}

static inline void add_charge(int order, const char *txn, int64_t fee, int refunded)
{
    sim_charge *c = &CH[NCH++];
    memset(c, 0, sizeof(*c));
    snprintf(c->transaction_id, sizeof(c->transaction_id), "%s", txn);
    sched_order_no(&S, PFX, (size_t)order, c->out_trade_no, sizeof(c->out_trade_no));
    c->total_fee = fee;
    c->refunded = refunded;
    c->order = order;
    c->at_us = INT64_MIN; /* unknown unless a test sets it */
    c->epoch_us = INT64_MIN;
}

/* Puts op at [start_ms, end_ms] on the run's clock. */
static inline void at(sim_op *op, double start_ms, double end_ms)
{
    op->start_us = (int64_t)(start_ms * 1000);
    op->end_us = (int64_t)(end_ms * 1000);
}

static inline void set_row(sim_row *rows, int order, int status, const char *txn)
{
    sim_row *r = &rows[order];
    memset(r, 0, sizeof(*r));
    r->state = ROW_PRESENT;
    r->status = (uint8_t)status;
    r->user_id = S.orders[order].user_id;
    r->amount_fen = S.orders[order].amount_fen;
    snprintf(r->transaction_id, sizeof(r->transaction_id), "%s", txn ? txn : "");
}

/* A clean world: orders 0..5 paid once each (4 via two concurrent copies),
 * 6 declined and forged against, 7 never submitted and forged against. */
static inline void clean_world(void)
{
    char txn[32];
    NOPS = 0;
    NCH = 0;
    memset(API, 0, sizeof(API));
    memset(DB, 0, sizeof(DB));
    for (int i = 0; i < 6; i++) {
        snprintf(txn, sizeof(txn), "4200000000%02d", i);
        sim_op *op = add_op(OP_PAY, i, 200, OST_PAID, txn);
        if (i == 4) {
            op->token_use = TOK_SLOT;
            op->token = TOK_A;
        }
        add_charge(i, txn, S.orders[i].amount_fen, 0);
        set_row(API, i, OST_PAID, txn);
        set_row(DB, i, OST_PAID, txn);
    }
    /* A duplicate of order 0 answered as a replay: absorbed. */
    sim_op *dup = add_op(OP_PAY, 0, 200, OST_PAID, "420000000000");
    dup->flags |= OPF_REPLAYED;
    add_op(OP_PAY, 6, 402, OST_FAILED, NULL);
    set_row(API, 6, OST_FAILED, NULL);
    set_row(DB, 6, OST_FAILED, NULL);
    add_op(OP_CALLBACK, 6, 200, OST_NONE, "4299999");
    add_op(OP_CALLBACK, 7, 200, OST_NONE, "4299998");
    API[7].state = ROW_ABSENT;
    DB[7].state = ROW_ABSENT;
}

static inline void run(chk_result *r, int with_db)
{
    sim_observations o = { .ops = OPS,
                           .nops = NOPS,
                           .charges = CH,
                           .ncharges = NCH,
                           .api_rows = API,
                           .db_rows = with_db ? DB : NULL,
                           .prefix = PFX,
                           .seed = 1234 };
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, r), 0);
}

static inline size_t count_inv(const chk_result *r, int inv)
{
    size_t n = 0;
    for (int sc = 0; sc <= SC_COUNT; sc++)
        n += r->count[sc][inv];
    return n;
}

/* The first violation of inv (NULL when none). */
static inline const chk_violation *first_of(const chk_result *r, int inv)
{
    for (size_t i = 0; i < r->nv; i++)
        if (r->v[i].invariant == inv)
            return &r->v[i];
    return NULL;
}

#endif
