/* router - maps (method, path) to the service's handlers, answers 404/405,
 * counts every request in metrics and writes one access-log line per
 * request (route, order_no, status, latency; never secrets).
 *
 * Doors (IDEMPAY_DOOR, docs/SECURITY.md): a process of the public door
 * knows only the notification routes (POST /api/pay/callback/wechat and
 * /api/pay/callback/wechat/refund); one of the merchant door knows every
 * other route and none of those. A route the door does not know is 404
 * (405 only for another method on a route of this door). The merchant
 * API's routes run only for a caller caller_gate authenticated (401
 * otherwise); /api/ping, /healthz and /metrics are not signed. */
#ifndef IDEMPAY_ROUTER_H
#define IDEMPAY_ROUTER_H

#include "app_ctx.h"
#include "http_msg.h"

typedef void (*route_handler)(app_ctx *ctx, const http_request *req, http_response *resp);

/* Serves one request: resp must be initialised; it is always filled. */
void router_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
