/* test_pay.c - CUnit suite for pay_handle_post, the whole pay flow against
 * the stack's real MariaDB, Redis and mock gateway (IDEMPAY_* as ./stack
 * sets them; the gateway is http://127.0.0.1:$IDEMPAY_MOCK_PORT unless
 * IDEMPAY_GATEWAY_URL says otherwise). A new order is charged once (200
 * PAID), a repeat is replayed without a charge, another amount is 422, a
 * decline (the mock's decline_rate 1, then the rate it had) is 402 and a
 * later POST of the declined order pays it; Idempotency-Key reuse for
 * another request is 422. Without the stack the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_ctx.h"
#include "config.h"
#include "env.h"
#include "http_client.h"
#include "order_store.h"
#include "pay.h"

static app_config cfg;
static app_ctx *ctx;
static http_client *admin; /* the mock's admin API */
static char prefix[24];

static char decline_before[64] = "{\"decline_rate\":0}"; /* restored at the end */

/* PUT /mock/config json (NULL: GET), the answer's decline_rate in *rate. */
static int mock_config(const char *json, double *rate)
{
    char url[128];
    http_reply r;
    json_t *cfg_now;

    snprintf(url, sizeof(url), "http://127.0.0.1:%lld/mock/config",
             env_int("IDEMPAY_MOCK_PORT", 18081));
    if (http_client_request(admin, json ? "PUT" : "GET", url, "application/json", json,
                            json ? strlen(json) : 0, NULL, 5000, &r) != HTTP_OK ||
        r.code != 200) {
        fprintf(stderr, "\n  %s %s: %ld %s\n", url, json ? json : "", r.code, r.error);
        return -1;
    }
    cfg_now = json_loads(r.body, 0, NULL);
    *rate = json_number_value(json_object_get(cfg_now, "decline_rate"));
    json_decref(cfg_now);
    return 0;
}

static int suite_init(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0 ||
        app_config_load(&cfg) != 0)
        return -1;
    cfg.token_mode = TOKEN_MODE_OPTIONAL; /* these requests carry no token */
    ctx = app_ctx_new(&cfg, 0);
    admin = http_client_new(1000, 5000);
    snprintf(prefix, sizeof(prefix), "UTPAY%05d%05ld", (int)(getpid() % 100000),
             (long)(time(NULL) % 100000));
    if (ctx == NULL || admin == NULL)
        return -1;
    double rate = 0;
    if (mock_config(NULL, &rate) == 0)
        snprintf(decline_before, sizeof(decline_before), "{\"decline_rate\":%.6f}", rate);
    return 0;
}

static int suite_clean(void)
{
    double rate;
    if (admin != NULL)
        mock_config(decline_before, &rate);
    http_client_free(admin);
    app_ctx_free(ctx);
    mysql_library_end();
    return 0;
}

/* One POST /api/pay; the answer's status, and its JSON body in *body
 * (caller decrefs; NULL when not JSON) and whether it was a replay. */
static int post(const char *order, long long user, const char *amount, const char *key,
                json_t **body, int *replayed)
{
    char text[256];
    /* the charge-with-reply flow: a payment code (docs/FLOWS.md) */
    int n = snprintf(text, sizeof(text),
                     "{\"order_no\":\"%s\",\"user_id\":%lld,\"amount\":\"%s\","
                     "\"trade_type\":\"MICROPAY\",\"auth_code\":\"134567890123456789\"}",
                     order, user, amount);
    http_request req = { "POST", "/api/pay",  "",   "application/json",
                         key,    "127.0.0.1", text, (size_t)n,
                         0,      NULL,        NULL, NULL,
                         NULL,   0,           NULL, NULL,
                         NULL,   NULL };
    http_response resp;
    int status;

    http_response_init(&resp);
    pay_handle_post(ctx, &req, &resp);
    status = resp.status;
    *body = resp.body != NULL ? json_loads(resp.body, 0, NULL) : NULL;
    *replayed = strstr(resp.headers, "Idempotent-Replayed: true") != NULL;
    if (*body == NULL)
        fprintf(stderr, "\n  POST %s: %d, not JSON: %s\n", order, status,
                resp.body ? resp.body : "");
    http_response_free(&resp);
    return status;
}

static const char *field(json_t *o, const char *name)
{
    const char *s = json_string_value(json_object_get(o, name));
    return s != NULL ? s : "";
}

