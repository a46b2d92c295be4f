/* gateway_calls - the service's payment calls and fences as the mock's
 * journal saw them (GET /mock/requests?prefix=: every call of the run's
 * orders, its arrival and how long it stayed before its reply), for the
 * invariant no_fence_within_call (checker_fence.c). Parsing is pure
 * (unit-tested); gateway_calls_read does the read. */
#ifndef IDEMPAY_SIM_GATEWAY_CALLS_H
#define IDEMPAY_SIM_GATEWAY_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "schedule.h"

#define GATEWAY_CALLS_MAX_BODY (512u * 1024u * 1024u) /* bytes of journal JSON accepted */

/* The kind of a journal endpoint: a payment call that may charge or open a
 * prepay (unifiedorder, micropay, v3_native, v3_jsapi), a fence that ends an
 * attempt (closeorder, reverse, v3_close), or neither (-1). */
enum { GWCALL_PAY = 0, GWCALL_FENCE = 1 };
int gateway_calls_kind(const char *endpoint);

/* Keeps the payment calls and fences of body's "requests" whose
 * out_trade_no starts with prefix, each mapped to its schedule order (or
 * -1), times on the run's clock (wall time minus origin_epoch_us). Entries
 * without a parseable time are left out. *out is malloc'd (caller frees,
 * also when *n is 0). 0, or -1 (not a journal / OOM; err set, *out NULL). */
int gateway_calls_parse(const char *body, size_t len, const sim_schedule *s, const char *prefix,
                        int64_t origin_epoch_us, sim_gwcall **out, size_t *n, char *err,
                        size_t errlen);

/* GET {gateway}/mock/requests?prefix=P&limit=1000000 and the parse above.
 * 0; 1 when the mock keeps no journal or does not know prefix= (an older
 * mock: *out NULL, nothing to judge); -1 on failure (err set). */
int gateway_calls_read(const char *gateway, const sim_schedule *s, const char *prefix,
                       int64_t origin_epoch_us, sim_gwcall **out, size_t *n, char *err,
                       size_t errlen);

#endif
