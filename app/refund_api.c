/* refund_api.c - the merchant refund API (see refund_api.h). */
#include "refund_api.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "db_retry.h"
#include "hex.h"
#include "log.h"
#include "metrics.h"
#include "money.h"
#include "order_no.h"
#include "order_state.h"
#include "pay.h"
#include "refund_state.h"

#define RA_TXN_TRIES 5

enum {
    RA_STMT_LOCK_ORDER = STMT_REFUND_BASE + 8,
    RA_STMT_BY_NO,
    RA_STMT_SUM,
    RA_STMT_INSERT,
    RA_STMT_LIST,
    RA_STMT_ORDER
};

static const char SQL_LOCK_ORDER[] =
    "SELECT status, COALESCE(transaction_id, ''), CAST(amount * 100 AS SIGNED) "
    "FROM payment_order WHERE order_no = ? AND caller_id = ? FOR UPDATE";
static const char SQL_BY_NO[] =
    "SELECT order_no, kind, refund_fee, state FROM payment_refund WHERE out_refund_no = ? "
    "LOCK IN SHARE MODE";
/* Every refund of the charge that may take money: all but REFUNDCLOSE. A
 * locking read: the latest committed rows, not a snapshot. */
static const char SQL_SUM[] =
    "SELECT CAST(COALESCE(SUM(refund_fee), 0) AS SIGNED) FROM payment_refund "
    "WHERE transaction_id = ? AND state <> 3 LOCK IN SHARE MODE";
static const char SQL_INSERT[] =
    "INSERT INTO payment_refund (transaction_id, order_no, kind, out_refund_no, total_fee, "
    "refund_fee, reason, state) VALUES (?, ?, 1, ?, ?, ?, NULLIF(?, ''), 0)";
static const char SQL_LIST[] =
    "SELECT out_refund_no, kind, refund_fee, state, COALESCE(reason, ''), "
    "DATE_FORMAT(create_time, '%Y-%m-%dT%H:%i:%s.%fZ'), transaction_id "
    "FROM payment_refund WHERE order_no = ? ORDER BY id";
static const char SQL_ORDER[] =
    "SELECT status, COALESCE(transaction_id, ''), CAST(amount * 100 AS SIGNED) "
    "FROM payment_order WHERE order_no = ? AND caller_id = ?";

/* What one POST asks. */
typedef struct {
    char order_no[ORDER_NO_MAX + 1];
    long long caller_id; /* the order's owner must be this caller (docs/API.md, Scoping) */
    char refund_no[REFUND_API_NO_LEN + 1];
    int64_t fen;
    char reason[REFUND_API_REASON_MAX + 1];
} ra_request;

/* What the transaction decided. */
typedef enum {
    RA_CREATED = 0, /* inserted now */
    RA_REPLAY,      /* the same key and amount before: *state is that row's */
    RA_MISMATCH,    /* the key named another refund */
    RA_NO_ORDER,
    RA_NOT_PAID,
    RA_EXCEEDS, /* *left says how much is left */
    RA_RETRY,   /* deadlock, lock wait, lost connection: run it again */
    RA_DOWN
} ra_result;

int refund_api_refund_no(const char *order_no, const char *key, char *out, size_t outlen)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char canon[ORDER_NO_MAX + REFUND_API_KEY_MAX + 32];

    if (outlen > 0)
        out[0] = '\0';
    if (order_no == NULL || key == NULL || order_no[0] == '\0' || key[0] == '\0' ||
        outlen < REFUND_API_NO_LEN + 1)
        return -1;
    int n = snprintf(canon, sizeof(canon), "idempay-refund\n%s\n%s", order_no, key);
    if (n < 0 || (size_t)n >= sizeof(canon) ||
        EVP_Digest(canon, (size_t)n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return -1;
    out[0] = 'R';
    out[1] = 'M';
    hex_lower(md, (REFUND_API_NO_LEN - 2) / 2, out + 2);
    return 0;
}

static void ra_unavailable(app_ctx *ctx, http_response *resp)
{
    char secs[24];
    http_response_error(resp, 503, "unavailable", "the payment database is unavailable");
    snprintf(secs, sizeof(secs), "%ld", ctx->cfg->retry_after_s);
    http_response_header(resp, "Retry-After", secs);
}

/* The order_no of ".../orders/{order_no}/refunds" into out. 0 or -1. */
static int ra_order_of(const char *path, char *out, size_t outlen)
{
    size_t pre = strlen(PAY_ORDERS_PREFIX), suf = strlen(REFUND_API_SUFFIX);
    size_t len = strlen(path);
    char seg[3 * ORDER_NO_MAX + 1];

    if (len <= pre + suf || strncmp(path, PAY_ORDERS_PREFIX, pre) != 0 ||
        strcmp(path + len - suf, REFUND_API_SUFFIX) != 0 || len - pre - suf >= sizeof(seg))
        return -1;
    memcpy(seg, path + pre, len - pre - suf);
    seg[len - pre - suf] = '\0';
    if (strchr(seg, '/') != NULL || http_path_decode(seg, out, outlen) != 0 || !order_no_valid(out))
        return -1;
    return 0;
}

/* A reason: at most REFUND_API_REASON_MAX bytes, no control characters. */
static int ra_reason_ok(const char *s)
{
    if (strlen(s) > REFUND_API_REASON_MAX)
        return 0;
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F)
            return 0;
    return 1;
}

