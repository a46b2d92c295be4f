/* callback_verify - the database-free half of a WeChat Pay v2 payment
 * notification: strict verification of the body (callback_verify), the check
 * against its order's amount (callback_check_order), the metric of a failed
 * verdict, and WeChat's reply. Pure: unit-tested by test_callback and fuzzed
 * by fuzz_notify without a database. callback.c applies what passes. */
#ifndef IDEMPAY_CALLBACK_VERIFY_H
#define IDEMPAY_CALLBACK_VERIFY_H

#include <stddef.h>
#include "config.h"
#include "http_msg.h"
#include "order_no.h"
#include "wx_xml.h"

#define CALLBACK_TXN_MAX 32        /* transaction_id: 1..32 of [0-9A-Za-z_-] */
#define CALLBACK_REASON_MAX 128    /* return_msg of a FAIL reply */
#define CALLBACK_RAW_XML_MAX 16384 /* bytes of the raw body kept in the record */

typedef enum {
    CB_VERDICT_OK = 0,          /* all checks passed */
    CB_VERDICT_MALFORMED,       /* too large, bad XML, DOCTYPE, missing/invalid field */
    CB_VERDICT_RESULT,          /* return_code or result_code is not SUCCESS */
    CB_VERDICT_MERCHANT,        /* appid or mch_id is not ours */
    CB_VERDICT_SIGNATURE,       /* missing, unsupported or wrong signature */
    CB_VERDICT_AMOUNT,          /* total_fee / fee_type does not match the order */
    CB_VERDICT_UNKNOWN_ORDER,   /* no such order, or the transaction_id belongs to another order */
    CB_VERDICT_UNAVAILABLE,     /* MariaDB down or failing: WeChat retries later */
    CB_VERDICT_SIGN_TYPE,       /* signed with MD5 while HMAC-SHA256 is configured */
    CB_VERDICT_NOT_NOTIFICATION /* signed, but not shaped as a payment notification (e.g. an
                                 * orderquery reply): a field the notification must carry is
                                 * missing, or one only other messages carry is present */
} callback_verdict;

/* The verified content of one notification. */
typedef struct {
    char order_no[ORDER_NO_MAX + 1]; /* out_trade_no */
    char transaction_id[CALLBACK_TXN_MAX + 1];
    long long total_fee;              /* fen */
    char reason[CALLBACK_REASON_MAX]; /* "" when the verdict is OK */
} callback_notification;

/* Verifies a notification body without any database access: body size
 * (too_large set or len > WX_XML_MAX_BODY), strict parse (wx_xml_parse),
 * return_code and result_code SUCCESS, appid and mch_id equal to cfg's, the
 * sign type the message declares allowed by cfg->sign_type
 * (wx_sign_type_allowed: MD5 only when MD5 is configured; else
 * CB_VERDICT_SIGN_TYPE), the signature with cfg->key (sign_type honoured,
 * MD5 by default), out_trade_no by the order number rule, transaction_id
 * present and well-formed, total_fee a positive integer of fen
 * (money_parse_fen), fee_type CNY when present, and last the notification's
 * shape (docs/CALLBACKS.md, "A notification is a notification"): every field
 * WeChat documents as required in the payment notification present
 * (time_end 14 digits, cash_fee digits) and none of the fields only other
 * messages carry (orderquery's trade_state, ...); else
 * CB_VERDICT_NOT_NOTIFICATION. Fills *out on CB_VERDICT_OK; otherwise
 * out->reason says why (and out->order_no is set when out_trade_no was
 * readable, for logs). */
callback_verdict callback_verify(const app_config *cfg, const char *body, size_t len, int too_large,
                                 callback_notification *out);

/* Checks a verified notification against its order: found is 0 when the
 * order does not exist; order_amount is the order's DECIMAL amount text
 * ("12.30"). Returns CB_VERDICT_OK when total_fee equals the amount in fen,
 * otherwise UNKNOWN_ORDER or AMOUNT with n->reason set. */
callback_verdict callback_check_order(callback_notification *n, int found,
                                      const char *order_amount);

/* The metric counted for a failed verdict (MET_CB_FAIL_*, MET_CB_UNAVAILABLE);
 * -1 for CB_VERDICT_OK. */
int callback_verdict_metric(callback_verdict v);

/* Fills resp with WeChat's notification reply: HTTP 200, text/xml,
 * <xml><return_code>SUCCESS|FAIL</return_code><return_msg>msg</return_msg></xml>.
 * On OOM resp is a 200 with a constant FAIL body. */
void callback_reply(http_response *resp, int success, const char *msg);

/* Sets n->reason to reason (cut to fit). */
void callback_set_reason(callback_notification *n, const char *reason);

/* The notification's shape alone (see callback_verify): 0, or -1 with the
 * first field at fault named in reason. m is a parsed message. */
int callback_notification_shape(const wx_msg *m, char *reason, size_t reason_len);

#endif
