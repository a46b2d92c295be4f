/* test_sim_checker_money.c - CUnit suite for the simulator's checker on
 * hand-made histories (sim_checker_fixture.h), the invariants of every
 * customer payment and its refunds (sim/checker_money.c: kept or refunded,
 * one kept charge, no charge kept by a client told 402, refunds within the
 * charge) and of closes that hold and the merchant's refunds
 * (sim/checker_refund.c): each is violated by a history made to violate it
 * and holds in the history next to it. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim_checker_fixture.h"

static void test_payment_kept_or_refunded(void)
{
    chk_result r;
    clean_world();
    /* Order 6 (FAILED) gets a charge nobody refunds; order 5's is refunded. */
    add_charge(6, "4200000000k6", S.orders[6].amount_fen, 0);
    CH[5].refunded = 1;
    CH[5].refund_count = 1;
    CH[5].refunded_fee = CH[5].total_fee;
    set_row(API, 5, OST_FAILED, NULL);
    add_op(OP_QUERY, 5, 200, OST_FAILED, NULL);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAYMENT_KEPT_OR_REFUNDED), 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first_of(&r, INV_PAYMENT_KEPT_OR_REFUNDED));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(first_of(&r, INV_PAYMENT_KEPT_OR_REFUNDED)->message, "4200000000k6"));
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_WITHIN_CHARGE), 0);
    CU_ASSERT_EQUAL(r.stats[SC_TOKEN_REPLAY].refunds, 1);
    checker_result_free(&r);
}

static void test_one_kept_charge(void)
{
    chk_result r;
    clean_world();
    add_charge(2, "4200000000x2", S.orders[2].amount_fen, 0);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ONE_KEPT_CHARGE), 1);
    checker_result_free(&r);
    CH[NCH - 1].refunded = 1; /* the second one refunded: one kept */
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ONE_KEPT_CHARGE), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAYMENT_KEPT_OR_REFUNDED), 0);
    checker_result_free(&r);
}

static void test_closed_client_not_charged(void)
{
    chk_result r;
    clean_world();
    /* Order 3: told 402 payment_closed at the end of the run; the order keeps its charge. */
    sim_op *op = add_op(OP_PAY, 3, 402, OST_FAILED, NULL);
    snprintf(op->error, sizeof(op->error), "payment_closed");
    at(op, 90000, 90100);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_CLIENT_NOT_CHARGED), 1);
    checker_result_free(&r);
    /* Another POST of the order the service took after it: not judged. */
    sim_op *again = add_op(OP_PAY, 3, 200, OST_PAID, "420000000003");
    at(again, 95000, 95100);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_CLIENT_NOT_CHARGED), 0);
    checker_result_free(&r);
    /* A read saying FAILED, the charge refunded: nothing kept. */
    clean_world();
    sim_op *rd = add_op(OP_QUERY, 3, 200, OST_FAILED, NULL);
    at(rd, 90000, 90100);
    CH[3].refunded = 1;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_CLIENT_NOT_CHARGED), 0);
    checker_result_free(&r);
}

static void test_refund_within_charge(void)
{
    chk_result r;
    clean_world();
    add_charge(1, "4200000000r1", S.orders[1].amount_fen, 1);
    CH[NCH - 1].refunded_fee = CH[NCH - 1].total_fee + 1;
    CH[NCH - 1].refund_count = 1;
    add_charge(2, "4200000000r2", S.orders[2].amount_fen, 1);
    CH[NCH - 1].refunded_fee = CH[NCH - 1].total_fee;
    CH[NCH - 1].refund_count = 2;
    CH[0].refund_count = 2; /* order 0's kept charge, refunded in two parts: allowed */
    CH[0].refunded_fee = CH[0].total_fee;
    CH[0].refunded = 1;
    add_charge(3, "4200000000r3", S.orders[3].amount_fen, 1);
    CH[NCH - 1].refunded_fee = -1; /* a mock that does not say */
    CH[NCH - 1].refund_count = -1;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_WITHIN_CHARGE), 2);
    checker_result_free(&r);
}

/* The customer pays a prepay twice through the payer: the second payment,
 * refunded, is no double charge of the service; kept, it is. */
