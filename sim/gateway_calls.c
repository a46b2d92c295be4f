/* gateway_calls.c - the journal's payment calls and fences (gateway_calls.h). */
#include "gateway_calls.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"
#include "mock_admin.h"
#include "text_copy.h"

#define GC_TIMEOUT_MS 120000
#define GC_ATTEMPTS 5 /* the mock may be restarting (the crash scenario) */

int gateway_calls_kind(const char *endpoint)
{
    static const char *const pay[] = { "unifiedorder", "micropay", "v3_native", "v3_jsapi" };
    static const char *const fence[] = { "closeorder", "reverse", "v3_close" };
    int kind = -1;
    for (size_t i = 0; endpoint != NULL && i < sizeof(pay) / sizeof(pay[0]); i++)
        if (strcmp(endpoint, pay[i]) == 0)
            kind = GWCALL_PAY;
    for (size_t i = 0; endpoint != NULL && i < sizeof(fence) / sizeof(fence[0]); i++)
        if (strcmp(endpoint, fence[i]) == 0)
            kind = GWCALL_FENCE;
    return kind;
}

/* One journal entry into x when it is a call of ours of either kind. */
static int gc_take(const json_t *e, const sim_schedule *s, const char *prefix,
                   int64_t origin_epoch_us, sim_gwcall *x)
{
    const char *otn = json_string_value(json_object_get(e, "out_trade_no"));
    const char *ep = json_string_value(json_object_get(e, "endpoint"));
    const char *at = json_string_value(json_object_get(e, "time"));
    json_t *lat = json_object_get(e, "latency_ms");
    int kind = gateway_calls_kind(ep);
    if (otn == NULL || strncmp(otn, prefix, strlen(prefix)) != 0 || kind < 0 || at == NULL ||
        !json_is_integer(lat))
        return 0;
    int64_t epoch = mock_admin_time_us(at);
    if (epoch == INT64_MIN)
        return 0;
    memset(x, 0, sizeof(*x));
    (void)text_copy(x->out_trade_no, sizeof(x->out_trade_no), otn);
    (void)text_copy(x->endpoint, sizeof(x->endpoint), ep);
    x->order = sched_order_lookup(s, prefix, otn);
    x->fence = (uint8_t)kind;
    x->at_us = epoch - origin_epoch_us;
    x->latency_us = (int64_t)json_integer_value(lat) * 1000;
    return 1;
}

int gateway_calls_parse(const char *body, size_t len, const sim_schedule *s, const char *prefix,
                        int64_t origin_epoch_us, sim_gwcall **out, size_t *n, char *err,
                        size_t errlen)
{
    json_error_t je;
    *out = NULL;
    *n = 0;
    json_t *root = json_loadb(body, len, 0, &je);
    json_t *req = json_object_get(root, "requests");
    if (!json_is_array(req)) {
        snprintf(err, errlen, "the journal is not {\"requests\": [...]}");
        json_decref(root);
        return -1;
    }
    size_t total = json_array_size(req), k = 0;
    sim_gwcall *v = calloc(total ? total : 1, sizeof(*v));
    if (v == NULL) {
        snprintf(err, errlen, "out of memory");
        json_decref(root);
        return -1;
    }
    for (size_t i = 0; i < total; i++)
        k += (size_t)gc_take(json_array_get(req, i), s, prefix, origin_epoch_us, &v[k]);
    json_decref(root);
    *out = v;
    *n = k;
    return 0;
}

int gateway_calls_read(const char *gateway, const sim_schedule *s, const char *prefix,
                       int64_t origin_epoch_us, sim_gwcall **out, size_t *n, char *err,
                       size_t errlen)
{
    char url[512];
    http_reply rep;
    int rc = -1;
    *out = NULL;
    *n = 0;
    snprintf(url, sizeof(url), "%s/mock/requests?prefix=%s&limit=1000000", gateway, prefix);
    http_client *c = http_client_new(2000, GC_TIMEOUT_MS);
    if (c == NULL || http_client_set_max_reply(c, GATEWAY_CALLS_MAX_BODY) != 0) {
        snprintf(err, errlen, "out of memory");
        http_client_free(c);
        return -1;
    }
    for (int attempt = 1; attempt <= GC_ATTEMPTS && rc < 0; attempt++) {
        http_status hs = http_client_request(c, "GET", url, NULL, NULL, 0, NULL, GC_TIMEOUT_MS,
                                             &rep);
        if (hs == HTTP_OK && rep.code == 200) {
            rc = gateway_calls_parse(rep.body, rep.body_len, s, prefix, origin_epoch_us, out, n,
                                     err, errlen);
            break;
        }
        if (hs == HTTP_OK && (rep.code == 404 || rep.code == 400 ||
                              (rep.code == 503 && strstr(rep.body, "keeps no journal") != NULL))) {
            rc = 1; /* no journal, or a mock before prefix= */
            break;
        }
        snprintf(err, errlen, "GET %s: %s", url, hs == HTTP_OK ? "not 200" : rep.error);
        if (attempt < GC_ATTEMPTS)
            nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 500000000L }, NULL);
    }
    http_client_free(c);
    return rc;
}
