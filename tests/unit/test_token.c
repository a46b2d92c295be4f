/* test_token.c - CUnit suite for app/token: the token text (OS randomness,
 * base64url, uniqueness) and the consume script against the stack's REAL
 * Redis (127.0.0.1:$IDEMPAY_REDIS_PORT, default 16379). Redis down = failure. */
#include <CUnit/Basic.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "app_ctx.h"
#include "config.h"
#include "http_client.h"
#include "log.h"
#include "token.h"

#define NTHREADS 16
#define ROUNDS 12
#define NGEN 20000

static app_config cfg;
static app_ctx *ctx;
static char run_tag[24]; /* makes this run's order numbers unique */

/* ---- helpers --------------------------------------------------------- */

static redisReply *cmd(const char *fmt, const char *arg)
{
    CU_ASSERT_FATAL(ctx->redis != NULL);
    return redisCommand(ctx->redis, fmt, arg);
}

static void token_key(const char *tok, char *key, size_t len)
{
    snprintf(key, len, "%s%s", TOKEN_KEY_PREFIX, tok);
}

/* The value stored under the token's key, "" when absent. */
static void stored_value(const char *tok, char *out, size_t len)
{
    char key[128];
    token_key(tok, key, sizeof(key));
    CU_ASSERT_FATAL(app_ctx_redis(ctx) == 0);
    redisReply *r = cmd("GET %s", key);
    CU_ASSERT_FATAL(r != NULL);
    out[0] = '\0';
    if (r->type == REDIS_REPLY_STRING)
        snprintf(out, len, "%s", r->str);
    freeReplyObject(r);
}

static long long key_ttl(const char *tok)
{
    char key[128];
    token_key(tok, key, sizeof(key));
    CU_ASSERT_FATAL(app_ctx_redis(ctx) == 0);
    redisReply *r = cmd("TTL %s", key);
    CU_ASSERT_FATAL(r != NULL && r->type == REDIS_REPLY_INTEGER);
    long long t = r->integer;
    freeReplyObject(r);
    return t;
}

static void del_token(const char *tok)
{
    char key[128];
    token_key(tok, key, sizeof(key));
    if (app_ctx_redis(ctx) == 0)
        freeReplyObject(cmd("DEL %s", key));
}

static void order(char *out, size_t len, const char *what, int i)
{
    snprintf(out, len, "T%s%s%d", run_tag, what, i);
}

static int b64url_val(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '-')
        return 62;
    if (ch == '_')
        return 63;
    return -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* A TCP port on 127.0.0.1 that nothing listens on (bound, then closed). */
static int dead_port(void)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* ---- token text ------------------------------------------------------ */

static void test_entropy_is_enough(void)
{
    CU_ASSERT(TOKEN_RANDOM_BYTES * 8 >= 128);
    CU_ASSERT(TOKEN_TEXT_LEN == (TOKEN_RANDOM_BYTES * 4 + 2) / 3);
}

static void test_generate_format(void)
{
    for (int i = 0; i < 1000; i++) {
        char t[TOKEN_TEXT_MAX];
        memset(t, 'x', sizeof(t));
        CU_ASSERT_FATAL(token_generate(t) == 0);
        CU_ASSERT(strlen(t) == TOKEN_TEXT_LEN);
        for (size_t k = 0; k < strlen(t); k++)
            CU_ASSERT(b64url_val(t[k]) >= 0); /* URL-safe: no + / = */
        CU_ASSERT(token_text_valid(t));
    }
}

/* 20,000 tokens: all distinct, and every one of the 192 bits is set in about
 * half of them (a constant or counter-like source fails by a wide margin). */
