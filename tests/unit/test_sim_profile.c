/* test_sim_profile.c - CUnit suite for target profiles (sim/profile.h): the
 * shipped profiles load and the built-in one is sim/profiles/idempay.json;
 * a broken profile is refused with the key that is wrong; requests are the
 * bytes a service of that shape expects (idempay's exactly what the driver
 * always sent); answers mean what they say (idempay's codes kept, the seed
 * article's ResultDTO bodies mapped); scenarios needing a missing feature
 * are left out with a note. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "schedule.h"

#define PROFILES IDEMPAY_SRCDIR "/sim/profiles/"

static sim_profile *load(const char *name)
{
    char err[512] = "", path[512];
    snprintf(path, sizeof(path), PROFILES "%s", name);
    sim_profile *p = profile_load(path, err, sizeof(err));
    if (p == NULL)
        fprintf(stderr, "%s\n", err);
    return p;
}

static void test_builtin_is_the_file(void)
{
    char path[512];
    snprintf(path, sizeof(path), PROFILES "idempay.json");
    json_t *file = json_load_file(path, 0, NULL);
    json_t *text = json_loads(profile_builtin_text(), 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_TRUE(json_equal(file, text));
    json_decref(file);
    json_decref(text);
    const sim_profile *b = profile_builtin();
    CU_ASSERT_STRING_EQUAL(b->name, "idempay");
    CU_ASSERT_TRUE(
        profile_has(b, PROF_FEAT_TOKENS | PROF_FEAT_IDEM_KEY | PROF_FEAT_CALLBACKS | PROF_FEAT_DB));
    CU_ASSERT_EQUAL(b->ep[PROF_OP_READ].send[PROF_VAL_ORDER_NO].in, PROF_IN_PATH);
    sim_profile *f = load("idempay.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(memcmp(f, b, sizeof(*f)), 0);
    profile_free(f);
}

static void test_seed_article_loads(void)
{
    sim_profile *p = load("seed-article.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_STRING_EQUAL(p->name, "seed-article");
    CU_ASSERT_TRUE(profile_has(p, PROF_FEAT_TOKENS | PROF_FEAT_CALLBACKS));
    CU_ASSERT_FALSE(profile_has(p, PROF_FEAT_IDEM_KEY));
    CU_ASSERT_FALSE(profile_has(p, PROF_FEAT_DB));
    CU_ASSERT_STRING_EQUAL(p->spelling[OST_PAID][0], "2");
    CU_ASSERT_EQUAL(p->ep[PROF_OP_PAY].send[PROF_VAL_TOKEN].in, PROF_IN_QUERY);
    profile_free(p);
}

/* A minimal valid profile with one replacement: `from` (exact text)
 * replaced by `to`. */
static sim_profile *parse_edited(const char *from, const char *to, char *err, size_t errlen)
{
    static const char base[] =
        "{\"name\":\"t\",\"statuses\":{\"PROCESSING\":[\"P\"],\"PAID\":[\"OK\"],\"FAILED\":[\"NO\"]},"
        "\"pay\":{\"path\":\"/pay\",\"send\":{\"order_no\":\"body:no\",\"user_id\":\"body:u\","
        "\"amount\":\"body:a\"},\"fields\":{\"status\":\"s\"}},"
        "\"read\":{\"path\":\"/o/{order_no}\",\"fields\":{\"status\":\"s\"}}}";
    char text[2048];
    const char *at = strstr(base, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    return profile_parse(text, strlen(text), err, errlen);
}

static void expect_refused(const char *from, const char *to, const char *says)
{
    char err[512] = "";
    sim_profile *p = parse_edited(from, to, err, sizeof(err));
    CU_ASSERT_PTR_NULL(p);
    if (strstr(err, says) == NULL)
        fprintf(stderr, "\n  expected '%s' in: %s\n", says, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, says));
    profile_free(p);
}

