/* mock_admin.c - admin calls to the mock gateway, through http_client; the
 * ledger, which grows with the run, with a reply limit of MOCK_LEDGER_MAX. */
#include "mock_admin.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"
#include "text_copy.h"

/* Up to about 13 s in all: the crash scenario's chaos may restart the mock
 * twice in a row just before a phase configures it, and on a loaded machine
 * a restart takes seconds (seen: a phase's PUT refused 503 by the mock's
 * front 2 s after two restarts, the run lost). */
#define MOCK_ATTEMPTS 12
#define MOCK_PAUSE_MAX_NS 2000000000L

static void mock_pause(int attempt)
{
    long ns = 200000000L * attempt;
    struct timespec ts = { .tv_sec = 0,
                           .tv_nsec = ns < MOCK_PAUSE_MAX_NS ? ns : MOCK_PAUSE_MAX_NS };
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec = ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
    }
    nanosleep(&ts, NULL);
}

/* method url with body (JSON, or none) on c, up to MOCK_ATTEMPTS times
 * while the mock cannot be reached or answers 5xx. 0 with *rep holding the
 * 2xx reply (its body valid until c's next call), or -1 with err set. */
static int mock_call_on(http_client *c, const char *method, const char *url, const char *body,
                        long timeout_ms, http_reply *rep, char *err, size_t errlen)
{
    for (int attempt = 1; attempt <= MOCK_ATTEMPTS; attempt++) {
        http_status hs = http_client_request(c, method, url, body ? "application/json" : NULL, body,
                                             body ? strlen(body) : 0, NULL, timeout_ms, rep);
        if (hs == HTTP_OK && rep->code >= 200 && rep->code < 300)
            return 0;
        if (hs == HTTP_OK)
            snprintf(err, errlen, "%s %s: HTTP %ld %.200s", method, url, rep->code, rep->body);
        else
            snprintf(err, errlen, "%s %s: %s (%s)", method, url, http_status_name(hs), rep->error);
        if (hs == HTTP_OK && rep->code >= 400 && rep->code < 500)
            break; /* the mock refused the request itself: retrying will not help */
        if (attempt < MOCK_ATTEMPTS)
            mock_pause(attempt);
    }
    return -1;
}

static int mock_call(const char *method, const char *url, const char *body, char *err,
                     size_t errlen)
{
    http_reply rep;
    http_client *c = http_client_new(2000, 10000);
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = mock_call_on(c, method, url, body, 10000, &rep, err, errlen);
    http_client_free(c);
    return rc;
}

int mock_admin_reset(const char *gateway, char *err, size_t errlen)
{
    char url[512];
    snprintf(url, sizeof(url), "%s/mock/reset", gateway);
    return mock_call("POST", url, "{}", err, errlen);
}

int mock_admin_configure(const char *gateway, const char *config, char *err, size_t errlen)
{
    char url[512];
    snprintf(url, sizeof(url), "%s/mock/config", gateway);
    return mock_call("PUT", url, config, err, errlen);
}

char *mock_admin_get_config(const char *gateway, char *err, size_t errlen)
{
    char url[512];
    http_reply rep;
    char *text = NULL;
    snprintf(url, sizeof(url), "%s/mock/config", gateway);
    http_client *c = http_client_new(2000, 10000);
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (mock_call_on(c, "GET", url, NULL, 10000, &rep, err, errlen) == 0) {
        text = strndup(rep.body, rep.body_len);
        if (text == NULL)
            snprintf(err, errlen, "out of memory");
    }
    http_client_free(c);
    return text;
}

static void mock_note_dropped(char *dropped, size_t len, const char *name)
{
    size_t used = strlen(dropped);
    if (strstr(dropped, name) == NULL && used + strlen(name) + 3 < len)
        snprintf(dropped + used, len - used, "%s%s", used ? ", " : "", name);
}

/* Removes from obj the optional knobs that kn lacks (and, in "endpoints",
 * the endpoints and knobs kn's "endpoints" lacks). */
