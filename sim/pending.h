/* pending - which orders are still moving after the traffic: the simulator
 * re-reads those until none is left or the settle time is up. Pure: unit
 * tests feed it rows and charges. */
#ifndef IDEMPAY_SIM_PENDING_H
#define IDEMPAY_SIM_PENDING_H

#include <stddef.h>

#include "history.h"
#include "schedule.h"

/* Writes to out (room for s->norders) the orders still moving: a row
 * unread, unreadable or PROCESSING; a charge not refunded whose order is
 * not PAID; a PAID order without a charge of its transaction_id; a charge
 * the payer made (a txn among strays[0..nstrays): the nemesis' second
 * charges, the customer's payments) that is not the order's kept charge
 * and not refunded yet. Returns how many (0 on OOM). */
size_t pending_orders(const sim_schedule *s, const sim_row *rows, const sim_charge *ch, size_t nch,
                      const char *const *strays, size_t nstrays, size_t *out);

#endif
