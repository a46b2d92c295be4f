/* dialect - which WeChat Pay dialect the target's gateway calls speak
 * (--gateway v2|v3). The simulator judges the service from outside, so it
 * cannot ask the service; it asks the mock's journal instead: after a run
 * in v3, the prepay orders of the run (NATIVE, JSAPI) must have been placed
 * through /v3/pay/transactions/native or /jsapi (journal v3_native / v3_jsapi) and none
 * through v2's /pay/unifiedorder, else the target is not the v3-configured
 * service the run was asked to judge (a run that could not be carried out
 * as asked: exit 2). With v2 the same check in reverse. */
#ifndef IDEMPAY_SIM_DIALECT_H
#define IDEMPAY_SIM_DIALECT_H

#include <stddef.h>
#include <stdio.h>

#include "schedule.h"

#define DIALECT_SAMPLE 32 /* prepay orders whose journal is read, at most */

/* Reads the journal of up to DIALECT_SAMPLE prepay orders of s (order
 * numbers from prefix) at gateway and checks they were placed in dialect
 * (2 or 3). Prints one line "dialect: ..." on out. 0 when they were (or the
 * run had no prepay order that reached the gateway), -1 when one was placed
 * in the other dialect or the journal cannot be read. */
int dialect_check(const char *gateway, const sim_schedule *s, const char *prefix, int dialect,
                  FILE *out);

/* mask without the scenarios that speak APIv3 themselves (v3-attacks: it
 * posts v3 notifications) unless dialect is 3; when one is dropped, note
 * says which and why (else note is ""). */
unsigned dialect_runnable(unsigned mask, int dialect, char *note, size_t notelen);

/* The prepay endpoints of one journal body ({"requests":[...]}): counts of
 * v3 (v3_native, v3_jsapi) and v2 (unifiedorder) calls added to *v3 and *v2.
 * 0, or -1 when body is not a journal. Pure (unit-tested). */
int dialect_count(const char *body, size_t len, int *v3, int *v2);

#endif