static void test_generate_unique_and_random(void)
{
    char(*all)[TOKEN_TEXT_MAX] = calloc(NGEN, TOKEN_TEXT_MAX);
    unsigned *ones = calloc(TOKEN_RANDOM_BYTES * 8, sizeof(unsigned));
    CU_ASSERT_FATAL(all != NULL && ones != NULL);

    for (int i = 0; i < NGEN; i++) {
        CU_ASSERT_FATAL(token_generate(all[i]) == 0);
        unsigned char raw[TOKEN_RANDOM_BYTES];
        for (int g = 0; g < TOKEN_TEXT_LEN / 4; g++) {
            unsigned long v = 0;
            for (int k = 0; k < 4; k++)
                v = (v << 6) | (unsigned long)b64url_val(all[i][g * 4 + k]);
            raw[g * 3] = (unsigned char)(v >> 16);
            raw[g * 3 + 1] = (unsigned char)(v >> 8);
            raw[g * 3 + 2] = (unsigned char)v;
        }
        for (int b = 0; b < TOKEN_RANDOM_BYTES * 8; b++)
            ones[b] += (raw[b / 8] >> (b % 8)) & 1u;
    }
    qsort(all, NGEN, TOKEN_TEXT_MAX, cmp_str);
    int dups = 0;
    for (int i = 1; i < NGEN; i++)
        dups += strcmp(all[i - 1], all[i]) == 0;
    CU_ASSERT_EQUAL(dups, 0);
    for (int b = 0; b < TOKEN_RANDOM_BYTES * 8; b++) {
        CU_ASSERT(ones[b] > NGEN * 45 / 100);
        CU_ASSERT(ones[b] < NGEN * 55 / 100);
    }
    free(all);
    free(ones);
}

static void test_text_valid_bounds(void)
{
    char t[TOKEN_TEXT_MAX];
    CU_ASSERT_FATAL(token_generate(t) == 0);
    CU_ASSERT(token_text_valid(t));
    CU_ASSERT(!token_text_valid(NULL));
    CU_ASSERT(!token_text_valid(""));

    char longer[TOKEN_TEXT_MAX + 1];
    snprintf(longer, sizeof(longer), "%sA", t);
    CU_ASSERT(!token_text_valid(longer));
    char shorter[TOKEN_TEXT_MAX];
    snprintf(shorter, sizeof(shorter), "%s", t);
    shorter[TOKEN_TEXT_LEN - 1] = '\0';
    CU_ASSERT(!token_text_valid(shorter));

    const char bad[] = { '+', '/', '=', ' ', '.', ':', '%', '*', '\x80', '\xff' };
    for (size_t i = 0; i < sizeof(bad); i++) {
        char m[TOKEN_TEXT_MAX];
        snprintf(m, sizeof(m), "%s", t);
        m[5] = bad[i];
        CU_ASSERT(!token_text_valid(m));
    }
}

/* ---- Redis: issue and consume --------------------------------------- */

static void test_redis_is_up(void)
{
    /* Redis unreachable fails this suite: it is the stack's own Redis. */
    int rc = app_ctx_redis(ctx);
    if (rc != 0)
        fprintf(stderr, "\ntest_token: Redis at %s:%d unreachable: %s\n", cfg.redis_host,
                cfg.redis_port, ctx->err);
    CU_ASSERT_FATAL(rc == 0);
}

static void test_issue_stores_user_with_ttl(void)
{
    char t[TOKEN_TEXT_MAX], v[64];
    CU_ASSERT_FATAL(token_issue(ctx, 4242, 900, t) == 0);
    CU_ASSERT(token_text_valid(t));
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, "4242");
    long long ttl = key_ttl(t);
    CU_ASSERT(ttl > 890 && ttl <= 900);
    del_token(t);

    CU_ASSERT(token_issue(ctx, 0, 900, t) == -2);
    CU_ASSERT(token_issue(ctx, -5, 900, t) == -2);
    CU_ASSERT(token_issue(ctx, 1, 0, t) == -2);
    CU_ASSERT_STRING_EQUAL(t, "");
}

