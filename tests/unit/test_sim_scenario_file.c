/* test_sim_scenario_file.c - CUnit suite for --scenario-file: a file that
 * only names scenarios is that --scenario list (same schedule digest); a
 * file that writes the generator's defaults out gives the same schedule but
 * for its parameters line; knobs and client behaviour reach the phases and
 * tasks; the same file and seed give the same digest, another file
 * another; and bad files are refused naming the line or the field. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario_file.h"
#include "scenarios.h"
#include "schedule.h"

static char PATH[] = "/tmp/test_sim_scenario_file.XXXXXX";
static int FD = -1;

static int setup(void)
{
    FD = mkstemp(PATH);
    return FD < 0 ? -1 : 0;
}

static int teardown(void)
{
    close(FD);
    unlink(PATH);
    return 0;
}

static sim_scenario_file *load_text(const char *json, char *err, size_t errlen)
{
    FILE *f = fopen(PATH, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(json, f);
    fclose(f);
    return scenario_file_load(PATH, err, errlen);
}

/* A file that must load (the error is shown when it does not). */
static sim_scenario_file *load_ok(const char *json)
{
    char err[512] = "";
    sim_scenario_file *f = load_text(json, err, sizeof(err));
    if (f == NULL)
        fprintf(stderr, "%s\n", err);
    return f;
}

static sim_plan plan_of(size_t orders, double duration_s)
{
    sim_plan p = {
        .orders = orders, .duration_s = duration_s, .concurrency = 32, .chaos_every_s = 5.0
    };
    return p;
}

