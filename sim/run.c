/* run.c - one simulator run (see run.h): each step is one function over a
 * run context, and every step leaves what it found (or why it could not
 * go on) in that context for the report. sim_run, at the end, reads as the
 * run goes: schedule -> preflight -> traffic -> settle -> judge -> report.
 * The progress thread lives inside run_traffic (started and joined there),
 * so nothing it reads is freed under it. */
#include "run.h"
#include "run_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "checker.h"
#include "dbread.h"
#include "dialect.h"
#include "forge.h"
#include "dev_merchant.h"
#include "driver.h"
#include "env.h"
#include "history.h"
#include "http_client.h"
#include "mock_admin.h"
#include "profile.h"
#include "readback.h"
#include "refund_obs.h"
#include "gateway_calls.h"
#include "report.h"
#include "results.h"
#include "progress.h"
#include "scenario_file.h"
#include "scenarios.h"
#include "pending.h"
#include "threshold.h"
#include "windows.h"

volatile int sim_stop;

/* Whether the run reads refunds (scenarios refunds, payer-edge, against
 * idempay's own API, whose merchant refund API they speak to). */
int run_wants_refunds(const run_ctx *c)
{
    return (c->mask & ((1u << SC_REFUNDS) | (1u << SC_PAYER_EDGE))) &&
           (c->a->profile == NULL || strcmp(c->a->profile->name, profile_builtin()->name) == 0);
}

/* The target profile of the run. */
const sim_profile *run_profile(const run_ctx *c)
{
    return c->a->profile != NULL ? c->a->profile : profile_builtin();
}

/* Where the human output goes: stdout, unless a report took it ('-'). */
static FILE *run_out(const sim_args *a)
{
    return a->human != NULL ? a->human : stdout;
}

/* ---- the schedule ---- */

static int run_schedule(run_ctx *c)
{
    const sim_args *a = c->a;
    FILE *out = run_out(a);
    char err[512] = "", v3note[96];
    if (a->scenario_file != NULL) {
        c->mask = scenario_file_mask(a->scenario_file);
    } else if (scenarios_parse(a->scenarios, a->chaos_cmd != NULL, &c->mask, err, sizeof(err)) <
               0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return 2;
    }
    c->mask = profile_runnable(run_profile(c), c->mask, c->skipped, sizeof(c->skipped));
    c->mask = dialect_runnable(c->mask, a->dialect, v3note, sizeof(v3note));
    if (v3note[0])
        fprintf(out, "skipped: %s\n", v3note);
    if (c->mask == 0) {
        fprintf(stderr, "idempay-sim: nothing to run through the target profile %s: %s\n",
                run_profile(c)->name, c->skipped[0] ? c->skipped : v3note);
        return 2;
    }
    windows_load(&c->w);
    windows_describe(&c->w, c->windows_text, sizeof(c->windows_text));
    sim_plan plan = { .mask = c->mask,
                      .orders = a->orders,
                      .duration_s = a->duration_s,
                      .concurrency = a->concurrency,
                      .chaos = a->chaos_cmd != NULL,
                      .chaos_every_s = a->chaos_every_s,
                      .mock_override = a->mock_override,
                      .windows = &c->w };
    sched_init(&c->s, a->seed);
    if ((a->scenario_file != NULL
             ? scenario_file_build(a->scenario_file, &plan, &c->s, err, sizeof(err))
             : scenarios_build(&c->s, &plan, err, sizeof(err))) < 0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return 2;
    }
    if (sched_digest(&c->s, c->digest) < 0) {
        fprintf(stderr, "idempay-sim: cannot compute the schedule digest\n");
        return 2;
    }
    fprintf(out, "seed: %llu\n", (unsigned long long)a->seed);
    fprintf(out, "schedule digest: %s\n", c->digest);
    if (c->skipped[0])
        fprintf(out, "skipped (the target profile %s lacks what they need): %s\n",
                run_profile(c)->name, c->skipped);
    if (a->print_schedule)
        sched_print(&c->s, out);
    fflush(out);
    c->need_gateway = (c->mask & ~(1u << SC_PING)) != 0;
    return 0;
}

