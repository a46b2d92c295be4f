/* ledger_close.c - closes: closeorder on the same mock_trade row a charge
 * claims, so that a close and a charge of one out_trade_no never both win. */
#include "ledger.h"

#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "ledger_db.h"

/* ---- closes ------------------------------------------------------------ */

typedef struct {
    const char *out_trade_no;
    ledger_close_outcome *out;
} close_arg;

/* Why did the close's conditional update miss? 0 with *out set, 1 when the
 * row is gone (a reset: try again), -1 on failure. */
static int ledger_close_explain(ledger *l, close_arg *a)
{
    trade_row t;
    if (ledger_trade_get(l, a->out_trade_no, &t) != 0)
        return -1;
    if (!t.found)
        return 1;
    if (t.charged) {
        *a->out = CLOSE_PAID;
        return 0;
    }
    if (t.closed) {
        *a->out = CLOSE_ALREADY;
        return 0;
    }
    return 1;
}

/* The first sight of an out_trade_no creates its row closed; otherwise one
 * conditional UPDATE closes it only while it has no charge. Either write
 * waits for the row lock a charging transaction holds, then sees its
 * outcome, so a close and a charge never both succeed. */
static int ledger_close_op(void *owner, void *arg)
{
    ledger *l = owner;
    close_arg *a = arg;
    MYSQL_STMT *cas;

    for (int round = 0; round < LEDGER_MAX_TRIES; round++) {
        if (mock_store_begin(&l->m) != 0)
            return -1;
        if (ledger_exec(l, S_CLOSE_INSERT, "s", a->out_trade_no) != NULL) {
            if (mock_store_commit(&l->m) != 0)
                return -1;
            *a->out = CLOSE_DONE;
            return 0;
        }
        if (l->m.err_no != 1062)
            return -1;
        mock_store_rollback(&l->m);
        if (mock_store_begin(&l->m) != 0 ||
            (cas = ledger_exec(l, S_CLOSE_CAS, "s", a->out_trade_no)) == NULL)
            return -1;
        if (mysql_stmt_affected_rows(cas) == 1) {
            if (mock_store_commit(&l->m) != 0)
                return -1;
            *a->out = CLOSE_DONE;
            return 0;
        }
        mock_store_rollback(&l->m);
        int rc = ledger_close_explain(l, a);
        if (rc <= 0)
            return rc;
    }
    mock_store_set_err(&l->m, LEDGER_ERR_LOGIC, "close", "the order kept changing");
    return -1;
}

int ledger_close(ledger *l, const char *out_trade_no, ledger_close_outcome *out)
{
    close_arg a = { out_trade_no, out };
    return ledger_run(l, ledger_close_op, &a);
}
