/* args.c - the option table and the parser over it (args.h). Each row names
 * its value kind; one function per kind checks the bounds and stores the
 * value at the row's offset in sim_args. */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "profile.h"
#include "rng.h"
#include "scenario_file.h"
#include "service_ports.h"
#include "threshold.h"

#define DEFAULT_ORDERS 2400
#define DEFAULT_CONCURRENCY 32
#define DEFAULT_DURATION_S 30.0
#define DEFAULT_SETTLE_S 30.0
#define DEFAULT_CHAOS_EVERY_S 5.0
#define DEFAULT_MAX_WITNESSES 10
#define ARGS_THRESHOLDS_MAX 64
#define ARGS_STR_(x) #x
#define ARGS_STR(x) ARGS_STR_(x)

typedef enum {
    OPT_FLAG,      /* int set to 1 */
    OPT_TEXT,      /* const char *; min 1: must not be empty */
    OPT_URL,       /* char[256]: http(s)://..., trailing slashes dropped */
    OPT_GATEWAY,   /* "v2" / "v3": sim_args.dialect; else as OPT_URL */
    OPT_SIZE,      /* size_t in [min, max] */
    OPT_INT,       /* int in [min, max] */
    OPT_U64,       /* uint64_t in [min, max] */
    OPT_SECONDS,   /* double in [min, max] (above_min: > min) */
    OPT_PREFIX,    /* char[SCHED_PREFIX_MAX + 1] of [0-9A-Za-z] */
    OPT_THRESHOLD, /* repeatable: parsed into sim_args.thresholds */
    OPT_HELP,
    OPT_VERSION
} opt_kind;

#define NO_FIELD ((size_t)-1)

typedef struct {
    const char *name;
    const char *meta; /* the value's name in the usage, NULL: no value */
    opt_kind kind;
    size_t off; /* where the value goes in sim_args */
    double min, max;
    int above_min;
    size_t given_off; /* an int set to 1 when the option is given, or NO_FIELD */
    const char *bad;  /* why a value is refused */
    const char *help; /* lines after the first are indented */
} sim_option;

#define F(field) offsetof(sim_args, field)