static void run_banner(const run_ctx *c)
{
    const sim_args *a = c->a;
    FILE *out = run_out(a);
    if (a->quiet)
        return;
    fprintf(out, "order prefix: %s\n", a->prefix);
    fprintf(out, "target: %s%s%s\n", a->target, c->need_gateway ? "  gateway: " : "",
            c->need_gateway ? a->gateway : "");
    fprintf(out, "orders: %zu  tasks: %zu  phases: %zu  concurrency: %d  duration budget: %.0f s\n",
            c->s.norders, c->s.ntasks, c->s.nphases, a->concurrency, a->duration_s);
    if (c->mask & (1u << SC_NEMESIS))
        fprintf(out, "service windows (%s): %s\n",
                c->w.from_env ? "IDEMPAY_* environment and configuration file, defaults for"
                                " the rest"
                              : "the service's defaults: no IDEMPAY_* window set",
                c->windows_text);
    if (a->scenario_file_path != NULL)
        fprintf(out, "scenario file: %s\n", a->scenario_file_path);
    fflush(out);
}

/* ---- preflight: both ends answer before anything is sent ---- */

/* The target answers its profile's ping with 200 or, without a ping, a
 * read of an order that does not exist with anything but a 5xx. */
static int run_preflight_target(run_ctx *c)
{
    const sim_args *a = c->a;
    const sim_profile *prof = run_profile(c);
    profile_op op = prof->ep[PROF_OP_PING].present ? PROF_OP_PING : PROF_OP_READ;
    profile_values v = { .order_no = "preflight0" };
    profile_request req;
    char err[256];
    if (profile_request_build(prof, op, a->target, &v, &req, err, sizeof(err)) < 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "target %s: %s", a->target, err);
        return -1;
    }
    http_client *h = http_client_new(2000, 5000);
    int up = 0;
    for (int i = 0; i < 3 && h != NULL && !up; i++) {
        http_reply r;
        http_status hs = http_client_request(h, req.method, req.url, req.content_type,
                                             req.body_len ? req.body : NULL, req.body_len,
                                             req.headers, 5000, &r);
        up = hs == HTTP_OK && (op == PROF_OP_PING ? r.code == 200 : r.code < 500);
        if (!up) {
            snprintf(c->errbuf, sizeof(c->errbuf), "target %s is not answering: %s %s %s",
                     a->target, req.method, prof->ep[op].path,
                     hs != HTTP_OK        ? r.error
                     : op == PROF_OP_PING ? "did not return 200"
                                          : "answered 5xx");
            if (i < 2)
                sleep(1);
        }
    }
    http_client_free(h);
    return up ? 0 : -1;
}

static int run_preflight(run_ctx *c)
{
    const sim_args *a = c->a;
    char err[512];
    if (run_preflight_target(c) < 0)
        return -1;
    if (!c->need_gateway)
        return 0;
    if (mock_admin_reset(a->gateway, err, sizeof(err)) < 0 ||
        (c->mock_known = mock_admin_get_config(a->gateway, err, sizeof(err))) == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "gateway %s is not answering: %s", a->gateway, err);
        return -1;
    }
    return 0;
}

/* ---- the mock's config, cut to the knobs it knows ---- */

int run_configure(run_ctx *c, const char *config, char *err, size_t errlen)
{
    char full[2 * SCHED_MOCK_CONFIG_MAX], cut[2 * SCHED_MOCK_CONFIG_MAX], dropped[256];
    /* the knobs a phase does not name go back to the mock's defaults */
    if (mock_admin_with_defaults(config, c->mock_known, full, sizeof(full)) < 0 ||
        mock_admin_filter(full, c->mock_known, cut, sizeof(cut), dropped, sizeof(dropped)) < 0) {
        snprintf(err, errlen, "the phase's mock config is not a JSON object");
        return -1;
    }
    if (dropped[0] && strstr(c->mock_missing, dropped) == NULL) {
        size_t used = strlen(c->mock_missing);
        snprintf(c->mock_missing + used, sizeof(c->mock_missing) - used, "%s%s", used ? ", " : "",
                 dropped);
    }
    return mock_admin_configure(c->a->gateway, cut, err, errlen);
}

