/* readback - the checker's reads of the final state through the service's
 * API: GET /api/pay/orders/{no} for each order, on the driver's workers
 * (their keep-alive clients), a few tries each. These reads are not client
 * operations: nothing is recorded in the history. */
#ifndef IDEMPAY_SIM_READBACK_H
#define IDEMPAY_SIM_READBACK_H

#include <stddef.h>

#include "driver.h"
#include "history.h"

/* Reads the orders idx[0..n) into rows (indexed by order: rows[idx[i]]).
 * A 404 is ROW_ABSENT; a row that cannot be read after 4 tries is
 * ROW_ERROR. Returns the number of ROW_ERROR rows. */
size_t readback_orders(driver *d, const size_t *idx, size_t n, sim_row *rows);

/* Parses an idempay order body (GET /api/pay/orders/{no}, a 200) into row
 * through the built-in profile.
 * Returns 0 (ROW_PRESENT), or -1 when it is not such a body (row->state =
 * ROW_ERROR). */
int readback_parse_order(const char *body, size_t len, sim_row *row);

#endif
