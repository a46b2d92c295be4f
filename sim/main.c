/* main.c - idempay-sim: parses the command line, generates the schedule from
 * the seed, drives the phases against the service (setting the mock
 * gateway's faults per phase), heals, settles, reads the final state and
 * judges it. Exit 0 every invariant held, 1 a violation, 2 the run could not
 * be carried out. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "checker.h"
#include "dbread.h"
#include "driver.h"
#include "env.h"
#include "history.h"
#include "http_client.h"
#include "mock_admin.h"
#include "report.h"
#include "rng.h"
#include "scenarios.h"
#include "schedule.h"

#define SIM_VERSION "1"
#define DEFAULT_ORDERS 2400
#define DEFAULT_CONCURRENCY 32
#define DEFAULT_DURATION_S 30.0
#define DEFAULT_SETTLE_S 30.0
#define DEFAULT_CHAOS_EVERY_S 5.0
#define DEFAULT_KEY "idempaydevkey0123456789abcdefABC"

typedef struct {
    char target[256];
    char gateway[256];
    const char *scenarios;
    size_t orders;
    int concurrency;
    double duration_s;
    uint64_t seed;
    int seed_given;
    double settle_s;
    const char *json_path;
    const char *junit_path;
    const char *history_path;
    int quiet;
    const char *chaos_cmd;
    double chaos_every_s;
    int db;
    char prefix[SCHED_PREFIX_MAX + 1];
    int print_schedule;
    int schedule_only;
    const char *mock_override;
    size_t max_witnesses;
} sim_args;

static volatile int sim_stop;

static void sim_on_signal(int sig)
{
    (void)sig;
    sim_stop = 1;
}

static void sim_usage(FILE *out)
{
    fprintf(out,
            "usage: idempay-sim [--target URL] [--gateway URL] [--scenario NAME[,NAME...]]\n"
            "                   [--orders N] [--concurrency C] [--duration S] [--seed N]\n"
            "                   [--settle S] [--json FILE] [--junit FILE] [--quiet]\n"
            "                   [--chaos-cmd CMD --chaos-every S] [--db]\n"
            "                   [--prefix P] [--mock-config JSON] [--print-schedule]\n"
            "                   [--schedule-only] [--max-witnesses N] [--history FILE]\n"
            "\n"
            "  --target URL       payment service (default http://127.0.0.1:$IDEMPAY_HTTP_PORT or 18080)\n"
            "  --gateway URL      mock gateway admin+ledger (default http://127.0.0.1:$IDEMPAY_MOCK_PORT or 18081)\n"
            "  --scenario LIST    all (default), double-click, retry-storm, callback-storm,\n"
            "                     token-replay, forged-callback, order-mismatch, gateway-chaos,\n"
            "                     crash (needs --chaos-cmd), ping (load only, not in all)\n"
            "  --orders N         orders across the scenarios (default %d)\n"
            "  --concurrency C    client worker threads (default %d)\n"
            "  --duration S       traffic budget in seconds; releases are spread over it\n"
            "                     (default %.0f; 0 = as fast as possible)\n"
            "  --seed N           0..2^63-1; default derived from the time, always printed\n"
            "  --settle S         after healing the gateway, wait up to S seconds for orders\n"
            "                     to settle (default %.0f)\n"
            "  --json FILE        JSON report ('-' for stdout)\n"
            "  --junit FILE       JUnit XML report, one testcase per scenario x invariant\n"
            "  --quiet            no progress line\n"
            "  --chaos-cmd CMD    run CMD (sh -c) every --chaos-every S seconds (default %.0f)\n"
            "                     during the crash scenario\n"
            "  --db               also read idempay.payment_order from MariaDB (IDEMPAY_DB_*)\n"
            "  --prefix P         order-number prefix (default: unique per run, 8 characters)\n"
            "  --mock-config JSON merged into every phase's mock config, e.g. '{\"dedupe\":false}'\n"
            "  --print-schedule   print the generated schedule (its canonical text form)\n"
            "  --schedule-only    print seed and schedule digest, contact nothing, exit 0\n"
            "  --max-witnesses N  full witnesses in the human report (default 10)\n"
            "  --history FILE     every client operation as JSON lines, in time order\n"
            "\n"
            "exit status: 0 every invariant held; 1 an invariant was violated; 2 the run\n"
            "could not be carried out (target or gateway down, bad arguments)\n",
            DEFAULT_ORDERS, DEFAULT_CONCURRENCY, DEFAULT_DURATION_S, DEFAULT_SETTLE_S,
            DEFAULT_CHAOS_EVERY_S);
}

static int sim_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int sim_parse_double(const char *s, double max, double *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0.0) || v > max)
        return -1;
    *out = v;
    return 0;
}

static int sim_set_url(char *dst, size_t len, const char *src)
{
    if (strncmp(src, "http://", 7) != 0 && strncmp(src, "https://", 8) != 0)
        return -1;
    size_t n = strlen(src);
    while (n > 0 && src[n - 1] == '/')
        n--;
    if (n == 0 || n >= len)
        return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

static int sim_valid_prefix(const char *p)
{
    size_t n = strlen(p);
    if (n < 1 || n > SCHED_PREFIX_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return 0;
    }
    return 1;
}

static uint64_t sim_entropy(void)
{
    uint64_t v = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
        v = 0;
    uint64_t st = v ^ ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
                  ((uint64_t)getpid() << 32);
    return rng_splitmix64(&st);
}

static void sim_make_prefix(char out[SCHED_PREFIX_MAX + 1])
{
    static const char b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    uint64_t v = sim_entropy();
    out[0] = 's';
    for (int i = 1; i < 8; i++) {
        out[i] = b36[v % 36];
        v /= 36;
    }
    out[8] = '\0';
}

/* Returns 0, or 2 after printing why (bad arguments). */
static int sim_parse_args(int argc, char **argv, sim_args *a)
{
    enum { O_TARGET = 1000, O_GATEWAY, O_SCENARIO, O_ORDERS, O_CONC, O_DURATION, O_SEED,
           O_SETTLE, O_JSON, O_JUNIT, O_QUIET, O_CHAOS_CMD, O_CHAOS_EVERY, O_DB, O_PREFIX,
           O_PRINT, O_SCHED_ONLY, O_MOCK, O_WITNESSES, O_HISTORY, O_HELP, O_VERSION };
    static const struct option opts[] = {
        {"target", required_argument, NULL, O_TARGET},
        {"gateway", required_argument, NULL, O_GATEWAY},
        {"scenario", required_argument, NULL, O_SCENARIO},
        {"orders", required_argument, NULL, O_ORDERS},
        {"concurrency", required_argument, NULL, O_CONC},
        {"duration", required_argument, NULL, O_DURATION},
        {"seed", required_argument, NULL, O_SEED},
        {"settle", required_argument, NULL, O_SETTLE},
        {"json", required_argument, NULL, O_JSON},
        {"junit", required_argument, NULL, O_JUNIT},
        {"quiet", no_argument, NULL, O_QUIET},
        {"chaos-cmd", required_argument, NULL, O_CHAOS_CMD},
        {"chaos-every", required_argument, NULL, O_CHAOS_EVERY},
        {"db", no_argument, NULL, O_DB},
        {"prefix", required_argument, NULL, O_PREFIX},
        {"print-schedule", no_argument, NULL, O_PRINT},
        {"schedule-only", no_argument, NULL, O_SCHED_ONLY},
        {"mock-config", required_argument, NULL, O_MOCK},
        {"max-witnesses", required_argument, NULL, O_WITNESSES},
        {"history", required_argument, NULL, O_HISTORY},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    char url[256];
    uint64_t u;
    int chaos_every_given = 0;

    memset(a, 0, sizeof(*a));
    snprintf(url, sizeof(url), "http://127.0.0.1:%lld", env_int("IDEMPAY_HTTP_PORT", 18080));
    sim_set_url(a->target, sizeof(a->target), url);
    snprintf(url, sizeof(url), "http://127.0.0.1:%lld", env_int("IDEMPAY_MOCK_PORT", 18081));
    sim_set_url(a->gateway, sizeof(a->gateway), url);
    a->scenarios = "all";
    a->orders = DEFAULT_ORDERS;
    a->concurrency = DEFAULT_CONCURRENCY;
    a->duration_s = DEFAULT_DURATION_S;
    a->settle_s = DEFAULT_SETTLE_S;
    a->chaos_every_s = DEFAULT_CHAOS_EVERY_S;
    a->max_witnesses = 10;

    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, "", opts, NULL);
        if (c == -1)
            break;
        const char *bad = NULL;
        switch (c) {
        case O_TARGET:
            if (sim_set_url(a->target, sizeof(a->target), optarg) < 0)
                bad = "--target needs an http:// or https:// URL";
            break;
        case O_GATEWAY:
            if (sim_set_url(a->gateway, sizeof(a->gateway), optarg) < 0)
                bad = "--gateway needs an http:// or https:// URL";
            break;
        case O_SCENARIO:
            a->scenarios = optarg;
            break;
        case O_ORDERS:
            if (sim_parse_u64(optarg, 1000000, &u) < 0 || u == 0)
                bad = "--orders needs a number from 1 to 1000000";
            else
                a->orders = (size_t)u;
            break;
        case O_CONC:
            if (sim_parse_u64(optarg, 1024, &u) < 0 || u == 0)
                bad = "--concurrency needs a number from 1 to 1024";
            else
                a->concurrency = (int)u;
            break;
        case O_DURATION:
            if (sim_parse_double(optarg, 86400, &a->duration_s) < 0)
                bad = "--duration needs seconds from 0 to 86400";
            break;
        case O_SEED:
            if (sim_parse_u64(optarg, (uint64_t)INT64_MAX, &a->seed) < 0)
                bad = "--seed needs a number from 0 to 9223372036854775807";
            else
                a->seed_given = 1;
            break;
        case O_SETTLE:
            if (sim_parse_double(optarg, 3600, &a->settle_s) < 0)
                bad = "--settle needs seconds from 0 to 3600";
            break;
        case O_JSON:
            a->json_path = optarg;
            break;
        case O_JUNIT:
            a->junit_path = optarg;
            break;
        case O_QUIET:
            a->quiet = 1;
            break;
        case O_CHAOS_CMD:
            if (*optarg == '\0')
                bad = "--chaos-cmd needs a command";
            a->chaos_cmd = optarg;
            break;
        case O_CHAOS_EVERY:
            if (sim_parse_double(optarg, 3600, &a->chaos_every_s) < 0 || a->chaos_every_s < 0.1)
                bad = "--chaos-every needs seconds from 0.1 to 3600";
            chaos_every_given = 1;
            break;
        case O_DB:
            a->db = 1;
            break;
        case O_PREFIX:
            if (!sim_valid_prefix(optarg))
                bad = "--prefix needs 1 to 12 characters of [0-9A-Za-z]";
            else
                snprintf(a->prefix, sizeof(a->prefix), "%s", optarg);
            break;
        case O_PRINT:
            a->print_schedule = 1;
            break;
        case O_SCHED_ONLY:
            a->schedule_only = 1;
            break;
        case O_MOCK:
            a->mock_override = optarg;
            break;
        case O_HISTORY:
            a->history_path = optarg;
            break;
        case O_WITNESSES:
            if (sim_parse_u64(optarg, 100000, &u) < 0)
                bad = "--max-witnesses needs a number";
            else
                a->max_witnesses = (size_t)u;
            break;
        case O_HELP:
            sim_usage(stdout);
            exit(0);
        case O_VERSION:
            printf("idempay-sim %s\n", SIM_VERSION);
            exit(0);
        default:
            fprintf(stderr, "idempay-sim: unknown option or missing value: %s\n",
                    argv[optind - 1]);
            fprintf(stderr, "try 'idempay-sim --help'\n");
            return 2;
        }
        if (bad != NULL) {
            fprintf(stderr, "idempay-sim: %s (got '%s')\n", bad, optarg);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "idempay-sim: unexpected argument '%s'\ntry 'idempay-sim --help'\n",
                argv[optind]);
        return 2;
    }
    if (chaos_every_given && a->chaos_cmd == NULL) {
        fprintf(stderr, "idempay-sim: --chaos-every needs --chaos-cmd\n");
        return 2;
    }
    if (!a->seed_given)
        a->seed = sim_entropy() >> 1;
    if (a->prefix[0] == '\0')
        sim_make_prefix(a->prefix);
    return 0;
}

