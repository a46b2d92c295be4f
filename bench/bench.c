/* idempay-bench - `./stack bench`: throughput, latency and cost per request
 * of the service's routes, each against a baseline doing the same work
 * without the service, in one run at one concurrency (contract section 6,
 * issue 18).
 *
 * Every workload runs twice per round: a closed loop (each of C workers
 * sends as soon as its previous answer arrived) gives the throughput and
 * the cost (CPU of every process of the stack, MariaDB's counters); an open
 * loop paced at half of that throughput gives the latency, measured from
 * each request's intended send time, so a stall is charged to every request
 * it delayed (no coordinated omission). --repeat N runs N rounds of all
 * workloads, interleaved, and the report gives medians and spreads; within
 * a round each row runs next to its baseline (bench_round_order).
 *
 * Honesty rules: a request that does not answer exactly as expected is an
 * error; a row with any error is "not measured" and the exit status is 1.
 * Notifications are signed with the merchant key the running service has
 * (its /proc environment), never with a default it may not use; the report
 * says where the key came from, never the key. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>

#include "bench.h"
#include "clocks.h"
#include "db_conn.h"
#include "dev_merchant.h"
#include "env.h"
#include "http_client.h"
#include "service_ports.h"

#define BENCH_MAX_SAMPLES (1u << 20) /* latency samples per worker and phase */
#define BENCH_POOL_RATE 8000.0       /* notifications/s a pool is sized for */

static struct {
    char state_dir[512];
    char json_path[512];
    char only[256];      /* ",name,name," or "" for all */
    char key_source[16]; /* "auto" or "env" */
    char pids[512];      /* --pids: service pids given by the caller */
    double settle_max_s;
    long pool;
} opt;

typedef struct {
    wl_worker wl;
    wl_kind w;
    int paced;
    double rate;       /* per worker, open loop */
    double start, end; /* monotonic seconds */
    double *lat;       /* seconds */
    size_t nlat;
} bench_worker;

typedef struct {
    long requests, errors;
    char first_error[WL_ERROR_MAX];
    double rps; /* requests per second over the phase */
    double p50_ms, p99_ms;
} phase_result;

