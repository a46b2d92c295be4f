/* test_sim_checker.c - CUnit suite for the simulator's checker on hand-made
 * histories (sim_checker_fixture.h): a clean history passes, and each
 * invariant of the ledger against the order rows, of what clients sent and
 * of what the service says is violated by a history made to violate it
 * (the checker must be able to fail). Every customer payment and its
 * refunds, closes and the merchant's refunds: test_sim_checker_money.c. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <string.h>

#include "sim_checker_fixture.h"

static void test_clean_passes(void)
{
    chk_result r;
    clean_world();
    run(&r, 1);
    CU_ASSERT_EQUAL(r.total, 0);
    CU_ASSERT_EQUAL(r.nv, 0);
    CU_ASSERT_EQUAL(r.unreadable, 0);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].orders, 4);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].duplicates, 1);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].absorbed, 1);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].replayed, 1);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].paid, 4);
    CU_ASSERT_TRUE(r.ran[SC_DOUBLE_CLICK]);
    CU_ASSERT_TRUE(r.ran[SC_FORGED_CALLBACK]);
    CU_ASSERT_FALSE(r.ran[SC_CRASH]);
    for (int i = 0; i < INV_COUNT; i++)
        CU_ASSERT_PTR_NOT_NULL(strchr(checker_invariant_name(i), '_'));
    checker_result_free(&r);
}

static void test_double_charge(void)
{
    chk_result r;
    clean_world();
    add_charge(1, "4200000000XX", S.orders[1].amount_fen, 1);
    run(&r, 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_DOUBLE_CHARGE), 1);
    CU_ASSERT_EQUAL(r.count[SC_DOUBLE_CLICK][INV_NO_DOUBLE_CHARGE], 1);
    CU_ASSERT_EQUAL_FATAL(r.nv, 1);
    CU_ASSERT_EQUAL(r.v[0].order, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.v[0].message, "refunded"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.v[0].message, "4200000000XX"));
    checker_result_free(&r);
}

static void test_paid_without_charge(void)
{
    chk_result r;
    clean_world();
    NCH--; /* drop order 5's charge */
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAID_HAS_CHARGE), 1);
    CU_ASSERT_EQUAL(r.count[SC_TOKEN_REPLAY][INV_PAID_HAS_CHARGE], 1);
    checker_result_free(&r);
    /* PAID with a transaction id the ledger does not have. */
    clean_world();
    snprintf(API[2].transaction_id, sizeof(API[2].transaction_id), "bogus");
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAID_HAS_CHARGE), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLIENT_PAID_IS_FINAL), 1); /* the client saw another txn */
    checker_result_free(&r);
}

static void test_charge_without_paid_order(void)
{
    chk_result r;
    clean_world();
    set_row(API, 3, OST_FAILED, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLIENT_PAID_IS_FINAL), 1);
    checker_result_free(&r);
    /* Wrong amount. */
    clean_world();
    CH[2].total_fee += 1;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 1);
    checker_result_free(&r);
    /* A charge of an order number this run never made. */
    clean_world();
    add_charge(0, "4200000000ZZ", 5, 0);
    CH[NCH - 1].order = -1;
    snprintf(CH[NCH - 1].out_trade_no, sizeof(CH[NCH - 1].out_trade_no), PFX "qq00000zzzzz");
    run(&r, 0);
    CU_ASSERT_EQUAL(r.count[CHK_UNATTRIBUTED][INV_CHARGE_HAS_PAID_ORDER], 1);
    CU_ASSERT_TRUE(r.ran[CHK_UNATTRIBUTED]);
    checker_result_free(&r);
    /* A charge but the order does not exist at all. */
    clean_world();
    add_charge(7, "4200000000N7", 901, 0);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_FORGED_CALLBACK_NO_EFFECT), 1);
    checker_result_free(&r);
}

static void test_client_paid_not_final(void)
{
    chk_result r;
    clean_world();
    /* The client saw 200 PAID for order 6 (but it ends FAILED, no charge). */
    add_op(OP_QUERY, 6, 200, OST_PAID, "4200000000Q6");
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLIENT_PAID_IS_FINAL), 1);
    CU_ASSERT_EQUAL(r.count[SC_FORGED_CALLBACK][INV_CLIENT_PAID_IS_FINAL], 1);
    checker_result_free(&r);
}

