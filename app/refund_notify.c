/* refund_notify.c - refund result notifications (see refund_notify.h). */
#include "refund_notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callback_verify.h"
#include "db_conn.h"
#include "log.h"
#include "metrics.h"
#include "order_no.h"
#include "refund_queue.h"
#include "refund_state.h"

#define RN_TRIES 3

enum { RN_STMT_READ = STMT_REFUND_BASE + 5, RN_STMT_MOVE };

static const char SQL_READ[] =
    "SELECT id, order_no, transaction_id, refund_fee, state FROM payment_refund "
    "WHERE out_refund_no = ?";
static const char SQL_MOVE[] =
    "UPDATE payment_refund SET state = ?, refund_id = COALESCE(NULLIF(?, ''), refund_id), "
    "last_error = ?, lease_until = NULL WHERE id = ? AND state = ?";

/* One attempt: read the row, check it is this refund, CAS its state. */
static rn_result rn_apply(app_ctx *ctx, refund_notification *n, char *order_no, size_t cap)
{
    MYSQL_STMT *rd = app_ctx_stmt(ctx, RN_STMT_READ, SQL_READ);
    MYSQL_STMT *mv = app_ctx_stmt(ctx, RN_STMT_MOVE, SQL_MOVE);
    long long id = 0, fee = 0, state = 0;
    char txid[48];

    if (rd == NULL || mv == NULL || db_stmt_exec(rd, "s", n->out_refund_no) != 0)
        goto down;
    int got = db_stmt_fetch(rd, "lssll", &id, order_no, cap, txid, sizeof(txid), &fee, &state);
    db_stmt_done(rd);
    if (got < 0)
        goto down;
    if (got == 0 || strcmp(txid, n->transaction_id) != 0 || fee != n->refund_fee) {
        snprintf(n->reason, sizeof(n->reason), "%s",
                 got == 0 ? "no refund of ours with this out_refund_no"
                          : "transaction_id or refund_fee differ from our refund");
        return RN_REFUSED;
    }
    refund_step st = refund_state_on_result((refund_status)state, n->refund_status);
    if (st.action != REFUND_ACT_MOVE && st.action != REFUND_ACT_STUCK)
        return RN_APPLIED; /* final already: the same news again */
    if (db_stmt_exec(mv, "lssll", (long long)st.next, n->refund_id, n->refund_status, id, state) !=
        0)
        goto down;
    if (mysql_stmt_affected_rows(mv) != 1)
        return RN_RETRY; /* the worker moved it meanwhile: read again */
    if (st.action == REFUND_ACT_STUCK)
        refund_queue_report_stuck(order_no, n->out_refund_no, fee, st.next, "refund notification");
    else {
        metrics_inc(MET_REFUND_DONE);
        log_msg(LOG_INFO, "refund done (SUCCESS, notification): order %s refund %s (%lld fen)",
                order_no, n->out_refund_no, fee);
    }
    return RN_APPLIED;
down:
    /* A connection found dead (MariaDB restarted since this thread last
     * used it) is dropped: the next try reconnects. Each thread learns it
     * on its own, so without the retry every thread would refuse one
     * notification first. */
    return app_ctx_db_error(ctx, ctx->db != NULL ? mysql_errno(ctx->db) : 2006) ? RN_RETRY
                                                                                : RN_DOWN;
}

rn_result refund_notify_apply(app_ctx *ctx, refund_notification *n, char *order_no, size_t cap)
{
    rn_result r = RN_RETRY;

    for (int i = 0; i < RN_TRIES && r == RN_RETRY; i++)
        r = rn_apply(ctx, n, order_no, cap);
    if (r == RN_APPLIED) {
        metrics_inc(MET_REFUND_NOTIFY_APPLIED);
        return r;
    }
    metrics_inc(MET_REFUND_NOTIFY_FAIL);
    if (r == RN_REFUSED)
        log_msg(LOG_ERROR, "refund notification for %s not applied: %s", n->out_refund_no,
                n->reason);
    else
        snprintf(n->reason, sizeof(n->reason), "temporarily unavailable");
    return r;
}

void refund_notify_handle(app_ctx *ctx, const http_request *req, http_response *resp)
{
    refund_notification n;
    char order_no[ORDER_NO_MAX + 1] = "";

    if (refund_notify_verify(ctx->cfg, req->body, req->body_len, req->body_too_large, &n) != 0) {
        metrics_inc(MET_REFUND_NOTIFY_FAIL);
        log_msg(LOG_WARN, "refund notification refused: %s", n.reason);
        callback_reply(resp, 0, n.reason);
        return;
    }
    rn_result r = refund_notify_apply(ctx, &n, order_no, sizeof(order_no));
    snprintf(resp->log_order, sizeof(resp->log_order), "%s", order_no);
    callback_reply(resp, r == RN_APPLIED, r == RN_APPLIED ? "OK" : n.reason);
}
