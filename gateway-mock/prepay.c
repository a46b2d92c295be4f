/* prepay.c - mock_prepay in MariaDB, one lazily opened connection per
 * thread, prepared statements only. */
#include "prepay.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "env.h"
#include "ledger.h"

#define PREPAY_COLS                                                                                \
    "out_trade_no, micropay, IFNULL(prepay_id, ''), IFNULL(code_token, ''), trade_type, "          \
    "IFNULL(openid, ''), total_fee, fingerprint, IFNULL(notify_url, ''), created_ms, "             \
    "expire_ms, prepay_until_ms, state, resolve_ms, resolve_pay, answered_ms, "                    \
    "paying_until_ms, IFNULL(race_txid, ''), api_version"

enum {
    P_GET_OTN = 0,
    P_GET_ID,
    P_GET_TOKEN,
    P_INSERT,
    P_CAS,
    P_ANSWERED,
    P_PAYING,
    P_RACE,
    P_DUE,
    P_RESET,
    P_STATE,
    P_USERPAYING,
    P_COUNT
};

static const char *const prepay_sql[P_COUNT] = {
    [P_GET_OTN] = "SELECT " PREPAY_COLS " FROM mock_prepay WHERE out_trade_no = ?",
    [P_GET_ID] = "SELECT " PREPAY_COLS " FROM mock_prepay WHERE prepay_id = ?",
    [P_GET_TOKEN] = "SELECT " PREPAY_COLS " FROM mock_prepay WHERE code_token = ?",
    [P_INSERT] = "INSERT IGNORE INTO mock_prepay (out_trade_no, micropay, prepay_id, code_token, "
                 "trade_type, openid, total_fee, fingerprint, notify_url, created_ms, expire_ms, "
                 "prepay_until_ms, state, resolve_ms, resolve_pay, answered_ms, api_version) "
                 "VALUES (?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, NULLIF(?, ''), ?, ?, "
                 "NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, ?)",
    [P_CAS] = "UPDATE mock_prepay SET state = ? WHERE out_trade_no = ? AND state = ?",
    [P_ANSWERED] = "UPDATE mock_prepay SET answered_ms = ? WHERE out_trade_no = ?",
    [P_PAYING] = "UPDATE mock_prepay SET paying_until_ms = ? WHERE out_trade_no = ?",
    [P_RACE] = "UPDATE mock_prepay SET race_txid = ? WHERE out_trade_no = ?",
    [P_DUE] = "SELECT out_trade_no FROM mock_prepay WHERE state = 'USERPAYING' AND "
              "resolve_ms <= ? ORDER BY resolve_ms LIMIT ?",
    [P_RESET] = "DELETE FROM mock_prepay",
    [P_STATE] = "UPDATE mock_prepay SET state = ? WHERE out_trade_no = ?",
    [P_USERPAYING] = "UPDATE mock_prepay SET state = 'USERPAYING', resolve_ms = ?, resolve_pay = ? "
                     "WHERE out_trade_no = ? AND state = 'NOTPAY'",
};

typedef struct {
    MYSQL *db;
    MYSQL_STMT *stmt[P_COUNT];
    unsigned int err_no;
    char err[256];
} prepay_conn;

static _Thread_local prepay_conn pc;

const char *prepay_error(void)
{
    return pc.err;
}

void prepay_thread_end(void)
{
    db_conn_close(&pc.db, pc.stmt, P_COUNT);
}

/* The statement sid, connecting first when needed; NULL (err set). */
static MYSQL_STMT *prepay_stmt(int sid)
{
    if (pc.db == NULL) {
        char why[200];
        pc.db = db_conn_open_as(DB_ACCOUNT_MOCK, env_str("IDEMPAY_MOCK_DB", LEDGER_DB), why,
                                sizeof(why));
        if (pc.db == NULL) {
            snprintf(pc.err, sizeof(pc.err), "connect: %s", why);
            return NULL;
        }
    }
    MYSQL_STMT *st = db_stmt_slot(pc.db, &pc.stmt[sid], prepay_sql[sid], &pc.err_no, pc.err,
                                  sizeof(pc.err));
    if (st == NULL && db_conn_lost(pc.err_no))
        prepay_thread_end();
    return st;
}

/* A failed statement: its error kept, a lost connection dropped. */
static int prepay_fail(MYSQL_STMT *st, const char *what)
{
    unsigned int no = mysql_stmt_errno(st);
    pc.err_no = no;
    snprintf(pc.err, sizeof(pc.err), "%s: %s (%u)", what,
             no != 0 ? mysql_stmt_error(st) : "bad binding or out of memory", no);
    db_stmt_done(st);
    if (db_conn_lost(no))
        prepay_thread_end();
    return -1;
}

