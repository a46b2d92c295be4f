/* refund_notify - the refund result notification ("退款结果通知") of WeChat
 * Pay v2 for one refund that ended: an unsigned XML document with
 * return_code SUCCESS, appid, mch_id, nonce_str and req_info, the inner
 * document <root>...</root> encrypted by wx_refund_info under the merchant
 * key. The inner fields: transaction_id, out_trade_no, refund_id,
 * out_refund_no, total_fee, settlement_total_fee, refund_fee,
 * settlement_refund_fee, refund_status, success_time (SUCCESS only,
 * yyyy-MM-dd HH:mm:ss China time), refund_recv_accout, refund_account,
 * refund_request_source. */
#ifndef IDEMPAY_MOCK_REFUND_NOTIFY_H
#define IDEMPAY_MOCK_REFUND_NOTIFY_H

#include "mock.h"
#include "refund_store.h"

/* The inner document of r, malloc'd (caller frees), or NULL on OOM. */
char *refund_notify_inner_xml(const refund_record *r);

/* The whole notification of r for creds with nonce, malloc'd (caller
 * frees), or NULL on failure (OOM, crypto). */
char *refund_notify_build_xml(const refund_record *r, const mock_creds *creds, const char *nonce);

#endif
