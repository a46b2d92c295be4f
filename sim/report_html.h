/* report_html - report.html: one self-contained page (inline CSS, SVG and
 * a few lines of script; nothing fetched when it is viewed) with the run's
 * throughput and latency over time per request kind, the outcome mix over
 * time, phase bands and chaos runs on every time axis, the scenarios x
 * invariants table, the latency summary, and each violation's witness as a
 * timeline with its text. The numbers the charts are drawn from are in the
 * page twice: data-* attributes on the charts and tables, and a
 * <script type="application/json" id="idempay-report-data"> block whose
 * "latency", "requests" and "invariants" are report.json's. */
#ifndef IDEMPAY_SIM_REPORT_HTML_H
#define IDEMPAY_SIM_REPORT_HTML_H

#include "report.h"

/* Most violations drawn as timelines (the rest are listed). */
#define REPORT_HTML_MAX_WITNESSES 50

/* Writes the page to path ("-" = stdout). Returns 0, or -1 (errno). */
int report_html_write(const sim_report *r, const char *path);

#endif
