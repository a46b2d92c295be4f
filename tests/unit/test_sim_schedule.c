/* test_sim_schedule.c - CUnit suite for the simulator's schedule: same seed
 * and flags give the same schedule and digest, another seed or flag another
 * digest; order numbers follow the rule and map back to their index; the
 * digest ignores the run prefix; amounts print in both styles. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "order_no.h"
#include "scenarios.h"
#include "schedule.h"

static int build(sim_schedule *s, uint64_t seed, unsigned mask, size_t orders, double duration,
                 const char *override)
{
    char err[256];
    sim_plan p = { .mask = mask,
                   .orders = orders,
                   .duration_s = duration,
                   .concurrency = 8,
                   .chaos = 0,
                   .chaos_every_s = 5,
                   .mock_override = override };
    sched_init(s, seed);
    return scenarios_build(s, &p, err, sizeof(err));
}

static void digest_of(uint64_t seed, unsigned mask, size_t orders, double duration,
                      const char *override, char out[65])
{
    sim_schedule s;
    CU_ASSERT_EQUAL_FATAL(build(&s, seed, mask, orders, duration, override), 0);
    CU_ASSERT_EQUAL(sched_digest(&s, out), 0);
    sched_free(&s);
}

static void test_same_seed_same_digest(void)
{
    char a[65], b[65], c[65], d[65], e[65];
    unsigned all = scenarios_all_mask(0);
    digest_of(42, all, 300, 10, NULL, a);
    digest_of(42, all, 300, 10, NULL, b);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_EQUAL(strlen(a), 64);
    digest_of(43, all, 300, 10, NULL, c);
    CU_ASSERT_STRING_NOT_EQUAL(a, c);
    digest_of(42, all, 301, 10, NULL, d);
    CU_ASSERT_STRING_NOT_EQUAL(a, d);
    digest_of(42, all, 300, 10, "{\"dedupe\":false}", e);
    CU_ASSERT_STRING_NOT_EQUAL(a, e);
}

static void test_same_seed_same_schedule(void)
{
    sim_schedule x, y;
    unsigned all = scenarios_all_mask(0);
    CU_ASSERT_EQUAL_FATAL(build(&x, 7, all, 200, 5, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(build(&y, 7, all, 200, 5, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(x.norders, y.norders);
    CU_ASSERT_EQUAL_FATAL(x.ntasks, y.ntasks);
    CU_ASSERT_EQUAL_FATAL(x.nphases, y.nphases);
    CU_ASSERT_EQUAL_FATAL(x.ntokens, y.ntokens);
    CU_ASSERT_EQUAL(memcmp(x.orders, y.orders, x.norders * sizeof(sched_order)), 0);
    CU_ASSERT_EQUAL(memcmp(x.tasks, y.tasks, x.ntasks * sizeof(sched_task)), 0);
    /* The printed form is the same too. */
    char *pa = NULL, *pb = NULL;
    size_t la = 0, lb = 0;
    FILE *fa = open_memstream(&pa, &la), *fb = open_memstream(&pb, &lb);
    sched_print(&x, fa);
    sched_print(&y, fb);
    fclose(fa);
    fclose(fb);
    CU_ASSERT_EQUAL(la, lb);
    CU_ASSERT(la > 1000);
    CU_ASSERT_EQUAL(memcmp(pa, pb, la), 0);
    free(pa);
    free(pb);
    sched_free(&x);
    sched_free(&y);
}

static void test_every_scenario_present(void)
{
    sim_schedule s;
    CU_ASSERT_EQUAL_FATAL(build(&s, 1, scenarios_all_mask(0), 400, 10, NULL), 0);
    size_t counts[SC_COUNT];
    sched_count_orders(&s, counts);
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (sc == SC_CRASH || sc == SC_PING || sc == SC_PAYER || sc == SC_PAYER_EDGE ||
            sc == SC_REFUNDS || sc == SC_V3_ATTACKS) { /* not in all */
            CU_ASSERT_EQUAL(counts[sc], 0);
        } else {
            CU_ASSERT(counts[sc] >= 4);
        }
    }
    CU_ASSERT(s.norders >= 400);
    /* Tasks are sorted by release time within each phase and fit its budget. */
    for (size_t p = 0; p < s.nphases; p++) {
        const sched_phase *ph = &s.phases[p];
        for (size_t t = ph->first_task + 1; t < ph->first_task + ph->ntasks; t++)
            CU_ASSERT_FATAL(s.tasks[t - 1].start_ms <= s.tasks[t].start_ms);
        CU_ASSERT(ph->mock_config[0] == '{');
    }
    /* Every task's order is valid; copies of double-click are 2..10. */
    for (size_t t = 0; t < s.ntasks; t++) {
        const sched_task *k = &s.tasks[t];
        CU_ASSERT_FATAL(k->order >= 0 && (size_t)k->order < s.norders);
        CU_ASSERT(k->max_attempts >= 1);
        if (k->kind == TASK_BURST) {
            CU_ASSERT(k->copies >= 2 && k->copies <= 10);
        }
        if (k->token_use == TOK_SLOT) {
            CU_ASSERT_FATAL(k->token >= 0 && (size_t)k->token < s.ntokens);
        }
    }
    sched_free(&s);
}