static void mock_filter_obj(json_t *obj, const json_t *kn, char *dropped, size_t len)
{
    static const char *const optional[] = MOCK_OPTIONAL_KNOBS;
    for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
        json_t *v = json_object_get(obj, optional[i]);
        const json_t *kv = json_object_get(kn, optional[i]);
        if (v == NULL)
            continue;
        if (kv == NULL) {
            json_object_del(obj, optional[i]);
            mock_note_dropped(dropped, len, optional[i]);
            continue;
        }
        if (!json_is_object(v) || !json_is_object(kv))
            continue;
        const char *ep;
        json_t *ev, *tmp;
        json_object_foreach_safe(v, tmp, ep, ev)
        {
            const json_t *kev = json_object_get(kv, ep);
            if (kev == NULL) {
                mock_note_dropped(dropped, len, ep); /* before the del frees the key */
                json_object_del(v, ep);
                continue;
            }
            const char *knob;
            json_t *x, *tmp2;
            json_object_foreach_safe(ev, tmp2, knob, x)
            {
                if (json_object_get(kev, knob) == NULL) {
                    mock_note_dropped(dropped, len, knob);
                    json_object_del(ev, knob);
                }
            }
        }
    }
}

int mock_admin_text(const json_t *obj, char *out, size_t outlen)
{
    char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    int rc = -1;
    if (text != NULL && strlen(text) < outlen) {
        snprintf(out, outlen, "%s", text);
        rc = 0;
    }
    free(text);
    return rc;
}

int mock_admin_with_defaults(const char *config, const char *initial, char *out, size_t outlen)
{
    static const char *const optional[] = MOCK_OPTIONAL_KNOBS;
    json_t *obj = json_loads(config, JSON_REJECT_DUPLICATES, NULL);
    json_t *init = initial != NULL ? json_loads(initial, 0, NULL) : NULL;
    int rc = -1;
    if (json_is_object(obj)) {
        for (size_t i = 0; json_is_object(init) && i < sizeof(optional) / sizeof(optional[0]);
             i++) {
            json_t *v = json_object_get(init, optional[i]);
            if (json_object_get(obj, optional[i]) == NULL && v != NULL && !json_is_object(v) &&
                !json_is_null(v))
                json_object_set(obj, optional[i], v);
        }
        rc = mock_admin_text(obj, out, outlen);
    }
    json_decref(obj);
    json_decref(init);
    return rc;
}

int mock_admin_filter(const char *config, const char *known, char *out, size_t outlen,
                      char *dropped, size_t droppedlen)
{
    int rc = -1;
    if (droppedlen > 0)
        dropped[0] = '\0';
    json_t *obj = json_loads(config, JSON_REJECT_DUPLICATES, NULL);
    json_t *kn = known != NULL ? json_loads(known, 0, NULL) : NULL;
    if (json_is_object(obj)) {
        if (json_is_object(kn))
            mock_filter_obj(obj, kn, dropped, droppedlen);
        rc = mock_admin_text(obj, out, outlen);
    }
    json_decref(obj);
    json_decref(kn);
    return rc;
}

int64_t mock_admin_time_us(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *p = iso != NULL ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (p == NULL)
        return INT64_MIN;
    long long us = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (digits < 6) {
                us = us * 10 + (*p - '0');
                digits++;
            }
        for (; digits < 6; digits++)
            us *= 10;
    }
    if (*p != 'Z' || p[1] != '\0')
        return INT64_MIN;
    return (int64_t)timegm(&tm) * 1000000 + us;
}

