/* gateway_v3_reply.c - APIv3 replies in v2's words (see gateway_v3_reply.h). */
#include "gateway_v3_reply.h"

#include <stdio.h>
#include <string.h>
#include <jansson.h>

const char *gw3_v2_code(const char *v3_code, gw3_kind kind)
{
    static const struct {
        const char *v3, *v2;
    } map[] = {
        { "SYSTEM_ERROR", "SYSTEMERROR" },    { "ORDER_NOT_EXIST", "ORDERNOTEXIST" },
        { "ORDERNOTEXIST", "ORDERNOTEXIST" }, { "ORDER_PAID", "ORDERPAID" },
        { "ORDER_CLOSED", "ORDERCLOSED" },    { "NOT_ENOUGH", "NOTENOUGH" },
        { "SIGN_ERROR", "SIGNERROR" },        { "BANK_ERROR", "BANKERROR" },
        { "USER_PAYING", "USERPAYING" },      { "ORDER_REVERSED", "ORDERREVERSED" },
    };
    if (v3_code == NULL || v3_code[0] == '\0')
        return "SYSTEMERROR";
    if (strcmp(v3_code, "RESOURCE_NOT_EXISTS") == 0)
        return kind == GW3_REFUNDQUERY ? "REFUNDNOTEXIST" : "ORDERNOTEXIST";
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(v3_code, map[i].v3) == 0)
            return map[i].v2;
    return v3_code;
}

const char *gw3_v2_refund_status(const char *v3_status)
{
    if (v3_status == NULL)
        return NULL;
    if (strcmp(v3_status, "SUCCESS") == 0 || strcmp(v3_status, "PROCESSING") == 0)
        return v3_status;
    if (strcmp(v3_status, "CLOSED") == 0)
        return "REFUNDCLOSE";
    if (strcmp(v3_status, "ABNORMAL") == 0)
        return "CHANGE";
    return NULL;
}

static const char *g3_str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A JSON integer of fen at key of o (an object); -1 when absent or bad. */
static long long g3_fen(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (long long)json_integer_value(v) : -1;
}

/* NULL-safe set: a missing value leaves the field out. */
static int g3_set(wx_msg *m, const char *name, const char *v)
{
    return v == NULL ? 0 : wx_msg_set(m, name, v);
}

static int g3_set_fen(wx_msg *m, const char *name, long long fen)
{
    return fen < 0 ? 0 : wx_msg_set_int(m, name, fen);
}

/* The transaction of an orderquery: ours, then its fields. */
static int g3_transaction(json_t *o, const char *appid, const char *mchid, wx_msg *m,
                          gw_result *out)
{
    const char *a = g3_str(o, "appid"), *mc = g3_str(o, "mchid");

    if ((a != NULL && strcmp(a, appid) != 0) || (mc != NULL && strcmp(mc, mchid) != 0)) {
        gateway_result_set(out, GW_UNKNOWN, "merchant_mismatch",
                           "the reply is about another merchant's transaction");
        return -1;
    }
    return g3_set(m, "out_trade_no", g3_str(o, "out_trade_no")) ||
           g3_set(m, "trade_state", g3_str(o, "trade_state")) ||
           g3_set(m, "transaction_id", g3_str(o, "transaction_id")) ||
           g3_set_fen(m, "total_fee", g3_fen(json_object_get(o, "amount"), "total"));
}

/* A refund (申请退款 / 查询单笔退款) as v2's refund / refundquery fields. */
static int g3_refund(json_t *o, gw3_kind kind, wx_msg *m)
{
    if (kind == GW3_REFUND)
        return g3_set(m, "transaction_id", g3_str(o, "transaction_id")) ||
               g3_set(m, "out_refund_no", g3_str(o, "out_refund_no")) ||
               g3_set(m, "refund_id", g3_str(o, "refund_id"));
    return g3_set(m, "out_refund_no_0", g3_str(o, "out_refund_no")) ||
           g3_set(m, "refund_id_0", g3_str(o, "refund_id")) ||
           g3_set(m, "refund_status_0", gw3_v2_refund_status(g3_str(o, "status"))) ||
           g3_set_fen(m, "refund_fee_0", g3_fen(json_object_get(o, "amount"), "refund"));
}

/* A prepay's code_url (NATIVE) or prepay_id (JSAPI). v3's Native order
 * answers only code_url: its pr= token is kept as the prepay's id. */
static int g3_prepay(json_t *o, gw3_kind kind, wx_msg *m)
{
    const char *url = g3_str(o, "code_url"), *pr;
    char id[65];

    if (kind == GW3_PREPAY_JSAPI)
        return g3_set(m, "prepay_id", g3_str(o, "prepay_id"));
    if (url == NULL || (pr = strstr(url, "pr=")) == NULL)
        return 0; /* the v2 meaning says what is missing */
    size_t n = strcspn(pr + 3, "&#");
    if (n == 0 || n >= sizeof(id))
        return 0;
    memcpy(id, pr + 3, n);
    id[n] = '\0';
    return wx_msg_set(m, "code_url", url) || wx_msg_set(m, "prepay_id", id);
}

/* A 2xx: the fields of kind. */
static int g3_success(long status, json_t *o, gw3_kind kind, const char *appid, const char *mchid,
                      wx_msg *m, gw_result *out)
{
    int bad;

    if (kind == GW3_CLOSE)
        bad = status != 204;
    else if (!json_is_object(o))
        bad = 1;
    else if (kind == GW3_QUERY) {
        if (g3_transaction(o, appid, mchid, m, out) != 0 && out->err_code[0] != '\0')
            return -1; /* another merchant's */
        bad = wx_msg_get(m, "out_trade_no") == NULL;
    } else if (kind == GW3_REFUND || kind == GW3_REFUNDQUERY)
        bad = g3_refund(o, kind, m) != 0;
    else
        bad = g3_prepay(o, kind, m) != 0;
    if (bad || wx_msg_set(m, "result_code", "SUCCESS") != 0) {
        gateway_result_set(out, GW_UNKNOWN, "bad_reply", "a v3 success reply of another shape");
        return -1;
    }
    return 0;
}

int gw3_reply_to_v2(long status, const char *body, size_t len, gw3_kind kind, const char *appid,
                    const char *mchid, wx_msg *m, gw_result *out)
{
    json_t *o = len > 0 ? json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    int rc = -1;

    if (status >= 200 && status < 300) {
        rc = g3_success(status, o, kind, appid, mchid, m, out);
    } else if (status >= 400) {
        /* {"code","message"}. A 5xx, whatever its code says, is SYSTEMERROR
         * and a 429 FREQUENCY_LIMITED: the outcome is not known (v2's
         * uncertain codes), never a refusal. */
        const char *code = g3_str(o, "code");
        const char *v2 = status >= 500   ? "SYSTEMERROR"
                         : status == 429 ? "FREQUENCY_LIMITED"
                         : code != NULL  ? gw3_v2_code(code, kind)
                                         : NULL;
        if (v2 == NULL)
            gateway_result_set(out, GW_UNKNOWN, "bad_reply", "a v3 error without a code");
        else if (wx_msg_set(m, "result_code", "FAIL") != 0 || wx_msg_set(m, "err_code", v2) != 0 ||
                 g3_set(m, "err_code_des", g3_str(o, "message")) != 0)
            gateway_result_set(out, GW_UNKNOWN, "local_error", "out of memory");
        else
            rc = 0;
    } else {
        gateway_result_set(out, GW_UNKNOWN, "bad_reply", "an unexpected HTTP status");
    }
    json_decref(o);
    return rc;
}