static const sim_option args_table[] = {
    { "target", "URL", OPT_URL, F(target), 0, 0, 0, NO_FIELD,
      "--target needs an http:// or https:// URL",
      "payment service (default http://127.0.0.1:$IDEMPAY_HTTP_PORT or 18080)" },
    { "gateway", "URL|v2|v3", OPT_GATEWAY, F(gateway), 0, 0, 0, NO_FIELD,
      "--gateway needs an http:// or https:// URL, or v2 or v3",
      "mock gateway admin+ledger (default http://127.0.0.1:$IDEMPAY_MOCK_PORT or 18081);\n"
      "v2 or v3: the WeChat Pay dialect the target is configured with\n"
      "(IDEMPAY_WX_API); the run's prepay orders must have reached\n"
      "the mock in it (/v3/ or /pay/unifiedorder; else exit 2)" },
    { "scenario", "LIST", OPT_TEXT, F(scenarios), 0, 0, 0, NO_FIELD, "--scenario needs a name",
      "all (default), double-click, retry-storm, callback-storm,\n"
      "token-replay, forged-callback, order-mismatch, gateway-chaos,\n"
      "crash (needs --chaos-cmd), nemesis (timing faults aimed at\n"
      "the service's windows), ping (load only, not in all),\n"
      "payer (the real flows' customer, not in all),\n"
      "payer-edge (payments across a refused close, reloads,\n"
      "USERPAYING; not in all), refunds (merchant refunds with\n"
      "the gateway's refund faults; not in all), v3-attacks\n"
      "(forged APIv3 notifications and the platform key rotated\n"
      "mid-run; --gateway v3 only, not in all)" },
    { "orders", "N", OPT_SIZE, F(orders), 1, 1000000, 0, NO_FIELD,
      "--orders needs a number from 1 to 1000000",
      "orders across the scenarios (default " ARGS_STR(DEFAULT_ORDERS) ")" },
    { "concurrency", "C", OPT_INT, F(concurrency), 1, 1024, 0, NO_FIELD,
      "--concurrency needs a number from 1 to 1024",
      "client worker threads (default " ARGS_STR(DEFAULT_CONCURRENCY) ")" },
    { "duration", "S", OPT_SECONDS, F(duration_s), 0, 86400, 0, NO_FIELD,
      "--duration needs seconds from 0 to 86400",
      "traffic budget in seconds; releases are spread over it\n(default 30; 0 = as fast as possible)" },
    { "seed", "N", OPT_U64, F(seed), 0, (double)INT64_MAX, 0, F(seed_given),
      "--seed needs a number from 0 to 9223372036854775807",
      "0..2^63-1; default derived from the time, always printed" },
    { "settle", "S", OPT_SECONDS, F(settle_s), 0, 3600, 0, F(settle_given),
      "--settle needs seconds from 0 to 3600",
      "after healing the gateway, wait up to S seconds for orders\n"
      "to settle (default: the service's lease + FAILED recheck +\n"
      "two reconciler periods + 5 s, at least 30; the wait ends once\n"
      "nothing is pending)" },
    { "json", "FILE", OPT_TEXT, F(json_path), 0, 0, 0, NO_FIELD, NULL,
      "JSON report ('-' for stdout)" },
    { "junit", "FILE", OPT_TEXT, F(junit_path), 0, 0, 0, NO_FIELD, NULL,
      "JUnit XML report, one testcase per scenario x invariant" },
    { "quiet", NULL, OPT_FLAG, F(quiet), 0, 0, 0, NO_FIELD, NULL,
      "no progress lines and no banner (the seed, digest, report\nand result: line are still printed)" },
    { "chaos-cmd", "CMD", OPT_TEXT, F(chaos_cmd), 1, 0, 0, NO_FIELD, "--chaos-cmd needs a command",
      "run 'CMD ACTION' (sh -c) when the schedule plans it: every\n"
      "--chaos-every S seconds in the crash scenario, at drawn\n"
      "times in the nemesis; ACTION is kill-worker, restart-redis,\n"
      "restart-mock or restart-mariadb (drawn from the seed); its\n"
      "output goes to stderr" },
    { "chaos-every", "S", OPT_SECONDS, F(chaos_every_s), 0.1, 3600, 0, F(chaos_every_given),
      "--chaos-every needs seconds from 0.1 to 3600",
      "the crash scenario's chaos period (default 5; needs --chaos-cmd)" },
    { "db", NULL, OPT_FLAG, F(db), 0, 0, 0, NO_FIELD, NULL,
      "also read idempay.payment_order from MariaDB (IDEMPAY_DB_*)" },
    { "prefix", "P", OPT_PREFIX, F(prefix), 0, 0, 0, NO_FIELD,
      "--prefix needs 1 to 12 characters of [0-9A-Za-z]",
      "order-number prefix (default: unique per run, 8 characters)" },
    { "mock-config", "JSON", OPT_TEXT, F(mock_override), 0, 0, 0, NO_FIELD, NULL,
      "merged into every phase's mock config, e.g. '{\"dedupe\":false}'" },
    { "print-schedule", NULL, OPT_FLAG, F(print_schedule), 0, 0, 0, NO_FIELD, NULL,
      "print the generated schedule (its canonical text form)" },
    { "schedule-only", NULL, OPT_FLAG, F(schedule_only), 0, 0, 0, NO_FIELD, NULL,
      "print seed and schedule digest, contact nothing, exit 0" },
    { "max-witnesses", "N", OPT_SIZE, F(max_witnesses), 0, 100000, 0, NO_FIELD,
      "--max-witnesses needs a number",
      "full witnesses in the human report (default " ARGS_STR(DEFAULT_MAX_WITNESSES) ")" },
    { "history", "FILE", OPT_TEXT, F(history_path), 0, 0, 0, NO_FIELD, NULL,
      "every client operation as JSON lines, in time order" },
    { "soak", "MINUTES", OPT_SECONDS, F(soak_min), 0, 7 * 24 * 60, 1, NO_FIELD,
      "--soak needs minutes, more than 0",
      "run again and again with new seeds (each printed) until a\nviolation or the time is up" },
    { "profile", "FILE", OPT_TEXT, F(profile_path), 1, 0, 0, NO_FIELD, "--profile needs a file",
      "target profile (JSON): how to speak to a payment service of\n"
      "another API shape (default: idempay's own API, built in;\n"
      "examples in share/idempay/profiles)" },
    { "out", "DIR", OPT_TEXT, F(out_dir), 1, 0, 0, NO_FIELD, "--out needs a directory",
      "keep the run's folder DIR/<UTC time>-seed<N>/ (reports,\n"
      "report.html, history, ledger, orders, schedule) and DIR/latest\n"
      "(default $IDEMPAY_STATE_DIR/runs, else ./idempay-sim-runs)" },
    { "no-out", NULL, OPT_FLAG, F(no_out), 0, 0, 0, NO_FIELD, NULL, "keep no folder" },
    { "check", "DIR", OPT_TEXT, F(check_dir), 1, 0, 0, NO_FIELD, "--check needs a directory",
      "judge the run saved in DIR again, offline (no service, mock\n"
      "or database): same verdict and exit status" },
    { "threshold", "EXPR", OPT_THRESHOLD, NO_FIELD, 0, 0, 0, NO_FIELD, NULL,
      "a gate on the run's numbers, repeatable: KIND.METRIC OP VALUE,\n"
      "e.g. 'pay.p99<800ms' 'pay.error_rate<0.01' 'callback.rate>50'\n"
      "(KIND pay, query, token, callback, ping, stray, all; METRIC\n"
      "pN, max, mean, error_rate, rate, count)" },
    { "scenario-file", "FILE", OPT_TEXT, F(scenario_file_path), 1, 0, 0, NO_FIELD,
      "--scenario-file needs a file",
      "the phases to run from a JSON file (sim/scenarios/*.json)\ninstead of --scenario" },
    { "help", NULL, OPT_HELP, NO_FIELD, 0, 0, 0, NO_FIELD, NULL, "this text (also -h)" },
    { "version", NULL, OPT_VERSION, NO_FIELD, 0, 0, 0, NO_FIELD, NULL, "the version" },
};