/* Runs sid with parameters by letters; the statement, or NULL (err set).
 * A connection found lost (MariaDB restarted since this thread last used
 * it) is reopened and the statement run once more: every statement here is
 * safe to repeat (reads, INSERT IGNORE, updates to a value, the reset). */
static MYSQL_STMT *prepay_exec(int sid, const char *types, ...)
{
    va_list ap;
    for (int attempt = 0; attempt < 2; attempt++) {
        pc.err_no = 0;
        MYSQL_STMT *st = prepay_stmt(sid);
        if (st != NULL) {
            va_start(ap, types);
            int rc = db_stmt_vexec(st, types, ap);
            va_end(ap);
            if (rc == 0) {
                pc.err[0] = '\0';
                return st;
            }
            prepay_fail(st, "execute");
        }
        if (!db_conn_lost(pc.err_no))
            break;
    }
    return NULL;
}

int prepay_get(prepay_key by, const char *key, prepay_row *out)
{
    static const int sids[] = { P_GET_OTN, P_GET_ID, P_GET_TOKEN };
    long long micropay = 0, resolve_pay = 0, api_version = 2;

    memset(out, 0, sizeof(*out));
    MYSQL_STMT *st = prepay_exec(sids[by], "s", key);
    if (st == NULL)
        return -1;
    int rc = db_stmt_fetch(st, "slsssslsslllsllllsl", out->out_trade_no, sizeof(out->out_trade_no),
                           &micropay, out->prepay_id, sizeof(out->prepay_id), out->code_token,
                           sizeof(out->code_token), out->trade_type, sizeof(out->trade_type),
                           out->openid, sizeof(out->openid), &out->total_fee, out->fingerprint,
                           sizeof(out->fingerprint), out->notify_url, sizeof(out->notify_url),
                           &out->created_ms, &out->expire_ms, &out->prepay_until_ms, out->state,
                           sizeof(out->state), &out->resolve_ms, &resolve_pay, &out->answered_ms,
                           &out->paying_until_ms, out->race_txid, sizeof(out->race_txid),
                           &api_version);
    if (rc < 0)
        return prepay_fail(st, "fetch");
    db_stmt_done(st);
    out->found = rc == 1;
    out->micropay = micropay != 0;
    out->resolve_pay = resolve_pay != 0;
    out->api_version = (int)api_version;
    return 0;
}

int prepay_insert(const prepay_row *r, bool *inserted)
{
    MYSQL_STMT *st = prepay_exec(P_INSERT,
                                 "slssssls"
                                 "slllsll"
                                 "ll",
                                 r->out_trade_no, (long long)r->micropay, r->prepay_id,
                                 r->code_token, r->trade_type, r->openid, r->total_fee,
                                 r->fingerprint, r->notify_url, r->created_ms, r->expire_ms,
                                 r->prepay_until_ms, r->state, r->resolve_ms,
                                 (long long)r->resolve_pay, r->answered_ms,
                                 (long long)(r->api_version == 3 ? 3 : 2));
    if (st == NULL)
        return -1;
    *inserted = mysql_stmt_affected_rows(st) == 1;
    return 0;
}

int prepay_cas_state(const char *otn, const char *from, const char *to, bool *changed)
{
    MYSQL_STMT *st = prepay_exec(P_CAS, "sss", to, otn, from);
    if (st == NULL)
        return -1;
    *changed = mysql_stmt_affected_rows(st) == 1;
    return 0;
}

int prepay_set_state(const char *otn, const char *to)
{
    return prepay_exec(P_STATE, "ss", to, otn) != NULL ? 0 : -1;
}

int prepay_set_userpaying(const char *otn, long long resolve_ms, bool pay)
{
    return prepay_exec(P_USERPAYING, "lls", resolve_ms, (long long)pay, otn) != NULL ? 0 : -1;
}

int prepay_set_answered(const char *otn, long long ms)
{
    return prepay_exec(P_ANSWERED, "ls", ms, otn) != NULL ? 0 : -1;
}

int prepay_set_paying(const char *otn, long long until_ms)
{
    return prepay_exec(P_PAYING, "ls", until_ms, otn) != NULL ? 0 : -1;
}

int prepay_set_race(const char *otn, const char *txid)
{
    return prepay_exec(P_RACE, "ss", txid, otn) != NULL ? 0 : -1;
}

int prepay_due(long long now_ms, char (*otns)[33], int max, int *n)
{
    *n = 0;
    MYSQL_STMT *st = prepay_exec(P_DUE, "ll", now_ms, (long long)max);
    if (st == NULL)
        return -1;
    int rc = 0;
    while (*n < max && (rc = db_stmt_fetch(st, "s", otns[*n], (size_t)33)) == 1)
        (*n)++;
    if (*n < max && rc < 0)
        return prepay_fail(st, "fetch");
    db_stmt_done(st);
    return 0;
}

int prepay_reset(void)
{
    return prepay_exec(P_RESET, "") != NULL ? 0 : -1;
}