static void test_order_numbers(void)
{
    sim_schedule s;
    CU_ASSERT_EQUAL_FATAL(build(&s, 99, scenarios_all_mask(0), 120, 0, NULL), 0);
    char no[64];
    const char *prefixes[] = { "s1234567", "X", "abcdefABCDEF" };
    for (size_t p = 0; p < 3; p++) {
        for (size_t i = 0; i < s.norders; i++) {
            CU_ASSERT_EQUAL_FATAL(sched_order_no(&s, prefixes[p], i, no, sizeof(no)), 0);
            CU_ASSERT_FATAL(order_no_valid(no));
            CU_ASSERT(strlen(no) <= 32);
            CU_ASSERT_EQUAL_FATAL(sched_order_lookup(&s, prefixes[p], no), (long)i);
        }
    }
    CU_ASSERT_EQUAL(sched_order_lookup(&s, "s1234567", "s1234568dc00000abcde"), -1);
    CU_ASSERT_EQUAL(sched_order_lookup(&s, "s1234567", "s1234567"), -1);
    CU_ASSERT_EQUAL(sched_order_lookup(&s, "s1234567", "s1234567zzzzzzzzzzzz"), -1);
    CU_ASSERT_EQUAL(sched_order_no(&s, "p", s.norders, no, sizeof(no)), -1);
    CU_ASSERT_EQUAL(sched_order_no(&s, "p", 0, no, 5), -1);
    /* The digest does not depend on any prefix: it never sees one. */
    sched_free(&s);
}

static void test_amount_text(void)
{
    char out[16];
    CU_ASSERT_STRING_EQUAL(sched_amount_text(1230, AMT_FIXED2, out), "12.30");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(1230, AMT_SHORT, out), "12.3");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(700, AMT_SHORT, out), "7");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(50, AMT_SHORT, out), "0.5");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(1, AMT_SHORT, out), "0.01");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(1, AMT_FIXED2, out), "0.01");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(MONEY_MAX_FEN, AMT_SHORT, out), "99999999.99");
    CU_ASSERT_STRING_EQUAL(sched_amount_text(MONEY_MAX_FEN, AMT_FIXED2, out), "99999999.99");
    /* Every generated amount parses back to its value in both styles. */
    sim_schedule s;
    CU_ASSERT_EQUAL_FATAL(build(&s, 5, scenarios_all_mask(0), 300, 0, NULL), 0);
    for (size_t i = 0; i < s.norders; i++) {
        int64_t fen;
        for (int st = 0; st < 2; st++) {
            CU_ASSERT_EQUAL_FATAL(
                money_parse_yuan(sched_amount_text(s.orders[i].amount_fen, st, out), &fen), 0);
            CU_ASSERT_EQUAL_FATAL(fen, s.orders[i].amount_fen);
        }
        CU_ASSERT(s.orders[i].user_id >= 1);
    }
    sched_free(&s);
}