/* driver_phase_fn: the phase's mock config, before its requests. */
static int run_on_phase(void *arg, size_t phase)
{
    run_ctx *c = arg;
    const sched_phase *ph = &c->s.phases[phase];
    char err[512];
    progress_phase(c->prog, phase);
    if (!c->need_gateway)
        return 0;
    if (run_configure(c, ph->mock_config, err, sizeof(err)) < 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "cannot configure the mock for phase %s/%s: %s",
                 sched_scenario_name(ph->scenario), ph->label, err);
        c->phase_failed = 1;
        return -1;
    }
    return 0;
}

static int64_t run_clock(void *arg)
{
    return driver_now_us((const driver *)arg);
}

static int64_t run_phase_start(void *arg, size_t phase)
{
    return driver_phase_start_us((const driver *)arg, phase);
}

/* ---- traffic ---- */

static int run_start_driver(run_ctx *c)
{
    const sim_args *a = c->a;
    static char notify_url[512];
    char err[512];
    snprintf(notify_url, sizeof(notify_url), "%s", env_str("IDEMPAY_NOTIFY_URL", ""));
    if (notify_url[0] == '\0')
        snprintf(notify_url, sizeof(notify_url), "%s%s", forge_notify_base(a->target),
                 profile_has(run_profile(c), PROF_FEAT_CALLBACKS)
                     ? run_profile(c)->ep[PROF_OP_CALLBACK].path
                     : "/api/pay/callback/wechat");
    driver_config dc = { .target = a->target,
                         .prefix = a->prefix,
                         .sched = &c->s,
                         .workers = a->concurrency,
                         .gateway = c->need_gateway ? a->gateway : NULL,
                         .notify_url = notify_url,
                         .v3_forgeries = (c->mask & (1u << SC_V3_ATTACKS)) != 0,
                         .appid = env_str("IDEMPAY_WX_APPID", IDEMPAY_DEV_APPID),
                         .mch_id = env_str("IDEMPAY_WX_MCHID", IDEMPAY_DEV_MCHID),
                         .key = env_str("IDEMPAY_WX_KEY", IDEMPAY_DEV_KEY),
                         .stop = &sim_stop,
                         .profile = run_profile(c) };
    c->d = driver_new(&dc, err, sizeof(err));
    if (c->d == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "%s", err);
        return -1;
    }
    if (a->chaos_cmd != NULL && (c->ch = chaos_new(a->chaos_cmd, run_clock, c->d)) == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "out of memory");
        return -1;
    }
    c->phase_s = calloc(c->s.nphases ? c->s.nphases : 1, sizeof(*c->phase_s));
    if (c->phase_s == NULL) {
        snprintf(c->errbuf, sizeof(c->errbuf), "out of memory");
        return -1;
    }
    return 0;
}

static void run_traffic(run_ctx *c)
{
    const sim_schedule *s = &c->s;
    if (!c->a->quiet)
        c->prog = progress_start(c->d, s, stderr, isatty(STDERR_FILENO));
    int64_t t0 = driver_now_us(c->d);
    for (size_t p = 0; p < s->nphases && !sim_stop && !c->phase_failed;) {
        size_t last = p + 1;
        while (last < s->nphases && !s->phases[last].barrier)
            last++;
        const sched_chaos *ev;
        size_t nev;
        sched_chaos_of(s, p, last, &ev, &nev);
        if (c->ch != NULL && nev > 0)
            chaos_start(c->ch, ev, nev, run_phase_start, c->d);
        driver_run_segment(c->d, p, last, run_on_phase, c);
        chaos_stop(c->ch);
        p = last;
    }
    for (size_t p = 0; p < s->nphases; p++) {
        int64_t at = driver_phase_start_us(c->d, p);
        c->phase_s[p] = at < 0 ? -1.0 : (double)(at - t0) / 1e6;
    }
    c->rep.traffic_s = (double)(driver_now_us(c->d) - t0) / 1e6;
    progress_stop(c->prog);
    c->prog = NULL;
    if (c->ch != NULL)
        c->rep.chaos = chaos_events(c->ch, &c->rep.nchaos);
}

