/* refund_obs.c - the ledger's refunds and the service's lists (refund_obs.h). */
#include "refund_obs.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"
#include "money.h"
#include "profile.h"

#define RO_LEDGER_MAX (64u << 20)
#define RO_TIMEOUT_MS 10000

static const char *ro_str(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v != NULL ? v : "";
}

int refund_obs_parse_ledger(refund_obs *o, const char *body, size_t len, const sim_schedule *s,
                            const char *prefix, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je), *refunds = json_object_get(root, "refunds");
    size_t total = json_array_size(refunds), k = 0, plen = strlen(prefix);
    sim_refund *v = calloc(total ? total : 1, sizeof(*v));

    if (root == NULL || v == NULL) {
        snprintf(err, errlen, "ledger refunds: %s", root == NULL ? je.text : "out of memory");
        json_decref(root);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < total; i++) {
        const json_t *r = json_array_get(refunds, i);
        const char *otn = ro_str(r, "out_trade_no");
        if (strncmp(otn, prefix, plen) != 0)
            continue;
        sim_refund *x = &v[k++];
        snprintf(x->refund_no, sizeof(x->refund_no), "%s", ro_str(r, "out_refund_no"));
        snprintf(x->transaction_id, sizeof(x->transaction_id), "%s", ro_str(r, "transaction_id"));
        x->order = sched_order_lookup(s, prefix, otn);
        json_t *fee = json_object_get(r, "refund_fee");
        x->fee = json_is_integer(fee) ? (int64_t)json_integer_value(fee) : -1;
        x->status = (uint8_t)history_refund_status_parse(ro_str(r, "status"));
    }
    json_decref(root);
    free(o->ledger);
    o->ledger = v;
    o->nledger = k;
    return 0;
}

static int ro_grow(refund_obs *o, size_t more)
{
    if (o->nlisted + more <= o->cap_listed)
        return 0;
    size_t cap = o->cap_listed ? o->cap_listed * 2 : 256;
    while (cap < o->nlisted + more)
        cap *= 2;
    sim_refund *v = realloc(o->listed, cap * sizeof(*v));
    if (v == NULL)
        return -1;
    o->listed = v;
    o->cap_listed = cap;
    return 0;
}

int refund_obs_parse_list(refund_obs *o, long order, const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL), *items = json_object_get(root, "refunds");
    size_t n = json_array_size(items);
    int rc = -1;

    if (json_is_array(items) && ro_grow(o, n) == 0) {
        for (size_t i = 0; i < n; i++) {
            const json_t *r = json_array_get(items, i);
            sim_refund *x = &o->listed[o->nlisted++];
            memset(x, 0, sizeof(*x));
            snprintf(x->refund_no, sizeof(x->refund_no), "%s", ro_str(r, "refund_no"));
            x->order = order;
            x->duplicate = strcmp(ro_str(r, "kind"), "duplicate_charge") == 0;
            if (money_parse_yuan(ro_str(r, "amount"), &x->fee) != 0)
                x->fee = -1;
            x->status = (uint8_t)history_refund_status_parse(ro_str(r, "status"));
        }
        if (o->list_read != NULL && order >= 0)
            o->list_read[order] = 1;
        rc = 0;
    }
    json_decref(root);
    return rc;
}

int refund_obs_wanted(const sim_schedule *s, size_t order)
{
    int sc = s->orders[order].scenario;
    return sc == SC_REFUNDS || sc == SC_PAYER_EDGE;
}

/* GETs every wanted order's list into o (emptied first). 0, or -1. */
static int ro_read_lists(refund_obs *o, http_client *h, const char *target, const sim_schedule *s,
                         const char *prefix, char *err, size_t errlen)
{
    char no[64], url[640];
    http_reply rep;

    o->nlisted = 0;
    memset(o->list_read, 0, s->norders);
    for (size_t i = 0; i < s->norders; i++) {
        if (!refund_obs_wanted(s, i) || sched_order_no(s, prefix, i, no, sizeof(no)) != 0)
            continue;
        snprintf(url, sizeof(url), "%s/api/pay/orders/%s/refunds", target, no);
        char sig[4][CALLER_HEADER_LINE_MAX];
        const char *hdrs[5] = { NULL };
        int ns = profile_sign_lines("GET", url, NULL, 0, sig);
        for (int k = 0; k < ns; k++)
            hdrs[k] = sig[k];
        http_status hs = http_client_request(h, "GET", url, NULL, NULL, 0, ns > 0 ? hdrs : NULL,
                                             RO_TIMEOUT_MS, &rep);
        if (hs == HTTP_OK && rep.code == 200 &&
            refund_obs_parse_list(o, (long)i, rep.body, rep.body_len) != 0) {
            snprintf(err, errlen, "the refunds of %s: not a refund list", no);
            return -1;
        }
    }
    return 0;
}

/* Whether a listed refund is PROCESSING while the gateway's has ended. */
static int ro_behind(const refund_obs *o)
{
    for (size_t i = 0; i < o->nlisted; i++) {
        if (o->listed[i].status != RST_PROCESSING)
            continue;
        for (size_t k = 0; k < o->nledger; k++)
            if (strcmp(o->ledger[k].refund_no, o->listed[i].refund_no) == 0 &&
                o->ledger[k].status != RST_PROCESSING)
                return 1;
    }
    return 0;
}

static int ro_read_ledger(refund_obs *o, http_client *h, const char *gateway, const sim_schedule *s,
                          const char *prefix, char *err, size_t errlen)
{
    char url[512];
    http_reply rep;

    snprintf(url, sizeof(url), "%s/mock/ledger", gateway);
    http_status hs = http_client_request(h, "GET", url, NULL, NULL, 0, NULL, 60000, &rep);
    if (hs != HTTP_OK || rep.code != 200) {
        snprintf(err, errlen, "GET /mock/ledger: %s",
                 hs != HTTP_OK ? http_status_name(hs) : "not 200");
        return -1;
    }
    return refund_obs_parse_ledger(o, rep.body, rep.body_len, s, prefix, err, errlen);
}

int refund_obs_read(refund_obs *o, const char *target, const char *gateway, const sim_schedule *s,
                    const char *prefix, double wait_s, char *err, size_t errlen)
{
    http_client *h = http_client_new(2000, RO_TIMEOUT_MS);
    int rc = -1;

    if (o->list_read == NULL)
        o->list_read = calloc(s->norders ? s->norders : 1, 1);
    if (h == NULL || o->list_read == NULL || http_client_set_max_reply(h, RO_LEDGER_MAX) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int round = 0; round <= (int)(wait_s * 2); round++) {
        if (round > 0) {
            struct timespec ts = { .tv_sec = 0, .tv_nsec = 500000000L };
            nanosleep(&ts, NULL);
        }
        if (ro_read_lists(o, h, target, s, prefix, err, errlen) != 0 ||
            ro_read_ledger(o, h, gateway, s, prefix, err, errlen) != 0)
            goto done;
        if (!ro_behind(o))
            break;
    }
    rc = 0;
done:
    http_client_free(h);
    return rc;
}

void refund_obs_free(refund_obs *o)
{
    if (o == NULL)
        return;
    free(o->ledger);
    free(o->listed);
    free(o->list_read);
    memset(o, 0, sizeof(*o));
}
