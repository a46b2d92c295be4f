/* client_payer - the customer of a NATIVE/JSAPI order (TASK_PAYER): gets
 * the prepay from the service, pays it through the mock's payer as the
 * task's behaviour says (payer.h: once, twice, late, after the close, a
 * stale code, never), and polls the order. See client_payer.c. */
#ifndef IDEMPAY_SIM_CLIENT_PAYER_H
#define IDEMPAY_SIM_CLIENT_PAYER_H

#include "client.h"

/* Runs t (a TASK_PAYER) on c's worker. */
void client_task_payer(sim_client *c, const sched_task *t, long task);

#endif