static void sleep_until(double t)
{
    double d = t - clocks_mono_s();
    if (d > 0) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

/* ---- phases ------------------------------------------------------------- */

static void *bench_worker_main(void *p)
{
    bench_worker *bw = p;
    double next = bw->start;

    mysql_thread_init();
    sleep_until(bw->start);
    while (clocks_mono_s() < bw->end) {
        double t0;
        if (bw->paced) {
            sleep_until(next);
            t0 = next; /* the intended send time */
            next += 1.0 / bw->rate;
        } else {
            t0 = clocks_mono_s();
        }
        (void)wl_request(&bw->wl, bw->w);
        if (bw->nlat < BENCH_MAX_SAMPLES)
            bw->lat[bw->nlat++] = clocks_mono_s() - t0;
    }
    mysql_thread_end();
    return NULL;
}

/* Runs one phase of w on every worker; fills *out. Returns 0 or -1. */
static int bench_phase(bench_worker *ws, int n, wl_kind w, int paced, double rate_total,
                       double duration, int phase_id, phase_result *out)
{
    pthread_t tid[256];
    double start = clocks_mono_s() + 0.05, first_at = 0;
    size_t total = 0, k = 0;
    double *all;
    int started = 0;

    memset(out, 0, sizeof(*out));
    for (int i = 0; i < n; i++) {
        bench_worker *bw = &ws[i];
        wl_worker_phase(&bw->wl, phase_id);
        bw->w = w;
        bw->paced = paced;
        bw->rate = rate_total / n;
        bw->start = start + (paced ? (double)i / rate_total : 0);
        bw->end = start + duration;
        bw->nlat = 0;
        if (pthread_create(&tid[i], NULL, bench_worker_main, bw) != 0)
            break;
        started++;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        total += ws[i].nlat;
        out->errors += ws[i].wl.errors;
        if (ws[i].wl.errors && (first_at == 0 || ws[i].wl.first_error_at < first_at)) {
            first_at = ws[i].wl.first_error_at;
            snprintf(out->first_error, sizeof(out->first_error), "%s", ws[i].wl.first_error);
        }
    }
    if (started < n) {
        fprintf(stderr, "bench: could not start %d worker threads\n", n);
        return -1;
    }
    out->requests = (long)total;
    out->rps = (double)total / duration;
    all = malloc((total ? total : 1) * sizeof(*all));
    if (all == NULL)
        return -1;
    for (int i = 0; i < n; i++) {
        memcpy(all + k, ws[i].lat, ws[i].nlat * sizeof(*all));
        k += ws[i].nlat;
    }
    stats_sort(all, total);
    out->p50_ms = stats_quantile_sorted(all, total, 0.50) * 1e3;
    out->p99_ms = stats_quantile_sorted(all, total, 0.99) * 1e3;
    free(all);
    return 0;
}

/* CPU milliseconds used so far by the stack's processes (not this one):
 * what a phase leaves behind (MariaDB purging and flushing, the service
 * finishing) shows up here; other users of the machine do not. */
static double bench_stack_cpu_ms(const proc_set *ps)
{
    double sum = 0;

    for (int r = 0; r < PROC_ROLE_COUNT; r++) {
        if (r == PROC_BENCH)
            continue;
        for (int i = 0; i < ps->n[r]; i++) {
            double ms = proc_cpu_ms(ps->pid[r][i]);
            if (ms > 0)
                sum += ms;
        }
    }
    return sum;
}

/* Waits (at most opt.settle_max_s) until the stack is quiet: a write-heavy
 * phase leaves MariaDB purging and flushing for seconds, and the next phase
 * would pay for it. Quiet = the stack's processes used under 10 % of one
 * CPU over half a second (the machine's other users are not waited for:
 * the report gives their share as "other"). Returns the seconds waited. */
#define BENCH_SETTLE_STEP_S 0.5
#define BENCH_SETTLE_BUSY 0.10
static double bench_settle(void)
{
    double start = clocks_mono_s(), before, after;
    struct timespec step = { 0, (long)(BENCH_SETTLE_STEP_S * 1e9) };
    proc_set ps;

    if (opt.settle_max_s <= 0)
        return 0;
    proc_discover(opt.state_dir, &ps);
    before = bench_stack_cpu_ms(&ps);
    while (clocks_mono_s() - start < opt.settle_max_s) {
        nanosleep(&step, NULL);
        after = bench_stack_cpu_ms(&ps);
        if (after - before < BENCH_SETTLE_BUSY * BENCH_SETTLE_STEP_S * 1000)
            break;
        before = after;
    }
    return clocks_mono_s() - start;
}

/* ---- cost --------------------------------------------------------------- */

typedef struct {
    proc_set procs;
    double cpu[PROC_ROLE_COUNT][PROC_MAX_PER_ROLE];
    proc_machine machine; /* busy_ms < 0: unknown */
    dbstat db;
} cost_snapshot;

/* Replaces the service's pids with --pids when given. */
static void bench_override_pids(proc_set *ps)
{
    char *s = opt.pids, *end;

    if (opt.pids[0] == '\0')
        return;
    ps->n[PROC_SERVICE] = 0;
    for (;;) {
        long pid = strtol(s, &end, 10);
        if (end == s)
            break;
        if (pid > 0 && ps->n[PROC_SERVICE] < PROC_MAX_PER_ROLE)
            ps->pid[PROC_SERVICE][ps->n[PROC_SERVICE]++] = (int)pid;
        s = end;
    }
}

static void cost_take(MYSQL *db, cost_snapshot *c, const proc_set *procs)
{
    if (procs != NULL) {
        c->procs = *procs;
    } else {
        proc_discover(opt.state_dir, &c->procs);
        bench_override_pids(&c->procs);
    }
    for (int r = 0; r < PROC_ROLE_COUNT; r++)
        for (int i = 0; i < c->procs.n[r]; i++)
            c->cpu[r][i] = proc_cpu_ms(c->procs.pid[r][i]);
    if (proc_machine_cpu_ms(&c->machine) != 0)
        c->machine.busy_ms = -1;
    (void)dbstat_read(db, &c->db);
}

/* Adds the per-request cost between a and b (same processes) to row. */
static void cost_record(const cost_snapshot *a, const cost_snapshot *b, long requests,
                        bench_row *row)
{
    double tracked = 0;

    if (requests <= 0)
        return;
    for (int r = 0; r < PROC_ROLE_COUNT; r++) {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < a->procs.n[r]; i++) {
            if (a->cpu[r][i] < 0 || b->cpu[r][i] < 0)
                continue; /* gone (a respawned worker): its share is unknown */
            sum += b->cpu[r][i] - a->cpu[r][i];
            n++;
        }
        if (n > 0) {
            stats_add(&row->cpu_ms[r], sum / (double)requests);
            tracked += sum;
        }
    }
    if (a->machine.busy_ms >= 0 && b->machine.busy_ms >= 0) {
        double irq = b->machine.irq_ms - a->machine.irq_ms;
        double other = b->machine.busy_ms - a->machine.busy_ms - irq - tracked;
        if (other < 0)
            other = 0; /* tick rounding */
        stats_add(&row->cpu_irq_ms, irq / (double)requests);
        stats_add(&row->cpu_other_ms, other / (double)requests);
        if (tracked + irq + other > 0)
            stats_add(&row->other_share, other / (tracked + irq + other));
    }
    for (int c = 0; c < DBSTAT_COUNT; c++) {
        long long d = dbstat_delta(&a->db, &b->db, (dbstat_counter)c);
        if (d >= 0)
            stats_add(&row->db[c], (double)d / (double)requests);
    }
    {
        static const dbstat_counter writes[] = { DBSTAT_COM_INSERT, DBSTAT_COM_INSERT_SELECT,
                                                 DBSTAT_COM_UPDATE, DBSTAT_COM_DELETE };
        long long sum = 0;
        for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]) && sum >= 0; i++) {
            long long d = dbstat_delta(&a->db, &b->db, writes[i]);
            sum = d >= 0 ? sum + d : -1;
        }
        if (sum >= 0)
            stats_add(&row->db_writes, (double)sum / (double)requests);
    }
}