/* The command line that replays this run: argv plus --seed when absent. */
static char *sim_replay_cmd(int argc, char **argv, const sim_args *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        int plain = *s != '\0';
        for (const char *p = s; *p; p++)
            if (strchr(" \t\n'\"\\$`*?[]{}()<>|&;!#~", *p))
                plain = 0;
        if (i > 0)
            fputc(' ', f);
        if (plain) {
            fputs(s, f);
        } else {
            fputc('\'', f);
            for (const char *p = s; *p; p++) {
                if (*p == '\'')
                    fputs("'\\''", f);
                else
                    fputc(*p, f);
            }
            fputc('\'', f);
        }
    }
    if (!a->seed_given)
        fprintf(f, " --seed %llu", (unsigned long long)a->seed);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- progress line ---- */

typedef struct {
    driver *d;
    const sim_schedule *s;
    volatile size_t phase;
    volatile int stop;
    pthread_t thread;
} sim_progress;

static void *sim_progress_main(void *arg)
{
    sim_progress *p = arg;
    uint64_t last_ops = 0;
    struct timespec last, now;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!p->stop) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000L};
        nanosleep(&ts, NULL);
        driver_progress_t pr;
        driver_progress(p->d, &pr);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt = (double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9;
        uint64_t ops = pr.outcome[OUT_OK] + pr.outcome[OUT_FAIL] + pr.outcome[OUT_UNKNOWN];
        size_t ph = p->phase < p->s->nphases ? p->phase : p->s->nphases - 1;
        fprintf(stderr, "\r\033[K[%zu/%zu %s/%s] tasks %llu/%llu  ok %llu fail %llu unknown %llu  %.0f req/s",
                ph + 1, p->s->nphases, sched_scenario_name(p->s->phases[ph].scenario),
                p->s->phases[ph].label, (unsigned long long)pr.tasks_done,
                (unsigned long long)p->s->ntasks, (unsigned long long)pr.outcome[OUT_OK],
                (unsigned long long)pr.outcome[OUT_FAIL],
                (unsigned long long)pr.outcome[OUT_UNKNOWN],
                dt > 0 ? (double)(ops - last_ops) / dt : 0.0);
        last_ops = ops;
        last = now;
    }
    fprintf(stderr, "\r\033[K");
    return NULL;
}

