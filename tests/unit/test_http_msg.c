/* test_http_msg.c - CUnit suite for http_msg: the response's header space
 * up to its last byte, bodies and JSON errors, percent-decoding of path
 * segments and query values (malformed escapes, NUL, '+', exact fit, one
 * byte short), repeated and bare query parameters, and the strict JSON
 * object parser. Table-driven; no I/O. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_msg.h"

typedef struct {
    const char *in;
    size_t outlen;
    int rc;
    const char *out; /* when rc == 0 */
} decode_case;

static void test_path_decode(void)
{
    static const decode_case cases[] = {
        { "ORD123", 64, 0, "ORD123" }, { "", 64, 0, "" },
        { "a%20b", 64, 0, "a b" },     { "a+b", 64, 0, "a+b" }, /* '+' stays '+' in a path */
        { "%41%62%7e", 64, 0, "Ab~" }, { "%e4%b8%ad", 64, 0, "\xe4\xb8\xad" },
        { "abc", 4, 0, "abc" },  /* exact fit */
        { "abcd", 4, -1, NULL }, /* one byte short */
        { "", 0, -1, NULL },     /* no room for the NUL */
        { "%00", 64, -1, NULL }, /* decodes to NUL */
        { "%4", 64, -1, NULL },  /* truncated escape */
        { "%", 64, -1, NULL },         { "%zz", 64, -1, NULL },
        { "a%2", 64, -1, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[64] = "untouched";
        int rc = http_path_decode(cases[i].in, out, cases[i].outlen);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (rc != cases[i].rc)
            fprintf(stderr, "\n  case %zu (%s): rc %d\n", i, cases[i].in, rc);
        if (rc == 0 && cases[i].rc == 0)
            CU_ASSERT_STRING_EQUAL(out, cases[i].out);
    }
}

typedef struct {
    const char *query;
    const char *name;
    size_t outlen;
    int rc;
    const char *out;
} query_case;

static void test_query_param(void)
{
    static const query_case cases[] = {
        { "user_id=42", "user_id", 32, 0, "42" },
        { "a=1&user_id=42&b=2", "user_id", 32, 0, "42" },
        { "user_idx=1", "user_id", 32, -1, NULL }, /* a longer name is another name */
        { "xuser_id=1", "user_id", 32, -1, NULL },
        { "", "user_id", 32, -1, NULL },
        { "user_id", "user_id", 32, 0, "" }, /* bare: present and empty */
        { "user_id=", "user_id", 32, 0, "" },
        { "q=a+b%2Bc", "q", 32, 0, "a b+c" },               /* '+' is a space in a query */
        { "user_id=1&user_id=1", "user_id", 32, -2, NULL }, /* repeated */
        { "user_id&user_id=1", "user_id", 32, -2, NULL },
        { "user_id=%zz", "user_id", 32, -2, NULL },
        { "user_id=1234", "user_id", 5, 0, "1234" }, /* exact fit */
        { "user_id=12345", "user_id", 5, -2, NULL }, /* one byte short */
        { "user_id", "user_id", 0, -2, NULL },
        { "&&user_id=7&", "user_id", 32, 0, "7" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[32] = "untouched";
        int rc = http_query_param(cases[i].query, cases[i].name, out, cases[i].outlen);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (rc != cases[i].rc)
            fprintf(stderr, "\n  case %zu (%s): rc %d\n", i, cases[i].query, rc);
        if (rc == 0 && cases[i].rc == 0)
            CU_ASSERT_STRING_EQUAL(out, cases[i].out);
    }
}

static void test_headers_fill_to_the_limit(void)
{
    http_response r;
    char value[HTTP_MAX_EXTRA_HEADERS];
    int added = 0;

    http_response_init(&r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_STRING_EQUAL(r.headers, "");
    CU_ASSERT_EQUAL(http_response_header(&r, "Retry-After", "1"), 0);
    CU_ASSERT_STRING_EQUAL(r.headers, "Retry-After: 1\r\n");
    /* Fill: every header either fits whole or is refused, leaving the rest intact. */
    while (http_response_header(&r, "X-Fill", "0123456789") == 0)
        added++;
    CU_ASSERT_TRUE(added > 10);
    CU_ASSERT_TRUE(strlen(r.headers) < HTTP_MAX_EXTRA_HEADERS);
    CU_ASSERT_EQUAL(strcmp(r.headers + strlen(r.headers) - 2, "\r\n"), 0);
    /* A header that exactly fits the space left is accepted, one more byte is not. */
    http_response_init(&r);
    memset(value, 'v', sizeof(value));
    size_t room = HTTP_MAX_EXTRA_HEADERS - 1 - strlen("X: \r\n");
    value[room] = '\0';
    CU_ASSERT_EQUAL(http_response_header(&r, "X", value), 0);
    CU_ASSERT_EQUAL(strlen(r.headers), HTTP_MAX_EXTRA_HEADERS - 1);
    http_response_init(&r);
    value[room] = 'v';
    value[room + 1] = '\0';
    CU_ASSERT_EQUAL(http_response_header(&r, "X", value), -1);
    CU_ASSERT_STRING_EQUAL(r.headers, "");
    http_response_free(&r);
}

static void test_bodies(void)
{
    http_response r;

    http_response_init(&r);
    CU_ASSERT_EQUAL(http_response_set(&r, 200, "text/plain", "ab\0c", 4), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(r.body_len, 4);
    CU_ASSERT_EQUAL(memcmp(r.body, "ab\0c", 5), 0); /* NUL-terminated copy */
    CU_ASSERT_STRING_EQUAL(r.content_type, "text/plain");
    CU_ASSERT_EQUAL(http_response_set(&r, 204, "text/plain", "", 0), 0); /* replaces */
    CU_ASSERT_EQUAL(r.body_len, 0);
    CU_ASSERT_EQUAL(http_response_json(&r, 201, json_pack("{s:s, s:i}", "b", "x", "a", 1)), 0);
    CU_ASSERT_STRING_EQUAL(r.body, "{\"b\":\"x\",\"a\":1}"); /* compact, in order */
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_EQUAL(http_response_json(&r, 500, NULL), -1);
    CU_ASSERT_EQUAL(r.status, 201); /* unchanged */
    CU_ASSERT_EQUAL(http_response_error(&r, 404, "not_found", "no \"such\" route"), 0);
    CU_ASSERT_EQUAL(r.status, 404);
    CU_ASSERT_STRING_EQUAL(r.body,
                           "{\"error\":\"not_found\",\"message\":\"no \\\"such\\\" route\"}");
    http_response_free(&r);
    CU_ASSERT_PTR_NULL(r.body);
    http_response_free(&r); /* twice is fine */
    http_response_free(NULL);
}

typedef struct {
    const char *body;
    int object; /* 1: parsed as an object */
} json_case;

static void test_json_object(void)
{
    static const json_case cases[] = {
        { "{\"order_no\":\"A\",\"user_id\":1}", 1 },
        { "{}", 1 },
        { " {\"a\":{\"b\":[1,2]}} ", 1 },
        { "{\"a\":1,\"a\":2}", 0 }, /* duplicate keys */
        { "[1,2]", 0 },
        { "\"x\"", 0 },
        { "42", 0 },
        { "null", 0 },
        { "", 0 },
        { "{", 0 },
        { "{\"a\":1} {}", 0 }, /* trailing garbage */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = http_json_parse_object(cases[i].body, strlen(cases[i].body));
        CU_ASSERT_EQUAL(v != NULL, cases[i].object);
        if ((v != NULL) != cases[i].object)
            fprintf(stderr, "\n  case %zu: %s\n", i, cases[i].body);
        json_decref(v);
    }
    /* The length bounds the text: a prefix that is an object parses. */
    json_t *v = http_json_parse_object("{}garbage", 2);
    CU_ASSERT_PTR_NOT_NULL(v);
    json_decref(v);
}

static void test_content_length(void)
{
    size_t n = 7;

    CU_ASSERT_EQUAL(http_content_length_parse(NULL, 100, &n), HTTP_CL_OK);
    CU_ASSERT_EQUAL(n, 0);
    n = 7;
    CU_ASSERT_EQUAL(http_content_length_parse("", 100, &n), HTTP_CL_OK);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(http_content_length_parse("100", 100, &n), HTTP_CL_OK);
    CU_ASSERT_EQUAL(n, 100);
    CU_ASSERT_EQUAL(http_content_length_parse("0000000000000000042", 100, &n), HTTP_CL_OK);
    CU_ASSERT_EQUAL(n, 42);
    n = 7;
    CU_ASSERT_EQUAL(http_content_length_parse("101", 100, &n), HTTP_CL_TOO_LARGE);
    CU_ASSERT_EQUAL(http_content_length_parse("9999999999999999999", 100, &n), HTTP_CL_TOO_LARGE);
    CU_ASSERT_EQUAL(n, 7);
    /* the probe of issue 23: a negative length must never pass the size check */
    CU_ASSERT_EQUAL(http_content_length_parse("-2147483649", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("-1", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("+5", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse(" 5", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("5 ", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("0x10", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("1e3", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(http_content_length_parse("18446744073709551617", 100, &n), HTTP_CL_INVALID);
    CU_ASSERT_EQUAL(n, 7);
}

int main(void)
{
    static const cu_test tests[] = {
        { "path segments are decoded; one that does not fit or is malformed is refused",
          test_path_decode },
        { "query parameters are found and decoded; a repeat or an overflow is refused",
          test_query_param },
        { "extra headers fill up to the last byte", test_headers_fill_to_the_limit },
        { "bodies, JSON and error answers are built and freed", test_bodies },
        { "only strict JSON objects are accepted", test_json_object },
        { "CONTENT_LENGTH is digits only, 0 when absent, refused over the limit",
          test_content_length },
    };
    return CU_SUITE_RUN("http_msg", NULL, NULL, tests);
}