/* ---- the merchant key ---------------------------------------------------- */

/* The key (and appid, mch_id) of process pid's environment into the
 * buffers, with where it came from in source. Returns 0, or -1 when the
 * environment cannot be read. A process without IDEMPAY_WX_KEY uses the
 * development key (the service's and the mock's documented default). */
static int bench_key_of(int pid, const char *who, char *key, size_t key_cap, char *appid,
                        size_t appid_cap, char *mchid, size_t mchid_cap, char *source,
                        size_t source_cap)
{
    int found = proc_environ_get(pid, "IDEMPAY_WX_KEY", key, key_cap);

    if (found < 0)
        return -1;
    if (found == 0) {
        snprintf(key, key_cap, "%s", IDEMPAY_DEV_KEY);
        snprintf(source, source_cap,
                 "the development key: %s pid %d has no IDEMPAY_WX_KEY "
                 "in its environment, so it uses its documented default",
                 who, pid);
    } else {
        snprintf(source, source_cap, "IDEMPAY_WX_KEY from the environment of %s pid %d (%s)", who,
                 pid,
                 strcmp(key, IDEMPAY_DEV_KEY) == 0 ? "the development key"
                                                   : "not the development key");
    }
    if (appid != NULL && proc_environ_get(pid, "IDEMPAY_WX_APPID", appid, appid_cap) != 1)
        snprintf(appid, appid_cap, "%s", IDEMPAY_DEV_APPID);
    if (mchid != NULL && proc_environ_get(pid, "IDEMPAY_WX_MCHID", mchid, mchid_cap) != 1)
        snprintf(mchid, mchid_cap, "%s", IDEMPAY_DEV_MCHID);
    return 0;
}