#define ARGS_N (sizeof(args_table) / sizeof(args_table[0]))

/* ---- usage ---- */

static void args_usage_synopsis(FILE *out)
{
    const char *lead = "usage: idempay-sim";
    size_t col = (size_t)fprintf(out, "%s", lead);
    for (size_t i = 0; i < ARGS_N; i++) {
        const sim_option *o = &args_table[i];
        if (o->kind == OPT_HELP || o->kind == OPT_VERSION)
            continue;
        size_t w = strlen(o->name) + (o->meta ? strlen(o->meta) + 1 : 0) + 5;
        if (col + w > 80)
            col = (size_t)fprintf(out, "\n%*s", (int)strlen(lead), "") - 1;
        col += (size_t)fprintf(out, " [--%s%s%s]", o->name, o->meta ? " " : "",
                               o->meta ? o->meta : "");
    }
    fputs("\n\n", out);
}

static void args_usage_option(FILE *out, const sim_option *o)
{
    char head[48];
    snprintf(head, sizeof(head), "--%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
    fprintf(out, "  %-18s ", head);
    for (const char *p = o->help; *p; p++) {
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%21s", "");
    }
    fputc('\n', out);
}

void args_usage(FILE *out)
{
    args_usage_synopsis(out);
    for (size_t i = 0; i < ARGS_N; i++)
        args_usage_option(out, &args_table[i]);
    fputs("\n--json -, --junit - or --history - leave stdout to that document: the seed,\n"
          "progress and human report go to stderr then.\n"
          "exit status: 0 every invariant held; 1 an invariant was violated; 2 the run\n"
          "could not be carried out (target or gateway down, bad arguments); 3 every\n"
          "invariant held but a --threshold failed\n",
          out);
}

/* ---- values ---- */

static int args_number(const char *s, double max, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || (double)v > max || v > (unsigned long long)INT64_MAX)
        return -1;
    *out = v;
    return 0;
}

static int args_seconds(const char *s, const sim_option *o, double *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0.0) || v > o->max || v < o->min ||
        (o->above_min && v <= o->min))
        return -1;
    *out = v;
    return 0;
}

static int args_url(char *dst, size_t len, const char *src)
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

static int args_prefix(char *dst, const char *p)
{
    size_t n = strlen(p);
    if (n < 1 || n > SCHED_PREFIX_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
              (p[i] >= 'A' && p[i] <= 'Z')))
            return -1;
    memcpy(dst, p, n + 1);
    return 0;
}

static sim_threshold args_thresholds[ARGS_THRESHOLDS_MAX];

/* --threshold EXPR: parsed now, so a bad one is refused before anything
 * runs. 0, or -1 after printing why. */
