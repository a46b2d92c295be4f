/* idempay-fcgi - the payment service: a FastCGI responder with N worker
 * threads (each with its own MariaDB, Redis and gateway connections) plus
 * the background workers of this process.
 *
 *   idempay-fcgi [LISTEN]        serve (LISTEN ":PORT" or a socket path;
 *                                default: the socket systemd or the web
 *                                server passed)
 *   idempay-fcgi --check-config  validate and print the effective settings
 *   idempay-fcgi --list-stuck-refunds  the refunds waiting for an operator
 *   idempay-fcgi --add-caller NAME     a merchant-door caller; prints its secret once
 *   idempay-fcgi --rekey-caller NAME   a new secret for it (after a merchant key change)
 *   idempay-fcgi --list-callers        the callers
 *   idempay-fcgi --disable-caller NAME its requests get 401 from now on
 *   idempay-fcgi --version
 *
 * SIGTERM/SIGINT: stop accepting, finish requests in flight within
 * IDEMPAY_SHUTDOWN_TIMEOUT_MS, exit 0 (1 when the bound passed). SIGHUP:
 * reopen IDEMPAY_LOG_FILE. */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_ctx.h"
#include "caller_store.h"
#include "config.h"
#include "config_report.h"
#include "env.h"
#include "fcgi_adapter.h"
#include "http_client.h"
#include "log.h"
#include "metrics.h"
#include "reconciler.h"
#include "refund_admin.h"
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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: idempay-fcgi [:PORT | SOCKET_PATH]\n"
            "       idempay-fcgi --check-config\n"
            "       idempay-fcgi --list-stuck-refunds\n"
            "       idempay-fcgi --add-caller NAME | --rekey-caller NAME | --list-callers\n"
            "       idempay-fcgi --disable-caller NAME\n"
            "       idempay-fcgi --version\n"
            "Settings: IDEMPAY_* environment variables over %s\n"
            "(IDEMPAY_CONFIG names another file; see docs/DEPLOY.md).\n",
            IDEMPAY_DEFAULT_CONFIG);
}

/* The configuration file and the service's settings; 0 when both are valid. */
static int load_config(void)
{
    char err[512];

    if (env_config_load(err, sizeof(err)) != 0) {
        fprintf(stderr, "idempay-fcgi: configuration: %s\n", err);
        return -1;
    }
    return app_config_load(&config);
}

static long drain_ms_of(const app_config *c)
{
    return (long)env_int("IDEMPAY_SHUTDOWN_TIMEOUT_MS", c->gateway_timeout_ms + 5000);
}

static int check_config(void)
{
    int warnings;

    if (load_config() != 0) {
        fprintf(stderr, "configuration INVALID\n");
        return 2;
    }
    warnings = config_report_print(&config, drain_ms_of(&config), stdout, stderr);
    printf("configuration OK%s\n", warnings ? " (with warnings)" : "");
    return 0;
}

/* The refunds stopped for an operator (docs/DEPLOY.md); exit 0 when none,
 * 1 when some are listed, 2 when they cannot be read. */
static int list_stuck_refunds(void)
{
    if (load_config() != 0 || mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    int n = refund_admin_list_stuck(&config, stdout, stderr);
    return n < 0 ? 2 : n > 0 ? 1 : 0;
}

/* The caller commands (docs/DEPLOY.md, "Callers"): exit 0 done, 1 refused,
 * 2 usage or the database. */
static int caller_command(int argc, char **argv)
{
    const char *cmd = argv[1];

    if ((!strcmp(cmd, "--list-callers") && argc != 2) ||
        (strcmp(cmd, "--list-callers") != 0 && argc != 3)) {
        usage(stderr);
        return 2;
    }
    if (load_config() != 0 || mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    if (!strcmp(cmd, "--add-caller"))
        return caller_store_add(&config, argv[2], stdout, stderr);
    if (!strcmp(cmd, "--rekey-caller"))
        return caller_store_rekey(&config, argv[2], stdout, stderr);
    if (!strcmp(cmd, "--disable-caller"))
        return caller_store_disable(&config, argv[2], stdout, stderr);
    return caller_store_list(&config, stdout, stderr);
}

int main(int argc, char **argv)
{
    static const fcgi_app app = { thread_init, thread_fini, handle };
    long drain_ms;
    const char *listen_spec = NULL;
    int rc;

    if (argc > 1 && !strcmp(argv[1], "--check-config"))
        return check_config();
    if (argc > 1 && !strcmp(argv[1], "--list-stuck-refunds"))
        return list_stuck_refunds();
    if (argc > 1 && (!strcmp(argv[1], "--add-caller") || !strcmp(argv[1], "--list-callers") ||
                     !strcmp(argv[1], "--rekey-caller") || !strcmp(argv[1], "--disable-caller")))
        return caller_command(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        printf("idempay-fcgi %s\n", IDEMPAY_VERSION);
        return 0;
    }
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    listen_spec = argc > 1 ? argv[1] : NULL;

    /* before any thread: the stop signals are for the adapter's thread */
    fcgi_adapter_block_signals();
    if (load_config() != 0)
        return 2;
    log_init("idempay-fcgi");
    if (config.development)
        log_msg(LOG_WARN,
                "DEVELOPMENT MODE (IDEMPAY_DEVELOPMENT=1): the published development"
                " key and a plain-http gateway are allowed; never run a real merchant like this");
    drain_ms = drain_ms_of(&config);
    if (drain_ms < 1) {
        log_msg(LOG_ERROR, "IDEMPAY_SHUTDOWN_TIMEOUT_MS must be positive");
        return 2;
    }
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0) {
        log_msg(LOG_ERROR, "library initialisation failed");
        return 2;
    }
    metrics_init(config.metrics_path);
    reconciler_start(&config);
    refund_queue_start(&config);
    statement_start(&config);
    log_msg(LOG_INFO, "starting %s: %s door, %d threads, gateway %s, token mode %d, config %s",
            IDEMPAY_VERSION, config.door == DOOR_PUBLIC ? "public" : "merchant", config.threads,
            config.gateway_url, (int)config.token_mode,
            env_config_path() ? env_config_path() : "environment only");
    rc = fcgi_adapter_serve(&app, config.threads, listen_spec, drain_ms);
    if (rc < 0)
        return 1;
    /* The reconciler, refund and statement threads run to the process's end: every step
     * they take is a CAS or an idempotent gateway call, so leaving now is
     * safe, and _exit skips atexit handlers they could still be using. */
    log_msg(LOG_INFO, "exiting");
    _exit(rc == 0 ? 0 : 1);
}
