/* test_limits.c - CUnit suite for the bounds on growth: the rate limit's
 * window keys, its count against the stack's Redis (per_s requests pass,
 * the next is limited, 0 means no limit, another caller or class has its
 * own budget), INFO memory parsing for the token room, and the log line
 * budget (per_s lines a second, the rest counted and said on the next line
 * written). The Redis cases need the stack (IDEMPAY_* as ./stack sets
 * them; without Redis the suite FAILS). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_ctx.h"
#include "config.h"
#include "log_budget.h"
#include "rate_limit.h"
#include "redis_room.h"

static app_config cfg;
static app_ctx *ctx;

static int suite_init(void)
{
    if (app_config_load(&cfg) != 0)
        return -1;
    ctx = app_ctx_new(&cfg, 0);
    return ctx != NULL ? 0 : -1;
}

static int suite_clean(void)
{
    app_ctx_free(ctx);
    return 0;
}

static void test_window_key(void)
{
    char k[64];
    CU_ASSERT_STRING_EQUAL(rate_limit_key(k, sizeof(k), "tokens", "c1", 1700000000LL),
                           "rl:tokens:c1:1700000000");
    CU_ASSERT_STRING_EQUAL(rate_limit_key(k, sizeof(k), "orders", "-", 5), "rl:orders:-:5");
}

/* Waits for the start of a second so a burst stays within one window. */
static void at_second_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_nsec > 700000000L) {
        struct timespec nap = { 0, 1000000000L - ts.tv_nsec + 1000000L };
        nanosleep(&nap, NULL);
    }
}

static void test_budget_counts_in_redis(void)
{
    char caller[48];
    long retry = 0;
    snprintf(caller, sizeof(caller), "ut-%ld-%ld", (long)time(NULL), (long)clock());

    at_second_start();
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(rate_limit_take(ctx, "tokens", caller, 3, &retry), RATE_OK);
    CU_ASSERT_EQUAL(rate_limit_take(ctx, "tokens", caller, 3, &retry), RATE_LIMITED);
    CU_ASSERT_EQUAL(retry, 1);
    /* another class, another caller: their own budgets */
    CU_ASSERT_EQUAL(rate_limit_take(ctx, "orders", caller, 3, &retry), RATE_OK);
    strcat(caller, "b");
    CU_ASSERT_EQUAL(rate_limit_take(ctx, "tokens", caller, 3, &retry), RATE_OK);
    /* 0: no limit, Redis not asked */
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(rate_limit_take(ctx, "tokens", caller, 0, &retry), RATE_OK);
}

static void test_window_key_expires(void)
{
    char caller[48], key[96];
    long retry;
    struct timespec ts;
    snprintf(caller, sizeof(caller), "ut-ttl-%ld", (long)clock());
    clock_gettime(CLOCK_REALTIME, &ts);
    CU_ASSERT_EQUAL_FATAL(rate_limit_take(ctx, "orders", caller, 5, &retry), RATE_OK);
    rate_limit_key(key, sizeof(key), "orders", caller, (long long)ts.tv_sec);
    /* TTL is not the service's to run (its ACL user): ask as the stack's admin */
    redisContext *admin = redisConnect(cfg.redis_host, cfg.redis_port);
    CU_ASSERT_TRUE_FATAL(admin != NULL && admin->err == 0);
    const char *au = getenv("IDEMPAY_REDIS_ADMIN_USER"),
               *ap = getenv("IDEMPAY_REDIS_ADMIN_PASSWORD");
    if (au != NULL && ap != NULL) {
        redisReply *a = redisCommand(admin, "AUTH %s %s", au, ap);
        CU_ASSERT_TRUE(a != NULL && a->type == REDIS_REPLY_STATUS);
        freeReplyObject(a);
    }
    redisReply *r = redisCommand(admin, "TTL %s", key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    /* the window may have turned between the two clock reads: then -2 (no key) */
    CU_ASSERT_TRUE(r->type == REDIS_REPLY_INTEGER &&
                   (r->integer == -2 || (r->integer >= 1 && r->integer <= 2)));
    freeReplyObject(r);
    redisFree(admin);
}

static void test_room_parse(void)
{
    unsigned long long used = 0, max = 0;
    CU_ASSERT_EQUAL(redis_room_parse("# Memory\r\nused_memory:1024\r\nused_memory_human:1K\r\n"
                                     "maxmemory:4096\r\n",
                                     &used, &max),
                    0);
    CU_ASSERT_EQUAL(used, 1024);
    CU_ASSERT_EQUAL(max, 4096);
    CU_ASSERT_EQUAL(redis_room_parse("used_memory_rss:1\r\nmaxmemory:2\r\n", &used, &max), -1);
    CU_ASSERT_EQUAL(redis_room_parse("used_memory:x\r\nmaxmemory:2\r\n", &used, &max), -1);
    CU_ASSERT_EQUAL(redis_room_parse(NULL, &used, &max), -1);
}

static void test_room_against_redis(void)
{
    /* the stack's Redis has a maxmemory (256mb) far above what it holds */
    CU_ASSERT_EQUAL(redis_room_check(ctx, 90), REDIS_ROOM_OK);
}

static void test_log_budget(void)
{
    static log_budget b = LOG_BUDGET_INIT;
    long dropped = -1;
    int written = 0;

    at_second_start();
    for (int i = 0; i < 10; i++)
        written += log_budget_take(&b, 4, &dropped);
    CU_ASSERT_EQUAL(written, 4);
    CU_ASSERT_EQUAL(atomic_load(&b.dropped), 6);
    struct timespec nap = { 1, 100000000L };
    nanosleep(&nap, NULL);
    CU_ASSERT_EQUAL(log_budget_take(&b, 4, &dropped), 1);
    CU_ASSERT_EQUAL(dropped, 6); /* said on the first line of the new second */
    CU_ASSERT_EQUAL(log_budget_take(&b, 4, &dropped), 1);
    CU_ASSERT_EQUAL(dropped, 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a window key names class, caller and second", test_window_key },
        { "per_s requests pass, the next is limited; budgets are per class and caller",
          test_budget_counts_in_redis },
        { "a window's key expires within two seconds", test_window_key_expires },
        { "INFO memory is parsed into used_memory and maxmemory", test_room_parse },
        { "the stack's Redis has room", test_room_against_redis },
        { "per_s lines a second are logged, the rest counted and said later", test_log_budget },
    };
    return CU_SUITE_RUN("limits", suite_init, suite_clean, tests);
}