/* The history, now that no client runs any more, and the payer's charges. */
static int run_collect(run_ctx *c)
{
    if (driver_collect(c->d, &c->hist, &c->rep) < 0)
        return -1;
    history_sort(&c->hist);
    size_t n = 0;
    for (size_t i = 0; i < c->hist.n; i++) /* the customer's payments (payer) wait as strays */
        n += (c->hist.op[i].kind == OP_STRAY || c->hist.op[i].kind == OP_PAYER) &&
             c->hist.op[i].txn[0];
    c->strays = calloc(n ? n : 1, sizeof(*c->strays));
    if (c->strays == NULL)
        return -1;
    for (size_t i = 0; i < c->hist.n; i++)
        if ((c->hist.op[i].kind == OP_STRAY || c->hist.op[i].kind == OP_PAYER) &&
            c->hist.op[i].txn[0])
            c->strays[c->nstrays++] = c->hist.op[i].txn;
    return 0;
}

/* ---- judging and reporting ---- */

static int run_judge(run_ctx *c, sim_observations *obs)
{
    int rc;
    if (c->api_rows != NULL && c->charges != NULL) {
        if (checker_run(&c->s, obs, &c->chk) < 0 && c->error == NULL)
            c->error = "out of memory while checking";
        c->have_chk = 1;
    } else if (!c->need_gateway && c->error == NULL) {
        /* ping only: nothing to judge, but the table still lists the run */
        checker_run(&c->s, obs, &c->chk);
        c->have_chk = 1;
    }
    c->rep.chk = c->have_chk ? &c->chk : NULL;
    if (c->have_chk && c->chk.total > 0) {
        rc = 1;
    } else if (c->error != NULL) {
        rc = 2;
    } else if (c->have_chk && c->chk.unreadable > 0) {
        snprintf(c->errbuf, sizeof(c->errbuf), "%zu order(s) could not be read at the end",
                 c->chk.unreadable);
        c->error = c->errbuf;
        rc = 2;
    } else {
        rc = c->have_chk ? 0 : 2;
    }
    c->rep.exit_code = rc;
    c->rep.error = c->error;
    if (rc == 2 && c->error == NULL)
        c->rep.error = "the run could not be carried out";
    return rc;
}

/* The mock's journal of each order a printed witness names: what it did
 * with every call and notification of it. Best effort: a mock without a
 * journal, or one that does not answer, leaves the witness without it. */
static void run_journals(run_ctx *c)
{
    char no[64], err[256];
    if (!c->have_chk || c->chk.nv == 0 || !c->need_gateway || c->d == NULL)
        return;
    c->journal = calloc(c->s.norders ? c->s.norders : 1, sizeof(*c->journal));
    for (size_t i = 0; c->journal != NULL && i < c->chk.nv && i < c->a->max_witnesses; i++) {
        long o = c->chk.v[i].order;
        if (o < 0 || c->journal[o] != NULL ||
            sched_order_no(&c->s, c->a->prefix, (size_t)o, no, sizeof(no)) < 0)
            continue;
        if (mock_admin_journal(c->a->gateway, no, driver_origin_epoch_us(c->d), &c->journal[o], err,
                               sizeof(err)) < 0)
            break; /* the mock is gone: no journals */
    }
    c->rep.journal = c->journal;
}

/* --threshold: measured once the invariants are judged; a failed one makes
 * a run that held every invariant exit 3 (1 and 2 keep theirs). */
