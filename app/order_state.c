/* order_state.c - the order state names and the transition table; the
 * table is the single place that says which compare-and-set moves exist. */
#include "order_state.h"

static const char *const order_state_names[ORDER_STATUS_COUNT] = {
    [ORDER_PENDING] = "PENDING",
    [ORDER_PROCESSING] = "PROCESSING",
    [ORDER_PAID] = "PAID",
    [ORDER_FAILED] = "FAILED",
};

/* order_state_table[from][to]: the seed's PaymentStateMachine, as data. */
static const bool order_state_table[ORDER_STATUS_COUNT][ORDER_STATUS_COUNT] = {
    [ORDER_PENDING] = { [ORDER_PROCESSING] = true },
    [ORDER_PROCESSING] = { [ORDER_PAID] = true, [ORDER_FAILED] = true },
    [ORDER_PAID] = { false },
    [ORDER_FAILED] = { [ORDER_PROCESSING] = true },
};

static bool order_state_valid(long long v)
{
    return v >= ORDER_PENDING && v <= ORDER_FAILED;
}

const char *order_state_name(int s)
{
    return order_state_valid(s) ? order_state_names[s] : "UNKNOWN";
}

bool order_state_from_int(long long v, order_status *out)
{
    if (!order_state_valid(v))
        return false;
    *out = (order_status)v;
    return true;
}

bool order_state_can_transition(int from, int to)
{
    if (!order_state_valid(from) || !order_state_valid(to))
        return false;
    return order_state_table[from][to];
}
