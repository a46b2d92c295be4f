/* main.c - idempay-gateway-mock: the mock WeChat Pay v2 gateway as a FastCGI
 * program (lighttpd spawns it). Wires credentials, knobs, journal, notifier
 * and ledger, and routes each request to the WeChat API or the admin API. */
#include <mysql.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "api.h"
#include "env.h"
#include "fcgi_adapter.h"
#include "http_client.h"
#include "journal.h"
#include "ledger.h"
#include "log.h"
#include "mock.h"
#include "notifier.h"
#include "prepay.h"
#include "refund_flow.h"
#include "text_copy.h"
#include "txid.h"
#include "v3_api.h"
#include "v3_keys.h"

static mock_app mock;

/* lighttpd stops its FastCGI children with SIGTERM. Everything the mock
 * promised is committed in the ledger, so it just leaves (pending
 * notifications are dropped, as after a crash). Installed before libfcgi
 * starts, which would otherwise catch SIGTERM and wake only one thread. */
static void mock_on_term(int sig)
{
    (void)sig;
    _exit(0);
}
static atomic_int mock_config_loaded;

static void *mock_thread_init(int index)
{
    (void)index;
    mysql_thread_init();
    return ledger_new();
}

static void mock_thread_fini(void *ctx)
{
    ledger_free(ctx);
    prepay_thread_end();
    mysql_thread_end();
}

static void mock_handle(void *ctx, const http_request *req, http_response *resp)
{
    ledger *l = ctx;

    if (l == NULL) {
        http_response_error(resp, 503, "unavailable", "out of memory");
        return;
    }
    /* The persisted knobs, as soon as MariaDB can be reached. */
    if (!atomic_load(&mock_config_loaded) && admin_load_config(&mock, l) == 0)
        atomic_store(&mock_config_loaded, 1);

    if (strncmp(req->path, "/mock/", 6) == 0) {
        admin_handle(&mock, l, req, resp);
        return;
    }
    if (v3_api_path(req->path)) {
        v3_api_handle(&mock, l, req, resp);
        return;
    }
    api_endpoint ep = api_endpoint_of(req->path);
    if (ep == API_NONE) {
        http_response_error(resp, 404, "not_found", "no such endpoint on the mock gateway");
        return;
    }
    api_handle(&mock, l, ep, req, resp);
}

static void mock_copy_setting(char *dst, size_t cap, const char *src, const char *what)
{
    if (!text_copy(dst, cap, src))
        log_msg(LOG_WARN, "%s is too long; truncated", what);
}

/* The merchant's appid, mch_id, key and sign type from the settings. 0, or
 * -1 (logged) when the sign type is neither MD5 nor HMAC-SHA256. */
static int mock_load_creds(void)
{
    mock_copy_setting(mock.creds.appid, sizeof(mock.creds.appid),
                      env_str("IDEMPAY_WX_APPID", MOCK_DEFAULT_APPID), "IDEMPAY_WX_APPID");
    mock_copy_setting(mock.creds.mch_id, sizeof(mock.creds.mch_id),
                      env_str("IDEMPAY_WX_MCHID", MOCK_DEFAULT_MCHID), "IDEMPAY_WX_MCHID");
    const char *key = env_str("IDEMPAY_WX_KEY", NULL);
    if (key == NULL) {
        log_msg(LOG_WARN, "IDEMPAY_WX_KEY is unset: using the documented development key");
        key = MOCK_DEV_KEY;
    }
    mock_copy_setting(mock.creds.key, sizeof(mock.creds.key), key, "IDEMPAY_WX_KEY");
    if (wx_sign_type_parse(env_str("IDEMPAY_WX_SIGN_TYPE", "MD5"), &mock.creds.sign_type) != 0) {
        log_msg(LOG_ERROR, "IDEMPAY_WX_SIGN_TYPE must be MD5 or HMAC-SHA256");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    log_init("gateway-mock");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = mock_on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (mysql_library_init(0, NULL, NULL) != 0 || http_client_global_init() != 0) {
        log_msg(LOG_ERROR, "cannot initialise the MariaDB or curl library");
        return 1;
    }
    txid_init_random();

    if (mock_load_creds() != 0)
        return 1;

    faults_config cfg;
    char why[256];
    mock.v3 = v3_keys_load(why, sizeof(why));
    if (mock.v3 == NULL)
        log_msg(LOG_WARN, "APIv3 is not served (/v3/ answers 404): %s", why);
    else
        log_msg(LOG_INFO, "APIv3: merchant certificate %s, platform certificate %s%s%s",
                mock.v3->merchant.serial, mock.v3->platform.cert[0].serial,
                mock.v3->platform.pairs == 2 ? ", rotation target " : "",
                mock.v3->platform.pairs == 2 ? mock.v3->platform.cert[1].serial : "");
    faults_config_site_defaults(&cfg, why, sizeof(why));
    if (why[0] != '\0')
        log_msg(LOG_WARN, "%s", why);
    faults_init(&mock.faults, &cfg);
    rules_init(&mock.rules);

    ledger *l = ledger_new();
    if (l != NULL && admin_load_config(&mock, l) == 0)
        atomic_store(&mock_config_loaded, 1);
    else
        log_msg(LOG_WARN, "config: ledger unavailable at start (%s); defaults until it is",
                l != NULL ? ledger_error(l) : "out of memory");
    ledger_free(l);

    mock.journal = journal_start(&mock.faults);
    if (mock.journal == NULL) {
        log_msg(LOG_ERROR, "cannot start the journal");
        return 1;
    }
    mock.notifier = notifier_start(&mock);
    if (mock.notifier == NULL) {
        log_msg(LOG_ERROR, "cannot start the notifier");
        return 1;
    }

    if (refund_flow_start(&mock) != 0)
        return 1;

    long long threads = env_int("IDEMPAY_MOCK_THREADS", 32);
    if (threads < 1 || threads > 1024)
        threads = 32;
    /* Withheld replies (timeout_after_charge) may take at most half the
     * threads, so the rest keep answering. */
    mock.max_holds = threads / 2 > 0 ? (int)(threads / 2) : 1;
    const char *listen = argc > 1 ? argv[1] : NULL;
    log_msg(LOG_INFO, "mock gateway: appid %s mch_id %s, %lld threads, listening on %s",
            mock.creds.appid, mock.creds.mch_id, threads, listen ? listen : "the inherited socket");

    static const fcgi_app app = { mock_thread_init, mock_thread_fini, mock_handle };
    int rc = fcgi_adapter_run(&app, (int)threads, listen);
    mysql_library_end();
    return rc == 0 ? 0 : 1;
}
