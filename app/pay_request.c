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

int pay_request_parse_body(const char *body, size_t len, pay_request *out, char *msg,
                           size_t msglen)
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

    return pay_body_dump(json_pack("{s:s, s:s, s:s, s:s}", "order_no", order_no, "status",
                                   "PAID", "transaction_id", transaction_id, "amount",
                                   money_format(fen, amount)));
}

char *pay_body_processing(const char *order_no)
{
    return pay_body_dump(json_pack("{s:s, s:s}", "order_no", order_no, "status", "PROCESSING"));
}

char *pay_body_failed(const char *order_no, const char *code, const char *message)
{
    return pay_body_dump(json_pack("{s:s, s:s, s:s, s:s}", "order_no", order_no, "status",
                                   "FAILED", "error", code, "message", message));
}

char *pay_body_error(const char *code, const char *message)
{
    return pay_body_dump(json_pack("{s:s, s:s}", "error", code, "message", message));
}

char *pay_body_order(const char *order_no, long long user_id, int64_t fen, const char *status,
                     const char *transaction_id, const char *created_at,
                     const char *updated_at)
{
    char amount[MONEY_STR_MAX];
    json_t *txid = (transaction_id != NULL && transaction_id[0] != '\0')
                       ? json_string(transaction_id)
                       : json_null();

    return pay_body_dump(json_pack("{s:s, s:I, s:s, s:s, s:o, s:s, s:s}", "order_no", order_no,
                                   "user_id", (json_int_t)user_id, "amount",
                                   money_format(fen, amount), "status", status,
                                   "transaction_id", txid, "created_at", created_at,
                                   "updated_at", updated_at));
}
