/* history.c - append-only op buffers, merged and sorted after the run. */
#include "history.h"

#include <stdlib.h>
#include <string.h>

void history_init(sim_history *h)
{
    memset(h, 0, sizeof(*h));
}

void history_free(sim_history *h)
{
    if (h == NULL)
        return;
    free(h->op);
    memset(h, 0, sizeof(*h));
}

static int history_reserve(sim_history *h, size_t want)
{
    if (want <= h->cap)
        return 0;
    size_t cap = h->cap ? h->cap : 256;
    while (cap < want)
        cap *= 2;
    sim_op *p = realloc(h->op, cap * sizeof(*p));
    if (p == NULL)
        return -1;
    h->op = p;
    h->cap = cap;
    return 0;
}

int history_append(sim_history *h, const sim_op *op)
{
    if (history_reserve(h, h->n + 1) < 0)
        return -1;
    h->op[h->n++] = *op;
    return 0;
}

int history_take(sim_history *dst, sim_history *src)
{
    if (src->n == 0)
        return 0;
    if (history_reserve(dst, dst->n + src->n) < 0)
        return -1;
    memcpy(dst->op + dst->n, src->op, src->n * sizeof(sim_op));
    dst->n += src->n;
    src->n = 0;
    return 0;
}

static int history_before(const sim_op *a, const sim_op *b)
{
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us;
    if (a->end_us != b->end_us)
        return a->end_us < b->end_us;
    return a->order < b->order;
}

void history_sort(sim_history *h)
{
    if (h->n < 2)
        return;
    sim_op *tmp = malloc(h->n * sizeof(*tmp));
    if (tmp == NULL) {
        /* Insertion sort needs no memory; only reached on OOM. */
        for (size_t i = 1; i < h->n; i++) {
            sim_op v = h->op[i];
            size_t j = i;
            while (j > 0 && history_before(&v, &h->op[j - 1])) {
                h->op[j] = h->op[j - 1];
                j--;
            }
            h->op[j] = v;
        }
        return;
    }
    sim_op *a = h->op, *b = tmp;
    for (size_t width = 1; width < h->n; width *= 2) {
        for (size_t lo = 0; lo < h->n; lo += 2 * width) {
            size_t mid = lo + width < h->n ? lo + width : h->n;
            size_t hi = lo + 2 * width < h->n ? lo + 2 * width : h->n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = history_before(&a[j], &a[i]) ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
        }
        sim_op *t = a;
        a = b;
        b = t;
    }
    if (a != h->op)
        memcpy(h->op, a, h->n * sizeof(sim_op));
    free(tmp);
}

const char *history_refund_status_name(int st)
{
    static const char *const names[RST_COUNT] = { "PROCESSING", "SUCCESS",  "REFUNDCLOSE",
                                                  "CHANGE",     "ABNORMAL", "OTHER" };
    return (st >= 0 && st < RST_COUNT) ? names[st] : "?";
}

int history_refund_status_parse(const char *s)
{
    for (int i = 0; s != NULL && i < RST_OTHER; i++)
        if (strcmp(s, history_refund_status_name(i)) == 0)
            return i;
    return RST_OTHER;
}

const char *history_kind_name(int kind)
{
    static const char *const names[OP_KIND_COUNT] = { "pay",  "query", "token", "callback",
                                                      "ping", "stray", "payer", "refund" };
    return (kind >= 0 && kind < OP_KIND_COUNT) ? names[kind] : "?";
}

const char *history_outcome_name(int outcome)
{
    static const char *const names[OUT_COUNT] = { "ok", "fail", "unknown" };
    return (outcome >= 0 && outcome < OUT_COUNT) ? names[outcome] : "?";
}

const char *history_status_name(int status)
{
    static const char *const names[] = { "PENDING", "PROCESSING", "PAID", "FAILED", "-" };
    return (status >= 0 && status <= OST_NONE) ? names[status] : "?";
}

int history_status_parse(const char *s)
{
    if (s == NULL)
        return OST_NONE;
    for (int i = 0; i < OST_NONE; i++)
        if (strcmp(s, history_status_name(i)) == 0)
            return i;
    return OST_NONE;
}

void history_charge_times(sim_charge *charges, size_t n, int64_t origin_epoch_us)
{
    for (size_t i = 0; i < n; i++)
        charges[i].at_us = charges[i].epoch_us == INT64_MIN ? INT64_MIN
                                                            : charges[i].epoch_us - origin_epoch_us;
}

void history_row_blank(sim_row *row, int state)
{
    memset(row, 0, sizeof(*row));
    row->state = (uint8_t)state;
    row->status = OST_NONE;
    row->amount_fen = -1;
}
