/* test_mock_rules.c - CUnit suite for gateway-mock/rules: the glob over
 * out_trade_no, strict parsing (every refusal names its field), first-match
 * precedence, the `times` count (also under 8 threads racing for one rule:
 * exactly N uses, never more), and the JSON shown by GET /mock/config. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int parse_text(const char *text, rules_list *out, char *err, size_t errlen)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (v == NULL)
        return -2;
    err[0] = '\0';
    int rc = rules_parse(v, out, err, errlen);
    json_decref(v);
    return rc;
}

/* A set holding the rules of text (which must parse). */
static void set_of(rules_set *s, const char *text)
{
    static rules_list l;
    char err[200];
    rules_init(s);
    CU_ASSERT_EQUAL_FATAL(parse_text(text, &l, err, sizeof(err)), 0);
    rules_replace(s, &l);
}

static int take(rules_set *s, const char *ep, const char *otn)
{
    rules_decision d;
    rules_take(s, ep, otn, &d);
    return d.index;
}

static void test_glob(void)
{
    CU_ASSERT_TRUE(rules_glob("ORD-1*", "ORD-1"));
    CU_ASSERT_TRUE(rules_glob("ORD-1*", "ORD-12345"));
    CU_ASSERT_FALSE(rules_glob("ORD-1*", "ORD-2345"));
    CU_ASSERT_FALSE(rules_glob("ORD-1*", "XORD-1"));
    CU_ASSERT_TRUE(rules_glob("*", "anything_at_all"));
    CU_ASSERT_TRUE(rules_glob("ORD-1", "ORD-1"));
    CU_ASSERT_FALSE(rules_glob("ORD-1", "ORD-12"));
    CU_ASSERT_TRUE(rules_glob("A?C", "ABC"));
    CU_ASSERT_FALSE(rules_glob("A?C", "AC"));
    CU_ASSERT_TRUE(rules_glob("*-7", "order-17-7"));
    CU_ASSERT_TRUE(rules_glob("a*b*c", "aXbYbZc"));
    CU_ASSERT_FALSE(rules_glob("a*b*c", "aXbYbZ"));
    CU_ASSERT_TRUE(rules_glob("**x", "x"));
    CU_ASSERT_TRUE(rules_glob("a|b*", "a|b*c")); /* '|' literal; '*' in an order number too */
    CU_ASSERT_FALSE(rules_glob("?", ""));
}

