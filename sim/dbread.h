/* dbread - the --db view: this run's rows of idempay.payment_order read
 * directly from MariaDB with the simulator's own read-only account
 * (db_conn_open_as DB_ACCOUNT_SIM: IDEMPAY_SIM_DB_USER / _PASSWORD). */
#ifndef IDEMPAY_SIM_DBREAD_H
#define IDEMPAY_SIM_DBREAD_H

#include <stddef.h>

#include "history.h"
#include "schedule.h"

/* Fills rows[0..s->norders) from the table: ROW_PRESENT for the orders found,
 * ROW_ABSENT for the others. Returns 0, or -1 with a message in err (every
 * row is then ROW_ERROR). */
int dbread_orders(const sim_schedule *s, const char *prefix, sim_row *rows, char *err,
                  size_t errlen);

#endif