static int ra_key_ok(const char *key)
{
    size_t n = key != NULL ? strlen(key) : 0;
    if (n < 1 || n > REFUND_API_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7E)
            return 0;
    return 1;
}

/* Reads the POST's key and body into r. NULL, or the 400 message. */
static const char *ra_parse(const http_request *req, const char *order_no, ra_request *r)
{
    json_t *body, *amount, *reason;
    const char *why = NULL;

    memset(r, 0, sizeof(*r));
    snprintf(r->order_no, sizeof(r->order_no), "%s", order_no);
    if (!ra_key_ok(req->idempotency_key))
        return "an Idempotency-Key header of 1 to 255 printable characters is required";
    if (refund_api_refund_no(order_no, req->idempotency_key, r->refund_no, sizeof(r->refund_no)) !=
        0)
        return "could not derive the refund number";
    body = http_json_parse_object(req->body, req->body_len);
    if (body == NULL)
        return "the body must be a JSON object (no duplicate keys)";
    amount = json_object_get(body, "amount");
    reason = json_object_get(body, "reason");
    if (!json_is_string(amount) || money_parse_yuan(json_string_value(amount), &r->fen) != 0 ||
        r->fen < 1)
        why = "amount must be a positive amount in yuan with at most 2 decimals, e.g. \"1.00\"";
    else if (reason != NULL && !json_is_null(reason) &&
             (!json_is_string(reason) || !ra_reason_ok(json_string_value(reason))))
        why = "reason must be a string of at most 80 bytes without control characters";
    else if (json_is_string(reason))
        snprintf(r->reason, sizeof(r->reason), "%s", json_string_value(reason));
    json_decref(body);
    return why;
}

static ra_result ra_fail(app_ctx *ctx, MYSQL_STMT *st)
{
    unsigned int e = st != NULL ? mysql_stmt_errno(st) : 0;
    if (e == 0 && ctx->db != NULL)
        e = mysql_errno(ctx->db);
    snprintf(ctx->err, sizeof(ctx->err), "mariadb %u: %s", e,
             st != NULL ? mysql_stmt_error(st) : (ctx->db ? mysql_error(ctx->db) : "down"));
    if (ctx->db != NULL && !db_conn_lost(e))
        (void)db_exec_simple(ctx->db, "ROLLBACK");
    int dropped = app_ctx_db_error(ctx, e);
    return db_conn_retryable(e) || dropped || e == 1062 ? RA_RETRY : RA_DOWN;
}

static ra_result ra_end(app_ctx *ctx, ra_result r)
{
    if (db_exec_simple(ctx->db, "ROLLBACK") != 0)
        (void)app_ctx_db_error(ctx, mysql_errno(ctx->db));
    return r;
}

/* Under the order's lock: a row of this refund_no already? RA_REPLAY (same
 * order and amount, *state its state), RA_MISMATCH, RA_CREATED when none
 * (go on), or an error. */
static ra_result ra_existing(app_ctx *ctx, const ra_request *r, long long *state)
{
    MYSQL_STMT *st = app_ctx_stmt(ctx, RA_STMT_BY_NO, SQL_BY_NO);
    char order_no[48];
    long long kind = 0, fee = 0;

    if (st == NULL || db_stmt_exec(st, "s", r->refund_no) != 0)
        return ra_fail(ctx, st);
    int got = db_stmt_fetch(st, "slll", order_no, sizeof(order_no), &kind, &fee, state);
    db_stmt_done(st);
    if (got < 0)
        return ra_fail(ctx, st);
    if (got == 0)
        return RA_CREATED;
    return kind == 1 && fee == r->fen && strcmp(order_no, r->order_no) == 0 ? RA_REPLAY
                                                                            : RA_MISMATCH;
}

