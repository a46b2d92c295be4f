/* fuzz_fcgi.c - libFuzzer harness for the FastCGI edge: the raw byte stream
 * a peer sends to the service's FastCGI socket (records: BEGIN_REQUEST,
 * PARAMS name-value pairs, STDIN, anything else), through libfcgi's record
 * and name-value decoding (FCGX_Accept_r), the adapter's own
 * fcgi_adapter_read_request (common/fcgi_request.c: REQUEST_URI cut at '?',
 * QUERY_STRING, CONTENT_TYPE, Idempotency-Key, CONTENT_LENGTH and the
 * bounded body read), the service's router (app/router.c: route table,
 * 404/405, metrics, access log) and fcgi_adapter_write_response.
 *
 * The stream goes in as accept_with_timeouts hands a connection over: the
 * input is written into one end of a unix socketpair, which is then shut
 * down for writing (the peer has said everything; the answers queue unread
 * in the socket buffer), and the other end is
 * given to libfcgi by fcgi_adapter_adopt (timeouts, ipcFd, keepConnection)
 * on a request initialised with FCGX_InitRequest(&req, -1, 0), and every
 * request is screened (fcgi_adapter_screen, common/fcgi_screen.c) before
 * FCGX_Accept_r reads it, exactly as the worker does. While the peer asked to keep the connection,
 * up to MAX_REQUESTS requests are read from the one stream.
 *
 * The route handlers are stand-ins (no MariaDB, Redis or gateway): each runs
 * the pure part of the real handler on the request - POST /api/pay:
 * pay_request_parse; GET /api/pay/orders/{no}: the prefix cut,
 * http_path_decode and order_no_valid; GET /api/pay/token:
 * http_query_param("user_id") - then answers 503 as the real one does with
 * its database down. The caller check of the merchant door is a stand-in
 * too: the real pure part (caller_auth_screen, caller_auth_verify with a
 * fixed key), then it lets the request through as caller 1, so that the
 * handlers behind it stay reachable. Every request goes through the router
 * of both doors (IDEMPAY_DOOR merchant, then public); the merchant door's
 * answer is written back. Input longer than FUZZ_MAX_INPUT (what the socket
 * buffer takes without a reader) is ignored. */
#include <errno.h>
#include <fcgiapp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "callback.h"
#include "callback_v3.h"
#include "caller_auth.h"
#include "caller_gate.h"
#include "fcgi_request.h"
#include "harness.h"
#include "health.h"
#include "http_msg.h"
#include "log.h"
#include "metrics.h"
#include "order_no.h"
#include "pay.h"
#include "pay_request.h"
#include "refund_api.h"
#include "refund_notify.h"
#include "rate_limit.h"
#include "router.h"
#include "token.h"

#define FUZZ_MAX_INPUT 65536
#define MAX_REQUESTS 4
#define PATH_CAP 2048 /* the worker's path buffer */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *body_buf;
static unsigned char *win; /* fcgi_adapter_screen's window */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);                /* the peer end is closed before libfcgi answers */
    setenv("IDEMPAY_LOG_LEVEL", "error", 1); /* no access-log line per input */
    log_init("fuzz_fcgi");
    FUZZ_CHECK(FCGX_Init() == 0);
    body_buf = malloc(HTTP_MAX_BODY + 1);
    win = malloc(FCGI_SCREEN_MAX);
    FUZZ_CHECK(body_buf != NULL && win != NULL);
    return 0;
}

/* ---- stand-in handlers: the real ones' pure part, then "database down" ---- */

static void unavailable(http_response *resp)
{
    http_response_error(resp, 503, "unavailable", "no database in the fuzzer");
    http_response_header(resp, "Retry-After", "1");
}

void health_handle_ping(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    (void)req;
    http_response_set(resp, 200, "text/plain", "pong\n", 5);
}

void health_handle_healthz(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    (void)req;
    unavailable(resp);
}

void health_handle_metrics(app_ctx *ctx, const http_request *req, http_response *resp)
{
    metrics_scrape s = { -1 };
    (void)ctx;
    (void)req;
    metrics_handle(resp, &s);
}

void callback_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    FUZZ_CHECK(strcmp(req->method, "POST") == 0);
    unavailable(resp);
}

void callback_v3_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    FUZZ_CHECK(strcmp(req->method, "POST") == 0); /* its envelope: fuzz_v3 */
    unavailable(resp);
}

void refund_notify_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    (void)req;
    unavailable(resp);
}

void refund_api_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    (void)ctx;
    FUZZ_CHECK(strncmp(req->path, PAY_ORDERS_PREFIX, strlen(PAY_ORDERS_PREFIX)) == 0);
    unavailable(resp);
}

