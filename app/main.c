/* idempay-fcgi - the payment service: a FastCGI responder with N worker
 * threads (each with its own MariaDB, Redis and gateway connections) plus
 * the background workers of this process. */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_ctx.h"
#include "config.h"
#include "env.h"
#include "fcgi_adapter.h"
#include "http_client.h"
#include "log.h"
#include "metrics.h"
#include "reconciler.h"
#include "refund_queue.h"
#include "router.h"
#include "statement.h"

static app_config config;

static void *thread_init(int index)
{
    app_ctx *c;

    mysql_thread_init();
    c = app_ctx_new(&config, index);
    if (!c) {
        log_msg(LOG_ERROR, "worker %d: out of memory", index);
        abort();
    }
    return c;
}

static void thread_fini(void *p)
{
    app_ctx_free(p);
    mysql_thread_end();
}

static void handle(void *tctx, const http_request *req, http_response *resp)
{
    router_handle(tctx, req, resp);
}

int main(int argc, char **argv)
{
    fcgi_app app = { thread_init, thread_fini, handle };
    const char *listen_spec = argc > 1 ? argv[1] : NULL;

    log_init("idempay-fcgi");
    if (app_config_load(&config) != 0)
        return 2;
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0) {
        log_msg(LOG_ERROR, "library initialisation failed");
        return 2;
    }
    metrics_init(config.metrics_path);
    reconciler_start(&config);
    refund_queue_start(&config);
    statement_start(&config);
    log_msg(LOG_INFO, "starting: %d threads, gateway %s, token mode %d", config.threads,
            config.gateway_url, (int)config.token_mode);
    return fcgi_adapter_run(&app, config.threads, listen_spec) == 0 ? 0 : 1;
}
