/* refund_admin.c - the operator's list of stuck refunds (see refund_admin.h). */
#include "refund_admin.h"

#include <mysql.h>

#include "app_ctx.h"
#include "db_conn.h"
#include "money.h"
#include "refund_state.h"

static const char SQL_STUCK[] =
    "SELECT out_refund_no, order_no, transaction_id, refund_fee, state, "
    "COALESCE(last_error, '-'), kind, DATE_FORMAT(update_time, '%Y-%m-%d %H:%i:%s') "
    "FROM payment_refund WHERE state IN (3, 4, 5) ORDER BY update_time, id";

int refund_admin_list_stuck(const app_config *cfg, FILE *out, FILE *err)
{
    char no[80], order_no[48], txid[48], why[80], when[32], amount[MONEY_STR_MAX];
    long long fee, state, kind;
    int n = -1, got;
    app_ctx *ctx = app_ctx_new(cfg, 0);
    MYSQL_STMT *st = ctx != NULL ? app_ctx_stmt(ctx, STMT_REFUND_BASE + 15, SQL_STUCK) : NULL;

    if (st == NULL || db_stmt_exec(st, "") != 0) {
        fprintf(err, "cannot read the refunds: %s\n", ctx != NULL ? ctx->err : "out of memory");
        goto done;
    }
    fprintf(out, "out_refund_no\torder_no\ttransaction_id\tamount\tstatus\tlast_error\tkind\t"
                 "updated_utc\n");
    n = 0;
    while ((got = db_stmt_fetch(st, "sssllsls", no, sizeof(no), order_no, sizeof(order_no), txid,
                                sizeof(txid), &fee, &state, why, sizeof(why), &kind, when,
                                sizeof(when))) > 0) {
        fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", no, order_no, txid,
                money_format(fee, amount), refund_state_name((int)state), why,
                kind == 1 ? "merchant" : "duplicate_charge", when);
        n++;
    }
    if (got < 0) {
        fprintf(err, "reading the refunds failed: %s\n", mysql_stmt_error(st));
        n = -1;
        goto done;
    }
    fprintf(out, "%d stuck refund(s)\n", n);
done:
    app_ctx_free(ctx);
    return n;
}
