/* router - the service's route table by door; 404/405; the caller check of
 * signed routes, then the caller's rate limits (429 before the handler runs:
 * nothing stored, nothing charged); per-request metrics and one access-log
 * line (route, order_no, status, latency; no secrets), refusals (4xx) within
 * IDEMPAY_LOG_REJECTS_PER_S a second. */
#include "router.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "callback.h"
#include "callback_v3.h"
#include "caller_gate.h"
#include "clocks.h"
#include "health.h"
#include "log.h"
#include "log_budget.h"
#include "metrics.h"
#include "pay.h"
#include "rate_limit.h"
#include "refund_api.h"
#include "refund_notify.h"
#include "token.h"

/* Which door serves a route, and whether the caller must sign it
 * (docs/SECURITY.md, "Doors"). */
enum {
    ROUTE_OPS = 1,    /* merchant door, unauthenticated: liveness, health, metrics */
    ROUTE_SIGNED = 2, /* merchant door, a signed caller (caller_gate) */
    ROUTE_PUBLIC = 4  /* public door: the gateway's notifications (their own signature) */
};

/* Which per-caller budget a route spends (config_limits.h). */
typedef enum { RATE_NONE = 0, RATE_TOKENS, RATE_ORDERS } route_rate;

typedef struct {
    const char *method;
    const char *path;  /* exact path, or a prefix when it ends with '/'; a '*' segment
                        * stands for one non-empty segment */
    const char *label; /* metrics route label: the path template */
    route_handler handler;
    int door;        /* ROUTE_* */
    route_rate rate; /* the budget a signed caller spends (RATE_NONE: none) */
} route;

static const route routes[] = {
    { "GET", "/api/ping", "/api/ping", health_handle_ping, ROUTE_OPS, RATE_NONE },
    { "GET", "/healthz", "/healthz", health_handle_healthz, ROUTE_OPS, RATE_NONE },
    { "GET", "/metrics", "/metrics", health_handle_metrics, ROUTE_OPS, RATE_NONE },
    { "POST", "/api/pay", "/api/pay", pay_handle_post, ROUTE_SIGNED, RATE_ORDERS },
    { "POST", PAY_ORDERS_PREFIX "*" REFUND_API_SUFFIX, "/api/pay/orders/{order_no}/refunds",
      refund_api_handle, ROUTE_SIGNED, RATE_ORDERS },
    { "GET", PAY_ORDERS_PREFIX "*" REFUND_API_SUFFIX, "/api/pay/orders/{order_no}/refunds",
      refund_api_handle, ROUTE_SIGNED, RATE_NONE },
    { "GET", PAY_ORDERS_PREFIX, "/api/pay/orders/{order_no}", pay_handle_get_order, ROUTE_SIGNED,
      RATE_NONE },
    { "GET", "/api/pay/token", "/api/pay/token", token_handle_issue, ROUTE_SIGNED, RATE_TOKENS },
    { "POST", "/api/pay/callback/wechat", "/api/pay/callback/wechat", callback_handle, ROUTE_PUBLIC,
      RATE_NONE },
    { "POST", "/api/pay/callback/wechat/refund", "/api/pay/callback/wechat/refund",
      refund_notify_handle, ROUTE_PUBLIC, RATE_NONE },
    { "POST", CALLBACK_V3_PATH, CALLBACK_V3_PATH, callback_v3_handle, ROUTE_PUBLIC, RATE_NONE },
};

static int route_on_door(const route *r, app_door door)
{
    return door == DOOR_PUBLIC ? r->door == ROUTE_PUBLIC : r->door != ROUTE_PUBLIC;
}

/* pattern with a '*' segment: the text around it matches exactly, the
 * '*' one non-empty segment without '/'. */
static int path_matches_star(const char *pattern, const char *star, const char *path)
{
    size_t pre = (size_t)(star - pattern), post = strlen(star + 1), len = strlen(path);

    if (len <= pre + post || strncmp(pattern, path, pre) != 0 ||
        strcmp(path + len - post, star + 1) != 0)
        return 0;
    return memchr(path + pre, '/', len - pre - post) == NULL;
}

static int path_matches(const char *pattern, const char *path)
{
    size_t n = strlen(pattern);
    const char *star = strchr(pattern, '*');

    if (star != NULL)
        return path_matches_star(pattern, star, path);
    if (pattern[n - 1] == '/')
        return !strncmp(pattern, path, n) && path[n] != '\0';
    return !strcmp(pattern, path);
}

/* Spends one unit of hit's budget for caller. Returns 1 when the request
 * may go on, 0 with resp set to 429 rate_limited + Retry-After. */