static void test_token_reuse(void)
{
    chk_result r;
    clean_world();
    /* Order 5 (same user) accepted with token A, already used by order 4. */
    sim_op *op = add_op(OP_PAY, 5, 202, OST_PROCESSING, NULL);
    op->token_use = TOK_SLOT;
    op->token = TOK_A;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_TOKEN_SINGLE_ORDER), 1);
    CU_ASSERT_EQUAL(r.count[SC_TOKEN_REPLAY][INV_TOKEN_SINGLE_ORDER], 1);
    checker_result_free(&r);
    /* Refused reuse (403) is fine; so is a retry of the same order. */
    clean_world();
    op = add_op(OP_PAY, 5, 403, OST_NONE, NULL);
    op->token_use = TOK_SLOT;
    op->token = TOK_A;
    op = add_op(OP_PAY, 4, 200, OST_PAID, "420000000004");
    op->token_use = TOK_SLOT;
    op->token = TOK_A;
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
    /* Another user's token accepted. */
    clean_world();
    op = add_op(OP_PAY, 5, 402, OST_FAILED, NULL);
    op->token_use = TOK_SLOT;
    op->token = TOK_B;
    op->flags |= OPF_FOREIGN;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_TOKEN_SINGLE_ORDER), 1);
    checker_result_free(&r);
    /* A made-up token accepted; an expired one accepted. */
    clean_world();
    op = add_op(OP_PAY, 5, 200, OST_PAID, "420000000005");
    op->token_use = TOK_UNKNOWN;
    op = add_op(OP_PAY, 4, 200, OST_PAID, "420000000004");
    op->token_use = TOK_SLOT;
    op->token = TOK_A;
    op->flags |= OPF_EXPIRED;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_TOKEN_SINGLE_ORDER), 2);
    checker_result_free(&r);
}

static void test_forged_callback_effect(void)
{
    chk_result r;
    clean_world();
    set_row(API, 6, OST_PAID, "4299999");
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_FORGED_CALLBACK_NO_EFFECT), 1);
    CU_ASSERT_EQUAL(r.count[SC_FORGED_CALLBACK][INV_FORGED_CALLBACK_NO_EFFECT], 1);
    /* PAID without a charge is also a paid_has_charge violation. */
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAID_HAS_CHARGE), 1);
    checker_result_free(&r);
    /* The never-submitted order now exists. */
    clean_world();
    set_row(API, 7, OST_PENDING, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_FORGED_CALLBACK_NO_EFFECT), 1);
    checker_result_free(&r);
    /* Without a forged callback on record, the order is not judged by it. */
    clean_world();
    NOPS -= 2; /* drop both callbacks */
    set_row(API, 7, OST_PENDING, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_FORGED_CALLBACK_NO_EFFECT), 0);
    checker_result_free(&r);
}

static void test_mismatch(void)
{
    chk_result r;
    clean_world();
    sim_op *op = add_op(OP_PAY, 2, 422, OST_NONE, NULL);
    op->flags |= OPF_MISMATCH;
    op->amount_fen += 5;
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
    clean_world();
    op = add_op(OP_PAY, 2, 200, OST_PAID, "420000000002");
    op->flags |= OPF_MISMATCH;
    op->user_id = 9999;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_MISMATCH_NO_EFFECT), 1);
    checker_result_free(&r);
    /* The row took the other amount: a mismatch effect, and the charge no
     * longer matches the order's amount. */
    clean_world();
    API[1].amount_fen += 1;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_MISMATCH_NO_EFFECT), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 1);
    checker_result_free(&r);
}

static void test_all_settled(void)
{
    chk_result r;
    clean_world();
    set_row(API, 6, OST_PROCESSING, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ALL_SETTLED), 1);
    checker_result_free(&r);
    /* PENDING is not PROCESSING. */
    clean_world();
    set_row(API, 6, OST_PENDING, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ALL_SETTLED), 0);
    checker_result_free(&r);
}