static int args_threshold(sim_args *a, const char *expr)
{
    char err[512];
    if (a->nthresholds == ARGS_THRESHOLDS_MAX) {
        fprintf(stderr, "idempay-sim: at most %d --threshold\n", ARGS_THRESHOLDS_MAX);
        return -1;
    }
    if (threshold_parse(expr, &args_thresholds[a->nthresholds], err, sizeof(err)) < 0) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return -1;
    }
    a->thresholds = args_thresholds;
    a->nthresholds++;
    return 0;
}

/* Stores v as option o wants it. 0, or -1 when v is refused. */
static int args_store(sim_args *a, const sim_option *o, const char *v)
{
    char *field = (char *)a + o->off;
    uint64_t u = 0;
    switch (o->kind) {
    case OPT_FLAG:
        *(int *)field = 1;
        return 0;
    case OPT_TEXT:
        *(const char **)field = v;
        return o->min > 0 && *v == '\0' ? -1 : 0;
    case OPT_GATEWAY:
        if (strcmp(v, "v2") == 0 || strcmp(v, "v3") == 0) {
            a->dialect = v[1] - '0';
            return 0;
        }
        return args_url(field, sizeof(a->target), v);
    case OPT_URL:
        return args_url(field, sizeof(a->target), v);
    case OPT_PREFIX:
        return args_prefix(field, v);
    case OPT_SECONDS:
        return args_seconds(v, o, (double *)field);
    default:
        break;
    }
    if (args_number(v, o->max, &u) < 0 || (double)u < o->min)
        return -1;
    if (o->kind == OPT_SIZE)
        *(size_t *)field = (size_t)u;
    else if (o->kind == OPT_INT)
        *(int *)field = (int)u;
    else
        *(uint64_t *)field = u;
    return 0;
}

/* ---- defaults ---- */

uint64_t args_entropy(void)
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

void args_make_prefix(char out[SCHED_PREFIX_MAX + 1])
{
    static const char b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    uint64_t v = args_entropy();
    out[0] = 's';
    for (int i = 1; i < 8; i++) {
        out[i] = b36[v % 36];
        v /= 36;
    }
    out[8] = '\0';
}

static void args_defaults(sim_args *a)
{
    char url[256];
    memset(a, 0, sizeof(*a));
    snprintf(url, sizeof(url), "http://127.0.0.1:%lld", service_http_port());
    args_url(a->target, sizeof(a->target), url);
    snprintf(url, sizeof(url), "http://127.0.0.1:%lld", service_mock_port());
    args_url(a->gateway, sizeof(a->gateway), url);
    a->scenarios = "all";
    a->orders = DEFAULT_ORDERS;
    a->concurrency = DEFAULT_CONCURRENCY;
    a->duration_s = DEFAULT_DURATION_S;
    a->settle_s = DEFAULT_SETTLE_S;
    a->chaos_every_s = DEFAULT_CHAOS_EVERY_S;
    a->max_witnesses = DEFAULT_MAX_WITNESSES;
}

/* ---- parsing ---- */

/* Acts on option o (value v): stores it, or prints help / version. */
static args_result args_apply(sim_args *a, const sim_option *o, const char *v)
{
    if (o->kind == OPT_HELP || o->kind == OPT_VERSION) {
        if (o->kind == OPT_HELP)
            args_usage(stdout);
        else
            printf("idempay-sim %s\n", IDEMPAY_VERSION);
        return ARGS_DONE;
    }
    if (o->kind == OPT_THRESHOLD)
        return args_threshold(a, v) < 0 ? ARGS_BAD : ARGS_RUN;
    if (args_store(a, o, v) < 0) {
        fprintf(stderr, "idempay-sim: %s (got '%s')\n", o->bad, v);
        return ARGS_BAD;
    }
    if (o->given_off != NO_FIELD)
        *(int *)((char *)a + o->given_off) = 1;
    return ARGS_RUN;
}

static const sim_option *args_kind(opt_kind kind)
{
    size_t i = 0;
    while (i + 1 < ARGS_N && args_table[i].kind != kind)
        i++;
    return &args_table[i];
}

/* The value of the last --NAME VALUE or --NAME=VALUE in argv, or NULL. */
static const char *args_value(int argc, char **argv, const char *name)
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

