/* test_reconciler.c - CUnit suite for reconciler_run_once against the
 * stack's real MariaDB and mock gateway (IDEMPAY_* as ./stack sets them;
 * the gateway is http://127.0.0.1:$IDEMPAY_MOCK_PORT unless
 * IDEMPAY_GATEWAY_URL says otherwise). An expired attempt the gateway
 * never saw ends FAILED and closed; one the gateway charged ends PAID with
 * that charge; a live lease is left alone; an unreachable database is -1.
 * The stack's own reconcilers may settle an order first: the tests judge
 * where the order ends, which is the same either way. Without the stack
 * the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_ctx.h"
#include "config.h"
#include "gateway.h"
#include "http_client.h"
#include "order_store.h"
#include "reconciler.h"

static app_config cfg;
static app_ctx *ctx;
static char prefix[24];

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int suite_init(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0 ||
        app_config_load(&cfg) != 0)
        return -1;
    ctx = app_ctx_new(&cfg, 0);
    snprintf(prefix, sizeof(prefix), "UTREC%05d%05ld", (int)(getpid() % 100000),
             (long)(time(NULL) % 100000));
    return ctx != NULL ? 0 : -1;
}

static int suite_clean(void)
{
    app_ctx_free(ctx);
    mysql_library_end();
    return 0;
}

/* Runs rounds until order no leaves PROCESSING (at most ~5 s); its row. */
static order_row settle(const char *no)
{
    order_row row;
    memset(&row, 0, sizeof(row));
    for (int i = 0; i < 50; i++) {
        CU_ASSERT_TRUE(reconciler_run_once(ctx) >= 0);
        if (order_store_get(ctx, no, &row) == ORDER_STORE_OK && row.status != ORDER_PROCESSING)
            break;
        sleep_ms(100);
    }
    return row;
}

static void test_expired_never_charged_is_closed(void)
{
    char no[40];
    snprintf(no, sizeof(no), "%sN", prefix);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 5, 100, 1), ORDER_STORE_OK);
    sleep_ms(20);
    order_row row = settle(no);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_CLOSED);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "");
    CU_ASSERT_TRUE(row.attempts >= 2); /* the reconciler took a new lease */
}

static void test_expired_charged_is_paid(void)
{
    char no[40];
    gw_result gw;
    snprintf(no, sizeof(no), "%sC", prefix);
    /* The worker's attempt reached the gateway and charged, then the worker died. */
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 5, 250, 1), ORDER_STORE_OK);
    /* test_pay may be declining every charge for a moment (make check -j):
     * a declined attempt charged nothing, so it is simply made again. */
    gw_outcome charged = GW_NOT_CHARGED;
    for (int i = 0; i < 50 && charged != GW_CHARGED; i++) {
        charged = gateway_micropay(ctx, no, 250, "134567890123456789", &gw);
        if (charged != GW_CHARGED)
            sleep_ms(100);
    }
    CU_ASSERT_EQUAL_FATAL(charged, GW_CHARGED);
    sleep_ms(20);
    order_row row = settle(no);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, gw.transaction_id);
    CU_ASSERT_EQUAL(row.amount_fen, 250);
}

static void test_live_lease_is_left_alone(void)
{
    char no[40];
    order_row row;
    snprintf(no, sizeof(no), "%sL", prefix);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 5, 100, 60000), ORDER_STORE_OK);
    CU_ASSERT_TRUE(reconciler_run_once(ctx) >= 0);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PROCESSING);
    CU_ASSERT_EQUAL(row.attempts, 1);
    CU_ASSERT_TRUE(row.lease_live);
    /* let it go, so the stack's reconciler ends it */
    CU_ASSERT_EQUAL(order_store_release_lease(ctx, no, 1), ORDER_STORE_OK);
}

static void test_database_down_is_an_error(void)
{
    app_ctx *lost = app_ctx_new(&cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lost);
    lost->db_name = "idempay_no_such_database";
    CU_ASSERT_EQUAL(reconciler_run_once(lost), -1);
    CU_ASSERT_TRUE(strlen(lost->err) > 0);
    app_ctx_free(lost);
}

int main(void)
{
    static const cu_test tests[] = {
        { "an expired attempt never charged is closed and FAILED",
          test_expired_never_charged_is_closed },
        { "an expired attempt that charged is PAID with that charge",
          test_expired_charged_is_paid },
        { "a live lease is left alone", test_live_lease_is_left_alone },
        { "an unreachable MariaDB makes a round fail with -1", test_database_down_is_an_error },
    };
    return CU_SUITE_RUN("reconciler", suite_init, suite_clean, tests);
}