static int64_t sim_clock(void *arg)
{
    return driver_now_us((const driver *)arg);
}

/* ---- phases ---- */

typedef struct {
    const char *gateway;       /* NULL: no mock to configure (ping only) */
    const sim_schedule *sched;
    sim_progress *progress;
    char *error;
    size_t errlen;
    int failed;
} sim_phase_ctx;

/* driver_phase_fn: the phase's mock config, before its requests. */
static int sim_on_phase(void *arg, size_t phase)
{
    sim_phase_ctx *c = arg;
    const sched_phase *ph = &c->sched->phases[phase];
    char err[512];
    c->progress->phase = phase;
    if (c->gateway == NULL)
        return 0;
    if (mock_admin_configure(c->gateway, ph->mock_config, err, sizeof(err)) < 0) {
        snprintf(c->error, c->errlen, "cannot configure the mock for phase %s/%s: %s",
                 sched_scenario_name(ph->scenario), ph->label, err);
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* ---- settling ---- */

/* Orders still moving: PROCESSING, unreadable, or not matching the ledger. */
static size_t sim_unsettled(const sim_schedule *s, const sim_row *rows, const sim_charge *ch,
                            size_t nch, size_t *out)
{
    size_t n = 0;
    unsigned char *mark = calloc(s->norders ? s->norders : 1, 1);
    if (mark == NULL)
        return 0;
    for (size_t i = 0; i < s->norders; i++)
        if (rows[i].state == ROW_ERROR || rows[i].state == ROW_UNREAD ||
            (rows[i].state == ROW_PRESENT && rows[i].status == OST_PROCESSING))
            mark[i] = 1;
    for (size_t k = 0; k < nch; k++) {
        long o = ch[k].order;
        if (o < 0)
            continue;
        const sim_row *r = &rows[o];
        if (r->state != ROW_PRESENT || r->status != OST_PAID)
            mark[o] = 1;
    }
    /* A PAID order needs a charge with its transaction id: one pass over
     * the ledger marks the orders that have it (value 2), the rest stay. */
    for (size_t k = 0; k < nch; k++) {
        long o = ch[k].order;
        if (o >= 0 && rows[o].state == ROW_PRESENT && rows[o].status == OST_PAID &&
            strcmp(ch[k].transaction_id, rows[o].transaction_id) == 0)
            mark[o] |= 2;
    }
    for (size_t i = 0; i < s->norders; i++) {
        if (rows[i].state == ROW_PRESENT && rows[i].status == OST_PAID && !(mark[i] & 2))
            mark[i] |= 1;
        mark[i] &= 1;
    }
    for (size_t i = 0; i < s->norders; i++)
        if (mark[i])
            out[n++] = i;
    free(mark);
    return n;
}

int main(int argc, char **argv)
{
    sim_args a;
    int rc = sim_parse_args(argc, argv, &a);
    if (rc != 0)
        return rc;

    char err[512] = "";
    unsigned mask = 0;
    if (scenarios_parse(a.scenarios, a.chaos_cmd != NULL, &mask, err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return 2;
    }
    sim_plan plan = {.mask = mask, .orders = a.orders, .duration_s = a.duration_s,
                     .concurrency = a.concurrency, .chaos = a.chaos_cmd != NULL,
                     .chaos_every_s = a.chaos_every_s, .mock_override = a.mock_override};
    sim_schedule s;
    sched_init(&s, a.seed);
    if (scenarios_build(&s, &plan, err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        sched_free(&s);
        return 2;
    }
    char digest[65];
    if (sched_digest(&s, digest) < 0) {
        fprintf(stderr, "idempay-sim: cannot compute the schedule digest\n");
        sched_free(&s);
        return 2;
    }
    printf("seed: %llu\n", (unsigned long long)a.seed);
    printf("schedule digest: %s\n", digest);
    if (a.print_schedule)
        sched_print(&s, stdout);
    fflush(stdout);
    if (a.schedule_only) {
        sched_free(&s);
        return 0;
    }

    int need_gateway = (mask & ~(1u << SC_PING)) != 0;
    char *replay = sim_replay_cmd(argc, argv, &a);
    sim_report rep;
    report_init(&rep);
    rep.seed = a.seed;
    rep.digest = digest;
    rep.prefix = a.prefix;
    rep.target = a.target;
    rep.gateway = need_gateway ? a.gateway : NULL;
    rep.replay_cmd = replay;
    rep.sched = &s;

    driver *d = NULL;
    chaos *ch = NULL;
    sim_history hist;
    history_init(&hist);
    sim_row *api_rows = NULL, *db_rows = NULL;
    size_t *pending = NULL;
    double *phase_s = NULL;
    sim_charge *charges = NULL;
    size_t ncharges = 0;
    long long notifications = -1;
    chk_result chk;
    memset(&chk, 0, sizeof(chk));
    int have_chk = 0;
    const char *error = NULL;
    static char errbuf[1024];

    if (!a.quiet) {
        printf("order prefix: %s\n", a.prefix);
        printf("target: %s%s%s\n", a.target, need_gateway ? "  gateway: " : "",
               need_gateway ? a.gateway : "");
        printf("orders: %zu  tasks: %zu  phases: %zu  concurrency: %d  duration budget: %.0f s\n",
               s.norders, s.ntasks, s.nphases, a.concurrency, a.duration_s);
        fflush(stdout);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sim_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (http_client_global_init() < 0) {
        error = "curl_global_init failed";
        goto finish;
    }

    /* Preflight: both ends must answer before anything is sent. */
    {
        http_client *c = http_client_new(2000, 5000);
        char url[512];
        snprintf(url, sizeof(url), "%s/api/ping", a.target);
        int up = 0;
        for (int i = 0; i < 3 && c != NULL && !up; i++) {
            http_reply r;
            http_status hs = http_client_request(c, "GET", url, NULL, NULL, 0, NULL, 5000, &r);
            up = hs == HTTP_OK && r.code == 200;
            if (!up) {
                snprintf(errbuf, sizeof(errbuf), "target %s is not answering: GET /api/ping %s",
                         a.target, hs == HTTP_OK ? "did not return 200" : r.error);
                if (i < 2)
                    sleep(1);
            }
        }
        http_client_free(c);
        if (!up) {
            error = errbuf;
            goto finish;
        }
    }
    if (need_gateway && mock_admin_reset(a.gateway, err, sizeof(err)) < 0) {
        snprintf(errbuf, sizeof(errbuf), "gateway %s is not answering: %s", a.gateway, err);
        error = errbuf;
        goto finish;
    }

    driver_config dc = {.target = a.target, .prefix = a.prefix, .sched = &s,
                        .workers = a.concurrency,
                        .appid = env_str("IDEMPAY_WX_APPID", "wx0000000000000000"),
                        .mch_id = env_str("IDEMPAY_WX_MCHID", "1900000109"),
                        .key = env_str("IDEMPAY_WX_KEY", DEFAULT_KEY), .stop = &sim_stop};
    d = driver_new(&dc, err, sizeof(err));
    if (d == NULL) {
        snprintf(errbuf, sizeof(errbuf), "%s", err);
        error = errbuf;
        goto finish;
    }
    if (a.chaos_cmd != NULL) {
        ch = chaos_new(a.chaos_cmd, a.chaos_every_s, sim_clock, d);
        if (ch == NULL) {
            error = "out of memory";
            goto finish;
        }
    }

    sim_progress prog = {.d = d, .s = &s, .phase = 0, .stop = 0};
    int show_progress = !a.quiet && isatty(STDERR_FILENO);
    if (show_progress && pthread_create(&prog.thread, NULL, sim_progress_main, &prog) != 0)
        show_progress = 0;

    phase_s = calloc(s.nphases ? s.nphases : 1, sizeof(*phase_s));
    if (phase_s == NULL) {
        error = "out of memory";
        goto finish;
    }
    rep.phase_s = phase_s;
    sim_phase_ctx pctx = {.gateway = need_gateway ? a.gateway : NULL, .sched = &s,
                          .progress = &prog, .error = errbuf, .errlen = sizeof(errbuf)};
    int64_t traffic_t0 = driver_now_us(d);
    for (size_t p = 0; p < s.nphases && !sim_stop && !pctx.failed;) {
        size_t last = p + 1;
        while (last < s.nphases && !s.phases[last].barrier)
            last++;
        int chaos_on = 0;
        for (size_t k = p; k < last; k++)
            chaos_on |= s.phases[k].chaos;
        if (chaos_on && ch != NULL)
            chaos_start(ch);
        driver_run_segment(d, p, last, sim_on_phase, &pctx);
        if (ch != NULL)
            chaos_stop(ch);
        p = last;
    }
    for (size_t p = 0; p < s.nphases; p++) {
        int64_t at = driver_phase_start_us(d, p);
        phase_s[p] = at < 0 ? -1.0 : (double)(at - traffic_t0) / 1e6;
    }
    if (pctx.failed)
        error = errbuf;
    rep.traffic_s = (double)(driver_now_us(d) - traffic_t0) / 1e6;
    if (show_progress) {
        prog.stop = 1;
        pthread_join(prog.thread, NULL);
    }
    if (ch != NULL)
        rep.chaos = chaos_events(ch, &rep.nchaos);
    if (sim_stop && error == NULL)
        error = "interrupted";

    /* Heal: the gateway back to its defaults, so pending work can finish. */
    if (need_gateway) {
        sim_mock_knobs k;
        char cfg[SCHED_MOCK_CONFIG_MAX];
        scenarios_mock_defaults(&k);
        if (scenarios_mock_json(&k, NULL, cfg, sizeof(cfg), err, sizeof(err)) < 0 ||
            mock_admin_configure(a.gateway, cfg, err, sizeof(err)) < 0) {
            if (error == NULL) {
                snprintf(errbuf, sizeof(errbuf), "cannot heal the mock gateway: %s", err);
                error = errbuf;
            }
        }
    }

    if (need_gateway && s.norders > 0) {
        int64_t settle_t0 = driver_now_us(d);
        int64_t deadline = settle_t0 + (int64_t)(a.settle_s * 1e6);
        api_rows = calloc(s.norders, sizeof(*api_rows));
        pending = malloc(s.norders * sizeof(*pending));
        if (api_rows == NULL || pending == NULL) {
            error = "out of memory";
            goto finish;
        }
        size_t npending = s.norders;
        for (size_t i = 0; i < s.norders; i++)
            pending[i] = i;
        if (!a.quiet)
            fprintf(stderr, "settling: up to %.0f s\n", a.settle_s);
        for (;;) {
            driver_read_orders(d, pending, npending, api_rows);
            free(charges);
            charges = NULL;
            if (mock_admin_ledger(a.gateway, &s, a.prefix, &charges, &ncharges, &notifications,
                                  err, sizeof(err)) < 0) {
                snprintf(errbuf, sizeof(errbuf), "cannot read the mock ledger: %s", err);
                error = errbuf;
                goto finish;
            }
            npending = sim_unsettled(&s, api_rows, charges, ncharges, pending);
            if (npending == 0 || driver_now_us(d) >= deadline || sim_stop)
                break;
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000L};
            nanosleep(&ts, NULL);
        }
        /* The final read: every order, then the ledger. */
        for (size_t i = 0; i < s.norders; i++)
            pending[i] = i;
        driver_read_orders(d, pending, s.norders, api_rows);
        free(charges);
        charges = NULL;
        if (mock_admin_ledger(a.gateway, &s, a.prefix, &charges, &ncharges, &notifications, err,
                              sizeof(err)) < 0) {
            snprintf(errbuf, sizeof(errbuf), "cannot read the mock ledger: %s", err);
            error = errbuf;
            goto finish;
        }
        if (a.db) {
            db_rows = calloc(s.norders, sizeof(*db_rows));
            if (db_rows == NULL) {
                error = "out of memory";
                goto finish;
            }
            if (dbread_orders(&s, a.prefix, db_rows, err, sizeof(err)) < 0) {
                snprintf(errbuf, sizeof(errbuf), "cannot read MariaDB (--db): %s", err);
                error = errbuf;
                goto finish;
            }
        }
        rep.settle_s = (double)(driver_now_us(d) - settle_t0) / 1e6;
    } else if (s.norders > 0) {
        api_rows = calloc(s.norders, sizeof(*api_rows));
    }

finish:
    if (d != NULL) {
        if (driver_collect(d, &hist, &rep) < 0 && error == NULL)
            error = "out of memory collecting the history";
        history_sort(&hist);
        rep.total_s = (double)driver_now_us(d) / 1e6;
    }
    sim_observations obs = {.ops = hist.op, .nops = hist.n, .charges = charges,
                            .ncharges = ncharges, .api_rows = api_rows, .db_rows = db_rows,
                            .prefix = a.prefix, .seed = a.seed};
    rep.obs = &obs;
    rep.notifications_sent = notifications;
    if (api_rows != NULL && charges != NULL) {
        if (checker_run(&s, &obs, &chk) < 0 && error == NULL)
            error = "out of memory while checking";
        have_chk = 1;
    } else if (!need_gateway && error == NULL) {
        /* ping only: nothing to judge, but the table still lists the run */
        checker_run(&s, &obs, &chk);
        have_chk = 1;
    }
    rep.chk = have_chk ? &chk : NULL;
    if (have_chk && chk.total > 0)
        rc = 1;
    else if (error != NULL)
        rc = 2;
    else if (have_chk && chk.unreadable > 0) {
        snprintf(errbuf, sizeof(errbuf), "%zu order(s) could not be read at the end",
                 chk.unreadable);
        error = errbuf;
        rc = 2;
    } else
        rc = have_chk ? 0 : 2;
    rep.exit_code = rc;
    rep.error = error;
    if (rc == 2 && error == NULL)
        rep.error = "the run could not be carried out";

    if (rc == 2 && d == NULL)
        fprintf(stderr, "idempay-sim: %s\n", rep.error);
    else
        report_human(&rep, stdout, a.max_witnesses);
    fflush(stdout);
    if (a.json_path != NULL && report_json(&rep, a.json_path) < 0) {
        fprintf(stderr, "idempay-sim: cannot write %s: %s\n", a.json_path, strerror(errno));
        if (rc == 0)
            rc = 2;
    }
    if (a.junit_path != NULL && report_junit(&rep, a.junit_path) < 0) {
        fprintf(stderr, "idempay-sim: cannot write %s: %s\n", a.junit_path, strerror(errno));
        if (rc == 0)
            rc = 2;
    }

    if (a.history_path != NULL && report_history(&rep, a.history_path) < 0) {
        fprintf(stderr, "idempay-sim: cannot write %s: %s\n", a.history_path, strerror(errno));
        if (rc == 0)
            rc = 2;
    }

    checker_result_free(&chk);
    chaos_free(ch);
    driver_free(d);
    history_free(&hist);
    free(api_rows);
    free(db_rows);
    free(pending);
    free(phase_s);
    free(charges);
    free(replay);
    sched_free(&s);
    return rc;
}