static void test_new_then_repeat(void)
{
    char no[40], txid[64];
    json_t *b;
    int replayed;
    order_row row;

    snprintf(no, sizeof(no), "%sA", prefix);
    CU_ASSERT_EQUAL_FATAL(post(no, 7, "12.30", NULL, &b, &replayed), 200);
    CU_ASSERT_STRING_EQUAL(field(b, "status"), "PAID");
    CU_ASSERT_STRING_EQUAL(field(b, "amount"), "12.30");
    CU_ASSERT_FALSE(replayed);
    snprintf(txid, sizeof(txid), "%s", field(b, "transaction_id"));
    CU_ASSERT_TRUE(strlen(txid) > 10);
    json_decref(b);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, txid);
    CU_ASSERT_EQUAL(row.amount_fen, 1230);

    /* The repeat (amount written another way) is answered, not charged again. */
    CU_ASSERT_EQUAL(post(no, 7, "12.3", NULL, &b, &replayed), 200);
    CU_ASSERT_TRUE(replayed);
    CU_ASSERT_STRING_EQUAL(field(b, "transaction_id"), txid);
    json_decref(b);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.attempts, 1);
}

static void test_mismatch(void)
{
    char no[40];
    json_t *b;
    int replayed;

    snprintf(no, sizeof(no), "%sM", prefix);
    CU_ASSERT_EQUAL_FATAL(post(no, 7, "1.00", NULL, &b, &replayed), 200);
    json_decref(b);
    CU_ASSERT_EQUAL(post(no, 7, "1.01", NULL, &b, &replayed), 422); /* another amount */
    CU_ASSERT_STRING_EQUAL(field(b, "error"), "order_mismatch");
    json_decref(b);
    CU_ASSERT_EQUAL(post(no, 8, "1.00", NULL, &b, &replayed), 422); /* another user */
    CU_ASSERT_STRING_EQUAL(field(b, "error"), "order_mismatch");
    json_decref(b);
}

static void test_decline_then_retry(void)
{
    char no[40];
    json_t *b;
    int replayed;
    order_row row;

    snprintf(no, sizeof(no), "%sD", prefix);
    double rate = 0;
    CU_ASSERT_EQUAL_FATAL(mock_config("{\"decline_rate\":1.0}", &rate), 0);
    CU_ASSERT_EQUAL(rate, 1.0);
    int status = post(no, 9, "0.01", NULL, &b, &replayed);
    CU_ASSERT_EQUAL(mock_config(decline_before, &rate), 0);
    CU_ASSERT_EQUAL_FATAL(status, 402);
    CU_ASSERT_STRING_EQUAL(field(b, "error"), "payment_declined");
    CU_ASSERT_STRING_EQUAL(field(b, "status"), "FAILED");
    json_decref(b);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_RETRYABLE);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "");

    /* A later POST of a declined order tries again; the payment code is
     * spent (WeChat refuses its out_trade_no again): declined anew, nothing
     * charged, still retryable. */
    CU_ASSERT_EQUAL(post(no, 9, "0.01", NULL, &b, &replayed), 402);
    CU_ASSERT_STRING_EQUAL(field(b, "error"), "payment_declined");
    json_decref(b);
    CU_ASSERT_EQUAL_FATAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_RETRYABLE);
}

static void test_idempotency_key(void)
{
    char no[40], no2[40], key[48];
    json_t *b;
    int replayed;

    snprintf(no, sizeof(no), "%sK", prefix);
    snprintf(no2, sizeof(no2), "%sL", prefix);
    snprintf(key, sizeof(key), "key-%s", prefix);
    CU_ASSERT_EQUAL_FATAL(post(no, 11, "2.00", key, &b, &replayed), 200);
    json_decref(b);
    CU_ASSERT_EQUAL(post(no, 11, "2.00", key, &b, &replayed), 200);
    CU_ASSERT_TRUE(replayed);
    json_decref(b);
    CU_ASSERT_EQUAL(post(no2, 11, "2.00", key, &b, &replayed), 422); /* the key, another order */
    CU_ASSERT_STRING_EQUAL(field(b, "error"), "idempotency_key_mismatch");
    json_decref(b);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a new order is 200 PAID and its repeat replayed", test_new_then_repeat },
        { "a repeat with another amount or user is 422", test_mismatch },
        { "a decline is 402 and a later POST is declined again", test_decline_then_retry },
        { "an Idempotency-Key reused for another order is 422", test_idempotency_key },
    };
    return CU_SUITE_RUN("pay", suite_init, suite_clean, tests);
}