static void test_parse_full_and_defaults(void)
{
    rules_list l;
    char err[200];
    CU_ASSERT_EQUAL(
        parse_text("[{\"endpoint\":\"unifiedorder\",\"out_trade_no\":\"X*\",\"times\":2,"
                   "\"fault\":{\"kind\":\"timeout_after_charge\",\"latency_ms\":12000,"
                   "\"hold_ms\":500}},"
                   "{\"endpoint\":\"*\",\"fault\":{\"latency_ms\":0}},"
                   "{\"endpoint\":\"closeorder\",\"out_trade_no\":null,\"times\":null,"
                   "\"fault\":{\"kind\":\"reset\"}}]",
                   &l, err, sizeof(err)),
        0);
    CU_ASSERT_EQUAL(l.n, 3);
    CU_ASSERT_STRING_EQUAL(l.v[0].endpoint, "unifiedorder");
    CU_ASSERT_STRING_EQUAL(l.v[0].pattern, "X*");
    CU_ASSERT_EQUAL(l.v[0].times, 2);
    CU_ASSERT_EQUAL(l.v[0].remaining, 2);
    CU_ASSERT_EQUAL(l.v[0].hits, 0);
    CU_ASSERT_EQUAL(l.v[0].kind, FAULT_TIMEOUT_AFTER_CHARGE);
    CU_ASSERT_EQUAL(l.v[0].latency_ms, 12000);
    CU_ASSERT_EQUAL(l.v[0].hold_ms, 500);
    CU_ASSERT_STRING_EQUAL(l.v[1].endpoint, "*");
    CU_ASSERT_STRING_EQUAL(l.v[1].pattern, "");
    CU_ASSERT_EQUAL(l.v[1].times, RULES_UNLIMITED);
    CU_ASSERT_EQUAL(l.v[1].remaining, RULES_UNLIMITED);
    CU_ASSERT_EQUAL(l.v[1].kind, FAULT_NONE);
    CU_ASSERT_EQUAL(l.v[1].latency_ms, 0);
    CU_ASSERT_EQUAL(l.v[1].hold_ms, RULES_KEEP);
    CU_ASSERT_EQUAL(l.v[2].kind, FAULT_RESET);
    CU_ASSERT_EQUAL(l.v[2].latency_ms, RULES_KEEP);
    CU_ASSERT_EQUAL(parse_text("null", &l, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_EQUAL(parse_text("[]", &l, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(l.n, 0);
}

/* Each bad value is refused with a reason naming the field. */
static void test_parse_refusals(void)
{
    static const struct {
        const char *json, *names;
    } bad[] = {
        { "{}", "rules must be an array" },
        { "[1]", "rules[0] must be an object" },
        { "[{\"fault\":{\"kind\":\"error\"}}]", "rules[0].endpoint" },
        { "[{\"endpoint\":\"pay\",\"fault\":{\"kind\":\"error\"}}]", "rules[0].endpoint" },
        { "[{\"endpoint\":7,\"fault\":{\"kind\":\"error\"}}]", "rules[0].endpoint" },
        { "[{\"endpoint\":\"*\",\"fault\":{}},{\"endpoint\":\"*\"}]", "rules[0].fault must be" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":\"none\"}},{\"endpoint\":\"*\"}]",
          "rules[1].fault is missing" },
        { "[{\"endpoint\":\"*\",\"fault\":\"error\"}]", "rules[0].fault must be" },
        { "[{\"endpoint\":\"*\",\"when\":1,\"fault\":{\"kind\":\"error\"}}]", "rules[0].when" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":\"error\",\"rate\":1}}]",
          "rules[0].fault.rate" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":\"SYSTEMERROR\"}}]", "rules[0].fault.kind" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":true}}]", "rules[0].fault.kind" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":\"decline\"}}]",
          "rules[0].fault.kind decline" },
        { "[{\"endpoint\":\"refund\",\"fault\":{\"kind\":\"timeout_after_charge\"}}]",
          "rules[0].fault.kind timeout_after_charge" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"latency_ms\":-1}}]", "rules[0].fault.latency_ms" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"latency_ms\":60001}}]", "rules[0].fault.latency_ms" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"latency_ms\":1.5}}]", "rules[0].fault.latency_ms" },
        { "[{\"endpoint\":\"*\",\"fault\":{\"kind\":\"error\",\"hold_ms\":5}}]",
          "rules[0].fault.hold_ms" },
        { "[{\"endpoint\":\"unifiedorder\",\"fault\":{\"kind\":\"timeout_after_charge\","
          "\"hold_ms\":600001}}]",
          "rules[0].fault.hold_ms" },
        { "[{\"endpoint\":\"*\",\"times\":0,\"fault\":{\"kind\":\"error\"}}]", "rules[0].times" },
        { "[{\"endpoint\":\"*\",\"times\":\"2\",\"fault\":{\"kind\":\"error\"}}]",
          "rules[0].times" },
        { "[{\"endpoint\":\"*\",\"out_trade_no\":\"a b\",\"fault\":{\"kind\":\"error\"}}]",
          "rules[0].out_trade_no" },
        { "[{\"endpoint\":\"*\",\"out_trade_no\":\"\",\"fault\":{\"kind\":\"error\"}}]",
          "rules[0].out_trade_no" },
        { "[{\"endpoint\":\"*\",\"out_trade_no\":[\"X\"],\"fault\":{\"kind\":\"error\"}}]",
          "rules[0].out_trade_no" },
        { "[{\"endpoint\":\"*\",\"out_trade_no\":\"X12345678901234567890123456789012345678901234567890"
          "12345678901234\",\"fault\":{\"kind\":\"error\"}}]",
          "rules[0].out_trade_no" },
    };
    rules_list l;
    char err[200];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT_EQUAL(parse_text(bad[i].json, &l, err, sizeof(err)), -1);
        if (strstr(err, bad[i].names) == NULL)
            fprintf(stderr, "\n%s: got \"%s\"\n", bad[i].json, err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].names));
    }
    /* One rule past the most. */
    char many[RULES_MAX * 48 + 16];
    size_t used = (size_t)snprintf(many, sizeof(many), "[");
    for (int i = 0; i <= RULES_MAX; i++)
        used += (size_t)snprintf(many + used, sizeof(many) - used,
                                 "%s{\"endpoint\":\"*\",\"fault\":{}}", i ? "," : "");
    snprintf(many + used, sizeof(many) - used, "]");
    CU_ASSERT_EQUAL(parse_text(many, &l, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "at most 32"));
}

static void test_first_match_and_times(void)
{
    rules_set s;
    rules_decision d;
    set_of(&s, "[{\"endpoint\":\"unifiedorder\",\"out_trade_no\":\"X*\",\"times\":2,"
               "\"fault\":{\"kind\":\"error\"}},"
               "{\"endpoint\":\"*\",\"out_trade_no\":\"X*\",\"fault\":{\"latency_ms\":7}},"
               "{\"endpoint\":\"downloadbill\",\"times\":1,\"fault\":{\"kind\":\"reset\"}}]");
    CU_ASSERT_TRUE(rules_any(&s));
    CU_ASSERT_EQUAL(take(&s, "unifiedorder", "Y-1"), -1); /* other orders untouched */
    CU_ASSERT_EQUAL(take(&s, "orderquery", "X-1"), 1);    /* rule 0 is unifiedorder's */
    rules_take(&s, "unifiedorder", "X-1", &d);
    CU_ASSERT_EQUAL(d.index, 0);
    CU_ASSERT_EQUAL(d.kind, FAULT_ERROR);
    CU_ASSERT_EQUAL(d.latency_ms, RULES_KEEP);
    CU_ASSERT_EQUAL(take(&s, "unifiedorder", "X-2"), 0);
    rules_take(&s, "unifiedorder", "X-3", &d); /* rule 0 spent: rule 1 */
    CU_ASSERT_EQUAL(d.index, 1);
    CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
    CU_ASSERT_EQUAL(d.latency_ms, 7);
    CU_ASSERT_EQUAL(take(&s, "downloadbill", NULL), 2); /* no pattern: no order needed */
    CU_ASSERT_EQUAL(take(&s, "downloadbill", NULL), -1);
    CU_ASSERT_EQUAL(take(&s, "orderquery", NULL), -1); /* a pattern needs an order */
    CU_ASSERT_EQUAL(take(&s, "orderquery", ""), -1);

    rules_list got;
    rules_get(&s, &got);
    CU_ASSERT_EQUAL(got.n, 3);
    CU_ASSERT_EQUAL(got.v[0].remaining, 0);
    CU_ASSERT_EQUAL(got.v[0].hits, 2);
    CU_ASSERT_EQUAL(got.v[1].remaining, RULES_UNLIMITED);
    CU_ASSERT_EQUAL(got.v[1].hits, 2);
    CU_ASSERT_EQUAL(got.v[2].remaining, 0);
    CU_ASSERT_EQUAL(got.v[2].hits, 1);

    /* A replacement starts its counts afresh; an empty list matches nothing. */
    set_of(&s, "[{\"endpoint\":\"unifiedorder\",\"times\":1,\"fault\":{\"kind\":\"decline\"}}]");
    CU_ASSERT_EQUAL(take(&s, "unifiedorder", "X-4"), 0);
    CU_ASSERT_EQUAL(take(&s, "unifiedorder", "X-4"), -1);
    set_of(&s, "[]");
    CU_ASSERT_FALSE(rules_any(&s));
    rules_take(&s, "unifiedorder", "X-5", &d);
    CU_ASSERT_EQUAL(d.index, -1);
    CU_ASSERT_EQUAL(d.kind, FAULT_NONE);
    CU_ASSERT_EQUAL(d.latency_ms, RULES_KEEP);
}

static void test_json(void)
{
    rules_set s;
    rules_list l;
    set_of(&s,
           "[{\"endpoint\":\"closeorder\",\"out_trade_no\":\"C-?\",\"times\":3,"
           "\"fault\":{\"kind\":\"error\"}},{\"endpoint\":\"*\",\"fault\":{\"latency_ms\":5}}]");
    take(&s, "closeorder", "C-1");
    rules_get(&s, &l);
    json_t *a = rules_to_json(&l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *text = json_dumps(a, JSON_COMPACT);
    CU_ASSERT_STRING_EQUAL(
        text,
        "[{\"endpoint\":\"closeorder\",\"out_trade_no\":\"C-?\",\"times\":3,"
        "\"fault\":{\"kind\":\"error\",\"latency_ms\":null,\"hold_ms\":null},\"remaining\":2,\"hits\":1},"
        "{\"endpoint\":\"*\",\"out_trade_no\":null,\"times\":null,"
        "\"fault\":{\"kind\":\"none\",\"latency_ms\":5,\"hold_ms\":null},\"remaining\":null,\"hits\":0}]");
    /* What GET shows parses back (without the counts) to the same rules. */
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_object_del(json_array_get(a, i), "remaining");
        json_object_del(json_array_get(a, i), "hits");
    }
    rules_list back;
    char err[200];
    CU_ASSERT_EQUAL(rules_parse(a, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.n, 2);
    CU_ASSERT_EQUAL(back.v[0].times, 3);
    CU_ASSERT_EQUAL(back.v[0].remaining, 3);
    CU_ASSERT_EQUAL(back.v[1].latency_ms, 5);
    free(text);
    json_decref(a);
}

/* ---- concurrency: a rule with times N decides exactly N calls ---------------- */

#define RACE_THREADS 8
#define RACE_CALLS 20000
#define RACE_TIMES 1000

typedef struct {
    rules_set *s;
    long long by_rule[3]; /* index 0, index 1, none */
} race_arg;

static void *race(void *p)
{
    race_arg *a = p;
    for (int i = 0; i < RACE_CALLS; i++) {
        rules_decision d;
        rules_take(a->s, i % 2 ? "unifiedorder" : "orderquery", "RACE-1", &d);
        a->by_rule[d.index < 0 ? 2 : d.index]++;
    }
    return NULL;
}

static void test_times_under_threads(void)
{
    static rules_set s;
    pthread_t t[RACE_THREADS];
    race_arg a[RACE_THREADS];
    long long total[3] = { 0, 0, 0 };

    set_of(&s, "[{\"endpoint\":\"*\",\"out_trade_no\":\"RACE-*\",\"times\":1000,"
               "\"fault\":{\"kind\":\"error\"}},"
               "{\"endpoint\":\"unifiedorder\",\"fault\":{\"kind\":\"decline\"}}]");
    for (int i = 0; i < RACE_THREADS; i++) {
        memset(&a[i], 0, sizeof(a[i]));
        a[i].s = &s;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, race, &a[i]), 0);
    }
    for (int i = 0; i < RACE_THREADS; i++) {
        pthread_join(t[i], NULL);
        for (int k = 0; k < 3; k++)
            total[k] += a[i].by_rule[k];
    }
    long long calls = (long long)RACE_THREADS * RACE_CALLS;
    CU_ASSERT_EQUAL(total[0], RACE_TIMES);
    CU_ASSERT_EQUAL(total[0] + total[1] + total[2], calls);
    /* Every unifiedorder not taken by rule 0 falls to rule 1; orderquery to none. */
    rules_list l;
    rules_get(&s, &l);
    CU_ASSERT_EQUAL(l.v[0].remaining, 0);
    CU_ASSERT_EQUAL(l.v[0].hits, RACE_TIMES);
    CU_ASSERT_EQUAL(l.v[1].hits, total[1]);
    CU_ASSERT_EQUAL(total[1] + total[2], calls - RACE_TIMES);
    CU_ASSERT_TRUE(total[1] >= calls / 2 - RACE_TIMES && total[2] >= calls / 2 - RACE_TIMES);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a rule's glob matches out_trade_no", test_glob },
        { "a rule parses every field and its defaults", test_parse_full_and_defaults },
        { "a bad rule is refused naming the field", test_parse_refusals },
        { "the first match wins, times counts uses, spent rules pass", test_first_match_and_times },
        { "the JSON shows remaining and hits and parses back", test_json },
        { "under 8 threads a rule of N times is used exactly N times", test_times_under_threads },
    };
    return CU_SUITE_RUN("mock_rules", NULL, NULL, tests);
}