static void test_db_view(void)
{
    chk_result r;
    clean_world();
    /* The API says PAID, the database says PROCESSING without a txn. */
    set_row(DB, 2, OST_PROCESSING, NULL);
    run(&r, 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ALL_SETTLED), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLIENT_PAID_IS_FINAL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.v[0].message, "DB"));
    checker_result_free(&r);
    /* Without --db the same world passes. */
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
}

static void test_unreadable_not_judged(void)
{
    chk_result r;
    clean_world();
    API[3].state = ROW_ERROR;
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    CU_ASSERT_EQUAL(r.unreadable, 1);
    checker_result_free(&r);
}

/* ---- what the service says ---- */

static void test_402_after_charge(void)
{
    chk_result r;
    clean_world();
    /* Order 6 was charged at 1 s, and a 402 came back at 4 s. */
    add_charge(6, "4200000000aa", S.orders[6].amount_fen, 0);
    CH[NCH - 1].at_us = 1000000;
    at(&OPS[7], 500, 4000); /* the 402 of order 6 (clean_world's 8th op) */
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_402_AFTER_CHARGE), 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first_of(&r, INV_NO_402_AFTER_CHARGE));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(first_of(&r, INV_NO_402_AFTER_CHARGE)->message, "had charged 4200000000aa"));
    checker_result_free(&r);
    /* The same charge landing while the 402 is on its way back is not judged. */
    clean_world();
    add_charge(6, "4200000000aa", S.orders[6].amount_fen, 0);
    CH[NCH - 1].at_us = 3900000;
    at(&OPS[7], 500, 4000);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_402_AFTER_CHARGE), 0);
    checker_result_free(&r);
}

/* Order 6: a POST at 0..3 s answered 202, a 402 at 20 s, PAID by a charge
 * at 25 s. */
static void late_paid_world(void)
{
    clean_world();
    at(&OPS[7], 20000, 20100);
    sim_op *first = add_op(OP_PAY, 6, 202, OST_PROCESSING, NULL);
    at(first, 0, 3000);
    add_charge(6, "4200000000bb", S.orders[6].amount_fen, 0);
    CH[NCH - 1].at_us = 25000000;
    set_row(API, 6, OST_PAID, "4200000000bb");
}

static void test_paid_after_402(void)
{
    chk_result r;
    late_paid_world();
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_PAID_AFTER_402), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_402_AFTER_CHARGE), 0);
    checker_result_free(&r);
    /* A new request after the 402 explains the charge. */
    late_paid_world();
    sim_op *again = add_op(OP_PAY, 6, 200, OST_PAID, "4200000000bb");
    at(again, 24900, 25100);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_PAID_AFTER_402), 0);
    checker_result_free(&r);
    /* A refused one (409) does not. */
    late_paid_world();
    sim_op *busy = add_op(OP_PAY, 6, 409, OST_NONE, NULL);
    at(busy, 24900, 24901);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_PAID_AFTER_402), 1);
    checker_result_free(&r);
}

static void test_failed_read_after_charge(void)
{
    chk_result r;
    clean_world();
    add_charge(6, "4200000000cc", S.orders[6].amount_fen, 0);
    CH[NCH - 1].at_us = 1000000;
    sim_op *read = add_op(OP_QUERY, 6, 200, OST_FAILED, NULL);
    at(read, 2000, 2001);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_FAILED_READ_AFTER_CHARGE), 1);
    checker_result_free(&r);
    /* Read before the charge: fine (this check). */
    at(read, 900, 901);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_FAILED_READ_AFTER_CHARGE), 0);
    checker_result_free(&r);
}

static void test_paid_answer_has_charge(void)
{
    chk_result r;
    clean_world();
    /* Order 1 said PAID at 0.5 s; the gateway charged it at 2 s. */
    CH[1].at_us = 2000000;
    at(&OPS[1], 100, 500);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAID_ANSWER_HAS_CHARGE), 1);
    checker_result_free(&r);
    /* PAID without a transaction id. */
    clean_world();
    OPS[2].txn[0] = '\0';
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAID_ANSWER_HAS_CHARGE), 1);
    checker_result_free(&r);
}

