/* ledger_refund.c - refunds: once per out_refund_no, never more than what is
 * left of the charge, under the charge row's lock. */
#include "ledger.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db_conn.h"
#include "ledger_db.h"
#include "txid.h"

/* ---- refunds ----------------------------------------------------------- */

typedef struct {
    const char *transaction_id;
    const char *out_trade_no;
    const char *out_refund_no;
    long long total_fee;
    long long refund_fee;
    ledger_refund_result *out;
} refund_arg;

/* An earlier refund with this out_refund_no: 0 none, 1 found (out filled,
 * outcome REPEAT or CONFLICT), -1 failure. */
static int ledger_refund_earlier(ledger *l, refund_arg *a)
{
    ledger_refund_result *o = a->out;
    bool found = false;
    MYSQL_STMT *st = ledger_exec(l, S_REFUND_GET, "s", a->out_refund_no);
    if (st == NULL ||
        ledger_first(l, st, &found, "sssll", o->transaction_id, sizeof(o->transaction_id),
                     o->out_trade_no, sizeof(o->out_trade_no), o->refund_id, sizeof(o->refund_id),
                     &o->total_fee, &o->refund_fee) != 0)
        return -1;
    if (!found)
        return 0;
    bool same = (a->transaction_id != NULL && a->transaction_id[0] != '\0')
                    ? strcmp(o->transaction_id, a->transaction_id) == 0
                    : strcmp(o->out_trade_no, a->out_trade_no) == 0;
    o->outcome = same ? REFUND_REPEAT : REFUND_CONFLICT;
    return 1;
}

static int ledger_refund_op(void *owner, void *arg)
{
    ledger *l = owner;
    refund_arg *a = arg;
    ledger_refund_result *o = a->out;
    bool found = false;
    int rc;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        memset(o, 0, sizeof(*o));
        rc = ledger_refund_earlier(l, a);
        if (rc != 0)
            return rc < 0 ? -1 : 0;

        /* Which charge? */
        char txid[TXID_BUF] = "";
        if (a->transaction_id != NULL && a->transaction_id[0] != '\0') {
            snprintf(txid, sizeof(txid), "%s", a->transaction_id);
        } else {
            ledger_order charge;
            long long count;
            if (ledger_charge_get(l, S_CHARGE_BY_OTN, a->out_trade_no, &found, &charge, &count) !=
                0)
                return -1;
            if (!found) {
                o->outcome = REFUND_NO_CHARGE;
                return 0;
            }
            snprintf(txid, sizeof(txid), "%s", charge.transaction_id);
        }

        if (mock_store_begin(&l->m) != 0)
            return -1;
        long long refunded = 0;
        MYSQL_STMT *lock = ledger_exec(l, S_CHARGE_LOCK, "s", txid);
        if (lock == NULL || ledger_first(l, lock, &found, "sll", o->out_trade_no,
                                         sizeof(o->out_trade_no), &o->total_fee, &refunded) != 0)
            return -1;
        snprintf(o->transaction_id, sizeof(o->transaction_id), "%s", txid);
        o->refund_fee = a->refund_fee;
        if (!found) {
            mock_store_rollback(&l->m);
            o->outcome = REFUND_NO_CHARGE;
            return 0;
        }
        if (o->total_fee != a->total_fee) {
            mock_store_rollback(&l->m);
            o->outcome = REFUND_FEE_MISMATCH;
            return 0;
        }
        if (a->refund_fee > o->total_fee - refunded) {
            mock_store_rollback(&l->m);
            o->outcome = REFUND_TOO_MUCH;
            return 0;
        }
        time_t now = time(NULL);
        txid_refund(now, o->refund_id);
        if (ledger_exec(l, S_REFUND_INSERT, "ssssll", a->out_refund_no, o->refund_id, txid,
                        o->out_trade_no, o->total_fee, a->refund_fee) == NULL) {
            if (l->m.err_no != 1062)
                return -1;
            /* Same out_refund_no concurrently (or a refund_id clash): look again. */
            mock_store_rollback(&l->m);
            continue;
        }
        if (ledger_exec(l, S_CHARGE_ADD_REFUND, "ls", a->refund_fee, txid) == NULL)
            return -1;
        if (mock_store_commit(&l->m) != 0)
            return -1;
        o->outcome = REFUND_DONE;
        return 0;
    }
    mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, "refund", "the refund kept changing");
    return -1;
}

int ledger_refund(ledger *l, const char *transaction_id, const char *out_trade_no,
                  const char *out_refund_no, long long total_fee, long long refund_fee,
                  ledger_refund_result *out)
{
    refund_arg a = { transaction_id, out_trade_no, out_refund_no, total_fee, refund_fee, out };
    return ledger_run(l, ledger_refund_op, &a);
}