int args_stdout_reports(int argc, char **argv)
{
    static const char *const flags[] = { "--json", "--junit", "--history" };
    int n = 0;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        const char *v = args_value(argc, argv, flags[i]);
        n += v != NULL && strcmp(v, "-") == 0;
    }
    return n;
}

/* --profile FILE into a->profile. 0, or -1 after printing why (the file is
 * unreadable or not a valid profile, or --db asks for idempay's own table
 * of a target that has not got it). */
static int args_profile(sim_args *a)
{
    char err[512];
    if (a->profile_path == NULL)
        return 0;
    a->profile = profile_load(a->profile_path, err, sizeof(err));
    if (a->profile == NULL) {
        fprintf(stderr, "idempay-sim: --profile %s\n", err);
        return -1;
    }
    if (a->db && !profile_has(a->profile, PROF_FEAT_DB)) {
        fprintf(stderr,
                "idempay-sim: --db reads idempay's payment_order table; the target "
                "profile %s has no such table (features.db)\n",
                a->profile->name);
        profile_free(a->profile);
        a->profile = NULL;
        return -1;
    }
    return 0;
}

/* Where the human output goes, and the scenario file (its orders, duration
 * and concurrency unless the flags give them). 0, or -1 after printing why. */
static int args_output_and_file(int argc, char **argv, sim_args *a)
{
    char err[512];
    int taken = args_stdout_reports(argc, argv);
    if (taken > 1) {
        fprintf(stderr, "idempay-sim: only one of --json, --junit and --history can write to "
                        "stdout ('-')\n");
        return -1;
    }
    a->human = taken ? stderr : stdout;
    if (a->scenario_file_path == NULL)
        return 0;
    if (args_value(argc, argv, "--scenario") != NULL) {
        fprintf(stderr, "idempay-sim: --scenario-file replaces --scenario: give one of them\n");
        return -1;
    }
    sim_scenario_file *f = scenario_file_load(a->scenario_file_path, err, sizeof(err));
    if (f == NULL) {
        fprintf(stderr, "idempay-sim: %s\n", err);
        return -1;
    }
    scenario_file_run run = scenario_file_run_values(f);
    if (args_value(argc, argv, "--orders") == NULL && run.orders > 0)
        a->orders = run.orders;
    if (args_value(argc, argv, "--duration") == NULL && run.duration_s >= 0)
        a->duration_s = run.duration_s;
    if (args_value(argc, argv, "--concurrency") == NULL && run.concurrency > 0)
        a->concurrency = run.concurrency;
    a->scenario_file = f;
    return 0;
}

/* What the options say together; fills in the drawn defaults. */
static args_result args_finish(int argc, char **argv, sim_args *a)
{
    if (optind < argc) {
        fprintf(stderr, "idempay-sim: unexpected argument '%s'\ntry 'idempay-sim --help'\n",
                argv[optind]);
        return ARGS_BAD;
    }
    if (a->chaos_every_given && a->chaos_cmd == NULL) {
        fprintf(stderr, "idempay-sim: --chaos-every needs --chaos-cmd\n");
        return ARGS_BAD;
    }
    if (args_profile(a) < 0 || args_output_and_file(argc, argv, a) < 0)
        return ARGS_BAD;
    if (!a->seed_given)
        a->seed = args_entropy() >> 1;
    if (a->prefix[0] == '\0')
        args_make_prefix(a->prefix);
    return ARGS_RUN;
}

args_result args_parse(int argc, char **argv, sim_args *a)
{
    struct option longopts[ARGS_N + 1];
    for (size_t i = 0; i < ARGS_N; i++)
        longopts[i] = (struct option){ args_table[i].name,
                                       args_table[i].meta ? required_argument : no_argument, NULL,
                                       (int)(1000 + i) };
    longopts[ARGS_N] = (struct option){ NULL, 0, NULL, 0 };
    args_defaults(a);
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, "h", longopts, NULL);
        if (c == -1)
            break;
        args_result r = ARGS_BAD;
        if (c == 'h')
            r = args_apply(a, args_kind(OPT_HELP), NULL);
        else if (c >= 1000 && c < 1000 + (int)ARGS_N)
            r = args_apply(a, &args_table[c - 1000], optarg);
        else
            fprintf(stderr,
                    "idempay-sim: unknown option or missing value: %s\n"
                    "try 'idempay-sim --help'\n",
                    argv[optind - 1]);
        if (r != ARGS_RUN)
            return r;
    }
    return args_finish(argc, argv, a);
}
