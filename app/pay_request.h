/* pay_request - the outside form of POST /api/pay and of the pay routes'
 * answers: strict parsing and validation of the JSON body and of the
 * Idempotency-Key header (contract section 2 field rules), and the exact
 * JSON bytes of every response body. Knows nothing of MariaDB or FastCGI. */
#ifndef IDEMPAY_PAY_REQUEST_H
#define IDEMPAY_PAY_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "http_msg.h"
#include "order_no.h"
#include "trade_type.h"

#define PAY_TOKEN_MAX 256    /* bytes of a token; longer is invalid_request */
#define PAY_IDEM_KEY_MAX 255 /* characters of an Idempotency-Key (decoded) */
#define PAY_MESSAGE_MAX 160  /* bytes of a validation message */
#define PAY_OPENID_MAX 128   /* JSAPI openid: 1..128 of [0-9A-Za-z_-] */
#define PAY_AUTH_CODE_LEN 18 /* MICROPAY auth_code: 18 digits, prefix 10..15 */
#define PAY_FLOW_KEY_MAX (16 + PAY_OPENID_MAX)

typedef struct {
    char order_no[ORDER_NO_MAX + 1];
    long long caller_id; /* the merchant-door caller (http_request.caller_id);
                            set by pay_handle_post, not by the parser */
    long long user_id;   /* 1 .. 2^63-1 */
    int64_t amount_fen;  /* MONEY_MIN_FEN .. MONEY_MAX_FEN */
    bool has_token;
    char token[PAY_TOKEN_MAX + 1];
    bool has_idem_key;
    char idem_key[PAY_IDEM_KEY_MAX + 1];   /* decoded (sf-string quotes removed) */
    trade_type flow;                       /* "trade_type"; NATIVE when absent */
    char openid[PAY_OPENID_MAX + 1];       /* JSAPI */
    char auth_code[PAY_AUTH_CODE_LEN + 1]; /* MICROPAY */
} pay_request;

/* Why a request was refused before anything was read or written. */
typedef enum {
    PAY_REQ_OK = 0,
    PAY_REQ_METHOD,     /* 405 method_not_allowed */
    PAY_REQ_TOO_LARGE,  /* 413 payload_too_large */
    PAY_REQ_MEDIA_TYPE, /* 415 unsupported_media_type */
    PAY_REQ_INVALID     /* 400 invalid_request */
} pay_req_status;

/* Validates a whole POST /api/pay request: method, body size, Content-Type,
 * the JSON body and the Idempotency-Key header. Returns PAY_REQ_OK with *out
 * filled, or another status with a human sentence in msg (always
 * NUL-terminated when msglen > 0); *out is then unspecified. */
pay_req_status pay_request_parse(const http_request *req, pay_request *out, char *msg,
                                 size_t msglen);

/* The JSON body alone: an object (no duplicate keys) with "order_no"
 * (string, order_no rule), "user_id" (JSON integer 1..2^63-1), "amount"
 * (JSON string, money_parse_yuan), optional "token" (string of 1..PAY_TOKEN_MAX
 * bytes; null is the same as absent), optional "trade_type" ("NATIVE",
 * "JSAPI", "MICROPAY"; absent or null: NATIVE), "openid" (required for
 * JSAPI: 1..128 of [0-9A-Za-z_-]), "auth_code" (required for MICROPAY: 18
 * digits beginning 10..15, WeChat's payment-code rule). Unknown fields (and
 * the flow fields of another flow) are ignored. Returns 0, or -1 with msg
 * set. Leaves out->has_idem_key untouched. */
int pay_request_parse_body(const char *body, size_t len, pay_request *out, char *msg,
                           size_t msglen);

/* The Idempotency-Key header value raw (surrounding blanks ignored): either
 * 1..255 visible ASCII characters (0x21-0x7E), or an RFC 8941 sf-string
 * ("..." with \" and \\ escapes) whose decoded content is 1..255 characters
 * of 0x20-0x7E. Writes the key (decoded) to out. Returns 0, or -1 (out is
 * then ""). cap must be > PAY_IDEM_KEY_MAX. */
int pay_request_parse_idem_key(const char *raw, char *out, size_t cap);

/* The request's flow fields as one string for the Idempotency-Key
 * fingerprint: "NATIVE", "JSAPI:<openid>" or "MICROPAY:<auth_code>". */
void pay_request_flow_key(const pay_request *pr, char out[PAY_FLOW_KEY_MAX]);

/* true when content_type is application/json, in any case, optionally with
 * parameters ("application/json; charset=utf-8"). */
bool pay_request_is_json(const char *content_type);

/* The (status, error code) the contract gives a refusal; status 400 and
 * "invalid_request" for anything unknown. */
int pay_req_status_http(pay_req_status s);
const char *pay_req_status_code(pay_req_status s);

/* Response bodies: compact JSON, keys in the order shown, non-ASCII
 * escaped (so stored copies replay byte-for-byte). Each returns a malloc'd
 * NUL-terminated string the caller frees, or NULL on out of memory. */

/* {"order_no","status":"PAID","transaction_id","amount":"12.30"} */
char *pay_body_paid(const char *order_no, const char *transaction_id, int64_t fen);
/* {"order_no","status":"PROCESSING"} */
char *pay_body_processing(const char *order_no);
/* {"order_no","status":"FAILED","error":code,"message"}: code is
 * "payment_declined" (a later POST may try again) or "payment_closed" (the
 * order can never be paid). */
char *pay_body_failed(const char *order_no, const char *code, const char *message);
/* The parameters a JSAPI page hands to WeixinJSBridge getBrandWCPayRequest
 * (WeChat 'JSAPI调起支付'). */
typedef struct {
    char app_id[64];
    char time_stamp[24];
    char nonce_str[33];
    char package[80];   /* "prepay_id=..." */
    char sign_type[16]; /* "MD5" / "HMAC-SHA256" (v2), "RSA" (APIv3) */
    char pay_sign[400]; /* hex (v2) or base64 SHA256withRSA (APIv3) */
} pay_jsapi;

/* The prepay flows' 202: {"order_no","status":"AWAITING_PAYMENT",
 * "trade_type","code_url" (NATIVE),"prepay_id","expires_at", "jsapi" (JSAPI:
 * {"appId","timeStamp","nonceStr","package","signType","paySign"})}. */
char *pay_body_awaiting(const char *order_no, trade_type flow, const char *code_url,
                        const char *prepay_id, const char *expires_at, const pay_jsapi *js);
/* GET /api/pay/orders/{no} of an order with a trade: pay_body_order's
 * object followed by "trade_type", and, when non-NULL, "code_url",
 * "prepay_id", "expires_at". */
char *pay_body_order_trade(const char *order_no, long long user_id, int64_t fen, const char *status,
                           const char *transaction_id, const char *created_at,
                           const char *updated_at, const char *trade_type_text,
                           const char *code_url, const char *prepay_id, const char *expires_at);
/* {"error","message"} */
char *pay_body_error(const char *code, const char *message);
/* GET /api/pay/orders/{no}: {"order_no","user_id","amount","status",
 * "transaction_id" (null when transaction_id is NULL or ""),"created_at",
 * "updated_at"} */
char *pay_body_order(const char *order_no, long long user_id, int64_t fen, const char *status,
                     const char *transaction_id, const char *created_at, const char *updated_at);

#endif