static void test_consume_lifecycle(void)
{
    char t[TOKEN_TEXT_MAX], o1[40], o2[40], v[96], want[96];
    order(o1, sizeof(o1), "L", 1);
    order(o2, sizeof(o2), "L", 2);
    CU_ASSERT_FATAL(token_issue(ctx, 77, 900, t) == 0);

    CU_ASSERT_EQUAL(token_consume(ctx, t, 77, o1), TOKEN_ACCEPTED);
    /* bound, not deleted: kept at least a day so retries are recognised */
    snprintf(want, sizeof(want), "used:77:%s", o1);
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, want);
    CU_ASSERT(key_ttl(t) > TOKEN_USED_KEEP_MIN_S - 60);
    CU_ASSERT(key_ttl(t) >= cfg.idempotency_ttl_s - 60);

    CU_ASSERT_EQUAL(token_consume(ctx, t, 77, o1), TOKEN_RETRY);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 77, o2), TOKEN_INVALID); /* another order */
    CU_ASSERT_EQUAL(token_consume(ctx, t, 78, o1), TOKEN_INVALID); /* another user, same order */
    CU_ASSERT_EQUAL(token_consume(ctx, t, 78, o2), TOKEN_INVALID);
    /* refusals change nothing: the retry still passes */
    CU_ASSERT_EQUAL(token_consume(ctx, t, 77, o1), TOKEN_RETRY);
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, want);
    del_token(t);
}

static void test_other_users_token_stays_usable(void)
{
    char t[TOKEN_TEXT_MAX], o[40], v[64];
    order(o, sizeof(o), "U", 1);
    CU_ASSERT_FATAL(token_issue(ctx, 1001, 900, t) == 0);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 1002, o), TOKEN_INVALID);
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, "1001");
    CU_ASSERT_EQUAL(token_consume(ctx, t, 1001, o), TOKEN_ACCEPTED);
    del_token(t);
}

static void test_unknown_malformed_and_bad_args(void)
{
    char t[TOKEN_TEXT_MAX], o[40];
    order(o, sizeof(o), "K", 1);
    CU_ASSERT_FATAL(token_generate(t) == 0); /* never stored */
    CU_ASSERT_EQUAL(token_consume(ctx, t, 5, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, NULL, 5, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, "", 5, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, "abc", 5, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, "../../etc/passwd*?[]{}\r\nDEL x", 5, o), TOKEN_INVALID);

    CU_ASSERT_FATAL(token_issue(ctx, 5, 900, t) == 0);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 0, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, t, -5, o), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 5, "bad"), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 5, NULL), TOKEN_INVALID);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 5, "has space!!"), TOKEN_INVALID);
    /* none of that used it up */
    CU_ASSERT_EQUAL(token_consume(ctx, t, 5, o), TOKEN_ACCEPTED);
    del_token(t);
}

static void test_expired_token_is_invalid(void)
{
    char t[TOKEN_TEXT_MAX], o[40];
    order(o, sizeof(o), "E", 1);
    CU_ASSERT_FATAL(token_issue(ctx, 9, 1, t) == 0);
    CU_ASSERT(key_ttl(t) == 1);
    struct timespec ts = { 1, 200 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 9, o), TOKEN_INVALID);
}

static void test_noscript_reload_and_reconnect(void)
{
    char t[TOKEN_TEXT_MAX], o[40];
    order(o, sizeof(o), "S", 1);
    CU_ASSERT_FATAL(token_issue(ctx, 31, 900, t) == 0);
    /* a script load does not survive a Redis restart: NOSCRIPT -> reload */
    redisReply *r = redisCommand(ctx->redis, "SCRIPT FLUSH");
    CU_ASSERT_FATAL(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 31, o), TOKEN_ACCEPTED);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 31, o), TOKEN_RETRY);

    /* a new connection (generation bumped) loads the script again */
    unsigned long gen = ctx->redis_generation;
    app_ctx_redis_lost(ctx);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 31, o), TOKEN_RETRY);
    CU_ASSERT(ctx->redis_generation != gen);
    del_token(t);
}

/* Redis closes ctx's connection (as a restart does): the next call must not
 * fail with 503 but reconnect once and go on. */
