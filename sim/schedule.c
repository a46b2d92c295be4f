/* schedule.c - the schedule's storage, order numbering, canonical text form
 * and digest. Every line of the text form is a pure function of the
 * schedule, so equal schedules print and hash the same. */
#include "schedule.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

#define SCHED_SCENARIO_NAME(id, name, code, weight, generate, flags) [SC_##id] = name,
#define SCHED_SCENARIO_CODE(id, name, code, weight, generate, flags) [SC_##id] = code,
static const char *const sched_names[SC_COUNT] = { SIM_SCENARIOS(SCHED_SCENARIO_NAME) };
static const char *const sched_codes[SC_COUNT] = { SIM_SCENARIOS(SCHED_SCENARIO_CODE) };
#undef SCHED_SCENARIO_NAME
#undef SCHED_SCENARIO_CODE
static const char *const sched_forge_names[FORGE_KIND_COUNT] = {
    "bad-sign", "wrong-fee",     "replayed-txn",    "unknown-order", "wrong-mch",
    "v3-stale", "v3-new-nonce",  "v3-wrong-serial", "v3-ciphertext", "v3-ciphertext-signed",
    "v3-tag",   "v3-tag-signed",
};
static const char *const sched_chaos_names[CHAOS_ACTION_COUNT] = {
    "kill-worker", "restart-redis", "restart-mock", "restart-mariadb", "pause-worker",
};
static const char sched_b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";

const char *sched_scenario_name(int scenario)
{
    return (scenario >= 0 && scenario < SC_COUNT) ? sched_names[scenario] : "unattributed";
}

const char *sched_scenario_code(int scenario)
{
    return (scenario >= 0 && scenario < SC_COUNT) ? sched_codes[scenario] : "zz";
}

int sched_scenario_parse(const char *name)
{
    for (int i = 0; i < SC_COUNT; i++)
        if (strcmp(name, sched_names[i]) == 0)
            return i;
    return -1;
}

const char *sched_forge_name(int kind)
{
    return kind >= 0 && kind < FORGE_KIND_COUNT ? sched_forge_names[kind] : "?";
}

int sched_forge_is_v3(int kind)
{
    return kind >= FORGE_V3_STALE && kind < FORGE_KIND_COUNT;
}

void sched_init(sim_schedule *s, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->seed = seed;
}

void sched_free(sim_schedule *s)
{
    if (s == NULL)
        return;
    free(s->orders);
    free(s->tokens);
    free(s->tasks);
    free(s->phases);
    free(s->chaos);
    memset(s, 0, sizeof(*s));
}

/* Grows *arr (elements of size sz) so one more fits. Returns 0 or -1. */
static int sched_grow(void **arr, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, ncap * sz);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

int sched_add_order(sim_schedule *s, rng_t *r, int scenario, int64_t user_id, int64_t amount_fen,
                    int style, unsigned flags)
{
    if (s->norders >= SCHED_MAX_ORDERS ||
        sched_grow((void **)&s->orders, &s->cap_orders, s->norders, sizeof(sched_order)) < 0)
        return -1;
    sched_order *o = &s->orders[s->norders];
    memset(o, 0, sizeof(*o));
    const char *code = sched_scenario_code(scenario);
    size_t idx = s->norders;
    o->suffix[0] = code[0];
    o->suffix[1] = code[1];
    for (int i = 6; i >= 2; i--) {
        o->suffix[i] = sched_b36[idx % 36];
        idx /= 36;
    }
    for (int i = 7; i < SCHED_SUFFIX_LEN; i++)
        o->suffix[i] = sched_b36[rng_below(r, 36)];
    o->suffix[SCHED_SUFFIX_LEN] = '\0';
    o->user_id = user_id;
    o->amount_fen = amount_fen;
    o->scenario = (uint8_t)scenario;
    o->style = (uint8_t)style;
    o->flags = (uint8_t)flags;
    return (int)s->norders++;
}

int sched_add_token(sim_schedule *s, int scenario, int64_t user_id)
{
    if (s->nphases == 0 ||
        sched_grow((void **)&s->tokens, &s->cap_tokens, s->ntokens, sizeof(sched_token)) < 0)
        return -1;
    s->tokens[s->ntokens].user_id = user_id;
    s->tokens[s->ntokens].scenario = (uint8_t)scenario;
    s->phases[s->nphases - 1].ntokens++;
    return (int)s->ntokens++;
}