static void test_payer_payments(void)
{
    chk_result r;
    clean_world();
    add_op(OP_PAYER, 1, 200, OST_NONE, "420000000001");
    add_op(OP_PAYER, 1, 200, OST_NONE, "4200000000p1");
    sim_op *refused = add_op(OP_PAYER, 1, 200, OST_NONE, NULL);
    refused->outcome = OUT_FAIL;
    snprintf(refused->error, sizeof(refused->error), "ORDERPAID");
    add_charge(1, "4200000000p1", S.orders[1].amount_fen, 1);
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].payer_paid, 2);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].payer_refused, 1);
    CU_ASSERT_EQUAL(r.stats[SC_DOUBLE_CLICK].refunds, 1);
    checker_result_free(&r);
    CH[NCH - 1].refunded = 0;
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_DOUBLE_CHARGE), 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_SECOND_CHARGE_REFUNDED), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAYMENT_KEPT_OR_REFUNDED), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_ONE_KEPT_CHARGE), 1);
    checker_result_free(&r);
}

/* A payment that lands at the close (the mock's close_race_rate), refunded:
 * the closed order may be read FAILED and answered 402 after it. */
static void test_payment_at_the_close(void)
{
    chk_result r;
    clean_world();
    sim_op *p = add_op(OP_PAYER, 6, 200, OST_NONE, "4200000000c6");
    at(p, 1000, 9000);
    add_charge(6, "4200000000c6", S.orders[6].amount_fen, 1);
    CH[NCH - 1].at_us = 8000000;
    sim_op *rd = add_op(OP_QUERY, 6, 200, OST_FAILED, NULL);
    at(rd, 9500, 9600);
    run(&r, 0);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
    CH[NCH - 1].refunded = 0; /* kept by nobody and not refunded */
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_FAILED_READ_AFTER_CHARGE), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_PAYMENT_KEPT_OR_REFUNDED), 1);
    CU_ASSERT_EQUAL(count_inv(&r, INV_CLOSED_CLIENT_NOT_CHARGED), 1);
    checker_result_free(&r);
}

/* no_charge_after_close: a charge after the service said "closed" (402
 * payment_closed) fails; one before it, or after a FAILED read of an order
 * that is not the real flows' customer's, does not. */
static void test_no_charge_after_close(void)
{
    chk_result r;
    clean_world();
    CH[3].at_us = 5000000; /* order 3's charge at +5 s */
    set_row(API, 3, OST_FAILED, NULL);
    CH[3].refunded = 1;
    sim_op *op = add_op(OP_PAY, 3, 402, OST_FAILED, NULL);
    snprintf(op->error, sizeof(op->error), "payment_closed");
    at(op, 1000, 1100);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_CHARGE_AFTER_CLOSE), 1);
    const chk_violation *v = first_of(&r, INV_NO_CHARGE_AFTER_CLOSE);
    CU_ASSERT_PTR_NOT_NULL(v);
    if (v != NULL)
        CU_ASSERT_EQUAL(v->order, 3);
    checker_result_free(&r);
    at(op, 6000, 6100); /* the close answered after the charge: no violation */
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_CHARGE_AFTER_CLOSE), 0);
    checker_result_free(&r);
    op->kind = OP_QUERY; /* a FAILED read of a double-click order: not "closed" */
    op->http_code = 200;
    at(op, 1000, 1100);
    run(&r, 0);
    CU_ASSERT_EQUAL(count_inv(&r, INV_NO_CHARGE_AFTER_CLOSE), 0);
    checker_result_free(&r);
}

static sim_refund LEDGER_RF[8], LISTED[8];
static uint8_t LIST_READ[NORD];

static sim_refund *add_refund(sim_refund *arr, size_t *n, int order, const char *no,
                              const char *txn, int64_t fee, int status, int duplicate)
{
    sim_refund *x = &arr[(*n)++];
    memset(x, 0, sizeof(*x));
    snprintf(x->refund_no, sizeof(x->refund_no), "%s", no);
    snprintf(x->transaction_id, sizeof(x->transaction_id), "%s", txn ? txn : "");
    x->order = order;
    x->fee = fee;
    x->status = (uint8_t)status;
    x->duplicate = (uint8_t)duplicate;
    return x;
}

static void run_refunds(chk_result *r, size_t nledger, size_t nlisted)
{
    sim_observations o = { .ops = OPS,
                           .nops = NOPS,
                           .charges = CH,
                           .ncharges = NCH,
                           .api_rows = API,
                           .prefix = PFX,
                           .seed = 1234,
                           .refunds = LEDGER_RF,
                           .nrefunds = nledger,
                           .listed = LISTED,
                           .nlisted = nlisted,
                           .list_read = LIST_READ };
    CU_ASSERT_EQUAL_FATAL(checker_run(&S, &o, r), 0);
}

