/* test_router.c - CUnit suite for router: every route reaches its handler
 * on its door (the API signed by a caller this suite adds to the
 * database), an unsigned API call is 401, a route of the other door is
 * 404, a known path with another method is 405, anything else 404 (a prefix
 * route needs something after its '/'), and every answer carries a JSON
 * error code where the contract gives one. The handlers run for real
 * against the stack's MariaDB and Redis (IDEMPAY_* as ./stack sets them;
 * without them the suite FAILS). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <openssl/evp.h>
#include <string.h>
#include <time.h>

#include "app_ctx.h"
#include "caller_sign.h"
#include "caller_store.h"
#include "config.h"
#include "http_client.h"
#include "router.h"

static app_config cfg, public_cfg;
static app_ctx *ctx, *public_ctx;
static unsigned char caller_key[CALLER_KEY_LEN];

#define UNIT_CALLER "unit-router"
#define UNIT_SALT "0123456789abcdef0123456789abcdef"

/* The suite's caller, as --add-caller would make it (its row is reused). */
static int add_caller(void)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char sql[512], check[65];

    if (caller_store_derive_key(cfg.key, UNIT_CALLER, UNIT_SALT, caller_key) != 0 ||
        EVP_Digest(caller_key, sizeof(caller_key), md, &n, EVP_sha256(), NULL) != 1 ||
        app_ctx_db(ctx) != 0)
        return -1;
    for (unsigned int i = 0; i < 32; i++)
        snprintf(check + 2 * i, 3, "%02x", md[i]);
    snprintf(sql, sizeof(sql),
             "INSERT INTO payment_caller (name, key_salt, key_check) VALUES"
             " ('%s', '%s', '%s') ON DUPLICATE KEY UPDATE key_salt = VALUES(key_salt),"
             " key_check = VALUES(key_check), enabled = 1",
             UNIT_CALLER, UNIT_SALT, check);
    return mysql_query(ctx->db, sql) == 0 ? 0 : -1;
}

static int suite_init(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0 ||
        app_config_load(&cfg) != 0)
        return -1;
    ctx = app_ctx_new(&cfg, 0);
    public_cfg = cfg;
    public_cfg.door = DOOR_PUBLIC;
    public_ctx = app_ctx_new(&public_cfg, 1);
    return ctx != NULL && public_ctx != NULL && add_caller() == 0 ? 0 : -1;
}

static int suite_clean(void)
{
    app_ctx_free(ctx);
    app_ctx_free(public_ctx);
    mysql_library_end();
    return 0;
}

typedef struct {
    const char *method;
    const char *path;
    const char *query;
    const char *content_type;
    const char *body;
    int status;
    const char *in_body; /* a substring of the answer, or NULL */
    int sign;            /* 1: signed by the suite's caller */
} route_case;

/* Runs c on the door of cx: signed with a fresh nonce when c->sign. */
static void run_case(app_ctx *cx, const route_case *c)
{
    static int serial;
    char ts[24], nonce[40], sig[CALLER_SIG_HEX_LEN + 1];
    http_request req = { c->method, c->path,     c->query, c->content_type,
                         NULL,      "127.0.0.1", c->body,  strlen(c->body),
                         0,         NULL,        NULL,     NULL,
                         NULL,      0,           NULL,     NULL,
                         NULL,      NULL };
    http_response resp;

    if (c->sign) {
        snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
        snprintf(nonce, sizeof(nonce), "unit-router-%ld-%d", (long)time(NULL), ++serial);
        caller_sign_compute(caller_key, c->method, c->path, c->query, ts, nonce, c->body,
                            strlen(c->body), sig);
        req.auth_caller = UNIT_CALLER;
        req.auth_timestamp = ts;
        req.auth_nonce = nonce;
        req.auth_signature = sig;
    }
    http_response_init(&resp);
    router_handle(cx, &req, &resp);
    int ok = resp.status == c->status &&
             (c->in_body == NULL || (resp.body != NULL && strstr(resp.body, c->in_body) != NULL));
    CU_ASSERT_TRUE(ok);
    if (!ok)
        fprintf(stderr, "\n  %s %s: %d %.200s (%s)\n", c->method, c->path, resp.status,
                resp.body ? resp.body : "", cx->err);
    http_response_free(&resp);
}