/* Fills cfg's keys and r's key sources (see the file comment). */
static void bench_keys(const proc_set *ps, wl_config *cfg, bench_result *r)
{
    const char *env_key = env_str("IDEMPAY_WX_KEY", NULL);
    bool from_env = strcmp(opt.key_source, "env") == 0;

    if (from_env || ps->n[PROC_SERVICE] == 0 ||
        bench_key_of(ps->pid[PROC_SERVICE][0], "service", cfg->key, sizeof(cfg->key), cfg->appid,
                     sizeof(cfg->appid), cfg->mchid, sizeof(cfg->mchid), r->key_source,
                     sizeof(r->key_source)) != 0) {
        const char *why = from_env ? "--key-source env"
                          : ps->n[PROC_SERVICE] == 0
                              ? "no running service found under the state dir"
                              : "the service's environment is unreadable";
        snprintf(cfg->key, sizeof(cfg->key), "%s", env_key ? env_key : IDEMPAY_DEV_KEY);
        snprintf(cfg->appid, sizeof(cfg->appid), "%s",
                 env_str("IDEMPAY_WX_APPID", IDEMPAY_DEV_APPID));
        snprintf(cfg->mchid, sizeof(cfg->mchid), "%s",
                 env_str("IDEMPAY_WX_MCHID", IDEMPAY_DEV_MCHID));
        if (env_key != NULL)
            snprintf(r->key_source, sizeof(r->key_source),
                     "IDEMPAY_WX_KEY from the bench's own environment (%s; %s)",
                     strcmp(env_key, IDEMPAY_DEV_KEY) == 0 ? "the development key"
                                                           : "not the development key",
                     why);
        else
            snprintf(r->key_source, sizeof(r->key_source),
                     "the development key (IDEMPAY_WX_KEY unset; %s)", why);
        snprintf(cfg->mock_key, sizeof(cfg->mock_key), "%s", cfg->key);
        snprintf(r->mock_key_source, sizeof(r->mock_key_source), "the same (%s)", why);
        return;
    }
    if (ps->n[PROC_MOCK] == 0 ||
        bench_key_of(ps->pid[PROC_MOCK][0], "mock", cfg->mock_key, sizeof(cfg->mock_key), NULL, 0,
                     NULL, 0, r->mock_key_source, sizeof(r->mock_key_source)) != 0) {
        snprintf(cfg->mock_key, sizeof(cfg->mock_key), "%s", cfg->key);
        snprintf(r->mock_key_source, sizeof(r->mock_key_source),
                 "the service's (no readable mock process found)");
        return;
    }
    if (strcmp(cfg->mock_key, cfg->key) == 0) {
        snprintf(r->mock_key_source, sizeof(r->mock_key_source),
                 "the same as the service's (mock pid %d)", ps->pid[PROC_MOCK][0]);
    } else {
        size_t used = strlen(r->mock_key_source);
        snprintf(r->mock_key_source + used, sizeof(r->mock_key_source) - used,
                 " - DIFFERS from the service's: its payments cannot verify");
    }
}

/* ---- main ---------------------------------------------------------------- */

/* The order of one round: each row next to its baseline (the ratio is
 * taken between phases seconds apart, not a minute, on a machine whose
 * other load comes and goes), and every other round each group reversed,
 * so a drift in the machine's load favours neither side. Returns the count
 * (every workload once). */