static void test_refuses_broken_profiles(void)
{
    char err[512] = "";
    sim_profile *ok = parse_edited("\"t\"", "\"t\"", err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(ok);
    CU_ASSERT_FALSE(profile_has(ok, PROF_FEAT_TOKENS));
    profile_free(ok);
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"nmae\":1,", "profile: unknown key 'nmae'");
    expect_refused("body:a", "bdy:a", "pay.send.amount: unknown place 'bdy'");
    expect_refused("body:a", "body:a:fen:x", "cannot be written as 'fen:x'");
    expect_refused("body:u", "body:u:fen",
                   "pay.send.user_id: 'user_id' cannot be written as 'fen'");
    expect_refused("body:no", "header:a b", "is not a header name");
    expect_refused("body:no", "body:x..y", "empty path segment");
    expect_refused("\"amount\":\"body:a\"", "\"amount\":\"body:a\",\"tok\":\"body:t\"",
                   "pay.send.tok: unknown value");
    expect_refused(",\"fields\":{\"status\":\"s\"}},", "},", "pay.fields.status: required");
    expect_refused("\"/o/{order_no}\"", "\"/o\"", "read: needs order_no");
    expect_refused("\"/o/{order_no}\"", "\"/o/{amount}\"", "unknown placeholder {amount}");
    expect_refused("\"/o/{order_no}\"", "\"/o/{order_no\"", "unclosed");
    expect_refused("\"/pay\"", "\"pay\"", "pay.path: 'pay' must start with /");
    expect_refused("\"/pay\"", "\"/pay?x=1\"", "must start with /");
    expect_refused("\"path\":\"/pay\"", "\"method\":\"GET\",\"path\":\"/pay\"",
                   "pay.send.order_no: a GET has no body");
    expect_refused("\"path\":\"/pay\"", "\"method\":\"FETCH\",\"path\":\"/pay\"", "pay.method");
    expect_refused("\"FAILED\":[\"NO\"]", "\"FAILED\":[\"OK\"]", "'OK' spells two statuses");
    expect_refused(",\"FAILED\":[\"NO\"]", "", "statuses.FAILED: required");
    expect_refused("\"PAID\":[\"OK\"]", "\"PAID\":[{}]", "statuses.PAID: strings or integers");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"features\":{\"tokens\":true},",
                   "features.tokens needs the token operation");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"features\":{\"idempotency_key\":true},",
                   "features.idempotency_key is true but pay.send.idempotency_key is missing");
    expect_refused("\"body:no\"", "\"body:no\",\"idempotency_key\":\"header:K\"",
                   "pay.send.idempotency_key is given but features.idempotency_key is not true");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"features\":{\"callbacks\":1},",
                   "features.callbacks: needs true or false");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"answers\":[{\"means\":\"paid\"}],",
                   "answers[0]: needs \"http\" or \"code\"");
    expect_refused("\"name\":\"t\",",
                   "\"name\":\"t\",\"answers\":[{\"http\":99,\"means\":\"paid\"}],",
                   "answers[0].http");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"answers\":[{\"code\":1,\"means\":\"ok\"}],",
                   "answers[0].means");
    expect_refused("\"name\":\"t\",", "\"name\":\"\",", "name: needs a name");
    expect_refused("\"name\":\"t\",", "\"name\":\"t\",\"name\":\"u\",", "not JSON");
    expect_refused(",\"read\":{\"path\":\"/o/{order_no}\",\"fields\":{\"status\":\"s\"}}", "",
                   "read: the operation is required");
    CU_ASSERT_PTR_NULL(profile_load("/nonexistent/p.json", err, sizeof(err)));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/p.json: No such file"));
}