static void test_routes(void)
{
    static const route_case cases[] = {
        { "GET", "/api/ping", "", "", "", 200, NULL, 0 },
        { "GET", "/healthz", "", "", "", 200, NULL, 0 },
        { "GET", "/metrics", "", "", "", 200, "idempay_", 0 },
        { "GET", "/api/pay/orders/UTRT_NO_SUCH_ORDER", "", "", "", 404, "\"error\":\"not_found\"",
          1 },
        { "GET", "/api/pay/orders/bad!order", "", "", "", 400, "\"error\":\"invalid_request\"", 1 },
        { "POST", "/api/pay", "", "text/plain", "x", 415, "unsupported_media_type", 1 },
        { "POST", "/api/pay", "", "application/json", "{\"order_no\":1}", 400, "invalid_request",
          1 },
        { "GET", "/api/pay/token", "", "", "", 400, "invalid_request", 1 },
        /* the API without a signature */
        { "GET", "/api/pay/orders/UTRT_NO_SUCH_ORDER", "", "", "", 401,
          "\"error\":\"unauthenticated\"", 0 },
        { "POST", "/api/pay", "", "application/json", "{\"order_no\":1}", 401, "unauthenticated",
          0 },
        { "GET", "/api/pay/token", "user_id=1", "", "", 401, "unauthenticated", 0 },
        { "POST", "/api/pay/orders/UTRT1/refunds", "", "application/json", "{}", 401,
          "unauthenticated", 0 },
        /* the public door's routes are not here */
        { "POST", "/api/pay/callback/wechat", "", "text/xml", "not xml", 404, "not_found", 0 },
        { "POST", "/api/pay/callback/wechat/refund", "", "text/xml", "x", 404, "not_found", 1 },
        /* known paths, other methods */
        { "GET", "/api/pay", "", "", "", 405, "\"error\":\"method_not_allowed\"", 0 },
        { "PUT", "/api/pay", "", "", "", 405, "method_not_allowed", 0 },
        { "POST", "/api/ping", "", "", "", 405, "method_not_allowed", 0 },
        { "DELETE", "/api/pay/orders/UTRT1", "", "", "", 405, "method_not_allowed", 0 },
        /* unknown paths */
        { "GET", "/", "", "", "", 404, "\"error\":\"not_found\"", 0 },
        { "GET", "/api/pay/orders/", "", "", "", 404, "not_found", 1 }, /* prefix needs a rest */
        { "GET", "/api/pay/orders", "", "", "", 404, "not_found", 0 },
        { "GET", "/api/pingx", "", "", "", 404, "not_found", 0 },
        { "GET", "/API/PING", "", "", "", 404, "not_found", 0 },
        { "GET", "", "", "", "", 404, "not_found", 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(ctx, &cases[i]);
}

static void test_public_door(void)
{
    static const route_case cases[] = {
        { "POST", "/api/pay/callback/wechat", "", "text/xml", "not xml", 200, "FAIL", 0 },
        { "GET", "/api/ping", "", "", "", 404, "not_found", 0 },
        { "GET", "/healthz", "", "", "", 404, "not_found", 0 },
        { "GET", "/metrics", "", "", "", 404, "not_found", 0 },
        { "POST", "/api/pay", "", "application/json", "{\"order_no\":1}", 404, "not_found", 1 },
        { "GET", "/api/pay/orders/UTRT_NO_SUCH_ORDER", "", "", "", 404, "not_found", 1 },
        { "GET", "/api/pay/token", "user_id=1", "", "", 404, "not_found", 1 },
        { "GET", "/api/pay/callback/wechat", "", "", "", 405, "method_not_allowed", 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(public_ctx, &cases[i]);
}

static void test_too_large_body(void)
{
    http_request req = { "POST", "/api/pay", "",   "application/json",
                         NULL,   "",         "",   0,
                         1,      NULL,       NULL, NULL,
                         NULL,   0,          NULL, NULL,
                         NULL,   NULL };
    http_response resp;

    http_response_init(&resp);
    router_handle(ctx, &req, &resp);
    CU_ASSERT_EQUAL(resp.status, 413);
    http_response_free(&resp);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a route answers, or 401, 404 or 405", test_routes },
        { "the public door serves notifications only", test_public_door },
        { "a body over the limit is refused", test_too_large_body },
    };
    return CU_SUITE_RUN("router", suite_init, suite_clean, tests);
}
