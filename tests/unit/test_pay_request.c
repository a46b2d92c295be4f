/* test_pay_request.c - CUnit suite for pay_request: the POST /api/pay body
 * and header rules at their boundaries, and the exact response bytes. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pay_request.h"

/* Parses {"order_no":"ORDER_0001","user_id":42,"amount":<amount_json>}. */
static int parse_amount(const char *amount_json, int64_t *fen)
{
    char body[256];
    char msg[PAY_MESSAGE_MAX];
    pay_request pr;
    int rc;

    snprintf(body, sizeof(body), "{\"order_no\":\"ORDER_0001\",\"user_id\":42,\"amount\":%s}",
             amount_json);
    memset(&pr, 0, sizeof(pr));
    rc = pay_request_parse_body(body, strlen(body), &pr, msg, sizeof(msg));
    if (rc == 0)
        *fen = pr.amount_fen;
    return rc;
}

static void expect_amount(const char *amount_json, int64_t want)
{
    int64_t fen = -1;
    int rc = parse_amount(amount_json, &fen);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(fen, want);
    if (rc != 0 || fen != want)
        fprintf(stderr, "  amount %s: rc=%d fen=%lld want %lld\n", amount_json, rc, (long long)fen,
                (long long)want);
}

static void refuse_amount(const char *amount_json)
{
    int64_t fen = -1;
    int rc = parse_amount(amount_json, &fen);
    CU_ASSERT_EQUAL(rc, -1);
    if (rc != -1)
        fprintf(stderr, "  amount %s accepted as %lld\n", amount_json, (long long)fen);
}

static void test_amount_boundaries(void)
{
    expect_amount("\"0.01\"", 1);
    expect_amount("\"99999999.99\"", 9999999999LL);
    expect_amount("\"12.3\"", 1230);
    expect_amount("\"12.30\"", 1230);
    expect_amount("\"7\"", 700);
    expect_amount("\"0.5\"", 50);
    refuse_amount("\"0\"");
    refuse_amount("\"0.00\"");
    refuse_amount("\"0.001\"");
    refuse_amount("\"-1\"");
    refuse_amount("\"1e3\"");
    refuse_amount("\" 1\"");
    refuse_amount("\"1 \"");
    refuse_amount("\"\xEF\xBC\x91\""); /* full-width digit one */
    refuse_amount("\"\\uff11\"");      /* the same, escaped */
    refuse_amount("\"100000000\"");
    refuse_amount("\"\"");
    refuse_amount("\"12.30\\u0000\"");
}

static void test_amount_must_be_string(void)
{
    refuse_amount("12.3");
    refuse_amount("12");
    refuse_amount("0.01");
    refuse_amount("1e3");
    refuse_amount("null");
    refuse_amount("true");
    refuse_amount("[\"12.30\"]");
    refuse_amount("{\"v\":\"12.30\"}");
}

static int parse_body(const char *body, pay_request *pr)
{
    char msg[PAY_MESSAGE_MAX] = "";
    int rc;

    memset(pr, 0, sizeof(*pr));
    rc = pay_request_parse_body(body, strlen(body), pr, msg, sizeof(msg));
    if (rc != 0)
        CU_ASSERT(msg[0] != '\0'); /* every refusal says why */
    return rc;
}

static void test_order_no_rule(void)
{
    pay_request pr;
    char body[256];

    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\"}", &pr), 0);
    CU_ASSERT_STRING_EQUAL(pr.order_no, "ABC123");
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"a_b|c*d-e\",\"user_id\":1,\"amount\":\"1\"}", &pr),
                    0);
    /* 32 characters: the maximum */
    snprintf(body, sizeof(body), "{\"order_no\":\"%s\",\"user_id\":1,\"amount\":\"1\"}",
             "0123456789abcdefghijABCDEFGHIJ_-");
    CU_ASSERT_EQUAL(parse_body(body, &pr), 0);
    CU_ASSERT_EQUAL(strlen(pr.order_no), 32);
    /* 33 characters, 5 characters, bad characters, wrong type, missing */
    snprintf(body, sizeof(body), "{\"order_no\":\"%s\",\"user_id\":1,\"amount\":\"1\"}",
             "0123456789abcdefghijABCDEFGHIJ_-x");
    CU_ASSERT_EQUAL(parse_body(body, &pr), -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC12\",\"user_id\":1,\"amount\":\"1\"}", &pr), -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC 123\",\"user_id\":1,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC.123\",\"user_id\":1,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC\\u00e9123\",\"user_id\":1,\"amount\":\"1\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":123456,\"user_id\":1,\"amount\":\"1\"}", &pr), -1);
    CU_ASSERT_EQUAL(parse_body("{\"user_id\":1,\"amount\":\"1\"}", &pr), -1);
}

