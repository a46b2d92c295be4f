/* http_client.c - one reusable libcurl easy handle per thread: keep-alive
 * connections, per-request options set explicitly on every call (never
 * curl_easy_reset), a reply buffer bounded by HTTP_CLIENT_MAX_REPLY, and
 * curl's errors mapped onto what they mean for a payment (sent or not).
 *
 * A request body is sent through a read callback that cannot rewind: when a
 * kept-alive connection dies after the body went out, libcurl would silently
 * resend the request on a new connection; without a rewind it reports the
 * failure instead (HTTP_ERR_RESET), and the caller decides about retrying. */
#include "http_client.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text_copy.h"

#define HTTP_CLIENT_INITIAL_BUF 4096

struct http_client {
    CURL *easy;
    long connect_timeout_ms;
    long timeout_ms;
    char *buf; /* reply body, always NUL-terminated */
    size_t len;
    size_t cap;       /* allocated bytes, at most max_reply + 1 */
    size_t max_reply; /* longer replies are HTTP_ERR_TOO_LARGE */
    bool too_large;
    http_reply *reply;  /* the reply being filled by the header callback */
    const char *upload; /* request body being sent, and how much went out */
    size_t upload_len;
    size_t upload_off;
    char errbuf[CURL_ERROR_SIZE];
};

int http_client_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static size_t http_client_write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    http_client *c = userp;
    size_t n = size * nmemb;

    if (n > c->max_reply - c->len) {
        c->too_large = true;
        return 0; /* makes curl abort the transfer */
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap;
        while (cap < c->len + n + 1)
            cap *= 2;
        if (cap > c->max_reply + 1)
            cap = c->max_reply + 1;
        char *grown = realloc(c->buf, cap);
        if (grown == NULL)
            return 0;
        c->buf = grown;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    c->buf[c->len] = '\0';
    return n;
}

static size_t http_client_read_cb(char *dest, size_t size, size_t nmemb, void *userp)
{
    http_client *c = userp;
    size_t room = size * nmemb;
    size_t left = c->upload_len - c->upload_off;
    size_t n = left < room ? left : room;

    if (n > 0)
        memcpy(dest, c->upload + c->upload_off, n);
    c->upload_off += n;
    return n;
}

/* Refuses every rewind, so libcurl never sends a body a second time. */
static int http_client_seek_cb(void *userp, curl_off_t offset, int origin)
{
    (void)userp;
    (void)offset;
    (void)origin;
    return CURL_SEEKFUNC_FAIL;
}

/* Copies a header value (surrounding blanks and CRLF removed) into dst. */
static void http_client_copy_value(char *dst, size_t dstlen, const char *v, size_t vlen)
{
    while (vlen > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' ' ||
                        v[vlen - 1] == '\t'))
        vlen--;
    (void)text_copy_n(dst, dstlen, v, vlen);
}

static bool http_client_header_is(const char *line, size_t len, const char *name, size_t *vstart)
{
    size_t nl = strlen(name);
    if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
        return false;
    *vstart = nl + 1;
    return true;
}

/* Copies one of APIv3's Wechatpay-* signature headers; false when line is
 * none of them. */
static bool http_client_wx_header(http_reply *r, const char *line, size_t n)
{
    size_t v;

    if (http_client_header_is(line, n, "Wechatpay-Serial", &v))
        http_client_copy_value(r->wx_serial, sizeof(r->wx_serial), line + v, n - v);
    else if (http_client_header_is(line, n, "Wechatpay-Signature", &v))
        http_client_copy_value(r->wx_signature, sizeof(r->wx_signature), line + v, n - v);
    else if (http_client_header_is(line, n, "Wechatpay-Timestamp", &v))
        http_client_copy_value(r->wx_timestamp, sizeof(r->wx_timestamp), line + v, n - v);
    else if (http_client_header_is(line, n, "Wechatpay-Nonce", &v))
        http_client_copy_value(r->wx_nonce, sizeof(r->wx_nonce), line + v, n - v);
    else
        return false;
    return true;
}

