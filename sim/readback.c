/* readback.c - the final reads (readback.h): a driver_each job over the
 * orders, the body parsed with jansson. */
#include "readback.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

#define READBACK_TRIES 4
#define READBACK_TIMEOUT_MS 5000

/* The fields of an order body that parsed as a JSON object with a status. */
static void readback_fields(json_t *j, sim_row *row)
{
    json_t *user = json_object_get(j, "user_id");
    const char *amount = json_string_value(json_object_get(j, "amount"));
    json_t *txn = json_object_get(j, "transaction_id");
    if (json_is_integer(user))
        row->user_id = (int64_t)json_integer_value(user);
    else if (json_is_string(user))
        row->user_id = strtoll(json_string_value(user), NULL, 10);
    int64_t fen;
    if (amount != NULL && money_parse_yuan(amount, &fen) == 0)
        row->amount_fen = fen;
    if (json_is_string(txn))
        client_copy_str(row->transaction_id, sizeof(row->transaction_id), json_string_value(txn));
    client_copy_str(row->updated_at, sizeof(row->updated_at),
                    json_string_value(json_object_get(j, "updated_at")));
}

int readback_parse_order(const char *body, size_t len, sim_row *row)
{
    history_row_blank(row, ROW_ERROR);
    json_t *j = json_loadb(body, len, 0, NULL);
    const char *st = json_is_object(j) ? json_string_value(json_object_get(j, "status")) : NULL;
    int rc = -1;
    if (st != NULL && history_status_parse(st) != OST_NONE) {
        row->status = (uint8_t)history_status_parse(st);
        readback_fields(j, row);
        row->state = ROW_PRESENT;
        rc = 0;
    }
    json_decref(j);
    return rc;
}

typedef struct {
    const size_t *idx;
    sim_row *rows;
    atomic_size_t errors;
} readback_job;

static void readback_one(sim_client *c, size_t i, void *arg)
{
    readback_job *job = arg;
    client_world *w = c->world;
    size_t order = job->idx[i];
    sim_row *row = &job->rows[order];
    char no[64];
    sched_order_no(w->sched, w->prefix, order, no, sizeof(no));
    snprintf(c->url, sizeof(c->url), "%s/api/pay/orders/%s", w->target, no);
    for (int attempt = 0; attempt < READBACK_TRIES; attempt++) {
        http_reply rep;
        if (attempt > 0)
            client_sleep_ms(w, 250 * attempt);
        http_status hs = http_client_request(c->http, "GET", c->url, NULL, NULL, 0, NULL,
                                             READBACK_TIMEOUT_MS, &rep);
        if (hs == HTTP_OK && rep.code == 404) {
            history_row_blank(row, ROW_ABSENT);
            return;
        }
        if (hs == HTTP_OK && rep.code == 200 && readback_parse_order(rep.body, rep.body_len, row) == 0)
            return;
    }
    history_row_blank(row, ROW_ERROR);
    atomic_fetch_add(&job->errors, 1);
}

size_t readback_orders(driver *d, const size_t *idx, size_t n, sim_row *rows)
{
    readback_job job = {.idx = idx, .rows = rows};
    atomic_store(&job.errors, 0);
    driver_each(d, n, readback_one, &job);
    return atomic_load(&job.errors);
}
