/* report_charts - the inline SVG charts of report.html: series over time
 * (throughput and latency per request kind, the outcome mix) drawn over the
 * run's phase bands and chaos runs, and a violation's witness as a timeline
 * (its client operations per client, its ledger charges, the gateway
 * journal's calls and notifications, refunds among them). Each chart
 * carries the numbers it is drawn from in data-* attributes. Only writes
 * to the stream it is given. */
#ifndef IDEMPAY_SIM_REPORT_CHARTS_H
#define IDEMPAY_SIM_REPORT_CHARTS_H

#include <stdio.h>

#include "checker.h"
#include "report.h"
#include "timeline.h"

/* The colour of a request kind (CSS), and of an outcome. */
const char *charts_kind_colour(int kind);
const char *charts_outcome_colour(int outcome);

/* Operations ended per second, one line per kind that has any. */
void charts_throughput(FILE *f, const sim_report *r, const sim_timeline *t);
/* p50 (solid) and p99 (dashed) latency over time, one chart per kind. */
void charts_latency(FILE *f, const sim_report *r, const sim_timeline *t);
/* Stacked ok / fail / unknown operations per interval. */
void charts_outcomes(FILE *f, const sim_report *r, const sim_timeline *t);
/* The witness timeline of v: one lane per client of the order (its
 * operations as bars), the ledger's charges, the gateway's calls and
 * notifications (from the journal, when it was fetched). */
void charts_witness(FILE *f, const sim_report *r, const chk_violation *v);

#endif
