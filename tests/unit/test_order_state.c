/* test_order_state.c - CUnit suite for order_state: names, the integer
 * mapping and every cell of the transition table. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "order_state.h"

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(order_state_name(ORDER_PENDING), "PENDING");
    CU_ASSERT_STRING_EQUAL(order_state_name(ORDER_PROCESSING), "PROCESSING");
    CU_ASSERT_STRING_EQUAL(order_state_name(ORDER_PAID), "PAID");
    CU_ASSERT_STRING_EQUAL(order_state_name(ORDER_FAILED), "FAILED");
    CU_ASSERT_STRING_EQUAL(order_state_name(-1), "UNKNOWN");
    CU_ASSERT_STRING_EQUAL(order_state_name(4), "UNKNOWN");
    CU_ASSERT_STRING_EQUAL(order_state_name(127), "UNKNOWN");
}

static void test_seed_numbers(void)
{
    order_status s = ORDER_PAID;

    CU_ASSERT_EQUAL(ORDER_PENDING, 0);
    CU_ASSERT_EQUAL(ORDER_PROCESSING, 1);
    CU_ASSERT_EQUAL(ORDER_PAID, 2);
    CU_ASSERT_EQUAL(ORDER_FAILED, 3);
    CU_ASSERT_TRUE(order_state_from_int(0, &s));
    CU_ASSERT_EQUAL(s, ORDER_PENDING);
    CU_ASSERT_TRUE(order_state_from_int(3, &s));
    CU_ASSERT_EQUAL(s, ORDER_FAILED);
    CU_ASSERT_FALSE(order_state_from_int(4, &s));
    CU_ASSERT_FALSE(order_state_from_int(-1, &s));
    CU_ASSERT_FALSE(order_state_from_int(1LL << 40, &s));
    CU_ASSERT_EQUAL(s, ORDER_FAILED); /* untouched when refused */
}

static void test_transition_table(void)
{
    /* allowed[from][to]: exactly 0->1, 1->2, 1->3, 3->1 */
    static const int allowed[4][4] = {
        { 0, 1, 0, 0 },
        { 0, 0, 1, 1 },
        { 0, 0, 0, 0 },
        { 0, 1, 0, 0 },
    };
    int n = 0;

    for (int from = 0; from < 4; from++)
        for (int to = 0; to < 4; to++) {
            CU_ASSERT_EQUAL(order_state_can_transition(from, to), allowed[from][to] != 0);
            n += order_state_can_transition(from, to);
        }
    CU_ASSERT_EQUAL(n, 4);
}

static void test_paid_is_terminal(void)
{
    for (int to = -2; to < 8; to++)
        CU_ASSERT_FALSE(order_state_can_transition(ORDER_PAID, to));
}

static void test_out_of_range(void)
{
    CU_ASSERT_FALSE(order_state_can_transition(-1, ORDER_PROCESSING));
    CU_ASSERT_FALSE(order_state_can_transition(ORDER_PROCESSING, 4));
    CU_ASSERT_FALSE(order_state_can_transition(4, ORDER_PROCESSING));
    CU_ASSERT_FALSE(order_state_can_transition(ORDER_FAILED, -1));
    for (int s = 0; s < 4; s++)
        CU_ASSERT_FALSE(order_state_can_transition(s, s));
}

int main(void)
{
    static const cu_test tests[] = {
        { "every state has its name, an unknown one UNKNOWN", test_names },
        { "the states keep the seed's numbers", test_seed_numbers },
        { "only the table's transitions are allowed", test_transition_table },
        { "PAID is terminal", test_paid_is_terminal },
        { "a state out of range never transitions", test_out_of_range },
    };
    return CU_SUITE_RUN("order_state", NULL, NULL, tests);
}
