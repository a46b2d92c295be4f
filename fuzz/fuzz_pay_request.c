/* fuzz_pay_request.c - libFuzzer harness for the POST /api/pay parser
 * (app/pay_request.c): method, size, Content-Type, the JSON body and the
 * Idempotency-Key header -> a parsed request or a refusal with the contract's
 * status and error code; plus the response bodies built from what was parsed.
 *
 * Input layout: byte 0 selects the request shape (bit 0: an Idempotency-Key
 * header is present; bits 1-2: Content-Type; bit 3: method PUT instead of
 * POST; bit 4: the adapter flagged the body as too large). When the header
 * is present, its raw value runs up to the first '\n' (or NUL); the rest is
 * the body. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "http_msg.h"
#include "money.h"
#include "order_no.h"
#include "pay_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const content_types[4] = { "application/json", "Application/JSON; charset=utf-8",
                                              "text/plain", "" };

/* A decoded Idempotency-Key: 1..PAY_IDEM_KEY_MAX characters of 0x20-0x7E. */
static void check_idem_key(const char *key)
{
    size_t n = strlen(key);
    FUZZ_CHECK(n >= 1 && n <= PAY_IDEM_KEY_MAX);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK((unsigned char)key[i] >= 0x20 && (unsigned char)key[i] <= 0x7E);
}

/* s is a JSON object whose member name is the string want. */
static void check_json_string_member(const char *json, const char *name, const char *want)
{
    json_error_t e;
    json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, &e);
    FUZZ_CHECK(json_is_object(o));
    FUZZ_CHECK(strcmp(json_string_value(json_object_get(o, name)), want) == 0);
    json_decref(o);
}

/* What an accepted request promises, and that the canonical JSON of the
 * parsed request parses back to the same request. */
static void check_accepted(const pay_request *r)
{
    char amount[MONEY_STR_MAX], msg[PAY_MESSAGE_MAX];
    int64_t fen;

    FUZZ_CHECK(order_no_valid(r->order_no));
    FUZZ_CHECK(r->user_id >= 1);
    FUZZ_CHECK(r->amount_fen >= MONEY_MIN_FEN && r->amount_fen <= MONEY_MAX_FEN);
    FUZZ_CHECK(money_parse_yuan(money_format(r->amount_fen, amount), &fen) == 0);
    FUZZ_CHECK(fen == r->amount_fen);
    if (r->has_token)
        FUZZ_CHECK(strlen(r->token) >= 1 && strlen(r->token) <= PAY_TOKEN_MAX);
    else
        FUZZ_CHECK(r->token[0] == '\0');
    if (r->has_idem_key)
        check_idem_key(r->idem_key);

    json_t *o = json_pack("{s:s, s:I, s:s}", "order_no", r->order_no, "user_id",
                          (json_int_t)r->user_id, "amount", amount);
    FUZZ_CHECK(o != NULL);
    if (r->has_token)
        FUZZ_CHECK(json_object_set_new(o, "token", json_string(r->token)) == 0);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    FUZZ_CHECK(text != NULL);
    pay_request back;
    memset(&back, 0, sizeof(back));
    FUZZ_CHECK(pay_request_parse_body(text, strlen(text), &back, msg, sizeof(msg)) == 0);
    FUZZ_CHECK(strcmp(back.order_no, r->order_no) == 0 && back.user_id == r->user_id &&
               back.amount_fen == r->amount_fen && back.has_token == r->has_token &&
               strcmp(back.token, r->token) == 0);
    free(text);

    /* Answers built from the request are valid JSON carrying the values
     * (the token stands in for arbitrary UTF-8 text). */
    const char *other = r->has_token ? r->token : r->order_no;
    char *body = pay_body_paid(r->order_no, other, r->amount_fen);
    FUZZ_CHECK(body != NULL);
    check_json_string_member(body, "amount", amount);
    check_json_string_member(body, "transaction_id", other);
    free(body);
    body = pay_body_failed(r->order_no, "payment_declined", other);
    FUZZ_CHECK(body != NULL);
    check_json_string_member(body, "message", other);
    for (const char *p = body; *p; p++)
        FUZZ_CHECK((unsigned char)*p < 0x80); /* non-ASCII is escaped */
    free(body);
    body = pay_body_order(r->order_no, r->user_id, r->amount_fen, "PAID", other,
                          "2026-01-01 00:00:00", "2026-01-01 00:00:01");
    FUZZ_CHECK(body != NULL);
    check_json_string_member(body, "order_no", r->order_no);
    free(body);
}

