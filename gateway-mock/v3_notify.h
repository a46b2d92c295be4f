/* v3_notify - WeChat Pay APIv3's notifications ("支付成功回调通知",
 * "退款结果通知") for the mock's charges and refunds: one JSON object
 *
 *   {"id","create_time","resource_type":"encrypt-resource","event_type",
 *    "summary","resource":{"original_type","algorithm":"AEAD_AES_256_GCM",
 *    "ciphertext","associated_data","nonce"}}
 *
 * whose resource is the transaction (event TRANSACTION.SUCCESS,
 * original_type and associated_data "transaction") or the refund (event
 * REFUND.SUCCESS / REFUND.CLOSED / REFUND.ABNORMAL, "refund") encrypted
 * under the APIv3 key (wx3_aead.h). The notifier signs the body with the
 * platform key (v3_keys_sign) and POSTs it with the Wechatpay-* headers;
 * the merchant acknowledges with HTTP 200 or 204.
 *
 * Times are RFC 3339 in China time (+08:00), as v3 writes them. */
#ifndef IDEMPAY_MOCK_V3_NOTIFY_H
#define IDEMPAY_MOCK_V3_NOTIFY_H

#include <jansson.h>
#include <time.h>

#include "mock.h"
#include "notifier.h"
#include "refund_store.h"

#define V3_TIME_BUF 26 /* "2024-03-01T07:30:00+08:00" */

/* t (UTC seconds) as RFC 3339 China time. */
void v3_time(time_t t, char out[V3_TIME_BUF]);
/* v2's compact China time "yyyyMMddHHmmss" as RFC 3339 ("" when malformed). */
void v3_time_from_compact(const char *compact, char out[V3_TIME_BUF]);
/* "yyyy-MM-dd HH:mm:ss" China time as RFC 3339 ("" when malformed). */
void v3_time_from_cst(const char *cst, char out[V3_TIME_BUF]);

/* The decrypted transaction of charge c (what the payment notification's
 * resource holds and the query answers): a new JSON object, NULL on OOM. */
json_t *v3_notify_transaction(const notifier_charge *c, const mock_creds *creds);

/* The whole payment notification of c (malloc'd compact JSON, caller
 * frees), or NULL (OOM, crypto). */
char *v3_notify_charge_json(const notifier_charge *c, const mock_creds *creds,
                            const char *apiv3_key);
/* The whole refund notification of r, or NULL. */
char *v3_notify_refund_json(const refund_record *r, const mock_creds *creds, const char *apiv3_key);

#endif
