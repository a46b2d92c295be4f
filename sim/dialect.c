/* dialect.c - the target's dialect, from the mock's journal (see dialect.h). */
#include "dialect.h"

#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "http_client.h"
#include "payer.h"

int dialect_count(const char *body, size_t len, int *v3, int *v2)
{
    json_t *root = json_loadb(body, len, 0, NULL), *req = json_object_get(root, "requests"), *r;
    size_t i;
    int rc = json_is_array(req) ? 0 : -1;

    json_array_foreach(req, i, r)
    {
        const char *e = json_string_value(json_object_get(r, "endpoint"));
        if (e != NULL && (strcmp(e, "v3_native") == 0 || strcmp(e, "v3_jsapi") == 0))
            (*v3)++;
        else if (e != NULL && strcmp(e, "unifiedorder") == 0)
            (*v2)++;
    }
    json_decref(root);
    return rc;
}

/* The journal of order no counted into v3, v2. 0 or -1. */
static int dialect_order(http_client *h, const char *gateway, const char *no, int *v3, int *v2)
{
    char url[512];
    http_reply r;

    snprintf(url, sizeof(url), "%s/mock/requests?out_trade_no=%s", gateway, no);
    if (http_client_request(h, "GET", url, NULL, NULL, 0, NULL, 10000, &r) != HTTP_OK ||
        r.code != 200)
        return -1;
    return dialect_count(r.body, r.body_len, v3, v2);
}

int dialect_check(const char *gateway, const sim_schedule *s, const char *prefix, int dialect,
                  FILE *out)
{
    http_client *h = http_client_new(2000, 10000);
    char *seen = calloc(s->norders ? s->norders : 1, 1);
    char no[64];
    int v3 = 0, v2 = 0, orders = 0, rc = h != NULL && seen != NULL ? 0 : -1;

    for (size_t t = 0; rc == 0 && t < s->ntasks && orders < DIALECT_SAMPLE; t++) {
        const sched_task *k = &s->tasks[t];
        if ((k->flow != FLOW_NATIVE && k->flow != FLOW_JSAPI) || k->order < 0 || seen[k->order] ||
            sched_order_no(s, prefix, (size_t)k->order, no, sizeof(no)) < 0)
            continue;
        seen[k->order] = 1;
        orders++;
        rc = dialect_order(h, gateway, no, &v3, &v2);
    }
    if (rc != 0)
        fprintf(out, "dialect: the mock's journal at %s cannot be read\n", gateway);
    else if ((dialect == 3 && v2 > 0) || (dialect == 2 && v3 > 0)) {
        fprintf(out,
                "dialect: asked for v%d, but of %d prepay orders' calls %d were v3 and %d "
                "v2: the target does not speak v%d (IDEMPAY_WX_API)\n",
                dialect, orders, v3, v2, dialect);
        rc = -1;
    } else {
        fprintf(out, "dialect: v%d (%d prepay orders read back: %d v3 and %d v2 prepay calls)\n",
                dialect, orders, v3, v2);
    }
    free(seen);
    http_client_free(h);
    return rc;
}

unsigned dialect_runnable(unsigned mask, int dialect, char *note, size_t notelen)
{
    unsigned bit = 1u << SC_V3_ATTACKS;
    if (notelen > 0)
        note[0] = '\0';
    if (!(mask & bit) || dialect == 3)
        return mask;
    snprintf(note, notelen, "%s (APIv3 notifications: needs --gateway v3)",
             sched_scenario_name(SC_V3_ATTACKS));
    return mask & ~bit;
}