sched_task *sched_add_task(sim_schedule *s, sched_task_kind kind)
{
    if (s->nphases == 0 ||
        sched_grow((void **)&s->tasks, &s->cap_tasks, s->ntasks, sizeof(sched_task)) < 0)
        return NULL;
    sched_task *t = &s->tasks[s->ntasks++];
    memset(t, 0, sizeof(*t));
    t->kind = (uint8_t)kind;
    t->order = -1;
    t->token = -1;
    t->aux_order = -1;
    t->max_attempts = 1;
    s->phases[s->nphases - 1].ntasks++;
    return t;
}

int sched_begin_phase(sim_schedule *s, int scenario, const char *label, const char *mock_config,
                      uint32_t budget_ms, int chaos)
{
    if (strlen(mock_config) >= SCHED_MOCK_CONFIG_MAX ||
        sched_grow((void **)&s->phases, &s->cap_phases, s->nphases, sizeof(sched_phase)) < 0)
        return -1;
    sched_phase *p = &s->phases[s->nphases++];
    memset(p, 0, sizeof(*p));
    p->scenario = (uint8_t)scenario;
    p->chaos = (uint8_t)(chaos != 0);
    snprintf(p->label, sizeof(p->label), "%s", label);
    snprintf(p->mock_config, sizeof(p->mock_config), "%s", mock_config);
    p->budget_ms = budget_ms;
    p->first_token = s->ntokens;
    p->first_task = s->ntasks;
    return 0;
}

int sched_add_chaos(sim_schedule *s, sched_chaos_action action, uint32_t at_ms)
{
    if (s->nphases == 0 || (int)action < 0 || action >= CHAOS_ACTION_COUNT ||
        sched_grow((void **)&s->chaos, &s->cap_chaos, s->nchaos, sizeof(sched_chaos)) < 0)
        return -1;
    sched_chaos c = { .phase = (uint32_t)(s->nphases - 1),
                      .at_ms = at_ms,
                      .action = (uint8_t)action };
    /* Keep (phase, at_ms) order: events are added phase by phase. */
    size_t i = s->nchaos;
    while (i > 0 && s->chaos[i - 1].phase == c.phase && s->chaos[i - 1].at_ms > at_ms) {
        s->chaos[i] = s->chaos[i - 1];
        i--;
    }
    s->chaos[i] = c;
    s->nchaos++;
    return 0;
}

const char *sched_chaos_name(int action)
{
    return (action >= 0 && action < CHAOS_ACTION_COUNT) ? sched_chaos_names[action] : "?";
}

void sched_set_faults(sim_schedule *s, const char *faults)
{
    if (s->nphases > 0)
        snprintf(s->phases[s->nphases - 1].faults, SCHED_FAULTS_MAX, "%s", faults);
}

void sched_mark_barriers(sim_schedule *s)
{
    for (size_t p = 0; p < s->nphases; p++) {
        sched_phase *ph = &s->phases[p];
        const sched_phase *prev = p > 0 ? &s->phases[p - 1] : NULL;
        ph->barrier = (uint8_t)(prev == NULL || ph->budget_ms == 0 || prev->budget_ms == 0 ||
                                ph->chaos || prev->chaos || ph->exclusive || prev->exclusive ||
                                ph->scenario == SC_PING || prev->scenario == SC_PING ||
                                (ph->scenario == SC_NEMESIS && prev->scenario != SC_NEMESIS));
    }
}

/* Orders tasks by release time; ties are resolved by the stable merge below. */
static int sched_task_cmp(const sched_task *x, const sched_task *y)
{
    if (x->start_ms != y->start_ms)
        return x->start_ms < y->start_ms ? -1 : 1;
    return 0;
}

