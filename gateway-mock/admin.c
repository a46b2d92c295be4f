/* admin.c - the /mock/ admin API: ledger listing, journal, knobs, targeted
 * rules, reset. Knob changes are written to the ledger before they take
 * effect, so a restart of the mock keeps them; the rules live in memory only
 * (their counts move with every call they decide), so a restarted mock has
 * none. */
#include "admin.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "flows.h"
#include "journal.h"
#include "log.h"
#include "notifier.h"
#include "refund_flow.h"
#include "order_no.h"
#include "payer.h"
#include "prepay.h"
#include "rules.h"

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
    flows_sweep(l); /* due USERPAYING micropays show their outcome */
    /* The refunds first: listing them ends those that are due, so the
     * charges' refunded_fee below is current. */
    json_t *refunds = refund_flow_ledger_json(app, filter);
    json_t *charges = refunds != NULL ? ledger_charges_json(l, filter) : NULL;
    json_t *closed = charges != NULL ? ledger_closed_json(l, filter) : NULL;
    if (closed == NULL || notifier_count(app->notifier, l, &sent) != 0) {
        json_decref(refunds);
        json_decref(charges);
        json_decref(closed);
        admin_unavailable(resp, l);
        return;
    }
    json_t *o = json_pack("{s:o, s:I, s:o, s:o}", "charges", charges, "notifications_sent",
                          (json_int_t)sent, "closed", closed, "refunds", refunds);
    if (o == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    http_response_json(resp, 200, o);
}

/* A prefix= value: 1..JOURNAL_PREFIX_MAX letters and digits. */
static bool admin_prefix_valid(const char *p)
{
    size_t n = strlen(p);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]))
            return false;
    return n >= 1 && n <= JOURNAL_PREFIX_MAX;
}

/* GET /mock/requests[?out_trade_no=X | ?prefix=P][&limit=N] */
static void admin_requests(mock_app *app, const http_request *req, http_response *resp)
{
    char otn[64], prefix[64], lim[24], err[256];
    long long limit = JOURNAL_DEFAULT_LIMIT;

    int q = http_query_param(req->query, "out_trade_no", otn, sizeof(otn));
    if (q == -2 || (q == 0 && !order_no_valid(otn))) {
        http_response_error(resp, 400, "invalid_request",
                            "out_trade_no must be 6-32 characters of [0-9A-Za-z_|*-]");
        return;
    }
    int qp = http_query_param(req->query, "prefix", prefix, sizeof(prefix));
    if (qp == -2 || (qp == 0 && (!admin_prefix_valid(prefix) || q == 0))) {
        http_response_error(resp, 400, "invalid_request",
                            "prefix must be 1-32 letters and digits, without out_trade_no");
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
        http_response_error(resp, 400, "invalid_request",
                            "limit must be an integer from 1 to 1000000");
        return;
    }
    if (app->journal == NULL) {
        http_response_error(resp, 503, "unavailable", "this mock keeps no journal");
        return;
    }
    journal_filter fl = { .out_trade_no = q == 0 ? otn : NULL, .prefix = qp == 0 ? prefix : NULL };
    json_t *o = journal_json(app->journal, &fl, limit, err, sizeof(err));
    if (o == NULL) {
        log_msg(LOG_ERROR, "admin: journal unavailable: %s", err);
        http_response_header(resp, "Retry-After", "1");
        http_response_error(resp, 503, "unavailable",
                            "the mock's journal (MariaDB) is unavailable");
        return;
    }
    http_response_json(resp, 200, o);
}

/* The config as GET /mock/config shows it: every knob and "rules" with
 * their counts now, as a new object, or NULL on OOM. */
static json_t *admin_config_json(mock_app *app)
{
    faults_config cfg;
    rules_list rl;

    faults_get(&app->faults, &cfg);
    rules_get(&app->rules, &rl);
    json_t *o = faults_config_to_json(&cfg);
    json_t *r = o != NULL ? rules_to_json(&rl) : NULL;
    if (r == NULL || json_object_set_new(o, "rules", r) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* admin_config_json as compact JSON text (malloc'd), or NULL on OOM. */
static char *admin_config_text(mock_app *app)
{
    json_t *o = admin_config_json(app);
    char *text = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    return text;
}

static void admin_get_config(mock_app *app, http_response *resp)
{
    admin_json_text(resp, 200, admin_config_text(app));
}

/* Judges a PUT body obj over the current knobs cur: the knobs merged into
 * *next, and when obj names "rules" (*has_rules) the new list into *rl.
 * 0, or -1 with the reason in err (nothing may change then). */
static int admin_judge_put(const json_t *obj, const faults_config *cur, faults_config *next,
                           int *seeded, rules_list *rl, bool *has_rules, char *err, size_t errlen)
{
    const json_t *rv = json_object_get(obj, "rules");
    json_t *knobs = json_copy((json_t *)obj); /* shallow: only "rules" is removed */
    int rc = -1;

    *has_rules = rv != NULL;
    if (knobs == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_object_del(knobs, "rules");
    if (faults_config_merge(cur, knobs, next, seeded, err, errlen) == 0 &&
        (rv == NULL || rules_parse(rv, rl, err, errlen) == 0))
        rc = 0;
    json_decref(knobs);
    return rc;
}

static void admin_put_config(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    char err[200];
    faults_config cur, next;
    rules_list rl;
    bool has_rules = false;
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
    if (admin_judge_put(obj, &cur, &next, &seeded, &rl, &has_rules, err, sizeof(err)) != 0) {
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
    if (has_rules)
        rules_replace(&app->rules, &rl);
    pthread_mutex_unlock(&admin_config_mu);
    notifier_kick(app->notifier);
    free(text);
    text = admin_config_text(app);
    log_msg(LOG_INFO, "config: %s", text != NULL ? text : "(out of memory)");
    admin_json_text(resp, 200, text);
}

static void admin_reset(mock_app *app, ledger *l, http_response *resp)
{
    faults_config dflt;
    faults_config_site_defaults(&dflt, NULL, 0);
    char *text = faults_config_dump(&dflt);
    if (text == NULL) {
        http_response_error(resp, 500, "internal", "out of memory");
        return;
    }
    pthread_mutex_lock(&admin_config_mu);
    notifier_reset_begin(app->notifier);
    journal_reset_begin(app->journal);
    int rc = ledger_reset(l, text);
    if (rc == 0 && prepay_reset() != 0) { /* the flows' orders (prepay.h) */
        log_msg(LOG_ERROR, "reset: the flows' orders: %s", prepay_error());
        rc = -1;
    }
    journal_reset_end(app->journal);
    notifier_reset_end(app->notifier);
    if (rc == 0) {
        rules_list none = { .n = 0 };
        faults_set(&app->faults, &dflt, 1);
        rules_replace(&app->rules, &none);
    }
    pthread_mutex_unlock(&admin_config_mu);
    notifier_kick(app->notifier);
    if (rc != 0) {
        free(text);
        admin_unavailable(resp, l);
        return;
    }
    log_msg(LOG_INFO, "reset: ledger emptied, defaults restored");
    free(text);
    json_t *cfg = admin_config_json(app);
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
    } else if (strncmp(req->path, "/mock/payer/", 12) == 0) {
        payer_handle(app, l, req, resp); /* the customer (payer.h) */
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
    faults_config_site_defaults(&dflt, NULL, 0);
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