static void test_refusal_no_effect(void)
{
    chk_result r;
    clean_world();
    /* Order 5's only POST is refused 403, yet it is PAID and charged. */
    OPS[5].http_code = 403;
    OPS[5].status = OST_NONE;
    OPS[5].txn[0] = '\0';
    at(&OPS[5], 1000, 1001);
    CH[5].at_us = 1000500;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUSAL_NO_EFFECT), 2); /* the charge, and the row */
    checker_result_free(&r);
    /* Refused and absent: fine. */
    clean_world();
    OPS[5].http_code = 403;
    OPS[5].status = OST_NONE;
    NCH = 5; /* drop order 5's charge */
    API[5].state = ROW_ABSENT;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUSAL_NO_EFFECT), 0);
    checker_result_free(&r);
}

static void test_second_charge_refunded(void)
{
    chk_result r;
    clean_world();
    /* The payer pays order 1 again at the gateway: not the service's double
     * charge, but it must be refunded. */
    sim_op *stray = add_op(OP_STRAY, 1, 200, OST_NONE, "4200000000dd");
    at(stray, 9000, 9010);
    add_charge(1, "4200000000dd", S.orders[1].amount_fen, 0);
    CH[NCH - 1].at_us = 9005000;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_DOUBLE_CHARGE), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CHARGE_HAS_PAID_ORDER), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_SECOND_CHARGE_REFUNDED), 1);
    checker_result_free(&r);
    CH[NCH - 1].refunded = 1;
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
    /* A second charge the service made itself still counts. */
    add_charge(1, "4200000000ee", S.orders[1].amount_fen, 1);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_DOUBLE_CHARGE), 1);
    checker_result_free(&r);
}

static void gwcall(sim_gwcall *c, int order, const char *endpoint, int fence, double at_ms,
                   double latency_ms)
{
    memset(c, 0, sizeof(*c));
    sched_order_no(&S, PFX, (size_t)order, c->out_trade_no, sizeof(c->out_trade_no));
    snprintf(c->endpoint, sizeof(c->endpoint), "%s", endpoint);
    c->order = order;
    c->fence = (uint8_t)fence;
    c->at_us = (int64_t)(at_ms * 1000);
    c->latency_us = (int64_t)(latency_ms * 1000);
}

static size_t fence_violations(const sim_gwcall *calls, size_t n, int64_t timeout_us)
{
    chk_result r;
    sim_observations o = { .ops = OPS,
                           .nops = NOPS,
                           .charges = CH,
                           .ncharges = NCH,
                           .api_rows = API,
                           .prefix = PFX,
                           .seed = 1234,
                           .calls = calls,
                           .ncalls = n,
                           .gateway_timeout_us = timeout_us };
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, &r), 0);
    size_t v = count_inv(&r, INV_NO_FENCE_WITHIN_CALL);
    checker_result_free(&r);
    return v;
}

static void test_no_fence_within_call(void)
{
    sim_gwcall c[4];
    clean_world();
    /* Order 1's unifiedorder is held 2.6 s at the gateway; a closeorder of it
     * arrives 2 s after it: the service fenced its own call (timeout 3 s). */
    gwcall(&c[0], 1, "unifiedorder", 0, 1000, 2600);
    gwcall(&c[1], 1, "closeorder", 1, 3000, 5);
    CU_ASSERT_EQUAL(fence_violations(c, 2, 3000000), 1);
    /* Not judged without the journal or the timeout. */
    CU_ASSERT_EQUAL(fence_violations(NULL, 0, 3000000), 0);
    CU_ASSERT_EQUAL(fence_violations(c, 2, 0), 0);
    /* The call was answered before the close: over, fine. */
    gwcall(&c[0], 1, "unifiedorder", 0, 1000, 1500);
    CU_ASSERT_EQUAL(fence_violations(c, 2, 3000000), 0);
    /* Still held, but the service gave up on it (10 s later, past the
     * timeout: the lease's takeover): the fence it needs. */
    gwcall(&c[0], 1, "micropay", 0, 1000, 15000);
    gwcall(&c[1], 1, "reverse", 1, 11000, 5);
    CU_ASSERT_EQUAL(fence_violations(c, 2, 3000000), 0);
    /* Another order's close, and a close before the call, are not it. */
    gwcall(&c[0], 1, "micropay", 0, 1000, 15000);
    gwcall(&c[1], 2, "reverse", 1, 1500, 5);
    gwcall(&c[2], 1, "v3_close", 1, 900, 5);
    CU_ASSERT_EQUAL(fence_violations(c, 3, 3000000), 0);
    /* v3's close of a held v3 prepay, 1 s after it: fails. */
    gwcall(&c[3], 1, "v3_close", 1, 2000, 5);
    CU_ASSERT_EQUAL(fence_violations(c, 4, 3000000), 1);
}

