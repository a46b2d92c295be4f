/* pay_request.c - strict parsing of POST /api/pay (body and Idempotency-Key)
 * and the byte-exact JSON of the pay routes' answers. Pure functions: no
 * database, no network, so CUnit covers every boundary. */
#include "pay_request.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "money.h"
#include "text_token.h"

/* Compact, key order kept, non-ASCII escaped: the stored and the live
 * bytes of a response are the same on every path. */
#define PAY_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

static void pay_msg(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pay_msg(char *msg, size_t msglen, const char *fmt, ...)
{
    va_list ap;

    if (msg == NULL || msglen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

bool pay_request_is_json(const char *content_type)
{
    static const char want[] = "application/json";
    const char *p = content_type;

    if (p == NULL)
        return false;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncasecmp(p, want, sizeof(want) - 1) != 0)
        return false;
    p += sizeof(want) - 1;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\0' || *p == ';';
}

int pay_request_parse_idem_key(const char *raw, char *out, size_t cap)
{
    size_t start = 0, end, n = 0;

    if (cap <= PAY_IDEM_KEY_MAX)
        return -1;
    out[0] = '\0';
    if (raw == NULL)
        return -1;
    end = strlen(raw);
    while (start < end && (raw[start] == ' ' || raw[start] == '\t'))
        start++;
    while (end > start && (raw[end - 1] == ' ' || raw[end - 1] == '\t'))
        end--;
    if (end == start)
        return -1;

    if (raw[start] == '"') {
        /* sf-string: DQUOTE *( %x20-21 / %x23-5B / %x5D-7E / "\" ( DQUOTE / "\" ) ) DQUOTE */
        if (end - start < 2 || raw[end - 1] != '"')
            goto bad;
        for (size_t i = start + 1; i < end - 1; i++) {
            unsigned char c = (unsigned char)raw[i];
            if (c == '\\') {
                if (i + 1 >= end - 1 || (raw[i + 1] != '"' && raw[i + 1] != '\\'))
                    goto bad;
                c = (unsigned char)raw[++i];
            } else if (c == '"' || c < 0x20 || c > 0x7E) {
                goto bad;
            }
            if (n >= PAY_IDEM_KEY_MAX)
                goto bad;
            out[n++] = (char)c;
        }
    } else {
        for (size_t i = start; i < end; i++) {
            unsigned char c = (unsigned char)raw[i];
            if (c < 0x21 || c > 0x7E || n >= PAY_IDEM_KEY_MAX)
                goto bad;
            out[n++] = (char)c;
        }
    }
    if (n == 0)
        goto bad;
    out[n] = '\0';
    return 0;

bad:
    out[0] = '\0';
    return -1;
}

/* An optional string field: 1 with *s when present (not null), 0 absent,
 * -1 when not a string or with a NUL inside. */
static int pay_opt_string(json_t *root, const char *name, const char **s)
{
    json_t *v = json_object_get(root, name);

    *s = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
        return -1;
    *s = json_string_value(v);
    return 1;
}

static bool pay_openid_valid(const char *s)
{
    return text_token_valid(s, 1, PAY_OPENID_MAX, "_-");
}

/* WeChat's payment code: 18 digits, beginning 10 to 15. */
static bool pay_auth_code_valid(const char *s)
{
    if (s == NULL || strlen(s) != PAY_AUTH_CODE_LEN)
        return false;
    for (size_t i = 0; i < PAY_AUTH_CODE_LEN; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return s[0] == '1' && s[1] >= '0' && s[1] <= '5';
}

/* trade_type, openid, auth_code: 0, or -1 with msg set. */
static int pay_parse_flow(json_t *root, pay_request *out, char *msg, size_t msglen)
{
    const char *s;

    out->flow = TRADE_NATIVE;
    if (pay_opt_string(root, "trade_type", &s) < 0 ||
        (s != NULL && trade_type_parse(s, &out->flow) != 0)) {
        pay_msg(msg, msglen, "trade_type must be \"NATIVE\", \"JSAPI\" or \"MICROPAY\"");
        return -1;
    }
    if (out->flow == TRADE_JSAPI) {
        if (pay_opt_string(root, "openid", &s) <= 0 || !pay_openid_valid(s)) {
            pay_msg(msg, msglen, "JSAPI needs openid: 1 to %d characters of [0-9A-Za-z_-]",
                    PAY_OPENID_MAX);
            return -1;
        }
        snprintf(out->openid, sizeof(out->openid), "%s", s);
    }
    if (out->flow == TRADE_MICROPAY) {
        if (pay_opt_string(root, "auth_code", &s) <= 0 || !pay_auth_code_valid(s)) {
            pay_msg(msg, msglen,
                    "MICROPAY needs auth_code: the customer's payment code,"
                    " 18 digits beginning 10 to 15");
            return -1;
        }
        snprintf(out->auth_code, sizeof(out->auth_code), "%s", s);
    }
    return 0;
}

void pay_request_flow_key(const pay_request *pr, char out[PAY_FLOW_KEY_MAX])
{
    const char *extra = pr->flow == TRADE_JSAPI      ? pr->openid
                        : pr->flow == TRADE_MICROPAY ? pr->auth_code
                                                     : NULL;

    snprintf(out, PAY_FLOW_KEY_MAX, "%s%s%s", trade_type_name(pr->flow), extra ? ":" : "",
             extra ? extra : "");
}

int pay_request_parse_body(const char *body, size_t len, pay_request *out, char *msg, size_t msglen)
{
    json_t *root = http_json_parse_object(body, len);
    json_t *v;
    const char *s;
    int rc = -1;

    if (root == NULL) {
        pay_msg(msg, msglen, "the body must be one JSON object without duplicate keys");
        return -1;
    }

    v = json_object_get(root, "order_no");
    if (!json_is_string(v)) {
        pay_msg(msg, msglen, "order_no is required and must be a string");
        goto done;
    }
    s = json_string_value(v);
    if (strlen(s) != json_string_length(v) || !order_no_valid(s)) {
        pay_msg(msg, msglen, "order_no must be %d to %d characters of [0-9A-Za-z_|*-]",
                ORDER_NO_MIN, ORDER_NO_MAX);
        goto done;
    }
    snprintf(out->order_no, sizeof(out->order_no), "%s", s);

    v = json_object_get(root, "user_id");
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
        pay_msg(msg, msglen, "user_id is required and must be a JSON integer from 1 to 2^63-1");
        goto done;
    }
    out->user_id = (long long)json_integer_value(v);

    v = json_object_get(root, "amount");
    if (!json_is_string(v)) {
        pay_msg(msg, msglen, "amount is required and must be a JSON string such as \"12.30\"");
        goto done;
    }
    s = json_string_value(v);
    if (strlen(s) != json_string_length(v) || money_parse_yuan(s, &out->amount_fen) != 0) {
        pay_msg(msg, msglen,
                "amount must be decimal yuan with at most two fraction digits, "
                "0.01 to 99999999.99");
        goto done;
    }

    out->has_token = false;
    out->token[0] = '\0';
    v = json_object_get(root, "token");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v)) {
            pay_msg(msg, msglen, "token must be a string");
            goto done;
        }
        s = json_string_value(v);
        if (json_string_length(v) == 0 || json_string_length(v) > PAY_TOKEN_MAX ||
            strlen(s) != json_string_length(v)) {
            pay_msg(msg, msglen, "token must be 1 to %d characters", PAY_TOKEN_MAX);
            goto done;
        }
        snprintf(out->token, sizeof(out->token), "%s", s);
        out->has_token = true;
    }
    if (pay_parse_flow(root, out, msg, msglen) != 0)
        goto done;
    rc = 0;