static size_t http_client_header_cb(char *line, size_t size, size_t nmemb, void *userp)
{
    http_client *c = userp;
    http_reply *r = c->reply;
    size_t n = size * nmemb;
    size_t v;

    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new response (after 1xx): forget the previous one's headers. */
        r->retry_after[0] = '\0';
        r->replayed[0] = '\0';
        r->content_type[0] = '\0';
        r->wx_serial[0] = r->wx_signature[0] = r->wx_timestamp[0] = r->wx_nonce[0] = '\0';
    } else if (http_client_wx_header(r, line, n)) {
        /* an APIv3 signature header: copied */
    } else if (http_client_header_is(line, n, "Retry-After", &v)) {
        http_client_copy_value(r->retry_after, sizeof(r->retry_after), line + v, n - v);
    } else if (http_client_header_is(line, n, "Idempotent-Replayed", &v)) {
        http_client_copy_value(r->replayed, sizeof(r->replayed), line + v, n - v);
    } else if (http_client_header_is(line, n, "Content-Type", &v)) {
        http_client_copy_value(r->content_type, sizeof(r->content_type), line + v, n - v);
    }
    return n;
}

http_client *http_client_new(long connect_timeout_ms, long timeout_ms)
{
    http_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->connect_timeout_ms = connect_timeout_ms > 0 ? connect_timeout_ms : 1000;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
    c->max_reply = HTTP_CLIENT_MAX_REPLY;
    c->cap = HTTP_CLIENT_INITIAL_BUF;
    c->buf = malloc(c->cap);
    c->easy = curl_easy_init();
    if (c->buf == NULL || c->easy == NULL)
        goto fail;
    c->buf[0] = '\0';

    /* Options that hold for every request of this client. */
    CURL *e = c->easy;
    if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_reply) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_client_write_cb) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEDATA, c) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_client_header_cb) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERDATA, c) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_READFUNCTION, http_client_read_cb) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_READDATA, c) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, http_client_seek_cb) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_SEEKDATA, c) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK)
        goto fail;
    return c;

fail:
    http_client_free(c);
    return NULL;
}

int http_client_set_max_reply(http_client *c, size_t max_reply)
{
    if (max_reply == 0 || max_reply >= SIZE_MAX / 2 ||
        curl_easy_setopt(c->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_reply) != CURLE_OK)
        return -1;
    c->max_reply = max_reply;
    return 0;
}

