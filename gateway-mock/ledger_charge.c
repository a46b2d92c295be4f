/* ledger_charge.c - charges: a payment attempt recorded (a charge or a
 * decline; the first charge of an out_trade_no wins by mock_trade's primary
 * key, never check-then-insert), an out_trade_no seen unpaid, and the
 * order's state as orderquery reports it. */
#include "ledger.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "db_conn.h"
#include "ledger_db.h"
#include "txid.h"

/* The current UTC time as DATETIME(6) text and as seconds. */
static void ledger_now(char out[32], time_t *secs)
{
    struct timespec ts;
    struct tm tm;
    mock_clock_now_ts(&ts); /* the mock's clock (clock_offset_ms) */
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm);
    unsigned long us = (unsigned long)(ts.tv_nsec / 1000) % 1000000UL;
    if (n == 0 || snprintf(out + n, 32 - n, ".%06lu", us) >= (int)(32 - n))
        out[0] = '\0';
    *secs = ts.tv_sec;
}

/* ---- attempts ----------------------------------------------------------- */

typedef struct {
    const char *out_trade_no;
    long long total_fee;
    const char *trade_type;
    const char *openid; /* NULL: none */
    bool charge;
    bool dedupe;
    char when[32]; /* charged_at as DATETIME(6) text */
    ledger_attempt_result *out;
} attempt_arg;

/* Draws the time and transaction_id of the charge about to be recorded. */
static void ledger_draw_charge(attempt_arg *a)
{
    time_t secs;
    ledger_now(a->when, &secs);
    txid_transaction(secs, a->out->transaction_id);
    a->out->charged_at = secs;
}

/* Inserts the charge row drawn by ledger_draw_charge. A clash of
 * transaction_id (1062) is left to the caller, who draws again. */
static int ledger_insert_charge(ledger *l, attempt_arg *a)
{
    const char *openid = a->openid != NULL && a->openid[0] != '\0' ? a->openid : NULL;
    return ledger_exec(l, S_CHARGE_INSERT, "sslsss", a->out->transaction_id, a->out_trade_no,
                       a->total_fee, a->trade_type, a->when, openid) != NULL
               ? 0
               : -1;
}

/* Once the out_trade_no exists and the conditional update missed: why?
 * Returns 0 with out->outcome ORDERCLOSED / ORDERPAID / MISMATCH, 1 when the
 * row changed under us (try again), -1 on failure. */
static int ledger_explain_miss(ledger *l, attempt_arg *a)
{
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (!t.found)
        return 1; /* reset meanwhile */
    if (t.closed) {
        a->out->outcome = LEDGER_ORDERCLOSED;
        return 0;
    }
    if (t.total_fee != a->total_fee) {
        a->out->outcome = LEDGER_MISMATCH;
        return 0;
    }
    if (t.charged) {
        a->out->outcome = LEDGER_ORDERPAID;
        return 0;
    }
    return 1;
}

/* Inserts the charge (when charging) and commits. Returns 0, 1 when the
 * transaction_id clashed (rolled back: draw again), -1 on failure. */
static int ledger_finish_attempt(ledger *l, attempt_arg *a)
{
    if (a->charge && ledger_insert_charge(l, a) != 0) {
        if (l->m.err_no != 1062)
            return -1;
        mock_store_rollback(&l->m);
        return 1;
    }
    if (mock_store_commit(&l->m) != 0)
        return -1;
    a->out->outcome = a->charge ? LEDGER_CHARGED : LEDGER_DECLINED;
    return 0;
}

static int ledger_attempt_dedupe(void *owner, void *arg)
{
    ledger *l = owner;
    attempt_arg *a = arg;
    unsigned long long n = 0;
    int rc;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (a->charge)
            ledger_draw_charge(a);
        /* The first attempt of this out_trade_no? The primary key decides. */
        if (mock_store_begin(&l->m) != 0)
            return -1;
        if (ledger_exec(l, S_TRADE_INSERT, "slss", a->out_trade_no, a->total_fee,
                        a->charge ? a->out->transaction_id : NULL,
                        a->charge ? "SUCCESS" : "PAYERROR") != NULL) {
            rc = ledger_finish_attempt(l, a);
            if (rc <= 0)
                return rc;
            continue;
        }
        if (l->m.err_no != 1062)
            return -1;
        /* Seen before. Drop the shared lock the duplicate check took, then
         * claim the row with one conditional UPDATE: no lock upgrade, so
         * concurrent duplicates queue instead of deadlocking. */
        mock_store_rollback(&l->m);
        if (mock_store_begin(&l->m) != 0)
            return -1;
        MYSQL_STMT *cas = a->charge
                              ? ledger_exec(l, S_TRADE_CAS_CHARGE, "ssl", a->out->transaction_id,
                                            a->out_trade_no, a->total_fee)
                              : ledger_exec(l, S_TRADE_CAS_DECLINE, "sl", a->out_trade_no,
                                            a->total_fee);
        if (cas == NULL)
            return -1;
        n = (unsigned long long)mysql_stmt_affected_rows(cas);
        if (n == 1) {
            rc = ledger_finish_attempt(l, a);
            if (rc <= 0)
                return rc;
            continue;
        }
        mock_store_rollback(&l->m);
        rc = ledger_explain_miss(l, a);
        if (rc <= 0)
            return rc;
    }
    mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, "attempt", "the order kept changing");
    return -1;
}

