/* witness - the minimal witness of a violation, as text: what was
 * violated, the order, its ledger charges with their times, its final
 * row(s), the faults it met (each phase's faults while its requests were
 * in flight, the chaos runs, its clients' behaviour) and the client
 * operations on it in time order, runs of the same answer folded into one
 * line. Only reads the report. */
#ifndef IDEMPAY_SIM_WITNESS_H
#define IDEMPAY_SIM_WITNESS_H

#include <stddef.h>
#include <stdio.h>

#include "checker.h"
#include "report.h"

/* The witness of v. malloc'd, caller frees; NULL on OOM. */
char *witness_text(const sim_report *r, const chk_violation *v);

/* The faults order met, one line each, to f (nothing for order < 0). */
void witness_faults(const sim_report *r, long order, FILE *f);

/* The full number of order (prefix + suffix), or "-". */
void witness_order_no(const sim_report *r, long order, char *out, size_t len);

#endif
