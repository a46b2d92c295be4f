/* scenarios.c - the scenario table and the mix: which scenarios a
 * --scenario list names, each one's share of the orders and time, and the
 * schedule built from them, generator by generator (scenario_clicks.c,
 * scenario_misuse.c, scenario_faults.c, scenario_payer.c, scenario_edge.c,
 * nemesis.c). A generator only draws from its own PRNG, so adding a
 * scenario to a run does not change another's draws (only the order
 * indices in the numbers). Times are in ms from the start of the phase; a
 * phase's releases are spread over its budget. Also the mock knobs every
 * phase sends, as JSON (common/mock_knobs' table). */
#include "scenarios.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "gen.h"
#include "mock_admin.h"
#include "rng.h"

/* A scenario's descriptor: its row of SIM_SCENARIOS (scenario_table.h). */
typedef struct {
    const char *name;
    unsigned weight;
    sc_generator generate;
    unsigned flags;
} sc_descriptor;

#define SC_DESCRIPTOR_ROW(id, name, code, weight, generate, flags)                                 \
    [SC_##id] = { name, weight, generate, flags },
static const sc_descriptor sc_table[SC_COUNT] = { SIM_SCENARIOS(SC_DESCRIPTOR_ROW) };
#undef SC_DESCRIPTOR_ROW

unsigned scenarios_weight(int scenario)
{
    return scenario >= 0 && scenario < SC_COUNT ? sc_table[scenario].weight : 0;
}

unsigned scenarios_flags(int scenario)
{
    return scenario >= 0 && scenario < SC_COUNT ? sc_table[scenario].flags : 0;
}

unsigned scenarios_all_mask(int chaos)
{
    unsigned m = 0;
    for (int i = 0; i < SC_COUNT; i++)
        if ((sc_table[i].flags & SCF_IN_ALL) && (chaos || !(sc_table[i].flags & SCF_NEEDS_CHAOS)))
            m |= 1u << i;
    return m;
}

/* "all, double-click, ...": every name --scenario knows, into out. */
static void sc_known_names(char *out, size_t outlen)
{
    size_t used = (size_t)snprintf(out, outlen, "all");
    for (int i = 0; i < SC_COUNT && used < outlen; i++)
        used += (size_t)snprintf(out + used, outlen - used, ", %s", sc_table[i].name);
}

/* The scenario bit of one name of a --scenario list. 0 or -1 (err set). */
static int sc_parse_one(const char *name, int chaos, unsigned *mask, char *err, size_t errlen)
{
    if (strcmp(name, "all") == 0) {
        *mask |= scenarios_all_mask(chaos);
        return 0;
    }
    int sc = sched_scenario_parse(name);
    if (sc < 0) {
        char known[512];
        sc_known_names(known, sizeof(known));
        snprintf(err, errlen, "--scenario: unknown scenario '%s' (known: %s)", name, known);
        return -1;
    }
    if ((sc_table[sc].flags & SCF_NEEDS_CHAOS) && !chaos) {
        snprintf(err, errlen,
                 "--scenario %s needs --chaos-cmd CMD (and --chaos-every S): it "
                 "kills service processes while requests are in flight",
                 name);
        return -1;
    }
    *mask |= 1u << sc;
    return 0;
}

int scenarios_parse(const char *list, int chaos, unsigned *mask, char *err, size_t errlen)
{
    char name[64];
    unsigned m = 0;
    const char *p = list;
    if (list == NULL || *list == '\0') {
        snprintf(err, errlen, "--scenario needs a name");
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof(name)) {
            snprintf(err, errlen, "--scenario: empty or overlong name in '%s'", list);
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (sc_parse_one(name, chaos, &m, err, errlen) < 0)
            return -1;
        p += len;
        if (*p == ',')
            p++;
    }
    *mask = m;
    return 0;
}

void scenarios_mock_defaults(sim_mock_knobs *k)
{
    mock_config_defaults(k);
}

int scenarios_mock_json(const sim_mock_knobs *k, const char *override, char *out, size_t outlen,
                        char *err, size_t errlen)
{
    int rc = -1;
    json_t *ov = NULL;
    json_t *o = mock_config_json(k, MOCK_KNOB_PHASE);
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (override != NULL && *override != '\0') {
        json_error_t je;
        ov = json_loads(override, JSON_REJECT_DUPLICATES, &je);
        if (ov == NULL || !json_is_object(ov)) {
            snprintf(err, errlen, "--mock-config: not a JSON object (%s)",
                     ov == NULL ? je.text : "another JSON type");
            goto done;
        }
        if (json_object_update(o, ov) != 0) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
    }
    if (mock_admin_text(o, out, outlen) < 0) {
        snprintf(err, errlen, "mock config too long");
        goto done;
    }
    rc = 0;
done:
    json_decref(ov);
    json_decref(o);
    return rc;
}

/* The flags that shape the schedule (and, with the nemesis, the windows
 * it aims at), for the digest. */
void scenarios_params(const sim_plan *plan, char *out, size_t outlen)
{
    char wtext[160] = "";
    if (plan->mask & (1u << SC_NEMESIS)) {
        sim_windows w;
        if (plan->windows != NULL)
            w = *plan->windows;
        else
            windows_defaults(&w);
        windows_describe(&w, wtext, sizeof(wtext));
    }
    snprintf(out, outlen,
             "mask=%u orders=%zu duration_ms=%llu concurrency=%d chaos=%d chaos_every_ms=%llu%s%s",
             plan->mask, plan->orders, (unsigned long long)(plan->duration_s * 1000.0),
             plan->concurrency, plan->chaos,
             (unsigned long long)(plan->chaos ? plan->chaos_every_s * 1000.0 : 0),
             wtext[0] ? " windows: " : "", wtext);
}

int scenarios_build(sim_schedule *s, const sim_plan *plan, char *err, size_t errlen)
{
    /* Orders are shared by weight; time too, except for the nemesis, whose
     * length follows the service's windows. */
    unsigned wsum = 0, osum = 0;
    int last_order_sc = -1;
    for (int sc = 0; sc < SC_COUNT; sc++)
        if (plan->mask & (1u << sc)) {
            unsigned f = sc_table[sc].flags;
            wsum += f & SCF_OWN_LENGTH ? 0 : sc_table[sc].weight;
            osum += f & SCF_NO_ORDERS ? 0 : sc_table[sc].weight;
            last_order_sc = f & SCF_NO_ORDERS ? last_order_sc : sc;
        }
    if (plan->mask == 0) {
        snprintf(err, errlen, "no scenario selected");
        return -1;
    }
    scenarios_params(plan, s->params, sizeof(s->params));
    size_t given = 0;
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!(plan->mask & (1u << sc)))
            continue;
        gen_ctx g;
        memset(&g, 0, sizeof(g));
        g.s = s;
        g.scenario = sc;
        g.override = plan->mock_override;
        g.client = plan->client;
        g.err = err;
        g.errlen = errlen;
        uint64_t st = s->seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(sc + 1));
        rng_seed(&g.rng, rng_splitmix64(&st));
        g.seed_state = rng_splitmix64(&st);

        unsigned w = sc_table[sc].weight;
        uint32_t budget = wsum ? (uint32_t)(plan->duration_s * 1000.0 * w / wsum) : 0;
        size_t orders = 0;
        if (!(sc_table[sc].flags & SCF_NO_ORDERS)) {
            orders = sc == last_order_sc ? (plan->orders > given ? plan->orders - given : 0)
                                         : plan->orders * w / osum;
            given += orders;
            if (orders < 4)
                orders = 4;
        }
        if (sc_table[sc].generate(&g, plan, orders, budget) < 0)
            return -1;
    }
    sched_sort_tasks(s);
    sched_mark_barriers(s);
    return 0;
}