static void test_closed_after_doubt(void)
{
    chk_result r;
    clean_world();
    /* Order 6's only POST is answered payment_closed: closed too early. */
    snprintf(OPS[7].error, sizeof(OPS[7].error), "payment_closed");
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 1);
    checker_result_free(&r);
    /* A repeat that saw the live lease (202 replayed) is no doubt... */
    sim_op *repeat = add_op(OP_PAY, 6, 202, OST_PROCESSING, NULL);
    repeat->flags |= OPF_REPLAYED;
    at(repeat, 0, 1);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 1);
    checker_result_free(&r);
    /* ...the holder's own 202 (its gateway call timed out) is. */
    repeat->flags = 0;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 0);
    checker_result_free(&r);
    /* With a 10 s lease, a holder whose client got no answer and that
     * began 2 s before the close is too recent: its attempt was closed while
     * it could still be waiting. An answered one was over: fine. */
    repeat->http_code = 0;
    repeat->outcome = OUT_UNKNOWN;
    at(&OPS[7], 2000, 2300);
    sim_observations o = { .ops = OPS,
                           .nops = NOPS,
                           .charges = CH,
                           .ncharges = NCH,
                           .api_rows = API,
                           .prefix = PFX,
                           .seed = 1234,
                           .lease_us = 10000000 };
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, &r), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 1);
    checker_result_free(&r);
    at(&OPS[7], 12000, 12300);
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, &r), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 0);
    checker_result_free(&r);
    repeat->http_code = 202; /* answered (its lease given back) before the close */
    at(&OPS[7], 2000, 2300);
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, &r), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_AFTER_DOUBT), 0);
    checker_result_free(&r);
}

static void test_mismatch_wrong_refusal(void)
{
    chk_result r;
    clean_world();
    sim_op *op = add_op(OP_PAY, 3, 422, OST_NONE, NULL);
    snprintf(op->error, sizeof(op->error), "order_mismatch");
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_MISMATCH_NO_EFFECT), 1);
    checker_result_free(&r);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a clean history passes every invariant", test_clean_passes },
        { "a double charge fails no_double_charge", test_double_charge },
        { "a PAID order without a charge fails", test_paid_without_charge },
        { "a charge without a PAID order fails", test_charge_without_paid_order },
        { "a PAID answer followed by another state fails", test_client_paid_not_final },
        { "a token used twice fails", test_token_reuse },
        { "a forged notification that changed an order fails", test_forged_callback_effect },
        { "an order that differs from what was asked fails", test_mismatch },
        { "an order still moving at the end fails all_settled", test_all_settled },
        { "the database rows are judged like the API's", test_db_view },
        { "rows that could not be read are not judged", test_unreadable_not_judged },
        { "a 402 after a charge fails", test_402_after_charge },
        { "a PAID after a 402 fails", test_paid_after_402 },
        { "a FAILED read after a charge fails", test_failed_read_after_charge },
        { "a PAID answer before its charge fails", test_paid_answer_has_charge },
        { "a refusal that changed something fails", test_refusal_no_effect },
        { "the payer's second charge must be refunded", test_second_charge_refunded },
        { "a wrong order_mismatch refusal fails", test_mismatch_wrong_refusal },
        { "an order closed without doubt fails", test_closed_after_doubt },
        { "a fence while the service waits for its own call fails", test_no_fence_within_call },
    };
    return CU_SUITE_RUN("sim_checker", setup, teardown, tests);
}