static void test_user_id_rule(void)
{
    pay_request pr;

    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\"}", &pr), 0);
    CU_ASSERT_EQUAL(pr.user_id, 1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":9223372036854775807,"
                               "\"amount\":\"1\"}",
                               &pr),
                    0);
    CU_ASSERT_EQUAL(pr.user_id, 9223372036854775807LL);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":9223372036854775808,"
                               "\"amount\":\"1\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":0,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":-5,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1.0,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":\"42\",\"amount\":\"1\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":true,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":null,\"amount\":\"1\"}", &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"amount\":\"1\"}", &pr), -1);
}

static void test_body_shape(void)
{
    pay_request pr;

    /* duplicate keys, not an object, empty, truncated */
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"order_no\":\"XYZ789\",\"user_id\":1,"
                               "\"amount\":\"1\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"amount\":\"2\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("[]", &pr), -1);
    CU_ASSERT_EQUAL(parse_body("", &pr), -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\"", &pr), -1);
    CU_ASSERT_EQUAL(parse_body("\"ABC123\"", &pr), -1);
    /* unknown fields are ignored */
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"note\":{\"x\":[1,2]}}",
                               &pr),
                    0);
}

static void test_token_field(void)
{
    pay_request pr;
    char body[600], tok[300];

    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\"}", &pr), 0);
    CU_ASSERT_FALSE(pr.has_token);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"token\":null}",
                               &pr),
                    0);
    CU_ASSERT_FALSE(pr.has_token);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"token\":\"tok_abc\"}",
                               &pr),
                    0);
    CU_ASSERT_TRUE(pr.has_token);
    CU_ASSERT_STRING_EQUAL(pr.token, "tok_abc");
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"token\":\"\"}",
                               &pr),
                    -1);
    CU_ASSERT_EQUAL(parse_body("{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
                               "\"token\":12345}",
                               &pr),
                    -1);
    memset(tok, 'a', PAY_TOKEN_MAX);
    tok[PAY_TOKEN_MAX] = '\0';
    snprintf(body, sizeof(body),
             "{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
             "\"token\":\"%s\"}",
             tok);
    CU_ASSERT_EQUAL(parse_body(body, &pr), 0);
    tok[PAY_TOKEN_MAX] = 'a';
    tok[PAY_TOKEN_MAX + 1] = '\0';
    snprintf(body, sizeof(body),
             "{\"order_no\":\"ABC123\",\"user_id\":1,\"amount\":\"1\","
             "\"token\":\"%s\"}",
             tok);
    CU_ASSERT_EQUAL(parse_body(body, &pr), -1);
}

static int idem(const char *raw, char *out)
{
    return pay_request_parse_idem_key(raw, out, PAY_IDEM_KEY_MAX + 1);
}