int mock_admin_parse_ledger(const char *body, size_t len, const sim_schedule *s, const char *prefix,
                            sim_charge **out, size_t *n, long long *notifications, char *err,
                            size_t errlen)
{
    json_error_t je;
    *out = NULL;
    *n = 0;
    *notifications = -1;
    json_t *root = json_loadb(body, len, 0, &je);
    json_t *charges = json_object_get(root, "charges");
    if (root == NULL || !json_is_array(charges)) {
        snprintf(err, errlen, "ledger: not {\"charges\": [...]} (%s)",
                 root == NULL ? je.text : "no charges array");
        json_decref(root);
        return -1;
    }
    json_t *ns = json_object_get(root, "notifications_sent");
    if (json_is_integer(ns))
        *notifications = (long long)json_integer_value(ns);
    size_t total = json_array_size(charges);
    sim_charge *v = calloc(total ? total : 1, sizeof(*v));
    if (v == NULL) {
        snprintf(err, errlen, "out of memory");
        json_decref(root);
        return -1;
    }
    size_t k = 0, plen = strlen(prefix);
    for (size_t i = 0; i < total; i++) {
        json_t *c = json_array_get(charges, i);
        const char *otn = json_string_value(json_object_get(c, "out_trade_no"));
        if (otn == NULL || strncmp(otn, prefix, plen) != 0)
            continue;
        sim_charge *x = &v[k++];
        (void)text_copy(x->out_trade_no, sizeof(x->out_trade_no), otn);
        (void)text_copy(x->transaction_id, sizeof(x->transaction_id),
                        json_string_value(json_object_get(c, "transaction_id")));
        json_t *fee = json_object_get(c, "total_fee");
        if (json_is_integer(fee))
            x->total_fee = (int64_t)json_integer_value(fee);
        else if (json_is_string(fee))
            x->total_fee = strtoll(json_string_value(fee), NULL, 10);
        else
            x->total_fee = -1;
        json_t *ref = json_object_get(c, "refunded");
        x->refunded = json_is_true(ref) || (json_is_integer(ref) && json_integer_value(ref) != 0);
        json_t *rc = json_object_get(c, "refund_count"), *rf = json_object_get(c, "refunded_fee");
        x->refund_count = json_is_integer(rc) ? (int)json_integer_value(rc) : -1;
        x->refunded_fee = json_is_integer(rf) ? (int64_t)json_integer_value(rf) : -1;
        json_t *at = json_object_get(c, "charged_at");
        if (json_is_string(at))
            (void)text_copy(x->charged_at, sizeof(x->charged_at), json_string_value(at));
        else if (json_is_number(at))
            snprintf(x->charged_at, sizeof(x->charged_at), "%.3f", json_number_value(at));
        x->order = sched_order_lookup(s, prefix, otn);
        x->epoch_us = mock_admin_time_us(x->charged_at);
        x->at_us = INT64_MIN;
    }
    json_decref(root);
    *out = v;
    *n = k;
    return 0;
}

