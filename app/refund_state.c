/* refund_state.c - the refund state machine and the amount rule (pure). */
#include "refund_state.h"

#include <string.h>

int refund_state_final(refund_status s)
{
    return s == REFUND_SUCCESS || refund_state_stuck(s);
}

int refund_state_stuck(refund_status s)
{
    return s == REFUND_CLOSED || s == REFUND_CHANGE || s == REFUND_ABNORMAL;
}

const char *refund_state_name(int s)
{
    switch (s) {
    case REFUND_PENDING:
    case REFUND_ACCEPTED:
        return "PROCESSING";
    case REFUND_SUCCESS:
        return "SUCCESS";
    case REFUND_CLOSED:
        return "REFUNDCLOSE";
    case REFUND_CHANGE:
        return "CHANGE";
    case REFUND_ABNORMAL:
        return "ABNORMAL";
    default:
        return "UNKNOWN";
    }
}

static int rs_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* Refusals a later attempt with the same out_refund_no may cure:
 * WeChat's refund API says to retry these (NOTENOUGH once the merchant's
 * balance is topped up). */
static int rs_retryable(const char *code)
{
    static const char *const codes[] = {
        "NOTENOUGH",         "SYSTEMERROR",          "BIZERR_NEED_RETRY",
        "FREQUENCY_LIMITED", "INVALID_REQ_TOO_MUCH",
    };
    if (code == NULL || code[0] == '\0')
        return 1;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(code, codes[i]) == 0)
            return 1;
    return 0;
}

refund_step refund_state_on_submit(refund_status cur, int accepted, const char *err_code)
{
    refund_step st = { cur, REFUND_ACT_NONE };

    if (cur != REFUND_PENDING)
        return st;
    if (accepted) {
        st.next = REFUND_ACCEPTED;
        st.action = REFUND_ACT_MOVE;
    } else if (rs_retryable(err_code)) {
        st.action = REFUND_ACT_RETRY;
    } else {
        st.next = REFUND_ABNORMAL;
        st.action = REFUND_ACT_STUCK;
    }
    return st;
}

refund_step refund_state_on_result(refund_status cur, const char *text)
{
    refund_step st = { cur, REFUND_ACT_NONE };

    if (cur != REFUND_PENDING && cur != REFUND_ACCEPTED)
        return st;
    if (rs_is(text, "SUCCESS")) {
        st.next = REFUND_SUCCESS;
        st.action = REFUND_ACT_MOVE;
    } else if (rs_is(text, "REFUNDCLOSE")) {
        st.next = REFUND_CLOSED;
        st.action = REFUND_ACT_STUCK;
    } else if (rs_is(text, "CHANGE")) {
        st.next = REFUND_CHANGE;
        st.action = REFUND_ACT_STUCK;
    } else if (rs_is(text, "REFUNDNOTEXIST")) {
        st.next = REFUND_PENDING;
        st.action = cur == REFUND_PENDING ? REFUND_ACT_RETRY : REFUND_ACT_MOVE;
    } else {
        st.action = cur == REFUND_ACCEPTED ? REFUND_ACT_POLL : REFUND_ACT_RETRY;
    }
    return st;
}

refund_amount_rule refund_amount_check(int64_t charge_fee, int64_t already_fen, int64_t request_fen)
{
    if (request_fen < 1 || charge_fee < 0 || already_fen < 0)
        return REFUND_AMOUNT_INVALID;
    if (already_fen > charge_fee || request_fen > charge_fee - already_fen)
        return REFUND_AMOUNT_EXCEEDS;
    return REFUND_AMOUNT_OK;
}