/* A merchant refund of order 1: accepted (202 RM1), ended at the gateway. */
static void refund_world(size_t *nl, size_t *ns, int gateway_status, int service_status)
{
    clean_world();
    *nl = *ns = 0;
    memset(LIST_READ, 0, sizeof(LIST_READ));
    LIST_READ[1] = 1;
    sim_op *a = add_op(OP_REFUND, 1, 202, OST_NONE, "RM1");
    a->idem = 1;
    a->amount_fen = 100;
    add_refund(LEDGER_RF, nl, 1, "RM1", "420000000001", 100, gateway_status, 0);
    add_refund(LISTED, ns, 1, "RM1", NULL, 100, service_status, 0);
}

/* refund_result_reported: the service's result must be the gateway's. */
static void test_refund_result_reported(void)
{
    chk_result r;
    size_t nl, ns;
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_REFUNDCLOSE, RST_SUCCESS); /* done on acceptance */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_RESULT_REPORTED), 2);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_CHANGE, RST_CHANGE); /* reported to the operator */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_RESULT_REPORTED), 0);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    ns = 0; /* accepted and ended, but the service does not list it */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_RESULT_REPORTED), 1);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_PROCESSING, RST_PROCESSING); /* not ended: not judged */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_RESULT_REPORTED), 0);
    checker_result_free(&r);
}

/* refund_names_a_charge: a duplicate-charge refund needs a second charge. */
static void test_refund_names_a_charge(void)
{
    chk_result r;
    size_t nl, ns;
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    add_refund(LISTED, &ns, 1, "RD1", NULL, S.orders[1].amount_fen, RST_ABNORMAL, 1);
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_NAMES_A_CHARGE), 1);
    checker_result_free(&r);
    add_charge(1, "4200000000d1", S.orders[1].amount_fen, 1); /* a real second charge */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_NAMES_A_CHARGE), 0);
    checker_result_free(&r);
    /* A merchant refund listed for an order the gateway never charged (6). */
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    LIST_READ[6] = 1;
    add_refund(LISTED, &ns, 6, "RM6", NULL, 1, RST_PROCESSING, 0);
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_NAMES_A_CHARGE), 1);
    checker_result_free(&r);
}

/* refund_made_once: one key, one refund; every RM refund answered or
 * listed; the refunds that took money within the charge. */
static void test_refund_made_once(void)
{
    chk_result r;
    size_t nl, ns;
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    sim_op *b = add_op(OP_REFUND, 1, 202, OST_NONE, "RM2"); /* the same key, another refund */
    b->idem = 1;
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_MADE_ONCE), 1);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    add_refund(LEDGER_RF, &nl, 1, "RM9", "420000000001", 1, RST_PROCESSING, 0); /* unknown */
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_MADE_ONCE), 1);
    checker_result_free(&r);
    refund_world(&nl, &ns, RST_SUCCESS, RST_SUCCESS);
    LEDGER_RF[0].fee = S.orders[1].amount_fen; /* the whole charge ... */
    add_refund(LEDGER_RF, &nl, 1, "RM3", "420000000001", 1, RST_CHANGE, 0); /* ... and 1 fen */
    add_refund(LISTED, &ns, 1, "RM3", NULL, 1, RST_CHANGE, 0);
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(count_inv(&r, INV_REFUND_MADE_ONCE), 1);
    checker_result_free(&r);
    LEDGER_RF[1].status = RST_REFUNDCLOSE; /* closed: it gave the fen back */
    LISTED[1].status = RST_REFUNDCLOSE;
    run_refunds(&r, nl, ns);
    CU_ASSERT_EQUAL(r.total, 0);
    checker_result_free(&r);
}

int main(void)
{
    static const cu_test tests[] = {
        { "every payment is kept or refunded", test_payment_kept_or_refunded },
        { "an order keeps one charge", test_one_kept_charge },
        { "a client told 402 keeps no charge", test_closed_client_not_charged },
        { "refunds stay within the charge and are made once", test_refund_within_charge },
        { "the customer's payments through the payer are judged", test_payer_payments },
        { "a payment at the close, refunded, passes", test_payment_at_the_close },
        { "a charge after the service said closed fails", test_no_charge_after_close },
        { "refund results must be reported as the gateway's", test_refund_result_reported },
        { "a refund must name a real charge", test_refund_names_a_charge },
        { "one key makes one refund, within the charge", test_refund_made_once },
    };
    return CU_SUITE_RUN("sim_checker_money", setup, teardown, tests);
}