static void test_idempotency_key(void)
{
    char out[PAY_IDEM_KEY_MAX + 1];
    char raw[PAY_IDEM_KEY_MAX + 8];

    CU_ASSERT_EQUAL(idem("8e03978e-40d5-43e8-bc93-6894a57f9324", out), 0);
    CU_ASSERT_STRING_EQUAL(out, "8e03978e-40d5-43e8-bc93-6894a57f9324");
    CU_ASSERT_EQUAL(idem("  key-1\t", out), 0);
    CU_ASSERT_STRING_EQUAL(out, "key-1");
    CU_ASSERT_EQUAL(idem("x", out), 0);
    CU_ASSERT_EQUAL(idem("!~", out), 0);
    /* the sf-string form: quotes removed, escapes decoded; same key as bare */
    CU_ASSERT_EQUAL(idem("\"key-1\"", out), 0);
    CU_ASSERT_STRING_EQUAL(out, "key-1");
    CU_ASSERT_EQUAL(idem("\"a b\"", out), 0);
    CU_ASSERT_STRING_EQUAL(out, "a b");
    CU_ASSERT_EQUAL(idem("\"a\\\"b\\\\c\"", out), 0);
    CU_ASSERT_STRING_EQUAL(out, "a\"b\\c");
    /* refused */
    CU_ASSERT_EQUAL(idem("", out), -1);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(idem("   ", out), -1);
    CU_ASSERT_EQUAL(idem("a b", out), -1);
    CU_ASSERT_EQUAL(idem("caf\xC3\xA9", out), -1);
    CU_ASSERT_EQUAL(idem("a\x7F", out), -1);
    CU_ASSERT_EQUAL(idem("\"\"", out), -1);
    CU_ASSERT_EQUAL(idem("\"abc", out), -1);
    CU_ASSERT_EQUAL(idem("\"", out), -1);
    CU_ASSERT_EQUAL(idem("\"a\"b\"", out), -1);
    CU_ASSERT_EQUAL(idem("\"a\\nb\"", out), -1);
    CU_ASSERT_EQUAL(idem("\"a\\\"", out), -1);
    CU_ASSERT_EQUAL(idem("\"\t\"", out), -1);
    CU_ASSERT_EQUAL(idem(NULL, out), -1);
    /* 255 characters is the maximum, bare and quoted */
    memset(raw, 'k', PAY_IDEM_KEY_MAX);
    raw[PAY_IDEM_KEY_MAX] = '\0';
    CU_ASSERT_EQUAL(idem(raw, out), 0);
    CU_ASSERT_EQUAL(strlen(out), PAY_IDEM_KEY_MAX);
    raw[PAY_IDEM_KEY_MAX] = 'k';
    raw[PAY_IDEM_KEY_MAX + 1] = '\0';
    CU_ASSERT_EQUAL(idem(raw, out), -1);
    raw[0] = '"';
    memset(raw + 1, 'k', PAY_IDEM_KEY_MAX);
    raw[PAY_IDEM_KEY_MAX + 1] = '"';
    raw[PAY_IDEM_KEY_MAX + 2] = '\0';
    CU_ASSERT_EQUAL(idem(raw, out), 0);
    raw[PAY_IDEM_KEY_MAX + 1] = 'k';
    raw[PAY_IDEM_KEY_MAX + 2] = '"';
    raw[PAY_IDEM_KEY_MAX + 3] = '\0';
    CU_ASSERT_EQUAL(idem(raw, out), -1);
}

static void test_content_type(void)
{
    CU_ASSERT_TRUE(pay_request_is_json("application/json"));
    CU_ASSERT_TRUE(pay_request_is_json("Application/JSON"));
    CU_ASSERT_TRUE(pay_request_is_json("application/json; charset=utf-8"));
    CU_ASSERT_TRUE(pay_request_is_json("application/json;charset=UTF-8"));
    CU_ASSERT_FALSE(pay_request_is_json(""));
    CU_ASSERT_FALSE(pay_request_is_json(NULL));
    CU_ASSERT_FALSE(pay_request_is_json("text/plain"));
    CU_ASSERT_FALSE(pay_request_is_json("application/jsonp"));
    CU_ASSERT_FALSE(pay_request_is_json("application/x-www-form-urlencoded"));
}

static http_request request(const char *method, const char *ctype, const char *body,
                            const char *idem_key)
{
    http_request r;

    memset(&r, 0, sizeof(r));
    r.method = method;
    r.path = "/api/pay";
    r.query = "";
    r.content_type = ctype;
    r.idempotency_key = idem_key;
    r.remote_addr = "";
    r.body = body;
    r.body_len = strlen(body);
    return r;
}

static void test_request_status(void)
{
    static const char good[] = "{\"order_no\":\"ABC123\",\"user_id\":42,\"amount\":\"12.30\"}";
    char msg[PAY_MESSAGE_MAX];
    pay_request pr;
    http_request r;

    r = request("POST", "application/json", good, NULL);
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_OK);
    CU_ASSERT_FALSE(pr.has_idem_key);
    CU_ASSERT_EQUAL(pr.amount_fen, 1230);
    CU_ASSERT_EQUAL(pr.user_id, 42);

    r = request("POST", "application/json", good, "\"k-1\"");
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_OK);
    CU_ASSERT_TRUE(pr.has_idem_key);
    CU_ASSERT_STRING_EQUAL(pr.idem_key, "k-1");

    r = request("POST", "application/json", good, "");
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_INVALID);

    r = request("GET", "application/json", good, NULL);
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_METHOD);

    r = request("POST", "text/plain", good, NULL);
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_MEDIA_TYPE);

    r = request("POST", "application/json", "", NULL);
    r.body_too_large = 1;
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_TOO_LARGE);

    r = request("POST", "application/json", "{\"order_no\":\"ABC123\"}", NULL);
    CU_ASSERT_EQUAL(pay_request_parse(&r, &pr, msg, sizeof(msg)), PAY_REQ_INVALID);

    CU_ASSERT_EQUAL(pay_req_status_http(PAY_REQ_INVALID), 400);
    CU_ASSERT_EQUAL(pay_req_status_http(PAY_REQ_METHOD), 405);
    CU_ASSERT_EQUAL(pay_req_status_http(PAY_REQ_TOO_LARGE), 413);
    CU_ASSERT_EQUAL(pay_req_status_http(PAY_REQ_MEDIA_TYPE), 415);
    CU_ASSERT_STRING_EQUAL(pay_req_status_code(PAY_REQ_INVALID), "invalid_request");
    CU_ASSERT_STRING_EQUAL(pay_req_status_code(PAY_REQ_METHOD), "method_not_allowed");
    CU_ASSERT_STRING_EQUAL(pay_req_status_code(PAY_REQ_TOO_LARGE), "payload_too_large");
    CU_ASSERT_STRING_EQUAL(pay_req_status_code(PAY_REQ_MEDIA_TYPE), "unsupported_media_type");
}

