/* main.c - idempay-sim: parses the command line and runs the simulator
 * once (run.c), or, with --soak MINUTES, again and again with new seeds
 * until a run finds a violation or the time is up. Exit 0 every invariant
 * held, 1 a violation, 2 a run could not be carried out. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "results.h"
#include "profile.h"
#include "report.h"
#include "rng.h"
#include "run.h"
#include "scenario_file.h"
#include "schedule.h"
#include "threshold.h"

#define SIM_VERSION "2"
#define DEFAULT_ORDERS 2400
#define DEFAULT_CONCURRENCY 32
#define DEFAULT_DURATION_S 30.0
#define DEFAULT_SETTLE_S 30.0
#define DEFAULT_CHAOS_EVERY_S 5.0
#define SIM_THRESHOLDS_MAX 64

static sim_threshold sim_thresholds[SIM_THRESHOLDS_MAX];

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
            "                   [--soak MINUTES] [--profile FILE] [--out DIR | --no-out]\n"
            "                   [--check DIR] [--threshold EXPR]... [--scenario-file FILE]\n"
            "\n"
            "  --target URL       payment service (default http://127.0.0.1:$IDEMPAY_HTTP_PORT or 18080)\n"
            "  --gateway URL      mock gateway admin+ledger (default http://127.0.0.1:$IDEMPAY_MOCK_PORT or 18081)\n"
            "  --scenario LIST    all (default), double-click, retry-storm, callback-storm,\n"
            "                     token-replay, forged-callback, order-mismatch, gateway-chaos,\n"
            "                     crash (needs --chaos-cmd), nemesis (timing faults aimed at\n"
            "                     the service's windows), ping (load only, not in all)\n"
            "  --orders N         orders across the scenarios (default %d)\n"
            "  --concurrency C    client worker threads (default %d)\n"
            "  --duration S       traffic budget in seconds; releases are spread over it\n"
            "                     (default %.0f; 0 = as fast as possible)\n"
            "  --seed N           0..2^63-1; default derived from the time, always printed\n"
            "  --settle S         after healing the gateway, wait up to S seconds for orders\n"
            "                     to settle (default %.0f; with the nemesis at least the\n"
            "                     service's lease + FAILED recheck + two reconciler periods)\n"
            "  --json FILE        JSON report ('-' for stdout)\n"
            "  --junit FILE       JUnit XML report, one testcase per scenario x invariant\n"
            "  --quiet            no progress line\n"
            "  --chaos-cmd CMD    run 'CMD ACTION' (sh -c) when the schedule plans it: every\n"
            "                     --chaos-every S seconds (default %.0f) in the crash scenario,\n"
            "                     at drawn times in the nemesis; ACTION is kill-worker,\n"
            "                     restart-redis, restart-mock or restart-mariadb (drawn from\n"
            "                     the seed)\n"
            "  --db               also read idempay.payment_order from MariaDB (IDEMPAY_DB_*)\n"
            "  --prefix P         order-number prefix (default: unique per run, 8 characters)\n"
            "  --mock-config JSON merged into every phase's mock config, e.g. '{\"dedupe\":false}'\n"
            "  --print-schedule   print the generated schedule (its canonical text form)\n"
            "  --schedule-only    print seed and schedule digest, contact nothing, exit 0\n"
            "  --max-witnesses N  full witnesses in the human report (default 10)\n"
            "  --history FILE     every client operation as JSON lines, in time order\n"
            "  --soak MINUTES     run again and again with new seeds (each printed) until a\n"
            "                     violation or the time is up\n"
            "  --out DIR          keep the run's folder DIR/<UTC time>-seed<N>/ (reports,\n"
            "                     report.html, history, ledger, orders, schedule) and DIR/latest\n"
            "                     (default $IDEMPAY_STATE_DIR/runs, else ./idempay-sim-runs)\n"
            "  --no-out           keep no folder\n"
            "  --check DIR        judge the run saved in DIR again, offline (no service, mock\n"
            "                     or database): same verdict and exit status\n"
            "  --profile FILE     target profile (JSON): how to speak to a payment service of\n"
            "                     another API shape (default: idempay's own API, built in;\n"
            "                     examples in share/idempay/profiles)\n"
            "  --threshold EXPR   a gate on the run's numbers, repeatable: KIND.METRIC OP VALUE,\n"
            "                     e.g. 'pay.p99<800ms' 'pay.error_rate<0.01' 'callback.rate>50'\n"
            "                     (KIND pay, query, token, callback, ping, stray, all; METRIC\n"
            "                     pN, max, mean, error_rate, rate, count)\n"
            "  --scenario-file F  the phases to run from a JSON file (sim/scenarios/*.json)\n"
            "                     instead of --scenario\n"
            "\n"
            "--json -, --junit - or --history - leave stdout to that document: the seed,\n"
            "progress and human report go to stderr then.\n"
            "exit status: 0 every invariant held; 1 an invariant was violated; 2 the run\n"
            "could not be carried out (target or gateway down, bad arguments); 3 every\n"
            "invariant held but a --threshold failed\n",
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

/* --profile FILE into a->profile. Returns 0, or 2 after printing why (the
 * file is unreadable or not a valid profile, or --db asks for idempay's own
 * table of a target that has not got it). */
