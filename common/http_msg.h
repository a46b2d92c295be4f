/* http_msg - protocol-agnostic HTTP request and response, as the FastCGI
 * adapter hands them to a program's handler and takes them back.
 * Handlers know nothing of FastCGI; unit tests fill an http_request by hand. */
#ifndef IDEMPAY_HTTP_MSG_H
#define IDEMPAY_HTTP_MSG_H

#include <stddef.h>
#include <jansson.h>

#define HTTP_MAX_BODY 65536 /* request bodies over this are 413 */
/* Bytes of extra response header lines (APIv3's four signed headers take ~520). */
#define HTTP_MAX_EXTRA_HEADERS 1024

typedef struct {
    const char *method;          /* "GET", "POST", ... never NULL */
    const char *path;            /* without the query string, never NULL */
    const char *query;           /* "" when none, never NULL */
    const char *content_type;    /* "" when none */
    const char *idempotency_key; /* NULL when the header is absent */
    const char *remote_addr;     /* "" when unknown */
    const char *body;            /* NUL-terminated, never NULL */
    size_t body_len;
    int body_too_large; /* 1 when the body exceeded HTTP_MAX_BODY (body is then empty) */
    /* The merchant door's signature headers (common/caller_sign.h); NULL
     * when absent. */
    const char *auth_caller;    /* X-Idempay-Caller */
    const char *auth_timestamp; /* X-Idempay-Timestamp */
    const char *auth_nonce;     /* X-Idempay-Nonce */
    const char *auth_signature; /* X-Idempay-Signature */
    long long caller_id;        /* the authenticated caller (payment_caller.id), set by the
                                 * router; 0 for none (unit tests calling handlers) */
    /* APIv3 notifications' platform signature headers (Wechatpay-Serial,
     * -Signature, -Timestamp, -Nonce); NULL when absent. */
    const char *wx_serial;
    const char *wx_signature;
    const char *wx_timestamp;
    const char *wx_nonce;
} http_request;

typedef struct {
    int status;
    char content_type[64];
    char headers[HTTP_MAX_EXTRA_HEADERS]; /* "Name: value\r\n" lines */
    char *body;                           /* malloc'd, owned by the response */
    size_t body_len;
    char log_order[40]; /* order_no for the access log, "" when none */
} http_response;

/* What a CONTENT_LENGTH parameter says. */
typedef enum {
    HTTP_CL_OK = 0,    /* *len holds it (0 for an empty or absent value) */
    HTTP_CL_TOO_LARGE, /* digits only, but over max: 413, nothing read */
    HTTP_CL_INVALID    /* a sign, a space, a letter, or more than 19 digits: 400 */
} http_cl_result;

/* The value of one hex digit (either case), or -1 when c is not one. */
int http_hex_digit(int c);

/* Parses a CONTENT_LENGTH value: only ASCII digits (no sign, no spaces,
 * at most 19 of them), or NULL / "" for no body. *len is set on HTTP_CL_OK
 * only. Pure: the FastCGI edge and its fuzzer call it. */
http_cl_result http_content_length_parse(const char *value, size_t max, size_t *len);

void http_response_init(http_response *r);
/* Frees the body; r can be reused after http_response_init. NULL accepted. */
void http_response_free(http_response *r);
/* Adds "Name: value". Returns 0, or -1 when the header space is full. */
int http_response_header(http_response *r, const char *name, const char *value);
/* Sets status, Content-Type and a copy of body. Returns 0 or -1 (OOM). */
int http_response_set(http_response *r, int status, const char *content_type, const char *body,
                      size_t len);
/* Sets status and the compact JSON of obj (application/json). Steals the
 * reference to obj. Returns 0 or -1. */
int http_response_json(http_response *r, int status, json_t *obj);
/* {"error": code, "message": message} with status. Returns 0 or -1. */
int http_response_error(http_response *r, int status, const char *code, const char *message);

/* Percent-decodes a path segment (segment is NUL-terminated, '+' stays '+')
 * into out. Returns 0, or -1 when it does not fit, an escape is malformed
 * or it decodes to a NUL byte. */
int http_path_decode(const char *segment, char *out, size_t outlen);

/* The value of query parameter name, URL-decoded into out. Returns 0, -1
 * when absent, -2 when it does not fit or is repeated. */
int http_query_param(const char *query, const char *name, char *out, size_t outlen);

/* Parses a JSON request body strictly: an object, no duplicate keys
 * (JSON_REJECT_DUPLICATES). Returns a new reference or NULL. */
json_t *http_json_parse_object(const char *body, size_t len);

#endif