static void test_idempay_requests(void)
{
    const sim_profile *p = profile_builtin();
    profile_request r;
    char err[256];
    profile_values v = { .order_no = "s1abc",
                         .user_id = 42,
                         .amount = "12.3",
                         .amount_fen = 1230,
                         .token = "tok\"en",
                         .idem_key = "s1abc-k1" };
    CU_ASSERT_EQUAL_FATAL(profile_request_build(p, PROF_OP_PAY, "http://h:1", &v, &r, err,
                                                sizeof(err)),
                          0);
    CU_ASSERT_STRING_EQUAL(r.method, "POST");
    CU_ASSERT_STRING_EQUAL(r.url, "http://h:1/api/pay");
    CU_ASSERT_STRING_EQUAL(r.body, "{\"order_no\":\"s1abc\",\"user_id\":42,\"amount\":\"12.3\","
                                   "\"token\":\"tok\\\"en\"}");
    CU_ASSERT_EQUAL(r.body_len, strlen(r.body));
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_STRING_EQUAL(r.headers[0], "Idempotency-Key: s1abc-k1");
    CU_ASSERT_PTR_NULL(r.headers[1]);
    v.token = NULL;
    v.idem_key = NULL;
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_PAY, "http://h:1", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.body, "{\"order_no\":\"s1abc\",\"user_id\":42,\"amount\":\"12.3\"}");
    CU_ASSERT_PTR_NULL(r.headers[0]);
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_READ, "http://h:1", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.method, "GET");
    CU_ASSERT_STRING_EQUAL(r.url, "http://h:1/api/pay/orders/s1abc");
    CU_ASSERT_PTR_NULL(r.content_type);
    CU_ASSERT_EQUAL(r.body_len, 0);
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_TOKEN, "http://h:1", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h:1/api/pay/token?user_id=42");
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_CALLBACK, "http://h:1", &v, &r, err,
                                          sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h:1/api/pay/callback/wechat");
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_PING, "http://h:1", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h:1/api/ping");
    /* a read without an order number, a header value with a line break */
    profile_values none = { 0 };
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_READ, "http://h:1", &none, &r, err,
                                          sizeof(err)),
                    -1);
    v.idem_key = "a\r\nX-Evil: 1";
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_PAY, "http://h:1", &v, &r, err, sizeof(err)),
                    -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line break"));
}