void sched_sort_tasks(sim_schedule *s)
{
    /* A stable merge sort of indices: equal release times keep generation
     * order, so the result is a function of the schedule alone. */
    for (size_t p = 0; p < s->nphases; p++) {
        sched_phase *ph = &s->phases[p];
        if (ph->ntasks < 2)
            continue;
        sched_task *base = &s->tasks[ph->first_task];
        size_t n = ph->ntasks;
        size_t *idx = malloc(n * sizeof(*idx));
        sched_task *copy = malloc(n * sizeof(*copy));
        if (idx == NULL || copy == NULL) {
            free(idx);
            free(copy);
            continue; /* left unsorted: the driver sleeps per task anyway */
        }
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        size_t *tmp = malloc(n * sizeof(*tmp));
        if (tmp != NULL) {
            for (size_t width = 1; width < n; width *= 2) {
                for (size_t lo = 0; lo < n; lo += 2 * width) {
                    size_t mid = lo + width < n ? lo + width : n;
                    size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
                    size_t i = lo, j = mid, k = lo;
                    while (i < mid && j < hi)
                        tmp[k++] = sched_task_cmp(&base[idx[j]], &base[idx[i]]) < 0 ? idx[j++]
                                                                                    : idx[i++];
                    while (i < mid)
                        tmp[k++] = idx[i++];
                    while (j < hi)
                        tmp[k++] = idx[j++];
                }
                memcpy(idx, tmp, n * sizeof(*idx));
            }
            for (size_t i = 0; i < n; i++)
                copy[i] = base[idx[i]];
            memcpy(base, copy, n * sizeof(*copy));
            free(tmp);
        }
        free(idx);
        free(copy);
    }
}

char *sched_amount_text(int64_t fen, int style, char out[16])
{
    if (fen < 0)
        fen = 0;
    if (fen > MONEY_MAX_FEN)
        fen = MONEY_MAX_FEN;
    if (style != AMT_SHORT) {
        money_format(fen, out);
        return out;
    }
    unsigned yuan = (unsigned)(fen / 100), cents = (unsigned)(fen % 100);
    if (cents == 0)
        snprintf(out, 16, "%u", yuan % 100000000u);
    else if (cents % 10 == 0)
        snprintf(out, 16, "%u.%u", yuan % 100000000u, (cents / 10) % 10u);
    else
        snprintf(out, 16, "%u.%02u", yuan % 100000000u, cents % 100u);
    return out;
}