int http_client_set_tls(http_client *c, const char *cert, const char *key, const char *cainfo)
{
    CURL *e = c->easy;
    CURLcode rc = CURLE_OK;

    if (cert != NULL && cert[0] != '\0') {
        rc = curl_easy_setopt(e, CURLOPT_SSLCERT, cert);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (rc == CURLE_OK && key != NULL && key[0] != '\0') {
        rc = curl_easy_setopt(e, CURLOPT_SSLKEY, key);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (rc == CURLE_OK && cainfo != NULL && cainfo[0] != '\0')
        rc = curl_easy_setopt(e, CURLOPT_CAINFO, cainfo);
    return rc == CURLE_OK ? 0 : -1;
}

void http_client_free(http_client *c)
{
    if (c == NULL)
        return;
    if (c->easy != NULL)
        curl_easy_cleanup(c->easy);
    free(c->buf);
    free(c);
}

static http_status http_client_map(CURLcode rc, bool too_large)
{
    switch (rc) {
    case CURLE_OK:
        return HTTP_OK;
    case CURLE_OPERATION_TIMEDOUT:
        return HTTP_ERR_TIMEOUT;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return HTTP_ERR_CONNECT;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SEND_FAIL_REWIND: /* the connection died after the body was sent */
        return HTTP_ERR_RESET;
    case CURLE_FILESIZE_EXCEEDED:
        return HTTP_ERR_TOO_LARGE;
    case CURLE_WRITE_ERROR:
        return too_large ? HTTP_ERR_TOO_LARGE : HTTP_ERR_OTHER;
    default:
        return HTTP_ERR_OTHER;
    }
}

/* Sets the method and body options; every call sets all of them, so nothing
 * leaks from the previous request. The body is read through
 * http_client_read_cb with an explicit Content-Length. */
static CURLcode http_client_set_method(http_client *c, const char *method, const char *body,
                                       size_t body_len)
{
    CURL *e = c->easy;
    bool has_body = body != NULL || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
                    strcmp(method, "PATCH") == 0;
    bool head = strcmp(method, "HEAD") == 0;
    CURLcode rc;

    c->upload = body != NULL ? body : "";
    c->upload_len = body != NULL ? body_len : 0;
    c->upload_off = 0;
    if (has_body && !head) {
        rc = curl_easy_setopt(e, CURLOPT_POST, 1L);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(e, CURLOPT_POSTFIELDS, NULL); /* use the read callback */
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->upload_len);
    } else {
        rc = curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(e, CURLOPT_NOBODY, head ? 1L : 0L);
    if (rc == CURLE_OK) {
        bool plain = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
                     (has_body && strcmp(method, "POST") == 0);
        rc = curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, plain ? NULL : method);
    }
    return rc;
}

/* The request's header list: "Expect:" (never wait for 100-continue), the
 * Content-Type when given, then headers (NULL-terminated, may be NULL).
 * NULL when out of memory (nothing to free then); else the caller frees
 * it with curl_slist_free_all. */
static struct curl_slist *http_client_header_list(const char *content_type,
                                                  const char *const *headers)
{
    struct curl_slist *list = curl_slist_append(NULL, "Expect:"), *grown;
    char line[256];

    if (list != NULL && content_type != NULL) {
        snprintf(line, sizeof(line), "Content-Type: %s", content_type);
        grown = curl_slist_append(list, line);
        if (grown == NULL) {
            curl_slist_free_all(list);
            list = NULL;
        }
    }
    for (size_t i = 0; list != NULL && headers != NULL && headers[i] != NULL; i++) {
        grown = curl_slist_append(list, headers[i]);
        if (grown == NULL) {
            curl_slist_free_all(list);
            list = NULL;
        }
    }
    return list;
}

http_status http_client_request(http_client *c, const char *method, const char *url,
                                const char *content_type, const char *body, size_t body_len,
                                const char *const *headers, long timeout_ms, http_reply *out)
{
    struct curl_slist *list = NULL;
    http_status status = HTTP_ERR_OTHER;
    CURLcode rc;

    memset(out, 0, sizeof(*out));
    if (c == NULL) {
        out->body = (char *)"";
        snprintf(out->error, sizeof(out->error), "no client");
        return HTTP_ERR_OTHER;
    }
    c->len = 0;
    c->buf[0] = '\0';
    c->too_large = false;
    c->errbuf[0] = '\0';
    c->reply = out;
    out->body = c->buf;
    if (method == NULL || url == NULL) {
        snprintf(out->error, sizeof(out->error), "no method or URL");
        goto done;
    }

    list = http_client_header_list(content_type, headers);
    if (list == NULL) {
        snprintf(out->error, sizeof(out->error), "out of memory");
        goto done;
    }

    rc = curl_easy_setopt(c->easy, CURLOPT_URL, url);
    if (rc == CURLE_OK)
        rc = http_client_set_method(c, method, body, body_len);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, list);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS,
                              timeout_ms > 0 ? timeout_ms : c->timeout_ms);
    if (rc == CURLE_OK)
        rc = curl_easy_perform(c->easy);

    status = http_client_map(rc, c->too_large);
    if (status == HTTP_OK) {
        if (curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &out->code) != CURLE_OK)
            out->code = 0;
        out->body_len = c->len;
    } else {
        if (status == HTTP_ERR_TOO_LARGE)
            snprintf(out->error, sizeof(out->error), "reply larger than %zu bytes", c->max_reply);
        else
            snprintf(out->error, sizeof(out->error), "%s",
                     c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
        c->len = 0;
        c->buf[0] = '\0';
    }

done:
    out->body = c->buf; /* after the transfer: the buffer may have moved */
    /* Nothing may keep pointers to the caller's data or our list. */
    curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(list);
    c->reply = NULL;
    c->upload = NULL;
    c->upload_len = c->upload_off = 0;
    return status;
}

const char *http_status_name(http_status s)
{
    switch (s) {
    case HTTP_OK:
        return "ok";
    case HTTP_ERR_TIMEOUT:
        return "timeout";
    case HTTP_ERR_CONNECT:
        return "connect";
    case HTTP_ERR_RESET:
        return "reset";
    case HTTP_ERR_TOO_LARGE:
        return "too_large";
    case HTTP_ERR_OTHER:
        return "other";
    }
    return "unknown";
}