static int sim_load_profile(const char *path, sim_args *a)
{
    char err[512];
    a->profile = profile_load(path, err, sizeof(err));
    if (a->profile == NULL) {
        fprintf(stderr, "idempay-sim: --profile %s\n", err);
        return 2;
    }
    if (a->db && !profile_has(a->profile, PROF_FEAT_DB)) {
        fprintf(stderr, "idempay-sim: --db reads idempay's payment_order table; the target "
                        "profile %s has no such table (features.db)\n", a->profile->name);
        profile_free(a->profile);
        a->profile = NULL;
        return 2;
    }
    return 0;
}

/* ---- output CI can use, scenario files: the options' hooks ---- */

/* The value of the last --NAME VALUE or --NAME=VALUE in argv, or NULL. */
static const char *sim_argv_value(int argc, char **argv, const char *name)
{
    const char *v = NULL;
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strncmp(argv[i], name, n) != 0)
            continue;
        if (argv[i][n] == '=')
            v = argv[i] + n + 1;
        else if (argv[i][n] == '\0' && i + 1 < argc)
            v = argv[++i];
    }
    return v;
}

/* How many of --json, --junit, --history write to stdout ('-'). */
static int sim_stdout_reports(int argc, char **argv)
{
    static const char *const flags[] = {"--json", "--junit", "--history"};
    int n = 0;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        const char *v = sim_argv_value(argc, argv, flags[i]);
        n += v != NULL && strcmp(v, "-") == 0;
    }
    return n;
}

/* --threshold EXPR: parsed now, so a bad one is refused before anything
 * runs. Returns 0, or -1 after printing why. */
static int sim_add_threshold(const char *expr, sim_args *a)
{
    char err[512];
    if (a->nthresholds == SIM_THRESHOLDS_MAX) {
        fprintf(stderr, "idempay-sim: at most %d --threshold\n", SIM_THRESHOLDS_MAX);
        return -1;
    }
    if (threshold_parse(expr, &sim_thresholds[a->nthresholds], err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return -1;
    }
    a->thresholds = sim_thresholds;
    a->nthresholds++;
    return 0;
}

/* After the flags: where the human output goes, and the scenario file
 * (its orders, duration and concurrency unless the flags give them).
 * Returns 0, or -1 after printing why. */
static int sim_finish_ci_args(int argc, char **argv, sim_args *a)
{
    char err[512];
    int taken = sim_stdout_reports(argc, argv);
    if (taken > 1) {
        fprintf(stderr, "idempay-sim: only one of --json, --junit and --history can write to "
                        "stdout ('-')\n");
        return -1;
    }
    a->human = taken ? stderr : stdout;
    if (a->scenario_file_path == NULL)
        return 0;
    if (sim_argv_value(argc, argv, "--scenario") != NULL) {
        fprintf(stderr, "idempay-sim: --scenario-file replaces --scenario: give one of them\n");
        return -1;
    }
    sim_scenario_file *f = scenario_file_load(a->scenario_file_path, err, sizeof(err));
    if (f == NULL) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return -1;
    }
    scenario_file_run run = scenario_file_run_values(f);
    if (sim_argv_value(argc, argv, "--orders") == NULL && run.orders > 0)
        a->orders = run.orders;
    if (sim_argv_value(argc, argv, "--duration") == NULL && run.duration_s >= 0)
        a->duration_s = run.duration_s;
    if (sim_argv_value(argc, argv, "--concurrency") == NULL && run.concurrency > 0)
        a->concurrency = run.concurrency;
    a->scenario_file = f;
    return 0;
}