static void kill_ctx_connection(void)
{
    CU_ASSERT_FATAL(app_ctx_redis(ctx) == 0);
    redisReply *id = redisCommand(ctx->redis, "CLIENT ID");
    CU_ASSERT_FATAL(id != NULL && id->type == REDIS_REPLY_INTEGER);
    app_ctx *killer = app_ctx_new(&cfg, 98);
    CU_ASSERT_FATAL(killer != NULL && app_ctx_redis(killer) == 0);
    char num[32];
    snprintf(num, sizeof(num), "%lld", id->integer);
    redisReply *k = redisCommand(killer->redis, "CLIENT KILL ID %s", num);
    CU_ASSERT_FATAL(k != NULL && k->type == REDIS_REPLY_INTEGER && k->integer == 1);
    freeReplyObject(k);
    freeReplyObject(id);
    app_ctx_free(killer);
}

static void test_connection_closed_by_redis(void)
{
    char t[TOKEN_TEXT_MAX], o[40];
    order(o, sizeof(o), "C", 1);
    CU_ASSERT_FATAL(token_issue(ctx, 61, 900, t) == 0);
    CU_ASSERT_EQUAL(token_consume(ctx, t, 61, o), TOKEN_ACCEPTED); /* script loaded */

    unsigned long gen = ctx->redis_generation;
    kill_ctx_connection();
    CU_ASSERT_EQUAL(token_consume(ctx, t, 61, o), TOKEN_RETRY);
    CU_ASSERT(ctx->redis_generation == gen + 1);
    del_token(t);

    gen = ctx->redis_generation;
    kill_ctx_connection();
    CU_ASSERT_EQUAL(token_issue(ctx, 61, 900, t), 0);
    CU_ASSERT(ctx->redis_generation == gen + 1);
    CU_ASSERT(token_text_valid(t));
    del_token(t);
}

/* ---- atomicity: many workers, one token ----------------------------- */

typedef struct {
    pthread_barrier_t *start;
    const char *token;
    long long user_id;
    char order_no[40];
    app_ctx *ctx;
    token_result result;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    pthread_barrier_wait(r->start);
    r->result = token_consume(r->ctx, r->token, r->user_id, r->order_no);
    return NULL;
}

/* same_order: every worker presents the token with the same order (double
 * click); otherwise each with its own order (token replay). */
static void run_race(int same_order)
{
    racer rs[NTHREADS];
    pthread_t th[NTHREADS];
    pthread_barrier_t start;
    char t[TOKEN_TEXT_MAX];

    for (int i = 0; i < NTHREADS; i++) {
        rs[i].ctx = app_ctx_new(&cfg, 100 + i);
        CU_ASSERT_FATAL(rs[i].ctx != NULL);
        CU_ASSERT_FATAL(app_ctx_redis(rs[i].ctx) == 0); /* connect before the race */
    }
    for (int round = 0; round < ROUNDS; round++) {
        CU_ASSERT_FATAL(token_issue(ctx, 555, 900, t) == 0);
        CU_ASSERT_FATAL(pthread_barrier_init(&start, NULL, NTHREADS) == 0);
        for (int i = 0; i < NTHREADS; i++) {
            rs[i].start = &start;
            rs[i].token = t;
            rs[i].user_id = 555;
            order(rs[i].order_no, sizeof(rs[i].order_no), same_order ? "D" : "R",
                  same_order ? round : round * 100 + i);
            rs[i].result = (token_result)-1;
            CU_ASSERT_FATAL(pthread_create(&th[i], NULL, race, &rs[i]) == 0);
        }
        int accepted = 0, retry = 0, invalid = 0;
        for (int i = 0; i < NTHREADS; i++) {
            pthread_join(th[i], NULL);
            accepted += rs[i].result == TOKEN_ACCEPTED;
            retry += rs[i].result == TOKEN_RETRY;
            invalid += rs[i].result == TOKEN_INVALID;
        }
        pthread_barrier_destroy(&start);
        CU_ASSERT_EQUAL(accepted, 1);
        if (same_order) {
            CU_ASSERT_EQUAL(retry, NTHREADS - 1);
        } else {
            CU_ASSERT_EQUAL(invalid, NTHREADS - 1);
        }
        del_token(t);
    }
    for (int i = 0; i < NTHREADS; i++)
        app_ctx_free(rs[i].ctx);
}