int sched_order_no(const sim_schedule *s, const char *prefix, size_t order, char *out,
                   size_t outlen)
{
    if (order >= s->norders)
        return -1;
    int n = snprintf(out, outlen, "%s%s", prefix, s->orders[order].suffix);
    return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

long sched_order_lookup(const sim_schedule *s, const char *prefix, const char *order_no)
{
    size_t pl = strlen(prefix);
    if (strncmp(order_no, prefix, pl) != 0)
        return -1;
    const char *suf = order_no + pl;
    if (strlen(suf) != SCHED_SUFFIX_LEN)
        return -1;
    size_t idx = 0;
    for (int i = 2; i <= 6; i++) {
        const char *d = strchr(sched_b36, suf[i]);
        if (d == NULL || suf[i] == '\0')
            return -1;
        idx = idx * 36 + (size_t)(d - sched_b36);
    }
    if (idx >= s->norders || strcmp(s->orders[idx].suffix, suf) != 0)
        return -1;
    return (long)idx;
}

typedef void (*sched_line_fn)(void *ctx, const char *line, size_t len);

static void sched_emit(const sim_schedule *s, sched_line_fn fn, void *ctx)
{
    char line[1024];
    int n;

#define SCHED_EMIT(...)                                                                            \
    do {                                                                                           \
        n = snprintf(line, sizeof(line), __VA_ARGS__);                                             \
        if (n > 0)                                                                                 \
            fn(ctx, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);                \
    } while (0)

    SCHED_EMIT("idempay-sim schedule v2\n");
    SCHED_EMIT("seed %llu\n", (unsigned long long)s->seed);
    SCHED_EMIT("params %s\n", s->params);
    for (size_t i = 0; i < s->norders; i++) {
        const sched_order *o = &s->orders[i];
        SCHED_EMIT("order %zu %s sc=%s user=%lld fen=%lld style=%u flags=%u\n", i, o->suffix,
                   sched_scenario_name(o->scenario), (long long)o->user_id,
                   (long long)o->amount_fen, o->style, o->flags);
    }
    for (size_t p = 0; p < s->nphases; p++) {
        const sched_phase *ph = &s->phases[p];
        SCHED_EMIT("phase %zu sc=%s label=%s budget=%u chaos=%u excl=%u barrier=%u tokens=%zu+%zu "
                   "tasks=%zu+%zu mock=%s\n",
                   p, sched_scenario_name(ph->scenario), ph->label, ph->budget_ms, ph->chaos,
                   ph->exclusive, ph->barrier, ph->first_token, ph->ntokens, ph->first_task,
                   ph->ntasks, ph->mock_config);
        if (ph->faults[0])
            SCHED_EMIT("faults %zu %s\n", p, ph->faults);
        for (size_t k = 0; k < s->nchaos; k++)
            if (s->chaos[k].phase == p)
                SCHED_EMIT("chaos phase=%zu at=%u action=%s\n", p, s->chaos[k].at_ms,
                           sched_chaos_name(s->chaos[k].action));
        for (size_t k = ph->first_token; k < ph->first_token + ph->ntokens; k++)
            SCHED_EMIT("token %zu user=%lld sc=%s\n", k, (long long)s->tokens[k].user_id,
                       sched_scenario_name(s->tokens[k].scenario));
        for (size_t k = ph->first_task; k < ph->first_task + ph->ntasks; k++) {
            const sched_task *t = &s->tasks[k];
            SCHED_EMIT("task %zu kind=%u order=%d token=%d use=%u style=%u idem=%u poll=%u "
                       "att=%u copies=%u forge=%u rd=%u exp=%u copy=%u/%u aux=%d vu=%lld vf=%lld "
                       "start=%u gap=%u to=%u bo=%u pat=%u js=%llu hasty=%u beh=%u\n",
                       k, t->kind, t->order, t->token, t->token_use, t->style, t->idem, t->poll,
                       t->max_attempts, t->copies, t->forge, t->retry_declined, t->expect_expired,
                       t->copy_index, t->copy_count, t->aux_order, (long long)t->variant_user,
                       (long long)t->variant_fen, t->start_ms, t->gap_ms, t->timeout_ms,
                       t->backoff_ms, t->patience_ms, (unsigned long long)t->jitter_seed, t->hasty,
                       t->behaviour);
            if (t->flow != 0 || t->payer != 0 || t->pay_delay_ms != 0) /* real flows only: */
                SCHED_EMIT("flow %zu %u payer=%u delay=%u\n", k, t->flow, t->payer,
                           t->pay_delay_ms); /* today's tasks print as before */
        }
    }
#undef SCHED_EMIT
}

static void sched_line_to_file(void *ctx, const char *line, size_t len)
{
    fwrite(line, 1, len, (FILE *)ctx);
}

static void sched_line_to_hash(void *ctx, const char *line, size_t len)
{
    EVP_MD_CTX *md = ctx;
    EVP_DigestUpdate(md, line, len);
}

void sched_print(const sim_schedule *s, FILE *out)
{
    sched_emit(s, sched_line_to_file, out);
}

int sched_digest(const sim_schedule *s, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int rc = -1;
    out[0] = '\0';
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        return -1;
    if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
        goto done;
    sched_emit(s, sched_line_to_hash, ctx);
    if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
        goto done;
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    rc = 0;
done:
    EVP_MD_CTX_free(ctx);
    return rc;
}

void sched_count_orders(const sim_schedule *s, size_t counts[SC_COUNT])
{
    memset(counts, 0, sizeof(size_t) * SC_COUNT);
    for (size_t i = 0; i < s->norders; i++)
        if (s->orders[i].scenario < SC_COUNT)
            counts[s->orders[i].scenario]++;
}

void sched_chaos_of(const sim_schedule *s, size_t first, size_t last, const sched_chaos **ev,
                    size_t *n)
{
    size_t i = 0;
    while (i < s->nchaos && s->chaos[i].phase < first)
        i++;
    *ev = s->chaos + i;
    *n = 0;
    while (i + *n < s->nchaos && s->chaos[i + *n].phase < last)
        (*n)++;
}
