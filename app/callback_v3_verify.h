/* callback_v3_verify - the database-free half of a WeChat Pay APIv3
 * notification (支付通知 TRANSACTION.SUCCESS, 退款结果通知 REFUND.SUCCESS /
 * REFUND.CLOSED / REFUND.ABNORMAL): the platform signature over the raw
 * body (wx3_trust_check: headers, timestamp window, serial, signature),
 * the envelope (strict JSON, resource_type encrypt-resource, algorithm
 * AEAD_AES_256_GCM), the resource decrypted under the APIv3 key (a changed
 * ciphertext, tag, nonce or associated_data is refused), and the resource's
 * fields, checked as strictly as v2's: ours (appid, mchid), a well-formed
 * out_trade_no / transaction_id / amount. What passes is handed, in the
 * v2 structures, to the same database half as v2's notifications
 * (callback_apply, refund_notify_apply). Pure: unit-tested by
 * test_callback_v3 without a database or network. */
#ifndef IDEMPAY_CALLBACK_V3_VERIFY_H
#define IDEMPAY_CALLBACK_V3_VERIFY_H

#include <stddef.h>
#include <time.h>

#include "callback_verify.h"
#include "config.h"
#include "refund_notify_verify.h"
#include "wx3_trust.h"

typedef enum { CB3_PAYMENT = 0, CB3_REFUND } cb3_kind;

typedef struct {
    cb3_kind kind;
    callback_notification pay;  /* kind CB3_PAYMENT */
    refund_notification refund; /* kind CB3_REFUND (refund_status in v2's words) */
    wx3_trust_verdict trust;    /* the signature check's verdict */
    callback_verdict verdict;   /* CB_VERDICT_OK, or why it was refused */
    int status;                 /* the HTTP status to answer a refusal with (400, 401) */
    char reason[CALLBACK_REASON_MAX];
    char *plain; /* the decrypted resource (malloc'd; callback_v3_free) */
    size_t plain_len;
} cb3_notification;

/* Verifies one notification: body[0..len) with the headers h against the
 * platform certificates t at now (window_s), decrypted under
 * cfg->v3.apiv3_key. Returns 0 with *out filled (kind says which half is
 * set), or -1 with out->verdict, out->status and out->reason (never a key
 * or the plain text); out->trust is WX3_TRUST_UNKNOWN_SERIAL when the
 * signer is new to us (the caller may fetch the certificates and try
 * again). Release with callback_v3_free either way. */
int callback_v3_verify(const app_config *cfg, wx3_trust *t, const wx3_signed_headers *h,
                       const char *body, size_t len, int too_large, time_t now,
                       cb3_notification *out);
/* Frees out->plain. */
void callback_v3_free(cb3_notification *out);

/* APIv3's answer to a notification: 204 (no body) on success; otherwise
 * status with {"code":"FAIL","message":msg}. */
void callback_v3_reply(http_response *resp, int status, const char *msg);

#endif
