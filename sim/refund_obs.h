/* refund_obs - the refunds the checker judges (checker_refund.c): the mock
 * ledger's `refunds` of this run's orders and, for the orders of the
 * scenarios that refund (refunds, payer-edge), the refunds the service lists
 * (GET /api/pay/orders/{no}/refunds, idempay's API). Parsing is pure
 * (unit-tested); refund_obs_read does the reads. */
#ifndef IDEMPAY_SIM_REFUND_OBS_H
#define IDEMPAY_SIM_REFUND_OBS_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "schedule.h"

typedef struct {
    sim_refund *ledger; /* the gateway's refunds of the run's orders */
    size_t nledger;
    sim_refund *listed; /* the service's, order by order */
    size_t nlisted, cap_listed;
    uint8_t *list_read; /* per schedule order */
} refund_obs;

/* The refunds of GET /mock/ledger's body under prefix into o->ledger
 * (replacing it). 0, or -1 (not JSON / OOM; err set). A ledger without
 * `refunds` gives none. */
int refund_obs_parse_ledger(refund_obs *o, const char *body, size_t len, const sim_schedule *s,
                            const char *prefix, char *err, size_t errlen);

/* Appends the refunds of one GET /api/pay/orders/{no}/refunds body for
 * order to o->listed and marks it read. 0, or -1 (not the list; nothing
 * appended). */
int refund_obs_parse_list(refund_obs *o, long order, const char *body, size_t len);

/* Whether order's list is read at the end (scenarios refunds, payer-edge). */
int refund_obs_wanted(const sim_schedule *s, size_t order);

/* Reads the service's lists of the wanted orders (target) and the ledger's
 * refunds (gateway). When a listed refund is still PROCESSING while the
 * gateway's has ended, reads again (every 0.5 s, up to wait_s): the
 * service learns a result by its own refundquery. 0, or -1 (err set). */
int refund_obs_read(refund_obs *o, const char *target, const char *gateway, const sim_schedule *s,
                    const char *prefix, double wait_s, char *err, size_t errlen);

void refund_obs_free(refund_obs *o);

#endif