static int run_thresholds(run_ctx *c, int rc)
{
    const sim_args *a = c->a;
    if (a->nthresholds == 0)
        return rc;
    c->thresholds = calloc(a->nthresholds, sizeof(*c->thresholds));
    if (c->thresholds == NULL)
        return rc;
    memcpy(c->thresholds, a->thresholds, a->nthresholds * sizeof(*c->thresholds));
    c->rep.thresholds = c->thresholds;
    c->rep.nthresholds = a->nthresholds;
    if (rc == 2)
        return rc; /* nothing honest to measure: each is reported "not evaluated" */
    if (threshold_eval(c->thresholds, a->nthresholds, &c->rep) > 0 && rc == 0)
        rc = 3;
    c->rep.exit_code = rc;
    return rc;
}

/* Seconds since sim_run began. */
static double run_elapsed_s(const run_ctx *c)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - c->started.tv_sec) +
           (double)(now.tv_nsec - c->started.tv_nsec) / 1e9;
}

static int run_report(run_ctx *c, int rc)
{
    const sim_args *a = c->a;
    FILE *human = run_out(a);
    if (c->rep.total_s <= 0)
        c->rep.total_s = run_elapsed_s(c); /* the run never started: the time until it gave up */
    if (rc == 2 && c->d == NULL) {
        fprintf(stderr, "idempay-sim: %s\n", c->rep.error);
        report_result_line(human, rc, &a->seed);
    } else {
        report_human(&c->rep, human, a->max_witnesses);
    }
    fflush(human);
    struct {
        const char *path;
        int (*write)(const sim_report *, const char *);
    } out[3] = { { a->json_path, report_json },
                 { a->junit_path, report_junit },
                 { a->history_path, report_history } };
    for (int i = 0; i < 3; i++)
        if (out[i].path != NULL && out[i].write(&c->rep, out[i].path) < 0) {
            fprintf(stderr, "idempay-sim: cannot write %s: %s\n", out[i].path, strerror(errno));
            if (rc == 0)
                rc = 2;
        }
    return rc;
}

static void run_free(run_ctx *c)
{
    free(c->phase_start_us);
    refund_obs_free(&c->refunds);
    checker_result_free(&c->chk);
    chaos_free(c->ch);
    driver_free(c->d);
    history_free(&c->hist);
    free(c->api_rows);
    free(c->db_rows);
    free(c->pending);
    free(c->phase_s);
    free(c->charges);
    free(c->calls);
    free(c->strays);
    for (size_t i = 0; c->journal != NULL && i < c->s.norders; i++)
        free(c->journal[i]);
    free(c->journal);
    free(c->mock_known);
    free(c->thresholds);
    sched_free(&c->s);
}

/* The run's folder (results.h): the reports, the observations and the
 * schedule's recipe, kept for --check. A folder that cannot be written
 * turns a pass into exit 2, like a report that cannot be written. */
static int run_save(const run_ctx *c, int rc)
{
    const sim_args *a = c->a;
    if (a->no_out)
        return rc;
    saved_run_meta m = { .recipe = { .scenarios = a->scenarios,
                                     .mask = c->mask,
                                     .scenario_file = a->scenario_file_path,
                                     .orders = a->orders,
                                     .duration_s = a->duration_s,
                                     .concurrency = a->concurrency,
                                     .chaos = a->chaos_cmd != NULL,
                                     .chaos_every_s = a->chaos_every_s,
                                     .mock_override = a->mock_override,
                                     .windows = c->w },
                         .origin_epoch_us = c->d != NULL ? driver_origin_epoch_us(c->d) : 0,
                         .judged = c->have_chk };
    if (results_save(a->out_dir, &c->rep, &m, a->max_witnesses) < 0 && rc == 0)
        rc = 2;
    return rc;
}

/* Preflight: curl, both ends answer, the driver and its workers started.
 * Returns 0, or -1 with c->error set. */
static int run_start(run_ctx *c)
{
    if (http_client_global_init() < 0) {
        c->error = "curl_global_init failed";
        return -1;
    }
    if (run_preflight(c) < 0 || run_start_driver(c) < 0) {
        c->error = c->errbuf;
        return -1;
    }
    c->rep.phase_s = c->phase_s;
    return 0;
}

