/* health - GET /api/ping (touches nothing: the benchmark's baseline) and
 * GET /healthz (200 when MariaDB and Redis answer, else 503 naming them). */
#ifndef IDEMPAY_HEALTH_H
#define IDEMPAY_HEALTH_H

#include "app_ctx.h"
#include "http_msg.h"

void health_handle_ping(app_ctx *ctx, const http_request *req, http_response *resp);
void health_handle_healthz(app_ctx *ctx, const http_request *req, http_response *resp);
void health_handle_metrics(app_ctx *ctx, const http_request *req, http_response *resp);

#endif
