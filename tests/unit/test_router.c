/* test_router.c - CUnit suite for router: every route reaches its handler,
 * a known path with another method is 405, anything else 404 (a prefix
 * route needs something after its '/'), and every answer carries a JSON
 * error code where the contract gives one. The handlers run for real
 * against the stack's MariaDB and Redis (IDEMPAY_* as ./stack sets them;
 * without them the suite FAILS). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <string.h>

#include "app_ctx.h"
#include "config.h"
#include "http_client.h"
#include "router.h"

static app_config cfg;
static app_ctx *ctx;

static int suite_init(void)
{
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0 ||
        app_config_load(&cfg) != 0)
        return -1;
    ctx = app_ctx_new(&cfg, 0);
    return ctx != NULL ? 0 : -1;
}

static int suite_clean(void)
{
    app_ctx_free(ctx);
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
    const char *in_body;     /* a substring of the answer, or NULL */
} route_case;

static void test_routes(void)
{
    static const route_case cases[] = {
        { "GET", "/api/ping", "", "", "", 200, NULL },
        { "GET", "/healthz", "", "", "", 200, NULL },
        { "GET", "/metrics", "", "", "", 200, "idempay_" },
        { "GET", "/api/pay/orders/UTRT_NO_SUCH_ORDER", "", "", "", 404, "\"error\":\"not_found\"" },
        { "GET", "/api/pay/orders/bad!order", "", "", "", 400, "\"error\":\"invalid_request\"" },
        { "POST", "/api/pay", "", "text/plain", "x", 415, "unsupported_media_type" },
        { "POST", "/api/pay", "", "application/json", "{\"order_no\":1}", 400, "invalid_request" },
        { "GET", "/api/pay/token", "", "", "", 400, "invalid_request" },
        { "POST", "/api/pay/callback/wechat", "", "text/xml", "not xml", 200, "FAIL" },
        /* known paths, other methods */
        { "GET", "/api/pay", "", "", "", 405, "\"error\":\"method_not_allowed\"" },
        { "PUT", "/api/pay", "", "", "", 405, "method_not_allowed" },
        { "POST", "/api/ping", "", "", "", 405, "method_not_allowed" },
        { "DELETE", "/api/pay/orders/UTRT1", "", "", "", 405, "method_not_allowed" },
        /* unknown paths */
        { "GET", "/", "", "", "", 404, "\"error\":\"not_found\"" },
        { "GET", "/api/pay/orders/", "", "", "", 404, "not_found" },   /* prefix needs a rest */
        { "GET", "/api/pay/orders", "", "", "", 404, "not_found" },
        { "GET", "/api/pingx", "", "", "", 404, "not_found" },
        { "GET", "/API/PING", "", "", "", 404, "not_found" },
        { "GET", "", "", "", "", 404, "not_found" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const route_case *c = &cases[i];
        http_request req = { c->method, c->path, c->query, c->content_type, NULL, "127.0.0.1",
                             c->body, strlen(c->body), 0 };
        http_response resp;
        http_response_init(&resp);
        router_handle(ctx, &req, &resp);
        int ok = resp.status == c->status &&
                 (c->in_body == NULL || (resp.body != NULL && strstr(resp.body, c->in_body) != NULL));
        CU_ASSERT_TRUE(ok);
        if (!ok)
            fprintf(stderr, "\n  %s %s: %d %.200s (%s)\n", c->method, c->path, resp.status,
                    resp.body ? resp.body : "", ctx->err);
        http_response_free(&resp);
    }
}

static void test_too_large_body(void)
{
    http_request req = { "POST", "/api/pay", "", "application/json", NULL, "", "", 0, 1 };
    http_response resp;

    http_response_init(&resp);
    router_handle(ctx, &req, &resp);
    CU_ASSERT_EQUAL(resp.status, 413);
    http_response_free(&resp);
}

int main(void)
{
    static const cu_test tests[] = {
        { "routes, 404 and 405", test_routes },
        { "a body over the limit", test_too_large_body },
    };
    return CU_SUITE_RUN("router", suite_init, suite_clean, tests);
}