static void test_scenario_names(void)
{
    unsigned mask;
    char err[256];
    for (int sc = 0; sc < SC_COUNT; sc++)
        CU_ASSERT_EQUAL(sched_scenario_parse(sched_scenario_name(sc)), sc);
    CU_ASSERT_EQUAL(sched_scenario_parse("nope"), -1);
    CU_ASSERT_EQUAL(scenarios_parse("all", 0, &mask, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(mask, scenarios_all_mask(0));
    CU_ASSERT_FALSE(mask & (1u << SC_CRASH));
    CU_ASSERT_FALSE(mask & (1u << SC_PING));
    CU_ASSERT_EQUAL(scenarios_parse("all", 1, &mask, err, sizeof(err)), 0);
    CU_ASSERT_TRUE(mask & (1u << SC_CRASH));
    CU_ASSERT_EQUAL(scenarios_parse("crash", 0, &mask, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--chaos-cmd"));
    CU_ASSERT_EQUAL(scenarios_parse("double-click,ping", 0, &mask, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(mask, (1u << SC_DOUBLE_CLICK) | (1u << SC_PING));
    CU_ASSERT_EQUAL(scenarios_parse("double-click,,ping", 0, &mask, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(scenarios_parse("", 0, &mask, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(scenarios_parse("bogus", 0, &mask, err, sizeof(err)), -1);
}

static void test_mock_json(void)
{
    sim_mock_knobs k;
    char out[SCHED_MOCK_CONFIG_MAX], err[256];
    scenarios_mock_defaults(&k);
    k.timeout_after_charge_rate = 0.1;
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, NULL, out, sizeof(out), err, sizeof(err)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"dedupe\":true"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"timeout_after_charge_rate\":0.1"));
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, "{\"dedupe\":false,\"hold_max_ms\":5}", out,
                                        sizeof(out), err, sizeof(err)),
                    0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"dedupe\":false"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"hold_max_ms\":5"));
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, "[1]", out, sizeof(out), err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, "{bad", out, sizeof(out), err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, NULL, out, 20, err, sizeof(err)), -1);
}

/* The generators set endpoints[0..EP_COUNT): the ones the table writes. */
static void test_phase_endpoints_are_the_tables(void)
{
    sim_mock_knobs k;
    char out[SCHED_MOCK_CONFIG_MAX], err[256];
    for (int e = 0; e < EP_COUNT; e++)
        CU_ASSERT_TRUE(mock_endpoint_in_phase(e));
    for (int e = EP_COUNT; e < MOCK_EP_COUNT; e++)
        CU_ASSERT_FALSE(mock_endpoint_in_phase(e));
    scenarios_mock_defaults(&k);
    k.endpoints[MOCK_EP_REVERSE].error_rate = 0.5; /* not a phase's: not written */
    k.journal = false;
    CU_ASSERT_EQUAL(scenarios_mock_json(&k, NULL, out, sizeof(out), err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "reverse"));
    CU_ASSERT_PTR_NULL(strstr(out, "journal"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"downloadbill\":{"));
}

/* A top-level integer knob of a phase's mock config. */
static long long knob(const sched_phase *ph, const char *name)
{
    json_t *j = json_loads(ph->mock_config, 0, NULL);
    long long v = (long long)json_integer_value(json_object_get(j, name));
    json_decref(j);
    return v;
}

static int build_nemesis(sim_schedule *s, uint64_t seed, int chaos, const sim_windows *w)
{
    char err[256];
    sim_plan p = { .mask = 1u << SC_NEMESIS,
                   .orders = 200,
                   .duration_s = 30,
                   .concurrency = 8,
                   .chaos = chaos,
                   .chaos_every_s = 5,
                   .windows = w };
    sched_init(s, seed);
    return scenarios_build(s, &p, err, sizeof(err));
}

/* The nemesis aims at the windows it is given: one episode with the nets
 * removed holds its calls past the lease, the windows are in the digest,
 * and chaos runs are planned only with a chaos command. */
static void test_nemesis(void)
{
    sim_windows w;
    windows_defaults(&w);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sim_schedule s;
        CU_ASSERT_EQUAL_FATAL(build_nemesis(&s, seed, 1, &w), 0);
        int nets_off = 0, kills = 0, strays = 0;
        for (size_t p = 0; p < s.nphases; p++) {
            const sched_phase *ph = &s.phases[p];
            CU_ASSERT_EQUAL(ph->scenario, SC_NEMESIS);
            CU_ASSERT(ph->faults[0] != '\0');
            if (strstr(ph->faults, "NETS REMOVED") != NULL) {
                nets_off++;
                CU_ASSERT_PTR_NOT_NULL(strstr(ph->mock_config, "\"dedupe\":false"));
                CU_ASSERT_PTR_NOT_NULL(strstr(ph->mock_config, "\"notify_enabled\":false"));
                CU_ASSERT(knob(ph, "latency_ms") > w.lease_ms);
            }
        }
        for (size_t k = 0; k < s.nchaos; k++)
            kills += s.chaos[k].action == CHAOS_KILL_WORKER;
        for (size_t t = 0; t < s.ntasks; t++)
            strays += s.tasks[t].kind == TASK_STRAY;
        CU_ASSERT_EQUAL(nets_off, 1);
        CU_ASSERT(kills >= 1);
        CU_ASSERT(strays >= 1);
        CU_ASSERT(s.phases[0].barrier);
        sched_free(&s);
        CU_ASSERT_EQUAL_FATAL(build_nemesis(&s, seed, 0, &w), 0);
        CU_ASSERT_EQUAL(s.nchaos, 0);
        sched_free(&s);
    }
    /* Other windows, another schedule; shorter windows, shorter holds. */
    char a[65], b[65];
    sim_schedule s;
    CU_ASSERT_EQUAL_FATAL(build_nemesis(&s, 7, 1, &w), 0);
    sched_digest(&s, a);
    sched_free(&s);
    sim_windows quick = w;
    quick.lease_ms = 4000;
    quick.gateway_timeout_ms = 1000;
    quick.reconcile_ms = 500;
    CU_ASSERT_EQUAL_FATAL(build_nemesis(&s, 7, 1, &quick), 0);
    sched_digest(&s, b);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    for (size_t p = 0; p < s.nphases; p++)
        CU_ASSERT(knob(&s.phases[p], "latency_ms") + knob(&s.phases[p], "jitter_ms") < 7000);
    sched_free(&s);
}

/* The crash scenario's chaos runs are planned, every period, with drawn actions. */
static void test_crash_chaos_plan(void)
{
    char err[256];
    sim_schedule s;
    sim_plan p = { .mask = 1u << SC_CRASH,
                   .orders = 50,
                   .duration_s = 10,
                   .concurrency = 8,
                   .chaos = 1,
                   .chaos_every_s = 2,
                   .mock_override = NULL };
    sched_init(&s, 3);
    CU_ASSERT_EQUAL_FATAL(scenarios_build(&s, &p, err, sizeof(err)), 0);
    CU_ASSERT(s.nchaos >= 6);
    for (size_t k = 0; k < s.nchaos; k++) {
        CU_ASSERT_EQUAL(s.chaos[k].at_ms, 2000u * (uint32_t)(k + 1));
        CU_ASSERT(s.chaos[k].action != CHAOS_RESTART_MARIADB);
    }
    sched_free(&s);
}

/* v3-attacks: every FORGE_V3_* kind against declined or never-submitted
 * targets, signed with the first platform key before the rotation and the
 * second after it; the rotation is the last phase's mock config. */
static void test_v3_attacks(void)
{
    sim_schedule s;
    int seen[FORGE_KIND_COUNT] = { 0 };
    CU_ASSERT_EQUAL_FATAL(build(&s, 7, 1u << SC_V3_ATTACKS, 40, 6, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(s.nphases, 3);
    CU_ASSERT(s.phases[0].exclusive);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.phases[0].mock_config, "\"v3_platform_rotation\":0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.phases[2].mock_config, "\"v3_platform_rotation\":2"));
    for (size_t p = 0; p < s.nphases; p++)
        for (size_t t = s.phases[p].first_task; t < s.phases[p].first_task + s.phases[p].ntasks;
             t++) {
            const sched_task *k = &s.tasks[t];
            if (k->kind != TASK_FORGE)
                continue;
            CU_ASSERT(sched_forge_is_v3(k->forge));
            CU_ASSERT_EQUAL(k->aux_order, p == 2 ? 1 : 0);
            CU_ASSERT(s.orders[k->order].flags & ORD_FORGE_TARGET);
            seen[k->forge]++;
        }
    for (int f = 0; f < FORGE_KIND_COUNT; f++)
        CU_ASSERT_EQUAL(seen[f] > 0, sched_forge_is_v3(f));
    CU_ASSERT_STRING_EQUAL(sched_forge_name(FORGE_V3_TAG_SIGNED), "v3-tag-signed");
    CU_ASSERT_STRING_EQUAL(sched_forge_name(FORGE_KIND_COUNT), "?");
    sched_free(&s);
}

int main(void)
{
    static const cu_test tests[] = {
        { "v3-attacks draws every v3 forgery and rotates the platform key", test_v3_attacks },
        { "the same seed gives the same digest", test_same_seed_same_digest },
        { "the same seed gives the same schedule", test_same_seed_same_schedule },
        { "every scenario is in the full schedule", test_every_scenario_present },
        { "order numbers are valid and distinct", test_order_numbers },
        { "amounts are written as yuan text", test_amount_text },
        { "every scenario has its name and code", test_scenario_names },
        { "the mock config is written as JSON", test_mock_json },
        { "a phase writes the endpoints and knobs the table flags, no others",
          test_phase_endpoints_are_the_tables },
        { "the nemesis aims at the windows it is given", test_nemesis },
        { "crash chaos runs are planned every period", test_crash_chaos_plan },
    };
    return CU_SUITE_RUN("sim_schedule", NULL, NULL, tests);
}