void pay_handle_post(app_ctx *ctx, const http_request *req, http_response *resp)
{
    pay_request pr;
    char msg[PAY_MESSAGE_MAX];
    pay_req_status st = pay_request_parse(req, &pr, msg, sizeof(msg));

    (void)ctx;
    FUZZ_CHECK(strcmp(req->method, "POST") == 0);
    if (req->body_too_large)
        FUZZ_CHECK(st == PAY_REQ_TOO_LARGE);
    if (st != PAY_REQ_OK) {
        http_response_error(resp, pay_req_status_http(st), pay_req_status_code(st), msg);
        return;
    }
    FUZZ_CHECK(order_no_valid(pr.order_no) && pr.user_id >= 1);
    unavailable(resp);
}

void pay_handle_get_order(app_ctx *ctx, const http_request *req, http_response *resp)
{
    char order_no[ORDER_NO_MAX + 1];
    const char *segment;

    (void)ctx;
    FUZZ_CHECK(strncmp(req->path, PAY_ORDERS_PREFIX, strlen(PAY_ORDERS_PREFIX)) == 0);
    segment = req->path + strlen(PAY_ORDERS_PREFIX);
    FUZZ_CHECK(*segment != '\0'); /* the router's prefix match wants one byte more */
    memset(order_no, 'z', sizeof(order_no));
    if (http_path_decode(segment, order_no, sizeof(order_no)) != 0 || !order_no_valid(order_no)) {
        http_response_error(resp, 400, "invalid_request", "bad order_no");
        return;
    }
    FUZZ_CHECK(strlen(order_no) <= strlen(segment)); /* decoding never grows */
    if (strchr(segment, '%') == NULL)
        FUZZ_CHECK(strcmp(order_no, segment) == 0);
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", order_no);
    unavailable(resp);
}

void token_handle_issue(app_ctx *ctx, const http_request *req, http_response *resp)
{
    char param[32];

    (void)ctx;
    memset(param, 'z', sizeof(param));
    if (http_query_param(req->query, "user_id", param, sizeof(param)) != 0) {
        http_response_error(resp, 400, "invalid_request", "user_id");
        return;
    }
    FUZZ_CHECK(fuzz_terminated(param, sizeof(param)));
    unavailable(resp);
}

/* ---- the request as the adapter built it ---- */

/* What fcgi_adapter_read_request promises about *hr (see fcgi_request.h). */
static void check_request(FCGX_Request *r, const http_request *hr, http_cl_result cl,
                          const char *path)
{
    const char *uri = FCGX_GetParam("REQUEST_URI", r->envp);
    const char *cl_text = FCGX_GetParam("CONTENT_LENGTH", r->envp);
    size_t plen = strlen(hr->path), want = 0;

    FUZZ_CHECK(hr->method && hr->path == path && hr->query && hr->content_type && hr->remote_addr &&
               hr->body == body_buf);
    FUZZ_CHECK(plen < PATH_CAP && strchr(hr->path, '?') == NULL);
    if (uri == NULL)
        FUZZ_CHECK(strcmp(hr->path, "/") == 0);
    else
        FUZZ_CHECK(strncmp(uri, hr->path, plen) == 0 &&
                   (uri[plen] == '\0' || uri[plen] == '?' || plen == PATH_CAP - 1));
    FUZZ_CHECK(hr->body_len <= HTTP_MAX_BODY && hr->body[hr->body_len] == '\0');
    FUZZ_CHECK(hr->body_too_large == (cl == HTTP_CL_TOO_LARGE));
    FUZZ_CHECK(cl == http_content_length_parse(cl_text, HTTP_MAX_BODY, &want));
    if (cl == HTTP_CL_OK)
        FUZZ_CHECK(hr->body_len <= want);
    else
        FUZZ_CHECK(hr->body_len == 0);
}

/* The query helper on what arrived: any name (the first one in the query,
 * else "user_id") gives a bounded value or a refusal. */
static void check_query(const char *query)
{
    char name[64], value[256];
    size_t n = strcspn(query, "=&");
    int rc;

    if (n == 0 || n >= sizeof(name))
        n = 0;
    memcpy(name, n ? query : "user_id", n ? n : 8);
    name[n ? n : 7] = '\0';
    memset(value, 'z', sizeof(value));
    rc = http_query_param(query, name, value, sizeof(value));
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == -2);
    if (rc == 0)
        FUZZ_CHECK(fuzz_terminated(value, sizeof(value)));
}