static void test_race_same_order(void)
{
    run_race(1);
}
static void test_race_distinct_orders(void)
{
    run_race(0);
}

/* ---- Redis down ------------------------------------------------------ */

static void test_redis_down_is_unavailable(void)
{
    app_config down = cfg;
    down.redis_port = dead_port();
    app_ctx *d = app_ctx_new(&down, 99);
    CU_ASSERT_FATAL(d != NULL);
    char t[TOKEN_TEXT_MAX], o[40];
    order(o, sizeof(o), "X", 1);
    CU_ASSERT_FATAL(token_generate(t) == 0);

    CU_ASSERT_EQUAL(token_consume(d, t, 3, o), TOKEN_UNAVAILABLE);
    CU_ASSERT_EQUAL(token_issue(d, 3, 900, t), -1);
    CU_ASSERT_STRING_EQUAL(t, "");

    http_request req = { .method = "GET",
                         .path = "/api/pay/token",
                         .query = "user_id=3",
                         .content_type = "",
                         .remote_addr = "",
                         .body = "" };
    http_response resp;
    http_response_init(&resp);
    token_handle_issue(d, &req, &resp);
    CU_ASSERT_EQUAL(resp.status, 503);
    CU_ASSERT(strstr(resp.headers, "Retry-After: ") != NULL);
    json_t *j = json_loadb(resp.body != NULL ? resp.body : "", resp.body_len, 0, NULL);
    CU_ASSERT_FATAL(j != NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "error")), "unavailable");
    CU_ASSERT(json_is_string(json_object_get(j, "message")));
    json_decref(j);
    http_response_free(&resp);
    app_ctx_free(d);
}

/* ---- the GET /api/pay/token handler ---------------------------------- */

static int issue_status(const char *query, json_t **body, http_response *resp)
{
    http_request req = { .method = "GET",
                         .path = "/api/pay/token",
                         .query = query,
                         .content_type = "",
                         .remote_addr = "",
                         .body = "" };
    http_response_init(resp);
    token_handle_issue(ctx, &req, resp);
    *body = json_loadb(resp->body != NULL ? resp->body : "", resp->body_len, 0, NULL);
    return resp->status;
}

static void test_handler_issues(void)
{
    json_t *j = NULL;
    http_response resp;
    char v[64];

    CU_ASSERT_EQUAL(issue_status("user_id=42", &j, &resp), 200);
    CU_ASSERT_FATAL(j != NULL);
    const char *t = json_string_value(json_object_get(j, "token"));
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT(token_text_valid(t));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "expires_in")), cfg.token_ttl_s);
    CU_ASSERT(strstr(resp.content_type, "application/json") != NULL);
    CU_ASSERT(strstr(resp.headers, "Cache-Control: no-store") != NULL);
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, "42");
    del_token(t);
    json_decref(j);
    http_response_free(&resp);

    CU_ASSERT_EQUAL(issue_status("a=b&user_id=9223372036854775807", &j, &resp), 200);
    CU_ASSERT_FATAL(j != NULL);
    t = json_string_value(json_object_get(j, "token"));
    CU_ASSERT_FATAL(t != NULL);
    stored_value(t, v, sizeof(v));
    CU_ASSERT_STRING_EQUAL(v, "9223372036854775807");
    del_token(t);
    json_decref(j);
    http_response_free(&resp);
}