done:
    json_decref(root);
    return rc;
}

pay_req_status pay_request_parse(const http_request *req, pay_request *out, char *msg,
                                 size_t msglen)
{
    memset(out, 0, sizeof(*out));
    if (strcmp(req->method, "POST") != 0) {
        pay_msg(msg, msglen, "use POST");
        return PAY_REQ_METHOD;
    }
    if (req->body_too_large) {
        pay_msg(msg, msglen, "the request body is larger than %d bytes", HTTP_MAX_BODY);
        return PAY_REQ_TOO_LARGE;
    }
    if (!pay_request_is_json(req->content_type)) {
        pay_msg(msg, msglen, "the request body must be application/json");
        return PAY_REQ_MEDIA_TYPE;
    }
    if (pay_request_parse_body(req->body, req->body_len, out, msg, msglen) != 0)
        return PAY_REQ_INVALID;
    if (req->idempotency_key != NULL) {
        if (pay_request_parse_idem_key(req->idempotency_key, out->idem_key,
                                       sizeof(out->idem_key)) != 0) {
            pay_msg(msg, msglen,
                    "Idempotency-Key must be 1 to %d visible ASCII characters or a quoted string",
                    PAY_IDEM_KEY_MAX);
            return PAY_REQ_INVALID;
        }
        out->has_idem_key = true;
    }
    return PAY_REQ_OK;
}