static void test_seed_article_requests(void)
{
    sim_profile *p = load("seed-article.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    profile_request r;
    char err[256], big[1200];
    profile_values v = { .order_no = "o 1/é",
                         .user_id = 7,
                         .amount = "0.5",
                         .amount_fen = 50,
                         .token = "TOKEN_a+b",
                         .idem_key = "ignored" };
    CU_ASSERT_EQUAL_FATAL(profile_request_build(p, PROF_OP_PAY, "http://h", &v, &r, err,
                                                sizeof(err)),
                          0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h/api/pay/submit?token=TOKEN_a%2Bb");
    CU_ASSERT_STRING_EQUAL(r.body,
                           "{\"orderNo\":\"o 1/\xc3\xa9\",\"userId\":7,\"amount\":\"0.5\"}");
    CU_ASSERT_PTR_NULL(r.headers[0]); /* no Idempotency-Key in this shape */
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_READ, "http://h", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h/api/pay/query?orderNo=o%201%2F%C3%A9");
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_TOKEN, "http://h", &v, &r, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(r.url, "http://h/api/pay/get-token?userId=7");
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    v.order_no = big;
    CU_ASSERT_EQUAL(profile_request_build(p, PROF_OP_READ, "http://h", &v, &r, err, sizeof(err)),
                    -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not fit"));
    profile_free(p);

    /* amounts as numbers and as fen, nested body fields, user_id as a string */
    char e2[512];
    sim_profile *q = parse_edited("\"amount\":\"body:a\"", "\"amount\":\"body:m.a:fen\"", e2,
                                  sizeof(e2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    v.order_no = "n1";
    v.amount = "12.30";
    v.amount_fen = 1230;
    CU_ASSERT_EQUAL(profile_request_build(q, PROF_OP_PAY, "http://h", &v, &r, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(r.body, "{\"no\":\"n1\",\"u\":7,\"m\":{\"a\":1230}}");
    profile_free(q);
    q = parse_edited("\"amount\":\"body:a\"", "\"amount\":\"body:a:number\"", e2, sizeof(e2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(profile_request_build(q, PROF_OP_PAY, "http://h", &v, &r, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(r.body, "{\"no\":\"n1\",\"u\":7,\"a\":12.3}");
    profile_free(q);
    q = parse_edited("\"body:u\"", "\"body:u:string\"", e2, sizeof(e2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(profile_request_build(q, PROF_OP_PAY, "http://h", &v, &r, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(r.body, "{\"no\":\"n1\",\"u\":\"7\",\"a\":\"12.30\"}");
    CU_ASSERT_EQUAL(profile_request_build(q, PROF_OP_TOKEN, "http://h", &v, &r, err, sizeof(err)),
                    -1);
    profile_free(q);
}

static void answer(const sim_profile *p, profile_op op, long code, const char *body,
                   profile_answer *a)
{
    profile_answer_read(p, op, code, body, strlen(body), a);
}

static void test_idempay_answers(void)
{
    const sim_profile *p = profile_builtin();
    profile_answer a;
    answer(p, PROF_OP_PAY, 200,
           "{\"order_no\":\"x\",\"status\":\"PAID\",\"transaction_id\":\"T1\","
           "\"amount\":\"12.30\"}",
           &a);
    CU_ASSERT_EQUAL(a.code, 200);
    CU_ASSERT_EQUAL(a.status, OST_PAID);
    CU_ASSERT_STRING_EQUAL(a.txn, "T1");
    CU_ASSERT_EQUAL(a.amount_fen, 1230);
    answer(p, PROF_OP_PAY, 202, "{\"order_no\":\"x\",\"status\":\"PROCESSING\"}", &a);
    CU_ASSERT_EQUAL(a.code, 202);
    answer(p, PROF_OP_PAY, 402, "{\"status\":\"FAILED\",\"error\":\"payment_closed\"}", &a);
    CU_ASSERT_EQUAL(a.code, 402);
    CU_ASSERT_STRING_EQUAL(a.error, "payment_closed");
    const long kept[] = { 400, 403, 409, 422, 429, 503 };
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        answer(p, PROF_OP_PAY, kept[i], "{\"error\":\"e\",\"message\":\"m\"}", &a);
        CU_ASSERT_EQUAL(a.code, kept[i]);
        CU_ASSERT_EQUAL(a.status, OST_NONE);
        CU_ASSERT_STRING_EQUAL(a.error, "e");
    }
    answer(p, PROF_OP_PAY, 502, "<html>bad gateway</html>", &a);
    CU_ASSERT_EQUAL(a.code, 502);
    CU_ASSERT_STRING_EQUAL(a.error, "unparseable body");
    answer(p, PROF_OP_PAY, 200, "{\"status\":\"WEIRD\"}", &a); /* 2xx saying nothing known */
    CU_ASSERT_EQUAL(a.code, 500);
    answer(p, PROF_OP_TOKEN, 200, "{\"token\":\"abc\",\"expires_in\":900}", &a);
    CU_ASSERT_EQUAL(a.code, 200);
    CU_ASSERT_STRING_EQUAL(a.token, "abc");
    CU_ASSERT_EQUAL(a.expires_in, 900);

    sim_row row;
    answer(p, PROF_OP_READ, 200,
           "{\"order_no\":\"x\",\"user_id\":\"9223372036854775807\","
           "\"amount\":\"0.01\",\"status\":\"PROCESSING\",\"transaction_id\":null,"
           "\"updated_at\":\"b\"}",
           &a);
    CU_ASSERT_EQUAL(profile_answer_row(&a, &row), 1);
    CU_ASSERT_EQUAL(row.state, ROW_PRESENT);
    CU_ASSERT_EQUAL(row.status, OST_PROCESSING);
    CU_ASSERT_EQUAL(row.user_id, INT64_MAX);
    CU_ASSERT_EQUAL(row.amount_fen, 1);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "");
    CU_ASSERT_STRING_EQUAL(row.updated_at, "b");
    answer(p, PROF_OP_READ, 404, "{\"error\":\"not_found\"}", &a);
    CU_ASSERT_EQUAL(profile_answer_row(&a, &row), 0);
    CU_ASSERT_EQUAL(row.state, ROW_ABSENT);
    const char *bad[] = { "", "[]", "{\"status\":\"WEIRD\"}", "{\"amount\":\"1\"}", "{" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        answer(p, PROF_OP_READ, 200, bad[i], &a);
        CU_ASSERT_EQUAL(profile_answer_row(&a, &row), -1);
        CU_ASSERT_EQUAL(row.state, ROW_ERROR);
    }
    answer(p, PROF_OP_READ, 200, "{\"status\":\"FAILED\",\"amount\":\"12.345\"}", &a);
    CU_ASSERT_EQUAL(profile_answer_row(&a, &row), 1);
    CU_ASSERT_EQUAL(row.amount_fen, -1);
}

static void test_seed_article_answers(void)
{
    sim_profile *p = load("seed-article.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    profile_answer a;
    sim_row row;
    answer(p, PROF_OP_PAY, 200,
           "{\"code\":200,\"msg\":\"\xe6\x94\xaf\xe4\xbb\x98\xe6\x88\x90\xe5\x8a\x9f\","
           "\"data\":{\"orderNo\":\"x\",\"status\":2,\"transactionId\":null}}",
           &a);
    CU_ASSERT_EQUAL(a.code, 200);
    CU_ASSERT_EQUAL(a.status, OST_PAID);
    CU_ASSERT_STRING_EQUAL(a.txn, "");
    answer(p, PROF_OP_PAY, 200, "{\"code\":200,\"data\":{\"status\":1}}", &a);
    CU_ASSERT_EQUAL(a.code, 202);
    answer(p, PROF_OP_PAY, 200, "{\"code\":200,\"data\":{\"status\":3}}", &a);
    CU_ASSERT_EQUAL(a.code, 402);
    CU_ASSERT_EQUAL(a.status, OST_FAILED);
    answer(p, PROF_OP_PAY, 200, "{\"code\":403,\"msg\":\"x\",\"data\":null}", &a);
    CU_ASSERT_EQUAL(a.code, 403);
    CU_ASSERT_STRING_EQUAL(a.error, "invalid_token");
    answer(p, PROF_OP_PAY, 200, "{\"code\":\"500\",\"data\":{\"status\":2}}", &a); /* rule first */
    CU_ASSERT_EQUAL(a.code, 500);
    answer(p, PROF_OP_PAY, 500,
           "{\"timestamp\":\"t\",\"status\":500,\"error\":\"Internal Server "
           "Error\",\"path\":\"/api/pay/submit\"}",
           &a);
    CU_ASSERT_EQUAL(a.code, 500);
    CU_ASSERT_EQUAL(a.status, OST_NONE);
    answer(p, PROF_OP_PAY, 400, "{\"status\":400}", &a);
    CU_ASSERT_EQUAL(a.code, 400);
    CU_ASSERT_STRING_EQUAL(a.error, "bad_request");
    answer(p, PROF_OP_PAY, 200, "{\"code\":200,\"data\":{\"status\":9}}", &a);
    CU_ASSERT_EQUAL(a.code, 500);
    answer(p, PROF_OP_TOKEN, 200, "{\"code\":200,\"msg\":\"success\",\"data\":\"TOKEN_1_7\"}", &a);
    CU_ASSERT_EQUAL(a.code, 200);
    CU_ASSERT_STRING_EQUAL(a.token, "TOKEN_1_7");
    CU_ASSERT_EQUAL(a.expires_in, 0);
    answer(p, PROF_OP_READ, 200,
           "{\"code\":200,\"data\":{\"orderNo\":\"x\",\"userId\":5,"
           "\"amount\":12.3,\"status\":0,\"transactionId\":4200000001,"
           "\"updateTime\":\"2026-12-01 08:00:00\"}}",
           &a);
    CU_ASSERT_EQUAL(profile_answer_row(&a, &row), 1);
    CU_ASSERT_EQUAL(row.status, OST_PENDING);
    CU_ASSERT_EQUAL(row.user_id, 5);
    CU_ASSERT_EQUAL(row.amount_fen, 1230);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "4200000001");
    CU_ASSERT_STRING_EQUAL(row.updated_at, "2026-12-01 08:00:00");
    answer(p, PROF_OP_READ, 200, "{\"code\":404,\"msg\":\"\",\"data\":null}", &a);
    CU_ASSERT_EQUAL(a.code, 404);
    CU_ASSERT_STRING_EQUAL(a.error, "not_found");
    CU_ASSERT_EQUAL(profile_answer_row(&a, &row), 0);
    answer(p, PROF_OP_PAY, 200, "{\"code\":404,\"data\":null}", &a); /* read's rule only */
    CU_ASSERT_EQUAL(a.code, 500);
    profile_free(p);
}

static void test_paths_and_text(void)
{
    json_t *j = json_loads("{\"a\":{\"b\":[{\"c\":\"x\"},7]},\"n\":2.0,\"f\":2.5,\"t\":true}", 0,
                           NULL);
    char buf[8];
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_STRING_EQUAL(json_string_value(profile_json_at(j, "a.b.0.c")), "x");
    CU_ASSERT_EQUAL(json_integer_value(profile_json_at(j, "a.b.1")), 7);
    CU_ASSERT_PTR_NULL(profile_json_at(j, "a.b.2"));
    CU_ASSERT_PTR_NULL(profile_json_at(j, "a.x.c"));
    CU_ASSERT_PTR_NULL(profile_json_at(j, "a..b"));
    CU_ASSERT_PTR_EQUAL(profile_json_at(j, "."), j);
    CU_ASSERT_EQUAL(profile_scalar_text(profile_json_at(j, "n"), buf, sizeof(buf)), 0);
    CU_ASSERT_STRING_EQUAL(buf, "2");
    CU_ASSERT_EQUAL(profile_scalar_text(profile_json_at(j, "f"), buf, sizeof(buf)), -1);
    CU_ASSERT_EQUAL(profile_scalar_text(profile_json_at(j, "t"), buf, sizeof(buf)), 0);
    CU_ASSERT_STRING_EQUAL(buf, "true");
    CU_ASSERT_EQUAL(profile_scalar_text(profile_json_at(j, "a"), buf, sizeof(buf)), -1);
    CU_ASSERT_EQUAL(profile_scalar_text(profile_json_at(j, "a.b.0.c"), buf, 1), -1);
    json_decref(j);

    /* an error text is cut at a character boundary, never inside one */
    sim_profile *p = load("seed-article.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p->ep[PROF_OP_PAY].field[PROF_FLD_ERROR][0] = 'm';
    p->ep[PROF_OP_PAY].field[PROF_FLD_ERROR][1] = '\0';
    char body[512];
    size_t used = (size_t)snprintf(body, sizeof(body), "{\"m\":\"");
    for (int i = 0; i < 30; i++)
        used += (size_t)snprintf(body + used, sizeof(body) - used, "\xe6\x94\xaf");
    snprintf(body + used, sizeof(body) - used, "\"}");
    profile_answer a;
    answer(p, PROF_OP_PAY, 200, body, &a);
    CU_ASSERT_EQUAL(strlen(a.error) % 3, 0);
    CU_ASSERT(strlen(a.error) > 40);
    json_t *s = json_string(a.error); /* valid UTF-8 */
    CU_ASSERT_PTR_NOT_NULL(s);
    json_decref(s);
    profile_free(p);
}

static void test_runnable(void)
{
    char note[384];
    unsigned all = (1u << SC_COUNT) - 1;
    CU_ASSERT_EQUAL(profile_runnable(profile_builtin(), all, note, sizeof(note)), all);
    CU_ASSERT_STRING_EQUAL(note, "");
    char err[512];
    sim_profile *bare = parse_edited("\"t\"", "\"bare\"", err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(bare);
    unsigned m = profile_runnable(bare, all, note, sizeof(note));
    CU_ASSERT_EQUAL(m, all & ~((1u << SC_TOKEN_REPLAY) | (1u << SC_FORGED_CALLBACK) |
                               (1u << SC_CALLBACK_STORM) | (1u << SC_PING) | (1u << SC_PAYER) |
                               (1u << SC_PAYER_EDGE) | (1u << SC_REFUNDS)));
    CU_ASSERT_STRING_EQUAL(note, "callback-storm (no callbacks), token-replay (no tokens), "
                                 "forged-callback (no callbacks), ping (no ping operation), "
                                 "payer (pay sends no trade_type), payer-edge (pay sends no "
                                 "trade_type), refunds (not idempay's merchant refund API)");
    m = profile_runnable(bare, 1u << SC_DOUBLE_CLICK, note, sizeof(note));
    CU_ASSERT_EQUAL(m, 1u << SC_DOUBLE_CLICK);
    CU_ASSERT_STRING_EQUAL(note, "");
    profile_runnable(bare, all, note, 20); /* a short note is cut, never overrun */
    CU_ASSERT(strlen(note) < 20);
    profile_free(bare);
}

int main(void)
{
    static const cu_test tests[] = {
        { "built-in profile is sim/profiles/idempay.json", test_builtin_is_the_file },
        { "the seed-article profile loads", test_seed_article_loads },
        { "broken profiles are refused, naming the key", test_refuses_broken_profiles },
        { "idempay requests are built from the profile", test_idempay_requests },
        { "seed-article requests are built from the profile", test_seed_article_requests },
        { "idempay answers are read through the profile", test_idempay_answers },
        { "seed-article answers are read through the profile", test_seed_article_answers },
        { "JSON paths find values and scalars read as text", test_paths_and_text },
        { "a profile runs only the scenarios it can", test_runnable },
    };
    return CU_SUITE_RUN("sim_profile", NULL, NULL, tests);
}