/* In the transaction of a trusting attempt, after its upsert locked the
 * mock_trade row: is the order closed? 0 open, 1 closed (rolled back,
 * outcome ORDERCLOSED), -1 failure. */
static int ledger_closed_under_lock(ledger *l, attempt_arg *a)
{
    long long closed = 0;
    bool found = false;
    MYSQL_STMT *st = ledger_exec(l, S_TRADE_LOCK_CLOSED, "s", a->out_trade_no);
    if (st == NULL || ledger_first(l, st, &found, "l", &closed) != 0)
        return -1;
    if (!found || !closed)
        return 0;
    mock_store_rollback(&l->m);
    a->out->outcome = LEDGER_ORDERCLOSED;
    return 1;
}

/* Without dedupe: every attempt is recorded, unless the order is closed.
 * The upsert takes the row's lock first, so a close either committed before
 * (seen here) or waits for this transaction (and then sees the charge). */
static int ledger_attempt_trusting(void *owner, void *arg)
{
    ledger *l = owner;
    attempt_arg *a = arg;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (a->charge)
            ledger_draw_charge(a);
        if (mock_store_begin(&l->m) != 0)
            return -1;
        MYSQL_STMT *up = a->charge ? ledger_exec(l, S_TRADE_UPSERT_CHARGE, "sls", a->out_trade_no,
                                                 a->total_fee, a->out->transaction_id)
                                   : ledger_exec(l, S_TRADE_UPSERT_DECLINE, "sl", a->out_trade_no,
                                                 a->total_fee);
        if (up == NULL)
            return -1;
        int rc = ledger_closed_under_lock(l, a);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        rc = ledger_finish_attempt(l, a);
        if (rc <= 0)
            return rc;
    }
    mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, "attempt", "no free transaction_id");
    return -1;
}

int ledger_attempt(ledger *l, const char *out_trade_no, long long total_fee, const char *trade_type,
                   const char *openid, bool charge, bool dedupe, ledger_attempt_result *out)
{
    attempt_arg a = { out_trade_no, total_fee, trade_type, openid, charge, dedupe, "", out };
    memset(out, 0, sizeof(*out));
    return ledger_run(l, dedupe ? ledger_attempt_dedupe : ledger_attempt_trusting, &a);
}

typedef struct {
    const char *out_trade_no;
    long long total_fee;
} unpaid_arg;

static int ledger_unpaid_op(void *owner, void *arg)
{
    ledger *l = owner;
    unpaid_arg *a = arg;
    return ledger_write1(l, S_TRADE_UPSERT_UNPAID, "sl", a->out_trade_no, a->total_fee);
}

int ledger_note_unpaid(ledger *l, const char *out_trade_no, long long total_fee)
{
    unpaid_arg a = { out_trade_no, total_fee };
    return ledger_run(l, ledger_unpaid_op, &a);
}

/* ---- queries ----------------------------------------------------------- */

typedef struct {
    const char *out_trade_no;
    const char *transaction_id;
    ledger_order *out;
} query_arg;

/* A charge by S_CHARGE_BY_TXID or S_CHARGE_BY_OTN (key: the transaction_id
 * or the out_trade_no) into o's charge fields and *refund_count; *found
 * says whether there is one. 0 or -1. */
int ledger_charge_get(ledger *l, int sid, const char *key, bool *found, ledger_order *o,
                      long long *refund_count)
{
    MYSQL_STMT *st = ledger_exec(l, sid, "s", key);
    if (st == NULL)
        return -1;
    return ledger_first(l, st, found, "sslllss", o->transaction_id, sizeof(o->transaction_id),
                        o->out_trade_no, sizeof(o->out_trade_no), &o->total_fee, &o->refunded_fee,
                        refund_count, o->trade_type, sizeof(o->trade_type), o->time_end,
                        sizeof(o->time_end));
}

static int ledger_query_op(void *owner, void *arg)
{
    ledger *l = owner;
    query_arg *a = arg;
    ledger_order *o = a->out;
    long long refund_count = 0;
    bool found = false;
    bool by_txid = a->transaction_id != NULL && a->transaction_id[0] != '\0';

    memset(o, 0, sizeof(*o));
    if (ledger_charge_get(l, by_txid ? S_CHARGE_BY_TXID : S_CHARGE_BY_OTN,
                          by_txid ? a->transaction_id : a->out_trade_no, &found, o,
                          &refund_count) != 0)
        return -1;
    if (found) {
        o->found = true;
        o->refund_count = (int)refund_count;
        snprintf(o->trade_state, sizeof(o->trade_state), "%s",
                 refund_count > 0 ? "REFUND" : "SUCCESS");
        return 0;
    }
    memset(o, 0, sizeof(*o));
    if (by_txid)
        return 0;
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (t.found) {
        o->found = true;
        o->total_fee = t.total_fee;
        snprintf(o->out_trade_no, sizeof(o->out_trade_no), "%s", a->out_trade_no);
        /* A charge row always exists when the trade has a transaction_id,
         * and a closed trade never has one. */
        snprintf(o->trade_state, sizeof(o->trade_state), "%s",
                 t.closed                                 ? "CLOSED"
                 : strcmp(t.last_result, "PAYERROR") == 0 ? "PAYERROR"
                                                          : "NOTPAY");
    }
    return 0;
}

int ledger_query(ledger *l, const char *out_trade_no, const char *transaction_id, ledger_order *out)
{
    query_arg a = { out_trade_no, transaction_id, out };
    return ledger_run(l, ledger_query_op, &a);
}