/* The whole decision in one transaction; see refund_api.h. */
static ra_result ra_txn(app_ctx *ctx, const ra_request *r, long long *state, int64_t *left)
{
    MYSQL_STMT *lock = app_ctx_stmt(ctx, RA_STMT_LOCK_ORDER, SQL_LOCK_ORDER);
    MYSQL_STMT *sum = app_ctx_stmt(ctx, RA_STMT_SUM, SQL_SUM);
    MYSQL_STMT *ins = app_ctx_stmt(ctx, RA_STMT_INSERT, SQL_INSERT);
    char txid[48];
    long long status = 0, charge = 0, already = 0;

    if (lock == NULL || sum == NULL || ins == NULL ||
        app_ctx_stmt(ctx, RA_STMT_BY_NO, SQL_BY_NO) == NULL)
        return RA_DOWN;
    if (db_exec_simple(ctx->db, "START TRANSACTION") != 0)
        return ra_fail(ctx, NULL);
    /* 1. The order's row lock: every refund of this order waits here. */
    if (db_stmt_exec(lock, "sl", r->order_no, r->caller_id) != 0)
        return ra_fail(ctx, lock);
    int got = db_stmt_fetch(lock, "lsl", &status, txid, sizeof(txid), &charge);
    db_stmt_done(lock);
    if (got < 0)
        return ra_fail(ctx, lock);
    if (got == 0)
        return ra_end(ctx, RA_NO_ORDER);
    /* 2. The same key before: that refund, never a second. */
    ra_result ex = ra_existing(ctx, r, state);
    if (ex != RA_CREATED)
        return ex == RA_REPLAY || ex == RA_MISMATCH ? ra_end(ctx, ex) : ex;
    if (status != ORDER_PAID || txid[0] == '\0')
        return ra_end(ctx, RA_NOT_PAID);
    /* 3. The amount rule over the latest committed refunds of the charge. */
    if (db_stmt_exec(sum, "s", txid) != 0)
        return ra_fail(ctx, sum);
    got = db_stmt_fetch(sum, "l", &already);
    db_stmt_done(sum);
    if (got < 0)
        return ra_fail(ctx, sum);
    refund_amount_rule rule = refund_amount_check(charge, already, r->fen);
    if (rule != REFUND_AMOUNT_OK) {
        *left = charge > already ? charge - already : 0;
        return ra_end(ctx, RA_EXCEEDS);
    }
    /* 4. The refund, then the commit that releases the order. */
    if (db_stmt_exec(ins,
                     "sssll"
                     "s",
                     txid, r->order_no, r->refund_no, charge, (long long)r->fen, r->reason) != 0)
        return ra_fail(ctx, ins);
    if (db_exec_simple(ctx->db, "COMMIT") != 0)
        return ra_fail(ctx, NULL);
    *state = REFUND_PENDING;
    return RA_CREATED;
}

/* Up to RA_TXN_TRIES tries of the transaction while ra_fail says RA_RETRY,
 * a pause of 2 ms * the tries done + 0..4 ms before each. */
static const db_retry_policy ra_retry = {
    .max_tries = RA_TXN_TRIES,
    .max_lost_tries = RA_TXN_TRIES,
    .pause_step_ms = 2,
    .pause_jitter_ms = 5,
};

typedef struct {
    app_ctx *ctx;
    ra_request *r;
    long long *state;
    int64_t *left;
    ra_result res;
} ra_try_arg;

/* One try of ra_txn for db_run: RA_RETRY (judged by ra_fail) is another
 * try, anything else the answer. */
static db_try_status ra_try(void *arg, db_try_report *report)
{
    ra_try_arg *a = arg;

    (void)report;
    a->res = ra_txn(a->ctx, a->r, a->state, a->left);
    return a->res == RA_RETRY ? DB_TRY_AGAIN : DB_TRY_DONE;
}

static void ra_answer(http_response *resp, const ra_request *r, long long state, int replay)
{
    char amount[MONEY_STR_MAX];
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "order_no", r->order_no, "refund_no",
                          r->refund_no, "amount", money_format(r->fen, amount), "status",
                          refund_state_name((int)state));
    if (o == NULL || http_response_json(resp, 202, o) != 0) {
        http_response_error(resp, 500, "internal_error", "out of memory");
        return;
    }
    if (replay)
        http_response_header(resp, "Idempotent-Replayed", "true");
}

