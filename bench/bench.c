/* idempay-bench - `./stack bench`: throughput and latency of the service's
 * routes, each against its physical baseline, measured in one run at one
 * concurrency (contract section 6).
 *
 * Every workload runs twice: a closed loop (each of C workers sends as soon
 * as its previous answer arrived) gives the throughput; an open loop paced
 * at half of that throughput gives the latency, measured from each request's
 * intended send time, so a stall is charged to every request it delayed
 * (no coordinated omission). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db_conn.h"
#include "env.h"
#include "http_client.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define MAX_SAMPLES_PER_WORKER (1u << 20)
#define CALLBACK_ORDERS 150000
#define REPEAT_ORDERS 256
#define PACED_SHARE 0.5  /* open-loop rate as a share of the closed-loop throughput */

typedef enum { W_PING, W_PAY, W_REPEAT, W_CALLBACK, W_TOKEN, W_RAWDB, W_COUNT } workload;

static const char *const wl_name[W_COUNT] = {
    "ping", "pay_fresh", "pay_repeat", "callback", "token", "rawdb"
};
static const char *const wl_title[W_COUNT] = {
    "GET /api/ping", "POST /api/pay (fresh)", "POST /api/pay (repeat)",
    "POST callback (verified)", "GET /api/pay/token", "raw DB: INSERT+UPDATE"
};
/* each figure's baseline */
static const workload wl_base[W_COUNT] = { W_PING, W_RAWDB, W_PING, W_RAWDB, W_PING, W_RAWDB };

typedef struct {
    double rps;            /* closed loop */
    double p50_ms, p99_ms; /* open loop, from intended send time */
    double paced_rps;
    long errors;
    long requests;
} result;

static struct {
    char target[256];
    char gateway[256];
    int concurrency;
    double duration;
    char json_path[512];
    char pids[512];
    char only[128];            /* comma-separated workload names, "" = all */
    char run[16];
    const char *key;
    const char *appid;
    const char *mchid;
} opt;

