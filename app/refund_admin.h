/* refund_admin - what an operator runs about refunds:
 *   idempay-fcgi --list-stuck-refunds
 * lists the refunds the worker stopped (REFUNDCLOSE, CHANGE, refused for
 * good: payment_refund.state 3, 4, 5), oldest first, one line each. */
#ifndef IDEMPAY_REFUND_ADMIN_H
#define IDEMPAY_REFUND_ADMIN_H

#include <stdio.h>
#include "config.h"

/* Prints the stuck refunds to out (a header line, one tab-separated line
 * per refund: out_refund_no, order_no, transaction_id, amount, status,
 * last_error, kind, updated) and a last line "N stuck refund(s)". Returns
 * the number listed, or -1 when MariaDB cannot be asked (reason on err). */
int refund_admin_list_stuck(const app_config *cfg, FILE *out, FILE *err);

#endif