static int bench_round_order(int round, wl_kind out[WL_COUNT])
{
    static const wl_kind groups[][3] = {
        { WL_REPEAT, WL_PING, WL_TOKEN }, /* both against ping */
        { WL_RAWPAY, WL_PAY, WL_COUNT },           { WL_RAWCB, WL_CALLBACK, WL_COUNT },
        { WL_RAWCB_V3, WL_CALLBACK_V3, WL_COUNT }, { WL_RAWPREPAY, WL_PREPAY, WL_COUNT },
        { WL_RAWDB, WL_COUNT, WL_COUNT },
    };
    int n = 0;

    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
        int len = 0;
        while (len < 3 && groups[g][len] != WL_COUNT)
            len++;
        for (int i = 0; i < len; i++)
            out[n++] = groups[g][round % 2 ? len - 1 - i : i];
    }
    return n;
}

static bool bench_selected(wl_kind w)
{
    char tag[40];

    if (opt.only[0] == '\0') /* the v3 rows need the service speaking v3: named only */
        return w != WL_CALLBACK_V3 && w != WL_RAWCB_V3;
    snprintf(tag, sizeof(tag), ",%s,", wl_name(w));
    return strstr(opt.only, tag) != NULL;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: idempay-bench [--concurrency C] [--duration S] [--repeat N] [--only NAME,...]\n"
            "                     [--json FILE] [--settle-max S] [--key-source auto|env]\n"
            "                     [--target URL] [--gateway URL] [--state-dir DIR] [--pool N]\n"
            "                     [--pids \"PID ...\"]\n"
            "  workloads: ping pay_fresh pay_repeat callback token rawdb rawpay rawcallback\n"
            "             prepay rawprepay; callback_v3 rawcallback_v3 (only when named: the\n"
            "             service speaking APIv3, IDEMPAY_WX_API=v3)\n"
            "  exit status: 0 every row measured; 1 a row had errors (not measured); 2 no run\n");
}

/* The command line into cfg, res and opt. Returns 0, or 2 (usage printed). */
static int bench_args(int argc, char **argv, wl_config *cfg, bench_result *res)
{
    static const struct option lo[] = { { "target", required_argument, 0, 't' },
                                        { "gateway", required_argument, 0, 'g' },
                                        { "concurrency", required_argument, 0, 'c' },
                                        { "duration", required_argument, 0, 'd' },
                                        { "repeat", required_argument, 0, 'r' },
                                        { "json", required_argument, 0, 'j' },
                                        { "only", required_argument, 0, 'o' },
                                        { "settle-max", required_argument, 0, 's' },
                                        { "key-source", required_argument, 0, 'k' },
                                        { "state-dir", required_argument, 0, 'S' },
                                        { "pool", required_argument, 0, 'P' },
                                        { "pids", required_argument, 0, 'p' },
                                        { "help", no_argument, 0, 'h' },
                                        { 0, 0, 0, 0 } };
    int c;

    snprintf(cfg->target, sizeof(cfg->target), "http://127.0.0.1:%lld", service_http_port());
    snprintf(cfg->gateway, sizeof(cfg->gateway), "http://127.0.0.1:%lld", service_mock_port());
    snprintf(cfg->public_base, sizeof(cfg->public_base), "http://127.0.0.1:%lld",
             service_public_port());
    snprintf(opt.state_dir, sizeof(opt.state_dir), "%s", env_str("IDEMPAY_STATE_DIR", ".stack"));
    snprintf(opt.key_source, sizeof(opt.key_source), "auto");
    opt.settle_max_s = 20;
    res->concurrency = 32;
    res->duration_s = 5;
    res->rounds = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 't':
            snprintf(cfg->target, sizeof(cfg->target), "%s", optarg);
            break;
        case 'g':
            snprintf(cfg->gateway, sizeof(cfg->gateway), "%s", optarg);
            break;
        case 'c':
            res->concurrency = atoi(optarg);
            break;
        case 'd':
            res->duration_s = atof(optarg);
            break;
        case 'r':
            res->rounds = atoi(optarg);
            break;
        case 'j':
            snprintf(opt.json_path, sizeof(opt.json_path), "%s", optarg);
            break;
        case 'o':
            snprintf(opt.only, sizeof(opt.only), ",%s,", optarg);
            break;
        case 's':
            opt.settle_max_s = atof(optarg);
            break;
        case 'k':
            snprintf(opt.key_source, sizeof(opt.key_source), "%s", optarg);
            break;
        case 'S':
            snprintf(opt.state_dir, sizeof(opt.state_dir), "%s", optarg);
            break;
        case 'P':
            opt.pool = atol(optarg);
            break;
        case 'p':
            snprintf(opt.pids, sizeof(opt.pids), "%s", optarg);
            break;
        default:
            usage();
            return 2;
        }
    }
    if (res->concurrency < 1 || res->concurrency > 256 || res->duration_s <= 0 || res->rounds < 1 ||
        res->rounds > STATS_MAX_RUNS ||
        (strcmp(opt.key_source, "auto") != 0 && strcmp(opt.key_source, "env") != 0)) {
        usage();
        return 2;
    }
    return 0;
}

