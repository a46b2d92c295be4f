/* router - maps (method, path) to the service's handlers, answers 404/405,
 * counts every request in metrics and writes one access-log line per
 * request (route, order_no, status, latency; never secrets). */
#ifndef IDEMPAY_ROUTER_H
#define IDEMPAY_ROUTER_H

#include "app_ctx.h"
#include "http_msg.h"

typedef void (*route_handler)(app_ctx *ctx, const http_request *req, http_response *resp);

/* Serves one request: resp must be initialised; it is always filled. */
void router_handle(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
