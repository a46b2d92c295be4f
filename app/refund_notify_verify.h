/* refund_notify_verify - the database-free half of a WeChat Pay v2 refund
 * result notification: the envelope, req_info decrypted under the merchant
 * key (common/wx_refund_info.h), the fields of its <root> message. Pure:
 * tested by test_refund_state and fuzzed by fuzz_refund_notify;
 * refund_notify.c applies what passes to our refund row. */
#ifndef IDEMPAY_REFUND_NOTIFY_VERIFY_H
#define IDEMPAY_REFUND_NOTIFY_VERIFY_H

#include <stddef.h>
#include "config.h"

typedef struct {
    char out_refund_no[65];
    char transaction_id[33];
    char refund_id[33];     /* "" when absent */
    char refund_status[16]; /* SUCCESS, REFUNDCLOSE or CHANGE */
    long long refund_fee;   /* fen */
    char reason[128];       /* why it was refused, "" when verified */
} refund_notification;

/* Verifies a refund notification body without any database access: size,
 * strict XML, return_code SUCCESS, appid and mch_id equal to cfg's, req_info
 * decrypting under cfg->key to a strict XML whose out_refund_no,
 * transaction_id, refund_status and refund_fee are present and well-formed.
 * Returns 0 with *out filled, or -1 with out->reason set. */
int refund_notify_verify(const app_config *cfg, const char *body, size_t len, int too_large,
                         refund_notification *out);

#endif