static void test_handler_rejects_bad_user_id(void)
{
    static const char *const bad[] = {
        "",
        "user=1",
        "user_id=",
        "user_id=0",
        "user_id=-1",
        "user_id=+1",
        "user_id=1.0",
        "user_id=1e3",
        "user_id=abc",
        "user_id=%201",
        "user_id=1%20",
        "user_id=0x10",
        "user_id=9223372036854775808",
        "user_id=99999999999999999999",
        "user_id=18446744073709551617",
        "user_id=1&user_id=2",
        "user_id=000000000000000000000000000001",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = NULL;
        http_response resp;
        int st = issue_status(bad[i], &j, &resp);
        if (st != 400)
            fprintf(stderr, "\nquery '%s' gave %d\n", bad[i], st);
        CU_ASSERT_EQUAL(st, 400);
        CU_ASSERT_FATAL(j != NULL);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "error")), "invalid_request");
        json_decref(j);
        http_response_free(&resp);
    }
}

/* ---- suite ----------------------------------------------------------- */

static int suite_init(void)
{
    setenv("IDEMPAY_LOG_LEVEL", "warn", 0); /* the race tests log 100s of refusals */
    log_init("test_token");
    /* The suite also flushes scripts and kills clients, which the service's
     * Redis ACL user may not: it authenticates as the stack's admin user
     * (the same AUTH path); test_privilege.py checks the service's limits. */
    if (getenv("IDEMPAY_REDIS_ADMIN_PASSWORD") != NULL) {
        setenv("IDEMPAY_REDIS_USER", getenv("IDEMPAY_REDIS_ADMIN_USER"), 1);
        setenv("IDEMPAY_REDIS_PASSWORD", getenv("IDEMPAY_REDIS_ADMIN_PASSWORD"), 1);
    }
    if (app_config_load(&cfg) != 0)
        return -1;
    snprintf(run_tag, sizeof(run_tag), "%ld%d", (long)time(NULL) % 100000000L,
             (int)getpid() % 10000);
    ctx = app_ctx_new(&cfg, 0);
    return ctx != NULL ? 0 : -1;
}

static int suite_fini(void)
{
    app_ctx_free(ctx);
    ctx = NULL;
    return 0;
}

int main(void)
{
    if (http_client_global_init() != 0)
        return 2;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("token", suite_init, suite_fini);
    if (s == NULL ||
        !CU_add_test(s, "a token has at least 128 bits of entropy", test_entropy_is_enough) ||
        !CU_add_test(s, "a token is base64url text", test_generate_format) ||
        !CU_add_test(s, "tokens are unique and every bit random",
                     test_generate_unique_and_random) ||
        !CU_add_test(s, "text_valid accepts tokens within their bounds only",
                     test_text_valid_bounds) ||
        !CU_add_test(s, "the stack's Redis is reachable", test_redis_is_up) ||
        !CU_add_test(s, "issue stores the user with the ttl", test_issue_stores_user_with_ttl) ||
        !CU_add_test(s, "consume accepts once, then retries the same order, refuses others",
                     test_consume_lifecycle) ||
        !CU_add_test(s, "another user's token stays usable after a refusal",
                     test_other_users_token_stays_usable) ||
        !CU_add_test(s, "an unknown or malformed token or bad arguments are refused",
                     test_unknown_malformed_and_bad_args) ||
        !CU_add_test(s, "an expired token is invalid", test_expired_token_is_invalid) ||
        !CU_add_test(s, "consume reloads its script after NOSCRIPT and reconnects",
                     test_noscript_reload_and_reconnect) ||
        !CU_add_test(s, "a connection closed by Redis is reconnected once",
                     test_connection_closed_by_redis) ||
        !CU_add_test(s, "racing consumers of one token for one order: one wins, the rest retry",
                     test_race_same_order) ||
        !CU_add_test(s, "racing consumers of one token for many orders: one order wins",
                     test_race_distinct_orders) ||
        !CU_add_test(s, "with Redis down a token is unavailable, 503",
                     test_redis_down_is_unavailable) ||
        !CU_add_test(s, "the handler issues a token with 200", test_handler_issues) ||
        !CU_add_test(s, "the handler answers 400 for a bad user_id",
                     test_handler_rejects_bad_user_id)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed != 0 ? 1 : 0;
}
