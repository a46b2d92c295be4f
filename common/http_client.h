/* http_client - one reusable libcurl easy handle with a bounded reply buffer.
 *
 * One client per thread (never shared). Connections are kept alive between
 * calls; CURLOPT_NOSIGNAL is set. curl_global_init must have been called once
 * before any thread starts (http_client_global_init). */
#ifndef IDEMPAY_HTTP_CLIENT_H
#define IDEMPAY_HTTP_CLIENT_H

#include <stddef.h>

#define HTTP_CLIENT_MAX_REPLY (1024 * 1024) /* default: larger replies are an error */
#define HTTP_CLIENT_MAX_HEADERS 8

typedef enum {
    HTTP_OK = 0,        /* a complete HTTP response was received (any status) */
    HTTP_ERR_TIMEOUT,   /* no complete answer in time: the outcome is unknown */
    HTTP_ERR_CONNECT,   /* could not connect: the request was not sent */
    HTTP_ERR_RESET,     /* connection closed/reset mid-way: outcome unknown */
    HTTP_ERR_TOO_LARGE, /* reply over the client's limit (HTTP_CLIENT_MAX_REPLY) */
    HTTP_ERR_OTHER
} http_status;

typedef struct {
    long code;  /* HTTP status code, 0 when none */
    char *body; /* NUL-terminated; owned by the client, valid until the next call */
    size_t body_len;
    char retry_after[16]; /* Retry-After header value, "" when absent */
    char replayed[8];     /* Idempotent-Replayed header value, "" when absent */
    char content_type[64];
    char error[256]; /* curl's message when status != HTTP_OK */
    /* APIv3's platform signature headers (common/wx3_sign.h), "" when absent;
     * a value too long for its field is kept cut (and then fails to verify). */
    char wx_serial[72];     /* Wechatpay-Serial */
    char wx_signature[700]; /* Wechatpay-Signature (base64) */
    char wx_timestamp[24];  /* Wechatpay-Timestamp */
    char wx_nonce[72];      /* Wechatpay-Nonce */
} http_reply;

typedef struct http_client http_client;

/* Call once at program start, before threads. Returns 0 or -1. */
int http_client_global_init(void);

/* A new client with default connect/total timeouts in ms. NULL on OOM. */
http_client *http_client_new(long connect_timeout_ms, long timeout_ms);
/* NULL is accepted. */
void http_client_free(http_client *c);
/* Raises (or lowers) the reply limit of c from HTTP_CLIENT_MAX_REPLY to
 * max_reply bytes, for a caller that expects large replies. 0 or -1. */
int http_client_set_max_reply(http_client *c, size_t max_reply);

/* TLS settings of c for every later https request: the client certificate
 * cert and its key key (PEM file paths, for servers that demand one, e.g.
 * WeChat's /secapi/...) and the CA bundle cainfo (PEM) the server's
 * certificate is checked against. NULL or "" leaves a setting at curl's
 * default (no client certificate; the system's CAs). Paths are handed to
 * libcurl, which reads the files at the next TLS handshake; nothing is
 * copied or logged. Returns 0, or -1 when libcurl refuses an option. */
int http_client_set_tls(http_client *c, const char *cert, const char *key, const char *cainfo);

/* Performs one request. method "GET"/"POST"/"PUT"/...; body may be NULL;
 * content_type may be NULL; headers is NULL or a NULL-terminated list of
 * "Name: value" lines; timeout_ms <= 0 uses the client's default.
 * Fills *out (always) and returns its status. */
http_status http_client_request(http_client *c, const char *method, const char *url,
                                const char *content_type, const char *body, size_t body_len,
                                const char *const *headers, long timeout_ms, http_reply *out);

/* Human name of a status ("timeout", "reset", ...). */
const char *http_status_name(http_status s);

#endif