/* The schedule of f (or of mask, when f is NULL) as canonical text and digest. */
static char *build(const sim_scenario_file *f, unsigned mask, const sim_plan *plan, uint64_t seed,
                   char digest[65])
{
    sim_schedule s;
    char err[512] = "";
    sched_init(&s, seed);
    sim_plan p = *plan;
    p.mask = mask;
    int rc = f ? scenario_file_build(f, &p, &s, err, sizeof(err))
               : scenarios_build(&s, &p, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "build: %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sched_digest(&s, digest), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    sched_print(&s, m);
    fclose(m);
    sched_free(&s);
    return text;
}

/* text without its "params ..." line. */
static void drop_params(char *text)
{
    char *p = strstr(text, "params ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *nl = strchr(p, '\n');
    memmove(p, nl + 1, strlen(nl + 1) + 1);
}

static void test_plain_file_is_the_builtin(void)
{
    char err[512] = "", d1[65], d2[65];
    sim_scenario_file *f = load_text(
        "{\"orders\": 200, \"duration_s\": 5,\n"
        " \"phases\": [{\"scenario\": \"double-click\", \"description\": \"as --scenario\"},\n"
        "              {\"scenario\": \"retry-storm\"}]}\n",
        err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    scenario_file_run run = scenario_file_run_values(f);
    CU_ASSERT_EQUAL(run.orders, 200);
    CU_ASSERT(run.duration_s == 5.0);
    CU_ASSERT_EQUAL(run.concurrency, 0);
    CU_ASSERT_EQUAL(scenario_file_mask(f), (1u << SC_DOUBLE_CLICK) | (1u << SC_RETRY_STORM));
    sim_plan p = plan_of(200, 5);
    free(build(f, 0, &p, 42, d1));
    free(build(NULL, (1u << SC_DOUBLE_CLICK) | (1u << SC_RETRY_STORM), &p, 42, d2));
    CU_ASSERT_STRING_EQUAL(d1, d2);
    scenario_file_free(f);
}

/* double-click's defaults written out: the same orders, tasks and phases. */
static void test_explicit_file_same_schedule(void)
{
    char d1[65], d2[65];
    sim_scenario_file *f = load_ok(
        "{\"phases\": [{\"scenario\": \"double-click\", \"orders\": 200, \"duration_s\": 5,\n"
        "  \"client\": {\"attempts\": [3, 6], \"timeout_ms\": [8000, 10000],\n"
        "             \"backoff_ms\": [100, 300], \"patience_ms\": 6000, \"poll_share\": 0.5,\n"
        "             \"idempotency_key_share\": 0.5, \"token_share\": 0.5,\n"
        "             \"retry_after_decline_share\": 0}}]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sim_plan p = plan_of(999, 77); /* the phase's own orders and time win */
    char *a = build(f, 0, &p, 7, d1);
    p = plan_of(200, 5);
    char *b = build(NULL, 1u << SC_DOUBLE_CLICK, &p, 7, d2);
    CU_ASSERT_STRING_NOT_EQUAL(d1, d2); /* the file's hash is in the parameters */
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "params scenario-file="));
    drop_params(a);
    drop_params(b);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    /* The same file and seed: the same digest; another seed another. */
    p = plan_of(999, 77);
    char d3[65], d4[65];
    free(build(f, 0, &p, 7, d3));
    free(build(f, 0, &p, 8, d4));
    CU_ASSERT_STRING_EQUAL(d1, d3);
    CU_ASSERT_STRING_NOT_EQUAL(d1, d4);
    scenario_file_free(f);
}

static void test_knobs_and_clients_reach_the_schedule(void)
{
    char err[512] = "", d1[65], d2[65];
    sim_scenario_file *f = load_ok(
        "{\"mock\": {\"notify_copies\": 3},\n"
        " \"phases\": [{\"scenario\": \"retry-storm\", \"orders\": 40,\n"
        "   \"mock\": {\"dedupe\": false, \"timeout_after_charge_rate\": 0.3,\n"
        "            \"endpoints\": {\"refund\": {\"error_rate\": 0.2}}},\n"
        "   \"client\": {\"backoff_ms\": 2000, \"attempts\": 4}},\n"
        "  {\"scenario\": \"retry-storm\", \"orders\": 40}]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sim_plan p = plan_of(80, 4);
    sim_schedule s;
    sched_init(&s, 3);
    CU_ASSERT_EQUAL_FATAL(scenario_file_build(f, &p, &s, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(s.nphases, 4); /* retry-storm makes two phases each time */
    for (size_t i = 0; i < 2; i++) {
        const char *cfg = s.phases[i].mock_config;
        CU_ASSERT_PTR_NOT_NULL(strstr(cfg, "\"dedupe\":false"));
        CU_ASSERT_PTR_NOT_NULL(strstr(cfg, "\"timeout_after_charge_rate\":0.3"));
        CU_ASSERT_PTR_NOT_NULL(strstr(cfg, "\"notify_copies\":3"));
        CU_ASSERT_PTR_NOT_NULL(strstr(cfg, "\"refund\":{\"error_rate\":0.2,\"jitter_ms\":null"));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(s.phases[2].mock_config, "\"notify_copies\":3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.phases[2].mock_config, "\"dedupe\":true"));
    size_t first = 0, second = 0;
    for (size_t t = 0; t < s.ntasks; t++) {
        const sched_task *k = &s.tasks[t];
        if (k->order < 40) {
            first++;
            CU_ASSERT_EQUAL(k->backoff_ms, 2000);
            CU_ASSERT_EQUAL(k->max_attempts, 4);
        } else {
            second++;
            CU_ASSERT(k->backoff_ms >= 30 && k->backoff_ms <= 200);
        }
    }
    CU_ASSERT(first >= 40 && second >= 40);
    /* The second retry-storm phase draws from a stream of its own. */
    CU_ASSERT_STRING_NOT_EQUAL(s.orders[0].suffix + 7, s.orders[40].suffix + 7);
    sched_free(&s);
    free(build(f, 0, &p, 3, d1));
    scenario_file_free(f);
    f = load_text("{\"mock\": {\"notify_copies\": 4}, \"phases\": [{\"scenario\": \"retry-storm\", "
                  "\"orders\": 40}, {\"scenario\": \"retry-storm\", \"orders\": 40}]}",
                  err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    free(build(f, 0, &p, 3, d2));
    CU_ASSERT_STRING_NOT_EQUAL(d1, d2);
    scenario_file_free(f);
}

/* Shares: phases without orders share the rest by weight, as --scenario does. */
static void test_shares(void)
{
    char err[512] = "";
    sim_scenario_file *f = load_text(
        "{\"orders\": 100, \"phases\": [{\"scenario\": \"order-mismatch\", \"orders\": 10, "
        "\"duration_s\": 0},"
        " {\"scenario\": \"double-click\", \"mock\": {\"latency_ms\": 5}}]}",
        err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sim_plan p = plan_of(100, 2);
    sim_schedule s;
    sched_init(&s, 1);
    CU_ASSERT_EQUAL_FATAL(scenario_file_build(f, &p, &s, err, sizeof(err)), 0);
    size_t n[SC_COUNT];
    sched_count_orders(&s, n);
    CU_ASSERT_EQUAL(n[SC_ORDER_MISMATCH], 10);
    CU_ASSERT_EQUAL(n[SC_DOUBLE_CLICK], 90);
    /* order-mismatch sets its own time (none): double-click has all 2 s */
    CU_ASSERT_EQUAL(s.phases[1].budget_ms + s.phases[2].budget_ms, 2000);
    sched_free(&s);
    scenario_file_free(f);
}

/* Each bad file is refused; the message names the file and where. */
static void test_refusals(void)
{
    static const struct {
        const char *json;
        const char *want;
    } bad[] = {
        { "{\"phases\": [{\"scenario\": \"double-click\"},]}", ":1:" },
        { "{\n \"phases\": [\n  {\"scenario\": \"double-click\"\n  ]}", ":4:" },
        { "[1]", "top level" },
        { "{\"phases\": []}", "phases: needs an array" },
        { "{\"orders\": 0, \"phases\": [{\"scenario\": \"ping\"}]}", "'orders' needs an integer" },
        { "{\"order\": 5, \"phases\": [{\"scenario\": \"ping\"}]}", "unknown field 'order'" },
        { "{\"phases\": [{\"scenario\": \"bogus\"}]}", "phases[0]: 'scenario' needs" },
        { "{\"phases\": [{\"scenario\": \"all\"}]}", "phases[0]: 'scenario' needs" },
        { "{\"phases\": [{\"scenario\": \"ping\"}, {\"scenario\": \"double-click\", "
          "\"concurrency\": 4}]}",
          "phases[1]: 'concurrency' is the run's" },
        { "{\"phases\": [{\"scenario\": \"double-click\", \"mock\": {\"dedup\": false}}]}",
          "phases[0].mock: unknown mock knob 'dedup'" },
        { "{\"phases\": [{\"scenario\": \"double-click\", \"mock\": {\"dedupe\": 0}}]}",
          "'dedupe' needs true or false" },
        { "{\"phases\": [{\"scenario\": \"double-click\", \"mock\": {\"error_rate\": 1.5}}]}",
          "'error_rate' needs a fraction" },
        { "{\"mock\": {\"endpoints\": {\"refnd\": {}}}, \"phases\": [{\"scenario\": \"ping\"}]}",
          "mock: unknown endpoint 'refnd'" },
        { "{\"phases\": [{\"scenario\": \"double-click\", \"client\": {\"attempts\": [6, 3]}}]}",
          "phases[0].client: 'attempts' needs" },
        { "{\"phases\": [{\"scenario\": \"double-click\", \"client\": {\"retries\": 3}}]}",
          "unknown field 'retries'" },
        { "{\"phases\": [{\"scenario\": \"nemesis\", \"client\": {\"attempts\": 3}}]}",
          "nemesis draws its own clients" },
        { "{\"phases\": [{\"scenario\": \"ping\", \"orders\": 3}]}", "ping sends no orders" },
        { "{\"phases\": [{\"scenario\": \"double-click\"}], \"phases\": []}", "duplicate" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[512] = "";
        sim_scenario_file *f = load_text(bad[i].json, err, sizeof(err));
        CU_ASSERT_PTR_NULL(f);
        scenario_file_free(f);
        if (strstr(err, bad[i].want) == NULL)
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err, bad[i].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, PATH));
    }
    char err[512] = "";
    CU_ASSERT_PTR_NULL(scenario_file_load("/nonexistent/x.json", err, sizeof(err)));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot read it"));
    /* crash needs a chaos command: known only when the run is planned */
    sim_scenario_file *f = load_text("{\"phases\": [{\"scenario\": \"crash\"}]}", err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sim_plan p = plan_of(20, 1);
    sim_schedule s;
    sched_init(&s, 1);
    CU_ASSERT_EQUAL(scenario_file_build(f, &p, &s, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "phases[0]: crash needs --chaos-cmd"));
    sched_free(&s);
    scenario_file_free(f);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a file naming scenarios is --scenario", test_plain_file_is_the_builtin },
        { "a file with the defaults written out gives the same schedule",
          test_explicit_file_same_schedule },
        { "knobs and clients reach the schedule", test_knobs_and_clients_reach_the_schedule },
        { "phases without orders share the rest by weight", test_shares },
        { "bad files are refused naming where", test_refusals },
    };
    return CU_SUITE_RUN("sim_scenario_file", setup, teardown, tests);
}