/* The merchant-door caller the API workloads sign as: IDEMPAY_CALLER
 * (default "dev") with the secret in IDEMPAY_CALLER_SECRET_FILE, default
 * STATE/caller.secret (./stack up writes it). Without it the requests go
 * unsigned (and a stack with the doors answers 401: the row's errors say so). */
static void bench_caller(wl_config *cfg)
{
    char path[600];
    FILE *f;

    snprintf(cfg->caller, sizeof(cfg->caller), "%s", env_str("IDEMPAY_CALLER", "dev"));
    snprintf(path, sizeof(path), "%s/caller.secret", opt.state_dir);
    f = fopen(env_str("IDEMPAY_CALLER_SECRET_FILE", path), "r");
    cfg->caller_secret[0] = '\0';
    if (f != NULL) {
        if (fgets(cfg->caller_secret, sizeof(cfg->caller_secret), f) == NULL)
            cfg->caller_secret[0] = '\0';
        fclose(f);
        cfg->caller_secret[strcspn(cfg->caller_secret, "\r\n")] = '\0';
    }
}

/* The stack as it runs (its processes and the key they use) and the
 * workloads' configuration. */
static void bench_prepare(wl_config *cfg, bench_result *res, bool selected[WL_COUNT])
{
    proc_set procs;
    for (int w = 0; w < WL_COUNT; w++)
        selected[w] = res->row[w].selected = bench_selected((wl_kind)w);
    proc_discover(opt.state_dir, &procs);
    bench_override_pids(&procs);
    bench_keys(&procs, cfg, res);
    snprintf(cfg->notify_url, sizeof(cfg->notify_url), "%s/api/pay/callback/wechat",
             cfg->public_base);
    bench_caller(cfg);
    snprintf(cfg->run, sizeof(cfg->run), "%08ld", (long)(time(NULL) % 100000000L));
    cfg->concurrency = res->concurrency;
    cfg->pool_orders = opt.pool > 0
                           ? opt.pool
                           : (long)(BENCH_POOL_RATE * res->duration_s * (1 + BENCH_PACED_SHARE)) *
                                     res->rounds +
                                 1000;
    snprintf(res->target, sizeof(res->target), "%s", cfg->target);
    snprintf(res->gateway, sizeof(res->gateway), "%s", cfg->gateway);
    res->cpus = proc_cpu_count();
    res->load_start = proc_loadavg();
    wl_init(cfg);
}