static int router_within_rate(app_ctx *ctx, const route *hit, long long caller, http_response *resp)
{
    const limits_config *lim;
    long per_s, retry_s = 1;
    char retry[24], who[24];

    if (hit->rate == RATE_NONE || ctx == NULL || ctx->cfg == NULL)
        return 1;
    lim = &ctx->cfg->limits;
    per_s = hit->rate == RATE_TOKENS ? lim->tokens_per_s : lim->orders_per_s;
    snprintf(who, sizeof(who), "c%lld", caller);
    switch (rate_limit_take(ctx, hit->rate == RATE_TOKENS ? "tokens" : "orders", who, per_s,
                            &retry_s)) {
    case RATE_LIMITED:
        metrics_inc(hit->rate == RATE_TOKENS ? MET_RATE_LIMITED_TOKENS : MET_RATE_LIMITED_ORDERS);
        http_response_error(resp, 429, "rate_limited",
                            "too many requests from this caller; retry after Retry-After seconds");
        snprintf(retry, sizeof(retry), "%ld", retry_s);
        http_response_header(resp, "Retry-After", retry);
        return 0;
    case RATE_UNCOUNTED:
        metrics_inc(MET_RATE_UNCOUNTED);
        return 1;
    default:
        return 1;
    }
}

/* The access line; a refusal (4xx) only within the process' budget. */
static void router_log(const app_ctx *ctx, const http_request *req, const http_response *resp,
                       double dt)
{
    static log_budget rejects = LOG_BUDGET_INIT;
    long per_s = ctx != NULL && ctx->cfg != NULL ? ctx->cfg->limits.log_rejects_per_s : 20;
    long dropped = 0;
    char more[48] = "";

    if (resp->status >= 400 && resp->status < 500 && !log_budget_take(&rejects, per_s, &dropped)) {
        metrics_inc(MET_LOG_SUPPRESSED);
        return;
    }
    if (dropped > 0)
        snprintf(more, sizeof(more), " refusal_lines_left_out=%ld", dropped);
    log_msg(LOG_INFO, "access route=\"%s %s\" order_no=%s status=%d latency_ms=%.2f%s", req->method,
            req->path[0] ? req->path : "/", resp->log_order[0] ? resp->log_order : "-",
            resp->status, dt * 1e3, more);
}

/* Runs hit's handler. A signed route first authenticates its caller: a body
 * over the limit is 413 before that (a signature over an unread body cannot
 * be checked), then caller_gate (401/503, handler not run); the handler gets
 * a copy of req carrying the caller's id, within the caller's rate
 * (429 otherwise). Other routes answer an oversized
 * body themselves (a notification is answered FAIL, as WeChat expects). */
static void router_dispatch(app_ctx *ctx, const route *hit, const http_request *req,
                            http_response *resp)
{
    http_request signed_req;

    if (hit->door != ROUTE_SIGNED) {
        hit->handler(ctx, req, resp);
        return;
    }
    if (req->body_too_large) {
        http_response_error(resp, 413, "payload_too_large", "the request body is over 64 KiB");
        return;
    }
    signed_req = *req;
    signed_req.caller_id = caller_gate_check(ctx, req, (long long)time(NULL), resp);
    if (signed_req.caller_id > 0 && router_within_rate(ctx, hit, signed_req.caller_id, resp))
        hit->handler(ctx, &signed_req, resp);
}

void router_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    const route *hit = NULL;
    app_door door = ctx != NULL && ctx->cfg != NULL ? ctx->cfg->door : DOOR_MERCHANT;
    int path_known = 0;
    double t0 = clocks_mono_s(), dt;
    const char *label = "other";

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (!route_on_door(&routes[i], door) || !path_matches(routes[i].path, req->path))
            continue;
        path_known = 1;
        label = routes[i].label; /* a 405 counts under its route too */
        if (!strcmp(routes[i].method, req->method)) {
            hit = &routes[i];
            break;
        }
    }
    if (hit) {
        label = hit->label;
        router_dispatch(ctx, hit, req, resp);
    } else if (path_known) {
        http_response_error(resp, 405, "method_not_allowed",
                            "this method is not allowed on this path");
    } else {
        http_response_error(resp, 404, "not_found", "no such route");
    }
    dt = clocks_mono_s() - t0;
    metrics_request(req->method, label, resp->status, dt);
    if (hit && hit->handler == health_handle_ping)
        return; /* the benchmark baseline stays free of log I/O */
    router_log(ctx, req, resp, dt);
}
