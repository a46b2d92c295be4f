/* saved_history.c - history.jsonl back into a sim_history: each line is one
 * client operation as report_history wrote it (its exact fields: start_us,
 * end_us, order, token, token_use, transport, flags, forge). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saved_run_format.h"

static int sh_index(const char *name, const char *(*namer)(int), int n)
{
    for (int i = 0; name != NULL && i < n; i++)
        if (strcmp(name, namer(i)) == 0)
            return i;
    return -1;
}

static const char *sh_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* One line into op. Returns 0, or -1 when it is not an op. */
static int sh_op(json_t *j, sim_op *op)
{
    int kind = sh_index(sh_str(j, "kind"), history_kind_name, OP_KIND_COUNT);
    int outcome = sh_index(sh_str(j, "outcome"), history_outcome_name, OUT_COUNT);
    int sc = sched_scenario_parse(sh_str(j, "scenario"));
    if (!json_is_object(j) || kind < 0 || outcome < 0 || sc < 0 ||
        !json_is_integer(json_object_get(j, "start_us")))
        return -1;
    memset(op, 0, sizeof(*op));
    op->kind = (uint8_t)kind;
    op->outcome = (uint8_t)outcome;
    op->scenario = (uint8_t)sc;
    op->start_us = json_integer_value(json_object_get(j, "start_us"));
    op->end_us = json_integer_value(json_object_get(j, "end_us"));
    op->order = (int32_t)json_integer_value(json_object_get(j, "order"));
    op->token = (int32_t)json_integer_value(json_object_get(j, "token"));
    op->task = (int32_t)json_integer_value(json_object_get(j, "task"));
    op->token_use = (uint8_t)json_integer_value(json_object_get(j, "token_use"));
    op->transport = (uint8_t)json_integer_value(json_object_get(j, "transport"));
    op->flags = (uint8_t)json_integer_value(json_object_get(j, "flags"));
    op->forge = (uint8_t)json_integer_value(json_object_get(j, "forge"));
    op->attempt = (uint8_t)json_integer_value(json_object_get(j, "attempt"));
    op->http_code = (uint16_t)json_integer_value(json_object_get(j, "http_code"));
    op->status = (uint8_t)history_status_parse(sh_str(j, "status"));
    op->idem = (uint8_t)json_integer_value(json_object_get(j, "idempotency_key"));
    json_t *u = json_object_get(j, "user_id"), *a = json_object_get(j, "amount_fen");
    op->user_id = u ? json_integer_value(u) : 0;
    op->amount_fen = a ? json_integer_value(a) : -1;
    snprintf(op->txn, sizeof(op->txn), "%s", sh_str(j, "transaction_id"));
    snprintf(op->error, sizeof(op->error), "%s", sh_str(j, "error"));
    return 0;
}

int saved_run_load_history(const char *dir, saved_run *out, char *err, size_t errlen)
{
    char path[4096], *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, SAVED_HISTORY);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        sim_op op;
        lineno++;
        json_t *j = json_loads(line, 0, NULL);
        if (sh_op(j, &op) < 0) {
            snprintf(err, errlen, "%s:%ld: not a client operation", path, lineno);
            rc = -1;
        } else if (history_append(&out->hist, &op) < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    if (rc == 0)
        history_sort(&out->hist);
    return rc;
}