/* Opens n workers into ws; *opened counts those to close. 0 or -1. */
static int bench_workers_open(bench_worker *ws, int n, int *opened)
{
    char err[512];
    for (; *opened < n; (*opened)++) {
        bench_worker *bw = &ws[*opened];
        bw->lat = malloc(BENCH_MAX_SAMPLES * sizeof(double));
        if (bw->lat == NULL || wl_worker_open(&bw->wl, *opened, err, sizeof(err)) != 0) {
            fprintf(stderr, "bench: worker setup: %s\n", bw->lat ? err : "out of memory");
            free(bw->lat);
            return -1;
        }
    }
    return 0;
}

/* Adds a phase's requests and errors to its row. */
static void bench_count(bench_row *row, const phase_result *ph)
{
    row->requests += ph->requests;
    row->errors += ph->errors;
    if (ph->errors && !row->first_error[0])
        snprintf(row->first_error, sizeof(row->first_error), "%s", ph->first_error);
}

/* One workload in one round: the closed loop (throughput, cost), then the
 * paced loop (latency). *rps gets the closed loop's throughput. 0 or -1. */
static int bench_workload(bench_worker *ws, MYSQL *db, const bench_result *res, wl_kind w,
                          bench_row *row, int *phase_id, double *rps)
{
    phase_result closed, paced;
    cost_snapshot before, after;

    cost_take(db, &before, NULL);
    if (bench_phase(ws, res->concurrency, w, 0, 0, res->duration_s, (*phase_id)++, &closed) != 0)
        return -1;
    cost_take(db, &after, &before.procs);
    bench_count(row, &closed);
    if (closed.requests <= 0)
        return 0;
    stats_add(&row->rps, closed.rps);
    *rps = closed.rps;
    cost_record(&before, &after, closed.requests, row);
    (void)bench_settle();
    if (bench_phase(ws, res->concurrency, w, 1, closed.rps * BENCH_PACED_SHARE, res->duration_s,
                    (*phase_id)++, &paced) != 0)
        return -1;
    bench_count(row, &paced);
    stats_add(&row->p50_ms, paced.p50_ms);
    stats_add(&row->p99_ms, paced.p99_ms);
    stats_add(&row->paced_rps, paced.rps);
    return 0;
}

/* One round of every selected workload, and the ratios within it. 0 or -1. */
static int bench_round(bench_worker *ws, MYSQL *db, bench_result *res,
                       const bool selected[WL_COUNT], int round, int *phase_id)
{
    double round_rps[WL_COUNT] = { 0 };
    wl_kind order[WL_COUNT];
    int n_order = bench_round_order(round, order);
    for (int k = 0; k < n_order; k++) {
        wl_kind w = order[k];
        bench_row *row = &res->row[w];
        long errors_before = row->errors;
        if (!selected[w])
            continue;
        double waited = bench_settle();
        fprintf(stderr, "bench: round %d/%d %s ... (after %.1f s for the stack to quieten)\n",
                round + 1, res->rounds, wl_name(w), waited);
        if (bench_workload(ws, db, res, w, row, phase_id, &round_rps[w]) != 0)
            return -1;
        if (row->errors > errors_before) {
            row->rounds_with_errors++;
            fprintf(stderr, "bench: %s: %ld errors; first: %s\n", wl_name(w),
                    row->errors - errors_before, row->first_error);
        }
    }
    for (int w = 0; w < WL_COUNT; w++) {
        wl_kind b = wl_baseline((wl_kind)w);
        if (round_rps[w] > 0 && round_rps[b] > 0)
            stats_add(&res->row[w].ratio, round_rps[w] / round_rps[b]);
        if ((w == WL_PAY || w == WL_CALLBACK) && round_rps[w] > 0 && round_rps[WL_RAWDB] > 0)
            stats_add(&res->row[w].ratio_rawdb, round_rps[w] / round_rps[WL_RAWDB]);
    }
    return 0;
}