int mock_admin_ledger(const char *gateway, const sim_schedule *s, const char *prefix,
                      sim_charge **out, size_t *n, long long *notifications, char *err,
                      size_t errlen)
{
    char url[512];
    http_reply rep;
    int rc = -1;

    snprintf(url, sizeof(url), "%s/mock/ledger", gateway);
    *out = NULL;
    *n = 0;
    *notifications = -1;
    http_client *c = http_client_new(2000, 60000);
    if (c == NULL || http_client_set_max_reply(c, MOCK_LEDGER_MAX) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (mock_call_on(c, "GET", url, NULL, 60000, &rep, err, errlen) == 0)
        rc = mock_admin_parse_ledger(rep.body, rep.body_len, s, prefix, out, n, notifications, err,
                                     errlen);
done:
    http_client_free(c);
    return rc;
}

/* ---- the journal ---- */

static const char *mock_jstr(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

static double mock_jtime(const json_t *o, int64_t origin_epoch_us)
{
    int64_t t = mock_admin_time_us(mock_jstr(o, "time"));
    return t == INT64_MIN ? -1.0 : (double)(t - origin_epoch_us) / 1e6;
}

static void mock_journal_call(FILE *f, const json_t *e, int64_t origin)
{
    const char *rc = mock_jstr(e, "result_code"), *ec = mock_jstr(e, "err_code");
    const char *txn = mock_jstr(e, "transaction_id"), *fault = mock_jstr(e, "fault");
    fprintf(f, "    +%.3f s %-12s fault=%s reply=%s %s%s%s%s%s (%lld ms)\n", mock_jtime(e, origin),
            mock_jstr(e, "endpoint"), fault[0] ? fault : "none", mock_jstr(e, "reply"),
            mock_jstr(e, "return_code"), rc[0] ? "/" : "", rc, ec[0] ? " " : "", ec,
            (long long)json_integer_value(json_object_get(e, "latency_ms")));
    if (txn[0])
        fprintf(f, "      charged %s\n", txn);
}

static void mock_journal_notification(FILE *f, const json_t *e, int64_t origin)
{
    json_t *st = json_object_get(e, "http_status");
    const char *error = mock_jstr(e, "error");
    fprintf(f, "    +%.3f s notification of %s copy %lld try %lld: ", mock_jtime(e, origin),
            mock_jstr(e, "transaction_id"),
            (long long)json_integer_value(json_object_get(e, "copy")),
            (long long)json_integer_value(json_object_get(e, "attempt")));
    if (json_is_integer(st))
        fprintf(f, "HTTP %lld %s", (long long)json_integer_value(st),
                json_is_true(json_object_get(e, "acknowledged")) ? "acknowledged"
                                                                 : mock_jstr(e, "return_msg"));
    else
        fprintf(f, "no answer (%s)", error);
    fprintf(f, "\n");
}

typedef struct {
    const json_t *e;
    int notification;
} mock_jentry;

/* By time (the journal's times are ISO text of one width: text order is
 * time order), calls before notifications at the same time. */
static int mock_jentry_cmp(const void *a, const void *b)
{
    const mock_jentry *x = a, *y = b;
    int c = strcmp(mock_jstr(x->e, "time"), mock_jstr(y->e, "time"));
    return c != 0 ? c : x->notification - y->notification;
}

int mock_admin_format_journal(const char *body, size_t len, int64_t origin_epoch_us, char **text)
{
    char *buf = NULL;
    size_t blen = 0;
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *req = json_object_get(root, "requests"), *ntf = json_object_get(root, "notifications");
    size_t ni = json_array_size(req), nj = json_array_size(ntf);
    mock_jentry *all = json_is_array(req) ? calloc(ni + nj + 1, sizeof(*all)) : NULL;
    FILE *f = all != NULL ? open_memstream(&buf, &blen) : NULL;
    if (f == NULL) {
        free(all);
        json_decref(root);
        return -1;
    }
    /* A call is journaled when it is answered: sort by when it arrived. */
    for (size_t i = 0; i < ni; i++)
        all[i] = (mock_jentry){ json_array_get(req, i), 0 };
    for (size_t j = 0; j < nj; j++)
        all[ni + j] = (mock_jentry){ json_array_get(ntf, j), 1 };
    qsort(all, ni + nj, sizeof(*all), mock_jentry_cmp);
    for (size_t k = 0; k < ni + nj; k++) {
        if (all[k].notification)
            mock_journal_notification(f, all[k].e, origin_epoch_us);
        else
            mock_journal_call(f, all[k].e, origin_epoch_us);
    }
    free(all);
    json_decref(root);
    if (fclose(f) != 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    return 0;
}

int mock_admin_journal(const char *gateway, const char *out_trade_no, int64_t origin_epoch_us,
                       char **text, char *err, size_t errlen)
{
    char url[512];
    http_reply rep;
    int rc = -1;
    *text = NULL;
    snprintf(url, sizeof(url), "%s/mock/requests?out_trade_no=%s", gateway, out_trade_no);
    http_client *c = http_client_new(2000, 10000);
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    http_status hs = http_client_request(c, "GET", url, NULL, NULL, 0, NULL, 10000, &rep);
    if (hs == HTTP_OK && rep.code == 404) {
        *text = strdup(""); /* a mock without a journal */
        rc = *text != NULL ? 0 : -1;
    } else if (hs == HTTP_OK && rep.code == 200) {
        rc = mock_admin_format_journal(rep.body, rep.body_len, origin_epoch_us, text);
        if (rc < 0)
            snprintf(err, errlen, "the journal is not {\"requests\": [...]}");
    } else {
        snprintf(err, errlen, "GET %s: %s", url, hs == HTTP_OK ? "not 200" : rep.error);
    }
    http_client_free(c);
    return rc;
}