int pay_req_status_http(pay_req_status s)
{
    switch (s) {
    case PAY_REQ_METHOD:
        return 405;
    case PAY_REQ_TOO_LARGE:
        return 413;
    case PAY_REQ_MEDIA_TYPE:
        return 415;
    case PAY_REQ_OK:
    case PAY_REQ_INVALID:
        break;
    }
    return 400;
}

const char *pay_req_status_code(pay_req_status s)
{
    switch (s) {
    case PAY_REQ_METHOD:
        return "method_not_allowed";
    case PAY_REQ_TOO_LARGE:
        return "payload_too_large";
    case PAY_REQ_MEDIA_TYPE:
        return "unsupported_media_type";
    case PAY_REQ_OK:
    case PAY_REQ_INVALID:
        break;
    }
    return "invalid_request";
}

/* Serialises obj (stolen) with PAY_JSON_FLAGS; NULL when obj is NULL or on
 * out of memory. */
static char *pay_body_dump(json_t *obj)
{
    char *s;

    if (obj == NULL)
        return NULL;
    s = json_dumps(obj, PAY_JSON_FLAGS);
    json_decref(obj);
    return s;
}

char *pay_body_paid(const char *order_no, const char *transaction_id, int64_t fen)
{
    char amount[MONEY_STR_MAX];

    return pay_body_dump(json_pack("{s:s, s:s, s:s, s:s}", "order_no", order_no, "status", "PAID",
                                   "transaction_id", transaction_id, "amount",
                                   money_format(fen, amount)));
}

char *pay_body_processing(const char *order_no)
{
    return pay_body_dump(json_pack("{s:s, s:s}", "order_no", order_no, "status", "PROCESSING"));
}

char *pay_body_failed(const char *order_no, const char *code, const char *message)
{
    return pay_body_dump(json_pack("{s:s, s:s, s:s, s:s}", "order_no", order_no, "status", "FAILED",
                                   "error", code, "message", message));
}

char *pay_body_awaiting(const char *order_no, trade_type flow, const char *code_url,
                        const char *prepay_id, const char *expires_at, const pay_jsapi *js)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "order_no", order_no, "status", "AWAITING_PAYMENT",
                          "trade_type", trade_type_name(flow));
    if (o == NULL)
        return NULL;
    if (flow == TRADE_NATIVE)
        json_object_set_new(o, "code_url", json_string(code_url));
    json_object_set_new(o, "prepay_id", json_string(prepay_id));
    json_object_set_new(o, "expires_at", json_string(expires_at));
    if (flow == TRADE_JSAPI && js != NULL)
        json_object_set_new(o, "jsapi",
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "appId", js->app_id,
                                      "timeStamp", js->time_stamp, "nonceStr", js->nonce_str,
                                      "package", js->package, "signType", js->sign_type, "paySign",
                                      js->pay_sign));
    return pay_body_dump(o);
}

char *pay_body_error(const char *code, const char *message)
{
    return pay_body_dump(json_pack("{s:s, s:s}", "error", code, "message", message));
}

char *pay_body_order(const char *order_no, long long user_id, int64_t fen, const char *status,
                     const char *transaction_id, const char *created_at, const char *updated_at)
{
    char amount[MONEY_STR_MAX];
    json_t *txid = (transaction_id != NULL && transaction_id[0] != '\0')
                       ? json_string(transaction_id)
                       : json_null();

    return pay_body_dump(json_pack("{s:s, s:I, s:s, s:s, s:o, s:s, s:s}", "order_no", order_no,
                                   "user_id", (json_int_t)user_id, "amount",
                                   money_format(fen, amount), "status", status, "transaction_id",
                                   txid, "created_at", created_at, "updated_at", updated_at));
}

char *pay_body_order_trade(const char *order_no, long long user_id, int64_t fen, const char *status,
                           const char *transaction_id, const char *created_at,
                           const char *updated_at, const char *trade_type_text,
                           const char *code_url, const char *prepay_id, const char *expires_at)
{
    char amount[MONEY_STR_MAX];
    json_t *txid = (transaction_id != NULL && transaction_id[0] != '\0')
                       ? json_string(transaction_id)
                       : json_null();
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:o, s:s, s:s, s:s}", "order_no", order_no,
                          "user_id", (json_int_t)user_id, "amount", money_format(fen, amount),
                          "status", status, "transaction_id", txid, "created_at", created_at,
                          "updated_at", updated_at, "trade_type", trade_type_text);

    if (o == NULL)
        return NULL;
    if (code_url != NULL)
        json_object_set_new(o, "code_url", json_string(code_url));
    if (prepay_id != NULL)
        json_object_set_new(o, "prepay_id", json_string(prepay_id));
    if (expires_at != NULL)
        json_object_set_new(o, "expires_at", json_string(expires_at));
    return pay_body_dump(o);
}
