/* statement - reconciliation against the gateway's bill (downloadbill), by
 * whole China day, as WeChat serves it.
 *
 * One background thread per service process; one run at a time across all
 * processes (a compare-and-set on payment_statement_job's lease, which is
 * also when the next run is due: every IDEMPAY_STATEMENT_INTERVAL_MS). Day
 * D's bill exists from D+1 at IDEMPAY_STATEMENT_READY_HOUR (China time;
 * WeChat's 10:00). A run reads every day that is ready and younger than
 * IDEMPAY_STATEMENT_REREAD_DAYS days past its ready time, plus every older
 * day (up to 90 days, WeChat's limit) that is not done yet; per-day progress
 * is kept in payment_statement_day (0 waiting, 1 open, 2 done). A gateway
 * answering "Bill Creating" leaves the day waiting.
 *
 * A bill line is unsigned: it changes nothing by itself. A charge line whose
 * order is already PAID with it (or that the bill shows refunded in full)
 * needs nothing. Any other is confirmed by a signed orderquery of its
 * transaction_id and out_trade_no, and settle_charge is applied to THAT
 * answer (its transaction_id and total_fee); a charge the gateway does not
 * know (ORDERNOTEXIST, NOTPAY) is counted as unconfirmed and logged. A charge
 * of an order PROCESSING under a live lease is left to the lease holder. A
 * line that cannot be read is set aside (payment_statement_bad_line, the
 * metric idempay_statement_bad_lines_total, an ERROR log) and the rest is
 * judged. A day is done only when every charge in it is settled or queued
 * for refund: a refund that could not be queued, an order that kept moving,
 * a confirmation that did not come or a live lease keep it open. Charges of
 * an out_trade_no without an order are counted and logged, not refunded (the
 * merchant account may be shared). Every action is idempotent, so a run that
 * crashes half-way is simply run again. */
#ifndef IDEMPAY_STATEMENT_H
#define IDEMPAY_STATEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "app_ctx.h"
#include "gateway_reply.h"
#include "statement_parse.h"

/* What a run saw. */
typedef struct {
    size_t charges;          /* charge records judged */
    size_t matched;          /* PAID with this very charge already */
    size_t made_paid;        /* made their order PAID */
    size_t refunds;          /* not their order's: refund queued (now or before) */
    size_t already_refunded; /* refunded in full in the statement */
    size_t in_flight;        /* order PROCESSING under a live lease: its holder settles it */
    size_t unmatched;        /* no order with that out_trade_no */
    size_t unconfirmed;      /* the gateway's signed orderquery does not know the charge */
    size_t open;             /* not settled or queued yet: the day stays open */
    size_t bad_lines;        /* lines set aside */
} statement_tally;

/* Confirms one charge line at the gateway: a signed answer about it in
 * *out (GW_CHARGED with the charge's transaction_id and total_fee,
 * GW_NOT_CHARGED when the gateway has no such charge, anything else: not
 * known now). statement_confirm_gateway is orderquery; tests pass their own. */
typedef gw_outcome (*statement_confirm_fn)(app_ctx *ctx, const bill_record *line, gw_result *out);
gw_outcome statement_confirm_gateway(app_ctx *ctx, const bill_record *line, gw_result *out);

/* Judges records (as bill_parse returns them) against the orders, each
 * charge that would change something confirmed through confirm first; adds
 * to *tally (tally->open: charges left undecided). Returns 0, or -1 when
 * MariaDB failed (ctx->err; the day is to be read again). */
int statement_judge(app_ctx *ctx, bill_record *records, size_t n, statement_confirm_fn confirm,
                    statement_tally *tally);

/* ---- days (pure) ---- */

/* The China day (UTC+8) holding Unix ms, as a day number (days since
 * 1970-01-01 China time). */
long long statement_china_day(long long ms);
/* Day number -> "yyyyMMdd". */
void statement_day_name(long long day, char out[9]);

typedef enum {
    STATEMENT_DAY_NOT_READY = 0, /* before D+1 at the ready hour: not asked for */
    STATEMENT_DAY_REREAD,        /* ready, within the re-read days: read on every run */
    STATEMENT_DAY_PAST           /* past the re-read days: read only while not done */
} statement_day_phase;

/* Where day stands at now_ms under ready_hour (-24..23: hours after the
 * end of the day, China time) and reread_days. */
statement_day_phase statement_day_phase_at(long long day, long long now_ms, long ready_hour,
                                           long reread_days);

/* One run, if it is due and this process wins the claim: 1 ran (tally
 * filled), 0 not due / another process runs it, -1 failed (MariaDB or the
 * gateway for some day; ctx->err; retried at the next poll). now_ms is the
 * wall clock (Unix ms). */
int statement_run_once(app_ctx *ctx, long long now_ms, statement_tally *tally);

/* Starts this process's statement thread (detached). cfg must outlive the
 * process. Returns 0, or -1 (logged). */
int statement_start(const app_config *cfg);

#endif