/* The traffic, then the history it left (sets c->error when it stopped). */
static void run_traffic_all(run_ctx *c)
{
    run_traffic(c);
    if (c->phase_failed)
        c->error = c->errbuf;
    if (sim_stop && c->error == NULL)
        c->error = "interrupted";
    if (run_collect(c) < 0 && c->error == NULL)
        c->error = "out of memory collecting the history";
    c->rep.total_s = (double)driver_now_us(c->d) / 1e6;
}

/* What the checker judges: the history, the ledger, the rows, the phase
 * starts and the service's windows. */
static void run_observations(run_ctx *c)
{
    sim_observations *obs = &c->obs;
    *obs = (sim_observations){ .ops = c->hist.op,
                               .nops = c->hist.n,
                               .charges = c->charges,
                               .ncharges = c->ncharges,
                               .api_rows = c->api_rows,
                               .db_rows = c->db_rows,
                               .prefix = c->a->prefix,
                               .seed = c->a->seed };
    c->phase_start_us = calloc(c->s.nphases ? c->s.nphases : 1, sizeof(*c->phase_start_us));
    for (size_t p = 0; c->phase_start_us != NULL && c->d != NULL && p < c->s.nphases; p++)
        c->phase_start_us[p] = driver_phase_start_us(c->d, p);
    obs->phase_start_us = c->phase_start_us;
    obs->service_call_us = (int64_t)c->w.service_call_ms * 1000;
    obs->lease_us = (int64_t)c->w.lease_ms * 1000;
    if (c->calls_read) {
        obs->calls = c->calls;
        obs->ncalls = c->ncalls;
        obs->gateway_timeout_us = (int64_t)c->w.gateway_timeout_ms * 1000;
    }
    if (c->refunds.list_read != NULL) {
        obs->refunds = c->refunds.ledger;
        obs->nrefunds = c->refunds.nledger;
        obs->listed = c->refunds.listed;
        obs->nlisted = c->refunds.nlisted;
        obs->list_read = c->refunds.list_read;
    }
    c->rep.obs = obs;
    c->rep.notifications_sent = c->notifications;
}

/* The report's fixed fields: who ran what. */
static void run_report_init(run_ctx *c)
{
    const sim_args *a = c->a;
    report_init(&c->rep);
    c->rep.seed = a->seed;
    c->rep.digest = c->digest;
    c->rep.prefix = a->prefix;
    c->rep.target = a->target;
    c->rep.gateway = c->need_gateway ? a->gateway : NULL;
    c->rep.replay_cmd = a->replay_cmd;
    c->rep.sched = &c->s;
    c->rep.windows = (c->mask & (1u << SC_NEMESIS)) ? c->windows_text : NULL;
    c->rep.mock_missing = c->mock_missing;
    c->rep.profile = a->profile != NULL ? a->profile->name : NULL;
    c->rep.skipped = c->skipped;
}

int sim_run(const sim_args *a)
{
    run_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        fprintf(stderr, "idempay-sim: out of memory\n");
        return 2;
    }
    c->a = a;
    c->notifications = -1;
    clock_gettime(CLOCK_MONOTONIC, &c->started);
    history_init(&c->hist);
    int rc = run_schedule(c);
    if (rc != 0 || a->schedule_only) {
        if (rc != 0)
            report_result_line(run_out(a), rc, &a->seed);
        run_free(c);
        free(c);
        return rc;
    }
    run_report_init(c);
    run_banner(c);
    if (run_start(c) == 0) {
        run_traffic_all(c);
        run_settle_all(c);
    }
    run_observations(c);
    rc = run_judge(c, &c->obs);
    if (rc == 0 && a->dialect != 0 && c->need_gateway &&
        dialect_check(a->gateway, &c->s, a->prefix, a->dialect, run_out(a)) != 0)
        rc = 2; /* not the v3 target the run was asked to judge */
    rc = run_thresholds(c, rc);
    run_journals(c);
    rc = run_report(c, rc);
    rc = run_save(c, rc);
    run_free(c);
    free(c);
    return rc;
}