static void ra_post(app_ctx *ctx, const http_request *req, const char *order_no,
                    http_response *resp)
{
    ra_request r;
    long long state = 0;
    int64_t left = 0;
    char msg[160], amount[MONEY_STR_MAX];
    ra_result res;

    const char *bad = ra_parse(req, order_no, &r);
    if (bad != NULL) {
        metrics_inc(MET_REFUND_REFUSED);
        http_response_error(resp, 400, "invalid_request", bad);
        return;
    }
    r.caller_id = req->caller_id;
    ra_try_arg t = { ctx, &r, &state, &left, RA_RETRY };
    (void)db_run(&ra_retry, ra_try, &t, NULL);
    res = t.res;
    switch (res) {
    case RA_CREATED:
        metrics_inc(MET_REFUND_REQUESTED);
        log_msg(LOG_INFO, "merchant refund queued: order %s refund %s (%lld fen)", r.order_no,
                r.refund_no, (long long)r.fen);
        ra_answer(resp, &r, state, 0);
        return;
    case RA_REPLAY:
        metrics_inc(MET_REFUND_REPLAYED);
        ra_answer(resp, &r, state, 1);
        return;
    case RA_MISMATCH:
        http_response_error(resp, 422, "idempotency_key_mismatch",
                            "this Idempotency-Key was used for another refund (amount or order)");
        break;
    case RA_NO_ORDER:
        http_response_error(resp, 404, "not_found", "no order with this order_no");
        break;
    case RA_NOT_PAID:
        http_response_error(resp, 409, "order_not_paid", "only a PAID order can be refunded");
        break;
    case RA_EXCEEDS:
        snprintf(msg, sizeof(msg), "the refunds of this order would exceed its charge: %s left",
                 money_format(left, amount));
        http_response_error(resp, 422, "refund_exceeds_charge", msg);
        break;
    default:
        log_msg(LOG_WARN, "merchant refund of order %s: database unavailable: %s", r.order_no,
                ctx->err);
        ra_unavailable(ctx, resp);
        return;
    }
    metrics_inc(MET_REFUND_REFUSED);
}

/* One listed refund as JSON, or NULL (out of memory). */
static json_t *ra_item(const char *no, long long kind, long long fee, long long state,
                       const char *reason, const char *created)
{
    char amount[MONEY_STR_MAX];
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "refund_no", no, "kind",
                     kind == 1 ? "merchant" : "duplicate_charge", "amount",
                     money_format(fee, amount), "status", refund_state_name((int)state), "reason",
                     reason, "created_at", created);
}

/* GET: the order's refunds and what is left of its kept charge (404 for
 * an order of another caller, as for none). */
static void ra_get(app_ctx *ctx, long long caller_id, const char *order_no, http_response *resp)
{
    MYSQL_STMT *ord = app_ctx_stmt(ctx, RA_STMT_ORDER, SQL_ORDER);
    MYSQL_STMT *list = app_ctx_stmt(ctx, RA_STMT_LIST, SQL_LIST);
    char txid[48], no[80], reason[128], created[40], rtx[48], amount[MONEY_STR_MAX];
    long long status = 0, charge = 0, kind, fee, state, taken = 0;
    json_t *items = json_array();

    if (ord == NULL || list == NULL || items == NULL ||
        db_stmt_exec(ord, "sl", order_no, caller_id) != 0)
        goto down;
    int got = db_stmt_fetch(ord, "lsl", &status, txid, sizeof(txid), &charge);
    db_stmt_done(ord);
    if (got < 0)
        goto down;
    if (got == 0) {
        json_decref(items);
        http_response_error(resp, 404, "not_found", "no order with this order_no");
        return;
    }
    if (db_stmt_exec(list, "s", order_no) != 0)
        goto down;
    while ((got = db_stmt_fetch(list, "slllsss", no, sizeof(no), &kind, &fee, &state, reason,
                                sizeof(reason), created, sizeof(created), rtx, sizeof(rtx))) > 0) {
        if (strcmp(rtx, txid) == 0 && state != REFUND_CLOSED)
            taken += fee;
        json_array_append_new(items, ra_item(no, kind, fee, state, reason, created));
    }
    db_stmt_done(list);
    if (got < 0)
        goto down;
    long long left = status == ORDER_PAID && charge > taken ? charge - taken : 0;
    json_t *o = json_pack("{s:s, s:s, s:o}", "order_no", order_no, "refundable",
                          money_format(left, amount), "refunds", items);
    if (o == NULL || http_response_json(resp, 200, o) != 0)
        http_response_error(resp, 500, "internal_error", "out of memory");
    return;

down:
    json_decref(items);
    if (ord != NULL || list != NULL)
        (void)app_ctx_db_error(ctx, ctx->db != NULL ? mysql_errno(ctx->db) : 2006);
    ra_unavailable(ctx, resp);
}

void refund_api_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    char order_no[ORDER_NO_MAX + 1];

    if (ra_order_of(req->path, order_no, sizeof(order_no)) != 0) {
        http_response_error(resp, 400, "invalid_request",
                            "order_no must be 6 to 32 characters of [0-9A-Za-z_|*-]");
        return;
    }
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", order_no);
    if (strcmp(req->method, "POST") == 0)
        ra_post(ctx, req, order_no, resp);
    else if (strcmp(req->method, "GET") == 0)
        ra_get(ctx, req->caller_id, order_no, resp);
    else
        http_response_error(resp, 405, "method_not_allowed", "use GET or POST");
}