typedef struct {
    int index;
    workload w;
    int paced;                 /* 0 closed loop, 1 open loop */
    double rate;               /* per worker, open loop */
    double start, end;         /* monotonic seconds */
    http_client *http;
    MYSQL *db;
    MYSQL_STMT *ins, *upd;
    double *lat;               /* seconds */
    size_t nlat;
    long errors;
    long seq;                  /* per-workload request counter of this worker */
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    double d = t - now_s();
    if (d > 0) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

/* --- one request of each workload: 0 ok, -1 error -------------------- */

static int do_http(worker *wk, const char *method, const char *path, const char *ctype,
                   const char *body, long expect, const char *must_contain)
{
    char url[512];
    http_reply rep;

    snprintf(url, sizeof url, "%s%s", opt.target, path);
    if (http_client_request(wk->http, method, url, ctype, body, body ? strlen(body) : 0, NULL, 0,
                            &rep) != HTTP_OK)
        return -1;
    if (rep.code != expect)
        return -1;
    if (must_contain && (!rep.body || !strstr(rep.body, must_contain)))
        return -1;
    return 0;
}

static int req_pay(worker *wk, const char *order_no, long user)
{
    char body[256];
    snprintf(body, sizeof body, "{\"order_no\":\"%s\",\"user_id\":%ld,\"amount\":\"1.00\"}",
             order_no, user);
    return do_http(wk, "POST", "/api/pay", "application/json", body, 200, "PAID");
}

static int req_callback(worker *wk, long n)
{
    char order_no[40], txid[40], nonce[33];
    wx_msg m;
    char *xml;
    int rc;

    snprintf(order_no, sizeof order_no, "CB%s_%ld", opt.run, n % CALLBACK_ORDERS);
    snprintf(txid, sizeof txid, "4200%08ld%s%010ld", 20261130L, opt.run, n);
    wx_msg_init(&m);
    wx_nonce(nonce);
    wx_msg_set(&m, "appid", opt.appid);
    wx_msg_set(&m, "bank_type", "CMC");
    wx_msg_set(&m, "cash_fee", "100");
    wx_msg_set(&m, "fee_type", "CNY");
    wx_msg_set(&m, "is_subscribe", "N");
    wx_msg_set(&m, "mch_id", opt.mchid);
    wx_msg_set(&m, "nonce_str", nonce);
    wx_msg_set(&m, "openid", "oBenchOpenId000000000000000");
    wx_msg_set(&m, "out_trade_no", order_no);
    wx_msg_set(&m, "result_code", "SUCCESS");
    wx_msg_set(&m, "return_code", "SUCCESS");
    wx_msg_set(&m, "time_end", "20261130000000");
    wx_msg_set(&m, "total_fee", "100");
    wx_msg_set(&m, "trade_type", "NATIVE");
    wx_msg_set(&m, "transaction_id", txid);
    wx_sign_msg(&m, opt.key, WX_SIGN_MD5, 0);
    xml = wx_xml_build(&m);
    wx_msg_free(&m);
    if (!xml)
        return -1;
    rc = do_http(wk, "POST", "/api/pay/callback/wechat", "text/xml", xml, 200, "SUCCESS");
    free(xml);
    return rc;
}

static int req_rawdb(worker *wk, long n)
{
    char order_no[40], txid[40];

    snprintf(order_no, sizeof order_no, "RW%s_%d_%ld", opt.run, wk->index, n);
    snprintf(txid, sizeof txid, "4201%s%03d%012ld", opt.run, wk->index, n);
    if (db_stmt_exec(wk->ins, "sls", order_no, (long long)(wk->index + 1), "1.00") != 0)
        return -1;
    if (db_stmt_exec(wk->upd, "ss", txid, order_no) != 0)
        return -1;
    return mysql_stmt_affected_rows(wk->upd) == 1 ? 0 : -1;
}

static int one_request(worker *wk)
{
    long n = wk->seq++;
    char buf[96];

    switch (wk->w) {
    case W_PING:
        return do_http(wk, "GET", "/api/ping", NULL, NULL, 200, NULL);
    case W_PAY:
        snprintf(buf, sizeof buf, "BP%s_%d_%c%ld", opt.run, wk->index, wk->paced ? 'b' : 'a', n);
        return req_pay(wk, buf, wk->index + 1);
    case W_REPEAT:
        snprintf(buf, sizeof buf, "BR%s_%ld", opt.run, (n * opt.concurrency + wk->index) % REPEAT_ORDERS);
        return req_pay(wk, buf, 7);
    case W_CALLBACK:
        /* strided so workers never share an order; phase b continues after a */
        return req_callback(wk, (long)wk->index + (n + (wk->paced ? CALLBACK_ORDERS / 2 / opt.concurrency : 0)) * opt.concurrency);
    case W_TOKEN:
        snprintf(buf, sizeof buf, "/api/pay/token?user_id=%d", wk->index + 1);
        return do_http(wk, "GET", buf, NULL, NULL, 200, "token");
    case W_RAWDB:
        return req_rawdb(wk, n + (wk->paced ? 100000000L : 0));
    default:
        return -1;
    }
}

static void *worker_main(void *p)
{
    worker *wk = p;
    double next = wk->start;

    mysql_thread_init();
    while (now_s() < wk->end) {
        double t0;
        if (wk->paced) {
            sleep_until(next);
            t0 = next;                 /* the intended send time */
            next += 1.0 / wk->rate;
        } else {
            t0 = now_s();
        }
        if (one_request(wk) != 0)
            wk->errors++;
        if (wk->nlat < MAX_SAMPLES_PER_WORKER)
            wk->lat[wk->nlat++] = now_s() - t0;
    }
    mysql_thread_end();
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs one phase of workload w with the given workers; fills rps or
 * latency percentiles. Returns 0 or -1. */
static int run_phase(worker *ws, workload w, int paced, double rate_total, result *res)
{
    pthread_t tid[256];
    double start = now_s() + 0.05;
    size_t total = 0, k = 0;
    long requests = 0, errors = 0;
    double *all;

    for (int i = 0; i < opt.concurrency; i++) {
        ws[i].w = w;
        ws[i].paced = paced;
        ws[i].rate = rate_total / opt.concurrency;
        ws[i].start = start + (paced ? (double)i / rate_total : 0);
        ws[i].end = start + opt.duration;
        ws[i].nlat = 0;
        ws[i].errors = 0;
        pthread_create(&tid[i], NULL, worker_main, &ws[i]);
    }
    for (int i = 0; i < opt.concurrency; i++) {
        pthread_join(tid[i], NULL);
        total += ws[i].nlat;
        errors += ws[i].errors;
    }
    requests = (long)total;
    all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        return -1;
    for (int i = 0; i < opt.concurrency; i++) {
        memcpy(all + k, ws[i].lat, ws[i].nlat * sizeof *all);
        k += ws[i].nlat;
    }
    qsort(all, total, sizeof *all, cmp_double);
    if (!paced) {
        res->rps = (double)requests / opt.duration;
        res->requests = requests;
        res->errors = errors;
    } else {
        res->paced_rps = (double)requests / opt.duration;
        res->p50_ms = total ? all[total / 2] * 1e3 : 0;
        res->p99_ms = total ? all[(size_t)((double)(total - 1) * 0.99)] * 1e3 : 0;
        res->errors += errors;
        res->requests += requests;
    }
    free(all);
    return 0;
}

/* Busy share of all CPUs since the previous call, from /proc/stat; -1 when
 * unreadable. */
static double cpu_busy_share(unsigned long long *prev_total, unsigned long long *prev_idle)
{
    unsigned long long v[8] = { 0 }, total = 0, idle;
    FILE *f = fopen("/proc/stat", "r");
    int n;

    if (!f)
        return -1;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return -1;
    for (int i = 0; i < 8; i++)
        total += v[i];
    idle = v[3] + v[4];
    double share = total > *prev_total
        ? 1.0 - (double)(idle - *prev_idle) / (double)(total - *prev_total) : 1.0;
    *prev_total = total;
    *prev_idle = idle;
    return share;
}

/* Waits (at most QUIESCE_MAX_S) until the machine is quiet: a write-heavy
 * phase leaves MariaDB purging and flushing for seconds, and the next
 * phase's latency would pay for it. Quiet = under QUIESCE_BUSY of the CPUs
 * busy over a QUIESCE_STEP_S window. Returns the seconds waited. */
#define QUIESCE_MAX_S 20.0
#define QUIESCE_STEP_S 0.5
#define QUIESCE_BUSY 0.15
static double quiesce(void)
{
    unsigned long long t = 0, i = 0;
    double start = now_s();
    struct timespec step = { 0, (long)(QUIESCE_STEP_S * 1e9) };

    if (cpu_busy_share(&t, &i) < 0)
        return 0;
    while (now_s() - start < QUIESCE_MAX_S) {
        nanosleep(&step, NULL);
        if (cpu_busy_share(&t, &i) < QUIESCE_BUSY)
            break;
    }
    return now_s() - start;
}

/* --- setup ---------------------------------------------------------------- */

static int admin(const char *method, const char *url, const char *body)
{
    http_client *c = http_client_new(2000, 30000);
    http_reply rep;
    int ok;

    if (!c)
        return -1;
    ok = http_client_request(c, method, url, body ? "application/json" : NULL, body,
                             body ? strlen(body) : 0, NULL, 0, &rep) == HTTP_OK && rep.code == 200;
    http_client_free(c);
    return ok ? 0 : -1;
}

static int sql(MYSQL *db, const char *q)
{
    if (db_exec_simple(db, q) != 0) {
        fprintf(stderr, "bench: %s: %s\n", q, mysql_error(db));
        return -1;
    }
    return 0;
}

static int setup(MYSQL *db)
{
    char q[1024], url[512];
    worker wk = { 0 };

    snprintf(url, sizeof url, "%s/mock/reset", opt.gateway);
    if (admin("POST", url, NULL) != 0)
        return -1;
    snprintf(url, sizeof url, "%s/mock/config", opt.gateway);
    if (admin("PUT", url, "{\"latency_ms\":0,\"jitter_ms\":0,\"notify_enabled\":false}") != 0)
        return -1;
    if (sql(db, "CREATE TABLE IF NOT EXISTS bench_payment_order LIKE payment_order") ||
        sql(db, "TRUNCATE TABLE bench_payment_order"))
        return -1;
    /* orders waiting for their notification; the lease keeps the reconciler away */
    snprintf(q, sizeof q,
             "INSERT INTO payment_order (order_no, user_id, amount, status, lease_until) "
             "SELECT CONCAT('CB%s_', seq - 1), 9, 1.00, 1, NOW(3) + INTERVAL 1 HOUR "
             "FROM seq_1_to_%d", opt.run, CALLBACK_ORDERS);
    if (sql(db, q))
        return -1;
    /* orders paid once, for the repeat workload */
    wk.http = http_client_new(2000, 10000);
    for (int i = 0; i < REPEAT_ORDERS && wk.http; i++) {
        char no[64];
        snprintf(no, sizeof no, "BR%s_%d", opt.run, i);
        if (req_pay(&wk, no, 7) != 0) {
            fprintf(stderr, "bench: could not pay %s\n", no);
            http_client_free(wk.http);
            return -1;
        }
    }
    http_client_free(wk.http);
    return 0;
}

static long peak_rss_kb(int pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

static void usage(void)
{
    fprintf(stderr, "usage: idempay-bench [--target URL] [--gateway URL] [--concurrency C] "
                    "[--duration S] [--json FILE] [--pids \"PID ...\"] [--only NAME,...]\n"
                    "  workloads: ping pay_fresh pay_repeat callback token rawdb\n");
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        { "target", required_argument, 0, 't' }, { "gateway", required_argument, 0, 'g' },
        { "concurrency", required_argument, 0, 'c' }, { "duration", required_argument, 0, 'd' },
        { "json", required_argument, 0, 'j' }, { "pids", required_argument, 0, 'p' },
        { "only", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
    };
    result res[W_COUNT] = { 0 };
    worker *ws;
    MYSQL *db;
    char err[256];
    int c, rc = 0;
    json_t *jout, *jrows, *jmem;

    snprintf(opt.target, sizeof opt.target, "http://127.0.0.1:%lld", env_int("IDEMPAY_HTTP_PORT", 18080));
    snprintf(opt.gateway, sizeof opt.gateway, "http://127.0.0.1:%lld", env_int("IDEMPAY_MOCK_PORT", 18081));
    opt.concurrency = 32;
    opt.duration = 5;
    opt.key = env_str("IDEMPAY_WX_KEY", "idempaydevkey0123456789abcdefABC");
    opt.appid = env_str("IDEMPAY_WX_APPID", "wx0000000000000000");
    opt.mchid = env_str("IDEMPAY_WX_MCHID", "1900000109");
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 't': snprintf(opt.target, sizeof opt.target, "%s", optarg); break;
        case 'g': snprintf(opt.gateway, sizeof opt.gateway, "%s", optarg); break;
        case 'c': opt.concurrency = atoi(optarg); break;
        case 'd': opt.duration = atof(optarg); break;
        case 'j': snprintf(opt.json_path, sizeof opt.json_path, "%s", optarg); break;
        case 'p': snprintf(opt.pids, sizeof opt.pids, "%s", optarg); break;
        case 'o': snprintf(opt.only, sizeof opt.only, ",%s,", optarg); break;
        default: usage(); return 2;
        }
    }
    if (opt.concurrency < 1 || opt.concurrency > 256 || opt.duration <= 0) {
        usage();
        return 2;
    }
    snprintf(opt.run, sizeof opt.run, "%05ld", (long)(time(NULL) % 100000));
    if (mysql_library_init(0, NULL, NULL) || http_client_global_init())
        return 2;
    db = db_conn_open("idempay", err, sizeof err);
    if (!db) {
        fprintf(stderr, "bench: %s\n", err);
        return 2;
    }
    if (setup(db) != 0) {
        fprintf(stderr, "bench: setup failed (is the stack up?)\n");
        return 2;
    }
    ws = calloc((size_t)opt.concurrency, sizeof *ws);
    for (int i = 0; i < opt.concurrency; i++) {
        ws[i].index = i;
        ws[i].http = http_client_new(2000, 10000);
        ws[i].lat = malloc(MAX_SAMPLES_PER_WORKER * sizeof(double));
        ws[i].db = db_conn_open("idempay", err, sizeof err);
        if (!ws[i].http || !ws[i].lat || !ws[i].db) {
            fprintf(stderr, "bench: worker setup: %s\n", err);
            return 2;
        }
        ws[i].ins = mysql_stmt_init(ws[i].db);
        ws[i].upd = mysql_stmt_init(ws[i].db);
        static const char ins[] = "INSERT INTO bench_payment_order (order_no, user_id, amount, status, lease_until) "
                                  "VALUES (?, ?, ?, 1, NOW(3) + INTERVAL 10 SECOND)";
        static const char upd[] = "UPDATE bench_payment_order SET status = 2, transaction_id = ?, lease_until = NULL "
                                  "WHERE order_no = ? AND status = 1";
        if (mysql_stmt_prepare(ws[i].ins, ins, sizeof ins - 1) ||
            mysql_stmt_prepare(ws[i].upd, upd, sizeof upd - 1)) {
            fprintf(stderr, "bench: prepare: %s\n", mysql_stmt_error(ws[i].ins));
            return 2;
        }
    }
    fprintf(stderr, "bench: concurrency %d, %.0f s closed loop + %.0f s paced per workload\n",
            opt.concurrency, opt.duration, opt.duration);
    for (int w = 0; w < W_COUNT; w++) {
        char tag[40];
        snprintf(tag, sizeof tag, ",%s,", wl_name[w]);
        if (opt.only[0] && !strstr(opt.only, tag))
            continue;
        double q = quiesce();
        fprintf(stderr, "bench: %s ... (after %.1f s for the machine to quieten)\n", wl_name[w], q);
        for (int i = 0; i < opt.concurrency; i++)
            ws[i].seq = 0;
        run_phase(ws, (workload)w, 0, 0, &res[w]);
        if (res[w].rps > 0) {
            (void)quiesce();
            run_phase(ws, (workload)w, 1, res[w].rps * PACED_SHARE, &res[w]);
        }
    }

    jout = json_object();
    jrows = json_array();
    printf("\nidempay bench: concurrency %d, %.0f s per phase (throughput: closed loop; "
           "latency: paced at half of it, from intended send time)\n\n", opt.concurrency, opt.duration);
    printf("%-26s %10s %9s %9s %10s  %-8s %7s\n", "workload", "req/s", "p50 ms", "p99 ms",
           "ratio", "baseline", "errors");
    for (int w = 0; w < W_COUNT; w++) {
        double ratio = res[wl_base[w]].rps > 0 ? res[w].rps / res[wl_base[w]].rps : 0;
        printf("%-26s %10.0f %9.2f %9.2f %10.2f  %-8s %7ld\n", wl_title[w], res[w].rps,
               res[w].p50_ms, res[w].p99_ms, ratio, wl_name[wl_base[w]], res[w].errors);
        json_array_append_new(jrows, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:s, s:f, s:I, s:I}",
            "workload", wl_name[w], "title", wl_title[w], "rps", res[w].rps, "p50_ms", res[w].p50_ms,
            "p99_ms", res[w].p99_ms, "ratio", ratio, "baseline", wl_name[wl_base[w]],
            "paced_rps", res[w].paced_rps, "requests", (json_int_t)res[w].requests,
            "errors", (json_int_t)res[w].errors));
        if (res[w].errors)
            rc = 1;
    }
    jmem = json_array();
    printf("\nservice processes, peak RSS (VmHWM):");
    for (char *s = opt.pids, *end; *s; s = end) {
        long pid = strtol(s, &end, 10);
        if (end == s)
            break;
        long kb = peak_rss_kb((int)pid);
        printf("  pid %ld %.1f MiB", pid, (double)kb / 1024.0);
        json_array_append_new(jmem, json_pack("{s:I, s:I}", "pid", (json_int_t)pid, "peak_rss_kb", (json_int_t)kb));
    }
    if (opt.only[0])   /* a partial run has no baselines to judge against */
        printf("\n");
    else
        printf("\n\ntargets: pay_fresh >= 0.5 x rawdb: %s   pay_repeat >= 0.5 x ping and p99 < 5 ms: %s   "
           "callback >= 0.5 x rawdb: %s\n",
           res[W_PAY].rps >= 0.5 * res[W_RAWDB].rps ? "met" : "MISSED",
           res[W_REPEAT].rps >= 0.5 * res[W_PING].rps && res[W_REPEAT].p99_ms < 5 ? "met" : "MISSED",
           res[W_CALLBACK].rps >= 0.5 * res[W_RAWDB].rps ? "met" : "MISSED");
    json_object_set_new(jout, "concurrency", json_integer(opt.concurrency));
    json_object_set_new(jout, "duration_s", json_real(opt.duration));
    json_object_set_new(jout, "workloads", jrows);
    json_object_set_new(jout, "service_memory", jmem);
    if (opt.json_path[0] && json_dump_file(jout, opt.json_path, JSON_INDENT(2)) != 0) {
        fprintf(stderr, "bench: cannot write %s\n", opt.json_path);
        rc = 2;
    }
    json_decref(jout);
    {
        char url[512];
        char q[256];
        snprintf(url, sizeof url, "%s/mock/reset", opt.gateway);
        admin("POST", url, NULL);
        /* the callback orders no notification reached: left PROCESSING, the
         * reconciler would work through them once their lease ran out */
        snprintf(q, sizeof q, "DELETE FROM payment_order WHERE order_no LIKE 'CB%s\\_%%' AND status = 1",
                 opt.run);
        if (sql(db, q) != 0)
            fprintf(stderr, "bench: could not remove the unused callback orders\n");
    }
    for (int i = 0; i < opt.concurrency; i++) {
        mysql_stmt_close(ws[i].ins);
        mysql_stmt_close(ws[i].upd);
        mysql_close(ws[i].db);
        http_client_free(ws[i].http);
        free(ws[i].lat);
    }
    free(ws);
    mysql_close(db);
    mysql_library_end();
    return rc;
}