/* The status and error code st promises, and the error body built from it. */
static void check_status(pay_req_status st, const pay_request *out, const char *key,
                         const char *msg)
{
    int status = pay_req_status_http(st);
    const char *code = pay_req_status_code(st);
    FUZZ_CHECK(code != NULL);
    switch (st) {
    case PAY_REQ_OK:
        check_accepted(out);
        FUZZ_CHECK(out->has_idem_key == (key != NULL));
        break;
    case PAY_REQ_METHOD:
        FUZZ_CHECK(status == 405 && strcmp(code, "method_not_allowed") == 0);
        break;
    case PAY_REQ_TOO_LARGE:
        FUZZ_CHECK(status == 413 && strcmp(code, "payload_too_large") == 0);
        break;
    case PAY_REQ_MEDIA_TYPE:
        FUZZ_CHECK(status == 415 && strcmp(code, "unsupported_media_type") == 0);
        break;
    case PAY_REQ_INVALID:
        FUZZ_CHECK(status == 400 && strcmp(code, "invalid_request") == 0);
        break;
    default:
        FUZZ_CHECK(!"unknown pay_req_status");
    }
    if (st != PAY_REQ_OK) {
        FUZZ_CHECK(fuzz_terminated(msg, PAY_MESSAGE_MAX) && msg[0] != '\0');
        char *err = pay_body_error(code, msg);
        FUZZ_CHECK(err != NULL);
        check_json_string_member(err, "error", code);
        free(err);
    }
}

/* The body parser alone agrees with the whole-request parser. */
static void check_body_alone(const char *body, size_t len, pay_req_status st,
                             const pay_request *out)
{
    pay_request alone;
    char msg[PAY_MESSAGE_MAX];
    memset(&alone, 0, sizeof(alone));
    memset(msg, 'z', sizeof(msg));
    int rc = pay_request_parse_body(body, len, &alone, msg, sizeof(msg));
    if (rc != 0)
        FUZZ_CHECK(st == PAY_REQ_INVALID && fuzz_terminated(msg, sizeof(msg)) && msg[0]);
    else if (st == PAY_REQ_OK)
        FUZZ_CHECK(strcmp(alone.order_no, out->order_no) == 0 && alone.user_id == out->user_id &&
                   alone.amount_fen == out->amount_fen);
}

/* The header parser alone: accepted keys are visible ASCII (quoted form
 * decoded); an unquoted key is the trimmed header value itself. */
static void check_key_alone(const char *key)
{
    char idem[PAY_IDEM_KEY_MAX + 1];
    if (pay_request_parse_idem_key(key, idem, sizeof(idem)) != 0) {
        FUZZ_CHECK(idem[0] == '\0');
        return;
    }
    check_idem_key(idem);
    const char *k = key;
    while (*k == ' ' || *k == '\t')
        k++;
    if (*k != '"') {
        size_t kl = strlen(k);
        while (kl > 0 && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
            kl--;
        FUZZ_CHECK(strlen(idem) == kl && memcmp(idem, k, kl) == 0);
    }
}

/* Splits the input after byte 0: the header value (when bit 0 asks for
 * one) up to the first '\n' or NUL, into *key; the rest stays in rest. */
static char *take_key(uint8_t shape, const uint8_t **rest, size_t *rest_len)
{
    if (!(shape & 1))
        return NULL;
    size_t kl = 0;
    while (kl < *rest_len && (*rest)[kl] != '\n' && (*rest)[kl] != '\0')
        kl++;
    char *key = fuzz_text(*rest, kl);
    size_t skip = kl < *rest_len ? kl + 1 : kl;
    *rest += skip;
    *rest_len -= skip;
    return key;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t shape = data[0];
    const uint8_t *rest = data + 1;
    size_t rest_len = size - 1;
    char *key = take_key(shape, &rest, &rest_len);
    int too_large = (shape >> 4) & 1;
    char *body = fuzz_text(rest, too_large ? 0 : rest_len);

    http_request req = {
        .method = (shape & 8) ? "PUT" : "POST",
        .path = "/api/pay",
        .query = "",
        .content_type = content_types[(shape >> 1) & 3],
        .idempotency_key = key,
        .remote_addr = "127.0.0.1",
        .body = body,
        .body_len = too_large ? 0 : rest_len,
        .body_too_large = too_large,
    };
    pay_request out;
    char msg[PAY_MESSAGE_MAX];
    memset(msg, 'z', sizeof(msg));
    pay_req_status st = pay_request_parse(&req, &out, msg, sizeof(msg));
    check_status(st, &out, key, msg);
    /* The checks run in pay_request.h's order: method, size, type, body. */
    if (shape & 8)
        FUZZ_CHECK(st == PAY_REQ_METHOD);
    else if (too_large)
        FUZZ_CHECK(st == PAY_REQ_TOO_LARGE);
    else if (((shape >> 1) & 3) >= 2)
        FUZZ_CHECK(st == PAY_REQ_MEDIA_TYPE);
    if (!(shape & 8) && !too_large && ((shape >> 1) & 3) < 2)
        check_body_alone(body, rest_len, st, &out);
    if (key != NULL)
        check_key_alone(key);
    free(key);
    free(body);
    return 0;
}
