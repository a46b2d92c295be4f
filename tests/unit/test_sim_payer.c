/* test_sim_payer.c - CUnit suite for the simulator's customer (sim/payer.c):
 * the payment code's shape, the payer API's request body and how its
 * answers are read (paid, refused, no payer API, unknown). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "payer.h"

static void test_auth_code(void)
{
    char a[PAYER_AUTH_CODE_LEN + 1], b[PAYER_AUTH_CODE_LEN + 1];
    const char *orders[] = { "s1234567dc00001abcde", "s1234567py000a0zzzzz", "x", "" };
    for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
        payer_auth_code(orders[i], a);
        CU_ASSERT_EQUAL(strlen(a), 18);
        CU_ASSERT_EQUAL(strspn(a, "0123456789"), 18);
        CU_ASSERT(a[0] == '1' && a[1] >= '0' && a[1] <= '5');     /* prefix 10-15 */
        CU_ASSERT_STRING_EQUAL(payer_auth_code(orders[i], b), a); /* same order, same code */
    }
    CU_ASSERT_STRING_NOT_EQUAL(payer_auth_code(orders[0], a), payer_auth_code(orders[1], b));
}

static void test_request_json(void)
{
    char out[256];
    payer_request r = { .code_url = "weixin://wxpay/bizpayurl?pr=abc" };
    CU_ASSERT(payer_request_json(&r, out, sizeof(out)) > 0);
    CU_ASSERT_STRING_EQUAL(out, "{\"code_url\":\"weixin://wxpay/bizpayurl?pr=abc\"}");
    payer_request j = { .prepay_id = "wx20261202abc", .openid = "osim42", .delay_ms = 1500 };
    CU_ASSERT(payer_request_json(&j, out, sizeof(out)) > 0);
    CU_ASSERT_STRING_EQUAL(
        out, "{\"prepay_id\":\"wx20261202abc\",\"openid\":\"osim42\",\"delay_ms\":1500}");
    payer_request none = { .openid = "o" };
    CU_ASSERT_EQUAL(payer_request_json(&none, out, sizeof(out)), -1);
    payer_request both = { .prepay_id = "a", .code_url = "b" };
    CU_ASSERT_EQUAL(payer_request_json(&both, out, sizeof(out)), -1);
    CU_ASSERT_EQUAL(payer_request_json(&j, out, 10), -1); /* does not fit */
}

static void read_reply(long code, const char *body, payer_reply *r)
{
    payer_reply_read(code, body, body ? strlen(body) : 0, r);
}

static void test_reply(void)
{
    payer_reply r;
    read_reply(200,
               "{\"result\":\"SUCCESS\",\"transaction_id\":\"4200000001\","
               "\"out_trade_no\":\"s1py0001\"}",
               &r);
    CU_ASSERT_EQUAL(r.result, PAYER_PAID);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, "4200000001");
    CU_ASSERT_STRING_EQUAL(r.out_trade_no, "s1py0001");
    read_reply(200, "{\"result\":\"FAIL\",\"err_code\":\"ORDERPAID\",\"err_code_des\":\"paid\"}",
               &r);
    CU_ASSERT_EQUAL(r.result, PAYER_REFUSED);
    CU_ASSERT_STRING_EQUAL(r.err_code, "ORDERPAID");
    read_reply(200, "{\"result\":\"FAIL\"}", &r);
    CU_ASSERT_EQUAL(r.result, PAYER_REFUSED);
    CU_ASSERT_STRING_EQUAL(r.err_code, "FAIL");
    read_reply(404, "{\"error\":\"not_found\"}", &r);
    CU_ASSERT_EQUAL(r.result, PAYER_NO_API);
    read_reply(200, "{\"result\":\"SUCCESS\"}", &r); /* no transaction id: not known */
    CU_ASSERT_EQUAL(r.result, PAYER_UNKNOWN);
    read_reply(200, "not json", &r);
    CU_ASSERT_EQUAL(r.result, PAYER_UNKNOWN);
    CU_ASSERT_STRING_EQUAL(r.err_code, "unparseable reply");
    read_reply(503, "{\"error\":\"unavailable\"}", &r);
    CU_ASSERT_EQUAL(r.result, PAYER_UNKNOWN);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, "");
    read_reply(200,
               "{\"result\":\"SUCCESS\",\"transaction_id\":\""
               "42000000000000000000000000000000000000000000000000\"}",
               &r);
    CU_ASSERT_EQUAL(r.result, PAYER_UNKNOWN); /* too long to be ours: not trusted */
    read_reply(0, NULL, &r);
    CU_ASSERT_EQUAL(r.result, PAYER_UNKNOWN);
}

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(payer_flow_name(FLOW_MICROPAY), "MICROPAY");
    CU_ASSERT_STRING_EQUAL(payer_flow_name(FLOW_NATIVE), "NATIVE");
    CU_ASSERT_STRING_EQUAL(payer_flow_name(FLOW_JSAPI), "JSAPI");
    CU_ASSERT_STRING_EQUAL(payer_flow_name(FLOW_COUNT), "?");
    CU_ASSERT_STRING_EQUAL(payer_behaviour_name(PB_AFTER_CLOSE), "after-close");
    CU_ASSERT_STRING_EQUAL(payer_behaviour_name(PB_NONE), "-");
    char o[40];
    CU_ASSERT_STRING_EQUAL(payer_openid(42, o, sizeof(o)), "osim42");
}

int main(void)
{
    static const cu_test tests[] = {
        { "a payment code is a valid auth_code", test_auth_code },
        { "the payer's request body names the prepay", test_request_json },
        { "the payer's answers read as paid or refused", test_reply },
        { "flows and behaviours have their names", test_names },
    };
    return CU_SUITE_RUN("sim_payer", NULL, NULL, tests);
}
