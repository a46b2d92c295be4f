/* test_sim_pending.c - CUnit suite for pending_orders: which orders the
 * simulator still waits for after the traffic. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "rng.h"
#include "schedule.h"
#include "pending.h"

#define PFX "t0000002"

static sim_schedule S;
static sim_row ROWS[4];
static sim_charge CH[4];

static int setup(void)
{
    rng_t r;
    rng_seed(&r, 2);
    sched_init(&S, 9);
    if (sched_begin_phase(&S, SC_NEMESIS, "p", "{}", 0, 0) < 0)
        return -1;
    for (int i = 0; i < 4; i++)
        sched_add_order(&S, &r, SC_NEMESIS, 10 + i, 100 + i, AMT_FIXED2, 0);
    return 0;
}

static int teardown(void)
{
    sched_free(&S);
    return 0;
}

static void row(int i, int status, const char *txn)
{
    memset(&ROWS[i], 0, sizeof(ROWS[i]));
    ROWS[i].state = ROW_PRESENT;
    ROWS[i].status = (uint8_t)status;
    snprintf(ROWS[i].transaction_id, sizeof(ROWS[i].transaction_id), "%s", txn ? txn : "");
}

static void charge(int k, int order, const char *txn, int refunded)
{
    memset(&CH[k], 0, sizeof(CH[k]));
    CH[k].order = order;
    CH[k].refunded = refunded;
    snprintf(CH[k].transaction_id, sizeof(CH[k].transaction_id), "%s", txn);
}

static void test_pending(void)
{
    size_t out[4];
    /* 0 PAID with its charge; 1 PROCESSING; 2 FAILED but charged; 3 FAILED. */
    row(0, OST_PAID, "T0");
    row(1, OST_PROCESSING, NULL);
    row(2, OST_FAILED, NULL);
    row(3, OST_FAILED, NULL);
    charge(0, 0, "T0", 0);
    charge(1, 2, "T2", 0);
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 2, NULL, 0, out), 2);
    CU_ASSERT_EQUAL(out[0], 1);
    CU_ASSERT_EQUAL(out[1], 2);
    /* A PAID order whose charge is not in the ledger yet. */
    row(2, OST_FAILED, NULL);
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 1, NULL, 0, out), 1);
    row(1, OST_PAID, "T1");
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 1, NULL, 0, out), 1);
    CU_ASSERT_EQUAL(out[0], 1);
}

static void test_payer_second_charge(void)
{
    size_t out[4];
    const char *strays[1] = { "S0" };
    row(0, OST_PAID, "T0");
    row(1, OST_PAID, "T1");
    row(2, OST_FAILED, NULL);
    row(3, OST_FAILED, NULL);
    charge(0, 0, "T0", 0);
    charge(1, 1, "T1", 0);
    charge(2, 0, "S0", 0);
    /* The payer's second charge of order 0 is not refunded yet: wait. */
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 3, strays, 1, out), 1);
    CU_ASSERT_EQUAL(out[0], 0);
    CH[2].refunded = 1;
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 3, strays, 1, out), 0);
    /* Unread and unreadable rows are waited for too. */
    ROWS[3].state = ROW_ERROR;
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 3, strays, 1, out), 1);
    CU_ASSERT_EQUAL(out[0], 3);
}

/* The customer's payments through the payer: the kept one is settled; one
 * a close let through waits until it is refunded, then the closed order is
 * settled. */
static void test_customer_payments(void)
{
    size_t out[4];
    const char *strays[2] = { "P0", "P2" };
    row(0, OST_PAID, "P0");
    row(1, OST_PAID, "T1");
    row(2, OST_FAILED, NULL);
    row(3, OST_FAILED, NULL);
    charge(0, 0, "P0", 0);
    charge(1, 1, "T1", 0);
    charge(2, 2, "P2", 0);
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 3, strays, 2, out), 1);
    CU_ASSERT_EQUAL(out[0], 2);
    CH[2].refunded = 1;
    CU_ASSERT_EQUAL(pending_orders(&S, ROWS, CH, 3, strays, 2, out), 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "orders still moving are found", test_pending },
        { "the payer's second charge keeps the run settling", test_payer_second_charge },
        { "the customer's payments settle once the kept one is", test_customer_payments },
    };
    return CU_SUITE_RUN("sim_settle", setup, teardown, tests);
}