static void expect_body(char *got, const char *want)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "  got  %s\n  want %s\n", got, want);
    free(got);
}

static void test_response_bodies(void)
{
    expect_body(pay_body_paid("ORDER_0001", "4200000001202401010000000001", 1230),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"PAID\","
                "\"transaction_id\":\"4200000001202401010000000001\",\"amount\":\"12.30\"}");
    expect_body(pay_body_paid("ORDER_0001", "T1", 1),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"PAID\",\"transaction_id\":\"T1\","
                "\"amount\":\"0.01\"}");
    expect_body(pay_body_paid("ORDER_0001", "T1", 9999999999LL),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"PAID\",\"transaction_id\":\"T1\","
                "\"amount\":\"99999999.99\"}");
    expect_body(pay_body_processing("ORDER_0001"),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"PROCESSING\"}");
    expect_body(pay_body_failed("ORDER_0001", "payment_declined", "declined: NOTENOUGH"),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"FAILED\",\"error\":\"payment_declined\","
                "\"message\":\"declined: NOTENOUGH\"}");
    /* non-ASCII is escaped, quotes too: stored copies replay byte-for-byte */
    expect_body(pay_body_failed("ORDER_0001", "payment_declined", "\xE4\xBD\x99\xE9\xA2\x9D\"x\""),
                "{\"order_no\":\"ORDER_0001\",\"status\":\"FAILED\",\"error\":\"payment_declined\","
                "\"message\":\"\\u4F59\\u989D\\\"x\\\"\"}");
    expect_body(pay_body_error("order_mismatch", "another amount"),
                "{\"error\":\"order_mismatch\",\"message\":\"another amount\"}");
    expect_body(pay_body_order("ORDER_0001", 42, 1230, "PROCESSING", "", "2024-01-02T03:04:05.678Z",
                               "2024-01-02T03:04:06.000Z"),
                "{\"order_no\":\"ORDER_0001\",\"user_id\":42,\"amount\":\"12.30\","
                "\"status\":\"PROCESSING\",\"transaction_id\":null,"
                "\"created_at\":\"2024-01-02T03:04:05.678Z\","
                "\"updated_at\":\"2024-01-02T03:04:06.000Z\"}");
    expect_body(pay_body_order("ORDER_0001", 9223372036854775807LL, 100, "PAID", "T9", "a", "b"),
                "{\"order_no\":\"ORDER_0001\",\"user_id\":9223372036854775807,\"amount\":\"1.00\","
                "\"status\":\"PAID\",\"transaction_id\":\"T9\",\"created_at\":\"a\","
                "\"updated_at\":\"b\"}");
    /* invalid UTF-8 cannot be put into JSON: NULL, never garbage */
    CU_ASSERT_PTR_NULL(pay_body_error("x", "\xFF"));
}

int main(void)
{
    static const cu_test tests[] = {
        { "amounts are accepted within their bounds only", test_amount_boundaries },
        { "amount must be a JSON string", test_amount_must_be_string },
        { "an order_no must follow its rule", test_order_no_rule },
        { "a user_id must follow its rule", test_user_id_rule },
        { "a body of the wrong shape is refused", test_body_shape },
        { "the token field is read or refused", test_token_field },
        { "the Idempotency-Key header is read or refused", test_idempotency_key },
        { "a body must be sent as application/json", test_content_type },
        { "each parse outcome has its HTTP status", test_request_status },
        { "answers have their documented JSON bodies", test_response_bodies },
    };
    return CU_SUITE_RUN("pay_request", NULL, NULL, tests);
}