static int status_known(int s)
{
    return s == 200 || s == 400 || s == 401 || s == 404 || s == 405 || s == 413 || s == 415 ||
           s == 503;
}

/* The two doors' processes (only cfg->door is read by the router here). */
static app_config merchant_cfg = { .door = DOOR_MERCHANT, .auth_window_s = 300 };
static app_config public_cfg = { .door = DOOR_PUBLIC, .auth_window_s = 300 };
static app_ctx merchant_ctx = { .cfg = &merchant_cfg };
static app_ctx public_ctx = { .cfg = &public_cfg, .thread_index = 1 };

/* Stand-in caller check: the pure checks, then caller 1. */
long long caller_gate_check(app_ctx *ctx, const http_request *req, long long now,
                            http_response *resp)
{
    static const unsigned char key[CALLER_KEY_LEN] = { 1, 2, 3 };
    caller_auth_result screen = caller_auth_screen(req, now, ctx->cfg->auth_window_s, NULL);

    (void)resp;
    if (screen == CALLER_AUTH_OK)
        (void)caller_auth_verify(req, key);
    FUZZ_CHECK(caller_auth_code(screen) != NULL && caller_auth_message(screen) != NULL);
    return 1;
}

/* Stand-in rate limit (app/rate_limit.c counts in Redis): within budget,
 * after checking what the router hands it. */
rate_result rate_limit_take(app_ctx *ctx, const char *class_name, const char *caller, long per_s,
                            long *retry_after_s)
{
    (void)per_s;
    (void)retry_after_s;
    FUZZ_CHECK(ctx != NULL && class_name != NULL && caller != NULL && caller[0] == 'c');
    return RATE_OK;
}

/* One request read from the connection: the adapter's reading, the router,
 * the answer written back as the worker does. */
static void serve_one(FCGX_Request *r)
{
    char path[PATH_CAP];
    http_request hr;
    http_response resp;
    http_cl_result cl = fcgi_adapter_read_request(r, body_buf, path, sizeof(path), &hr);

    check_request(r, &hr, cl, path);
    check_query(hr.query);
    http_response_init(&resp);
    if (cl == HTTP_CL_INVALID)
        http_response_error(&resp, 400, "invalid_request",
                            "CONTENT_LENGTH is not a plain decimal number");
    else {
        http_response pub;

        http_response_init(&pub);
        router_handle(&public_ctx, &hr, &pub);
        FUZZ_CHECK(status_known(pub.status) && pub.content_type[0] != '\0');
        http_response_free(&pub);
        router_handle(&merchant_ctx, &hr, &resp);
    }
    FUZZ_CHECK(status_known(resp.status) && resp.content_type[0] != '\0');
    fcgi_adapter_write_response(r, &resp);
    http_response_free(&resp);
}

/* The connection's requests, as the worker serves them: screen, accept,
 * serve, finish, while the peer keeps the connection (at most MAX_REQUESTS). */
static void serve_connection(int fd)
{
    FCGX_Request req;

    FUZZ_CHECK(FCGX_InitRequest(&req, -1, 0) == 0);
    (void)fcgi_adapter_adopt(&req, fd);
    for (int i = 0; i < MAX_REQUESTS; i++) {
        fcgi_screen_result scr = fcgi_adapter_screen(&req, win);
        int rc;

        if (scr != FCGI_SCREEN_OK) {
            FUZZ_CHECK(req.ipcFd < 0); /* closed unread, as the worker does */
            return;
        }
        rc = FCGX_Accept_r(&req);
        if (rc < 0) {
            /* the stream ended before a whole request: libfcgi closed it and,
             * with no listen socket of its own, gave up (as in the worker) */
            FUZZ_CHECK(rc == -EBADF && req.ipcFd < 0);
            return;
        }
        serve_one(&req);
        FCGX_Finish_r(&req); /* closes unless the peer asked to keep it */
        if (req.ipcFd < 0)
            return;
    }
    req.keepConnection = 0; /* close it now, however the peer asked */
    FCGX_Finish_r(&req);
    FUZZ_CHECK(req.ipcFd < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    size_t off = 0;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    while (off < size) {
        ssize_t n = write(sv[0], data + off, size - off);
        FUZZ_CHECK(n > 0 || errno == EINTR);
        if (n > 0)
            off += (size_t)n;
    }
    /* The peer has sent everything; its end stays open for the answers
     * (a few KiB each: the socket buffer holds them unread). */
    FUZZ_CHECK(shutdown(sv[0], SHUT_WR) == 0);
    serve_connection(sv[1]);
    close(sv[0]);
    return 0;
}