/* Returns 0, or 2 after printing why (bad arguments). */
static int sim_parse_args(int argc, char **argv, sim_args *a)
{
    enum { O_TARGET = 1000, O_GATEWAY, O_SCENARIO, O_ORDERS, O_CONC, O_DURATION, O_SEED,
           O_SETTLE, O_JSON, O_JUNIT, O_QUIET, O_CHAOS_CMD, O_CHAOS_EVERY, O_DB, O_PREFIX,
           O_PRINT, O_SCHED_ONLY, O_MOCK, O_WITNESSES, O_HISTORY, O_SOAK, O_PROFILE, O_HELP,
           O_VERSION, O_OUT, O_NO_OUT, O_CHECK, O_THRESHOLD, O_SCENARIO_FILE };
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
        {"soak", required_argument, NULL, O_SOAK},
        {"profile", required_argument, NULL, O_PROFILE},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {"out", required_argument, NULL, O_OUT},
        {"no-out", no_argument, NULL, O_NO_OUT},
        {"check", required_argument, NULL, O_CHECK},
        {"threshold", required_argument, NULL, O_THRESHOLD},
        {"scenario-file", required_argument, NULL, O_SCENARIO_FILE},
        {NULL, 0, NULL, 0},
    };
    char url[256];
    uint64_t u;
    int chaos_every_given = 0;
    const char *profile_path = NULL;

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
            a->settle_given = 1;
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
        case O_SOAK:
            if (sim_parse_double(optarg, 7 * 24 * 60, &a->soak_min) < 0 || a->soak_min <= 0)
                bad = "--soak needs minutes, more than 0";
            break;
        case O_PROFILE:
            profile_path = optarg;
            break;
        case O_WITNESSES:
            if (sim_parse_u64(optarg, 100000, &u) < 0)
                bad = "--max-witnesses needs a number";
            else
                a->max_witnesses = (size_t)u;
            break;
        case O_OUT: /* the run folder (results.h) */
            if (*optarg == '\0')
                bad = "--out needs a directory";
            a->out_dir = optarg;
            break;
        case O_NO_OUT:
            a->no_out = 1;
            break;
        case O_CHECK:
            if (*optarg == '\0')
                bad = "--check needs the directory of a saved run";
            a->check_dir = optarg;
            break;
        case O_HELP:
            sim_usage(stdout);
            exit(0);
        case O_VERSION:
            printf("idempay-sim %s\n", SIM_VERSION);
            exit(0);
        case O_THRESHOLD:
            if (sim_add_threshold(optarg, a) < 0)
                return 2;
            break;
        case O_SCENARIO_FILE:
            a->scenario_file_path = optarg;
            break;
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
    if (profile_path != NULL && sim_load_profile(profile_path, a) != 0)
        return 2;
    if (sim_finish_ci_args(argc, argv, a) < 0)
        return 2;
    if (!a->seed_given)
        a->seed = sim_entropy() >> 1;
    if (a->prefix[0] == '\0')
        sim_make_prefix(a->prefix);
    return 0;
}

/* Whether argv[*i] is a flag the replay command leaves out (--soak, and
 * --seed when soaking: each run prints its own); skips its value too. */
static int sim_replay_skip(int argc, char **argv, int *i, const sim_args *a)
{
    const char *s = argv[*i];
    int seed = a->soak_min > 0 && strncmp(s, "--seed", 6) == 0 && (s[6] == '\0' || s[6] == '=');
    int soak = strncmp(s, "--soak", 6) == 0 && (s[6] == '\0' || s[6] == '=');
    if (!seed && !soak)
        return 0;
    if (s[6] == '\0' && *i + 1 < argc)
        (*i)++;
    return 1;
}

static void sim_quote(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (strchr(" \t\n'\"\\$`*?[]{}()<>|&;!#~", *p))
            plain = 0;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

/* The command line that replays this run: argv (without --soak) plus
 * --seed when it was not given. malloc'd, NULL on OOM. */
static char *sim_replay_cmd(int argc, char **argv, const sim_args *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (sim_replay_skip(argc, argv, &i, a))
            continue;
        if (i > 0)
            fputc(' ', f);
        sim_quote(f, argv[i]);
    }
    if (!a->seed_given || a->soak_min > 0)
        fprintf(f, " --seed %llu", (unsigned long long)a->seed);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int sim_run_once(sim_args *a, int argc, char **argv)
{
    char *replay = sim_replay_cmd(argc, argv, a);
    a->replay_cmd = replay;
    int rc = sim_run(a);
    a->replay_cmd = NULL;
    free(replay);
    return rc;
}

/* --soak: runs with new seeds (the first one --seed's, when given) until
 * one does not pass or the time is up. */
static int sim_soak(sim_args *a, int argc, char **argv)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int n = 1;; n++) {
        if (n > 1) { /* the first run keeps the parsed (or given) seed and prefix */
            a->seed = sim_entropy() >> 1;
            sim_make_prefix(a->prefix);
        }
        fprintf(a->human, "soak: run %d, seed %llu\n", n, (unsigned long long)a->seed);
        fflush(a->human);
        int rc = sim_run_once(a, argc, argv);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double min = (double)(now.tv_sec - t0.tv_sec) / 60.0;
        if (rc != 0 || sim_stop) {
            fprintf(a->human, "soak: run %d (seed %llu) %s after %.1f min\n", n,
                    (unsigned long long)a->seed,
                    rc == 1   ? "found a violation"
                    : rc == 3 ? "failed a threshold"
                              : "could not be carried out",
                    min);
            return rc != 0 ? rc : 2;
        }
        if (min >= a->soak_min) {
            fprintf(a->human, "soak: %d run(s), every invariant held, %.1f min\n", n, min);
            return 0;
        }
    }
}

int main(int argc, char **argv)
{
    sim_args a;
    int rc = sim_parse_args(argc, argv, &a);
    if (rc != 0) {
        /* CI reads the verdict of a run that could not start too */
        report_result_line(sim_stdout_reports(argc, argv) ? stderr : stdout, rc, NULL);
        return rc;
    }
    if (a.check_dir != NULL) /* a saved run, judged again offline */
        return results_check(a.check_dir, a.max_witnesses);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sim_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = a.soak_min > 0 ? sim_soak(&a, argc, argv) : sim_run_once(&a, argc, argv);
    profile_free(a.profile);
    scenario_file_free(a.scenario_file);
    return rc;
}