/* Every notification that was answered SUCCESS must have paid its order. */
static void bench_check_pools(MYSQL *db, bench_result *res, const bool selected[WL_COUNT])
{
    static const wl_kind pooled[] = { WL_CALLBACK, WL_RAWCB, WL_CALLBACK_V3, WL_RAWCB_V3 };
    for (size_t i = 0; i < sizeof(pooled) / sizeof(pooled[0]); i++) {
        wl_kind w = pooled[i];
        long used = wl_pool_used(w), paid;
        if (!selected[w] || res->row[w].errors)
            continue;
        paid = wl_pool_paid(db, w);
        if (paid != used) {
            res->row[w].errors += paid < 0 ? 1 : labs(used - paid);
            snprintf(res->row[w].first_error, sizeof(res->row[w].first_error),
                     "%ld notifications answered as applied, but %ld of their orders are PAID",
                     used, paid);
        }
    }
}

/* The stack's state at the end, the reports and the exit status. */
static int bench_finish(bench_result *res, const bool selected[WL_COUNT])
{
    proc_set procs;
    int rc = 0;
    res->load_end = proc_loadavg();
    proc_discover(opt.state_dir, &procs);
    bench_override_pids(&procs);
    res->n_service = procs.n[PROC_SERVICE];
    for (int i = 0; i < res->n_service; i++) {
        res->service_pids[i] = procs.pid[PROC_SERVICE][i];
        res->service_peak_rss_kb[i] = proc_peak_rss_kb(procs.pid[PROC_SERVICE][i]);
    }
    report_print(res);
    for (int w = 0; w < WL_COUNT; w++)
        if (selected[w] && !bench_row_measured(res, (wl_kind)w))
            rc = 1;
    if (opt.json_path[0] && report_json(res, opt.json_path) != 0) {
        fprintf(stderr, "bench: cannot write %s\n", opt.json_path);
        rc = 2;
    }
    return rc;
}

/* Fixtures, workers, the rounds and the reports, over an open db. */
static int bench_run(MYSQL *db, bench_result *res, const bool selected[WL_COUNT],
                     bench_worker **wsp, int *workers)
{
    char err[512];
    int phase_id = 0;
    fprintf(stderr, "bench: merchant key: %s\n", res->key_source);
    if (wl_fixtures_setup(db, selected, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: setup failed (is the stack up?): %s\n", err);
        return 2;
    }
    *wsp = calloc((size_t)res->concurrency, sizeof(**wsp));
    if (*wsp == NULL || bench_workers_open(*wsp, res->concurrency, workers) != 0)
        return 2;
    fprintf(stderr,
            "bench: concurrency %d, %g s closed loop + %g s paced per workload, %d round%s\n",
            res->concurrency, res->duration_s, res->duration_s, res->rounds,
            res->rounds > 1 ? "s" : "");
    for (int round = 0; round < res->rounds; round++)
        if (bench_round(*wsp, db, res, selected, round, &phase_id) != 0)
            return 2;
    bench_check_pools(db, res, selected);
    return bench_finish(res, selected);
}

int main(int argc, char **argv)
{
    static wl_config cfg;
    static bench_result res;
    bench_worker *ws = NULL;
    MYSQL *db = NULL;
    char err[512];
    bool selected[WL_COUNT];
    int rc, workers = 0;

    if (bench_args(argc, argv, &cfg, &res) != 0)
        return 2;
    bench_prepare(&cfg, &res, selected);
    if (mysql_library_init(0, NULL, NULL) || http_client_global_init())
        return 2;
    db = db_conn_open_as(DB_ACCOUNT_MIGRATE, "idempay", err, sizeof(err));
    if (db == NULL) {
        fprintf(stderr, "bench: %s (is the stack up?)\n", err);
        return 2;
    }
    rc = bench_run(db, &res, selected, &ws, &workers);
    (void)wl_fixtures_teardown(db); /* its problems are printed; the figures stand */
    for (int i = 0; ws != NULL && i < workers; i++) {
        wl_worker_close(&ws[i].wl);
        free(ws[i].lat);
    }
    free(ws);
    mysql_close(db);
    mysql_library_end();
    return rc;
}
