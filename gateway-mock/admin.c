/* admin.c - the /mock/ admin API: ledger listing, journal, knobs, reset.
 * Config changes are written to the ledger before they take effect, so a
 * restart of the mock keeps them. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "journal.h"
#include "log.h"
#include "notifier.h"
#include "order_no.h"

/* One writer of the config at a time (PUT and reset), so the stored copy
 * and the live one never disagree. */
static pthread_mutex_t admin_config_mu = PTHREAD_MUTEX_INITIALIZER;

static void admin_json_text(http_response *resp, int status, char *text)
{
    if (text == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    http_response_set(resp, status, "application/json", text, strlen(text));
    free(text);
}

static void admin_unavailable(http_response *resp, ledger *l)
{
    log_msg(LOG_ERROR, "admin: ledger unavailable: %s", ledger_error(l));
    http_response_header(resp, "Retry-After", "1");
    http_response_error(resp, 503, "unavailable", "the mock's ledger (MariaDB) is unavailable");
}

static void admin_ledger(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    char otn[64];
    const char *filter = NULL;
    long long sent = 0;

    int q = http_query_param(req->query, "out_trade_no", otn, sizeof(otn));
    if (q == -2 || (q == 0 && !order_no_valid(otn))) {
        http_response_error(resp, 400, "invalid_request",
                            "out_trade_no must be 6-32 characters of [0-9A-Za-z_|*-]");
        return;
    }
    if (q == 0)
        filter = otn;
    json_t *charges = ledger_charges_json(l, filter);
    json_t *closed = charges != NULL ? ledger_closed_json(l, filter) : NULL;
    if (closed == NULL || notifier_count(app->notifier, l, &sent) != 0) {
        json_decref(charges);
        json_decref(closed);
        admin_unavailable(resp, l);
        return;
    }
    json_t *o = json_pack("{s:o, s:I, s:o}", "charges", charges, "notifications_sent",
                          (json_int_t)sent, "closed", closed);
    if (o == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    http_response_json(resp, 200, o);
}

/* GET /mock/requests[?out_trade_no=X][&limit=N] */
static void admin_requests(mock_app *app, const http_request *req, http_response *resp)
{
    char otn[64], lim[24], err[256];
    long long limit = JOURNAL_DEFAULT_LIMIT;

    int q = http_query_param(req->query, "out_trade_no", otn, sizeof(otn));
    if (q == -2 || (q == 0 && !order_no_valid(otn))) {
        http_response_error(resp, 400, "invalid_request",
                            "out_trade_no must be 6-32 characters of [0-9A-Za-z_|*-]");
        return;
    }
    int ql = http_query_param(req->query, "limit", lim, sizeof(lim));
    if (ql == 0) {
        char *end = NULL;
        limit = strtoll(lim, &end, 10);
        if (lim[0] < '0' || lim[0] > '9' || *end != '\0' || limit < 1 || limit > JOURNAL_MAX_LIMIT)
            ql = -2;
    }
    if (ql == -2) {
        http_response_error(resp, 400, "invalid_request", "limit must be an integer from 1 to 1000000");
        return;
    }
    if (app->journal == NULL) {
        http_response_error(resp, 503, "unavailable", "this mock keeps no journal");
        return;
    }
    json_t *o = journal_json(app->journal, q == 0 ? otn : NULL, limit, err, sizeof(err));
    if (o == NULL) {
        log_msg(LOG_ERROR, "admin: journal unavailable: %s", err);
        http_response_header(resp, "Retry-After", "1");
        http_response_error(resp, 503, "unavailable", "the mock's journal (MariaDB) is unavailable");
        return;
    }
    http_response_json(resp, 200, o);
}

static void admin_get_config(mock_app *app, http_response *resp)
{
    faults_config cfg;
    faults_get(&app->faults, &cfg);
    admin_json_text(resp, 200, faults_config_dump(&cfg));
}

static void admin_put_config(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    char err[160];
    faults_config cur, next;
    int seeded = 0;

    if (req->body_too_large) {
        http_response_error(resp, 413, "payload_too_large", "the config is at most 64 KiB");
        return;
    }
    json_t *obj = http_json_parse_object(req->body, req->body_len);
    if (obj == NULL) {
        http_response_error(resp, 400, "invalid_request",
                            "the body must be one JSON object without duplicate keys");
        return;
    }
    pthread_mutex_lock(&admin_config_mu);
    faults_get(&app->faults, &cur);
    if (faults_config_merge(&cur, obj, &next, &seeded, err, sizeof(err)) != 0) {
        pthread_mutex_unlock(&admin_config_mu);
        json_decref(obj);
        http_response_error(resp, 400, "invalid_config", err);
        return;
    }
    json_decref(obj);
    char *text = faults_config_dump(&next);
    if (text == NULL || ledger_config_save(l, text) != 0) {
        pthread_mutex_unlock(&admin_config_mu);
        if (text == NULL)
            http_response_error(resp, 500, "internal", "out of memory");
        else
            admin_unavailable(resp, l);
        free(text);
        return;
    }
    faults_set(&app->faults, &next, seeded);
    pthread_mutex_unlock(&admin_config_mu);
    notifier_kick(app->notifier);
    log_msg(LOG_INFO, "config: %s", text);
    admin_json_text(resp, 200, text);
}

static void admin_reset(mock_app *app, ledger *l, http_response *resp)
{
    faults_config dflt;
    faults_config_defaults(&dflt);
    char *text = faults_config_dump(&dflt);
    if (text == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    pthread_mutex_lock(&admin_config_mu);
    notifier_reset_begin(app->notifier);
    journal_reset_begin(app->journal);
    int rc = ledger_reset(l, text);
    journal_reset_end(app->journal);
    notifier_reset_end(app->notifier);
    if (rc == 0)
        faults_set(&app->faults, &dflt, 1);
    pthread_mutex_unlock(&admin_config_mu);
    notifier_kick(app->notifier);
    if (rc != 0) {
        free(text);
        admin_unavailable(resp, l);
        return;
    }
    log_msg(LOG_INFO, "reset: ledger emptied, defaults restored");
    json_t *cfg = json_loads(text, 0, NULL);
    free(text);
    json_t *o = cfg != NULL ? json_pack("{s:b, s:o}", "reset", 1, "config", cfg) : NULL;
    if (o == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    http_response_json(resp, 200, o);
}

static void admin_method(http_response *resp, const char *allow)
{
    http_response_header(resp, "Allow", allow);
    http_response_error(resp, 405, "method_not_allowed", "method not allowed on this path");
}

void admin_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    const char *m = req->method;

    if (strcmp(req->path, "/mock/ledger") == 0) {
        if (strcmp(m, "GET") == 0)
            admin_ledger(app, l, req, resp);
        else
            admin_method(resp, "GET");
    } else if (strcmp(req->path, "/mock/config") == 0) {
        if (strcmp(m, "GET") == 0)
            admin_get_config(app, resp);
        else if (strcmp(m, "PUT") == 0)
            admin_put_config(app, l, req, resp);
        else
            admin_method(resp, "GET, PUT");
    } else if (strcmp(req->path, "/mock/requests") == 0) {
        if (strcmp(m, "GET") == 0)
            admin_requests(app, req, resp);
        else
            admin_method(resp, "GET");
    } else if (strcmp(req->path, "/mock/reset") == 0) {
        if (strcmp(m, "POST") == 0)
            admin_reset(app, l, resp);
        else
            admin_method(resp, "POST");
    } else {
        http_response_error(resp, 404, "not_found", "no such mock endpoint");
    }
}

int admin_load_config(mock_app *app, ledger *l)
{
    char *text = NULL;
    char err[160];
    faults_config dflt, cfg;

    int rc = ledger_config_load(l, &text);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return 0;
    faults_config_defaults(&dflt);
    json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (obj == NULL || faults_config_merge(&dflt, obj, &cfg, NULL, err, sizeof(err)) != 0) {
        log_msg(LOG_WARN, "config: the stored config is unusable (%s); keeping defaults",
                obj == NULL ? "not JSON" : err);
        json_decref(obj);
        free(text);
        return 0;
    }
    json_decref(obj);
    pthread_mutex_lock(&admin_config_mu);
    faults_set(&app->faults, &cfg, 1);
    pthread_mutex_unlock(&admin_config_mu);
    log_msg(LOG_INFO, "config loaded: %s", text);
    free(text);
    return 0;
}
