/* http_msg - request/response structs shared by every FastCGI program, with
 * JSON error bodies and strict JSON parsing. No libfcgi here. */
#include "http_msg.h"

#include <stdlib.h>
#include <string.h>

void http_response_init(http_response *r)
{
    memset(r, 0, sizeof(*r));
    r->status = 200;
    snprintf(r->content_type, sizeof(r->content_type), "application/json");
}

void http_response_free(http_response *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
}

int http_response_header(http_response *r, const char *name, const char *value)
{
    size_t used = strlen(r->headers);
    int n = snprintf(r->headers + used, sizeof(r->headers) - used, "%s: %s\r\n", name, value);

    if (n < 0 || (size_t)n >= sizeof(r->headers) - used) {
        r->headers[used] = '\0';
        return -1;
    }
    return 0;
}

int http_response_set(http_response *r, int status, const char *content_type, const char *body,
                      size_t len)
{
    char *copy = malloc(len + 1);

    if (!copy)
        return -1;
    memcpy(copy, body, len);
    copy[len] = '\0';
    free(r->body);
    r->body = copy;
    r->body_len = len;
    r->status = status;
    snprintf(r->content_type, sizeof(r->content_type), "%s", content_type);
    return 0;
}

int http_response_json(http_response *r, int status, json_t *obj)
{
    char *text;

    if (!obj)
        return -1;
    text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!text)
        return -1;
    free(r->body);
    r->body = text;
    r->body_len = strlen(text);
    r->status = status;
    snprintf(r->content_type, sizeof(r->content_type), "application/json");
    return 0;
}

int http_response_error(http_response *r, int status, const char *code, const char *message)
{
    json_t *o = json_pack("{s:s, s:s}", "error", code, "message", message);

    if (http_response_json(r, status, o) == 0)
        return 0;
    /* Out of memory while building JSON: a fixed body still says what happened. */
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
    r->status = status;
    return -1;
}

int http_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* URL-decodes src[0..len) into out ('+' is a space in a query, itself in
 * a path). Returns 0, or -2 when it does not fit, an escape is malformed
 * or it decodes to NUL. */
static int url_decode(const char *src, size_t len, int plus_is_space, char *out, size_t outlen)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)src[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= len)
                return -2;
            hi = http_hex_digit((unsigned char)src[i + 1]);
            lo = http_hex_digit((unsigned char)src[i + 2]);
            if (hi < 0 || lo < 0)
                return -2;
            c = hi * 16 + lo;
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (c == 0 || o + 1 >= outlen)
            return -2;
        out[o++] = (char)c;
    }
    if (outlen == 0)
        return -2;
    out[o] = '\0';
    return 0;
}

int http_path_decode(const char *segment, char *out, size_t outlen)
{
    return url_decode(segment, strlen(segment), 0, out, outlen) == 0 ? 0 : -1;
}

int http_query_param(const char *query, const char *name, char *out, size_t outlen)
{
    size_t nlen = strlen(name);
    const char *p = query;
    int found = 0;

    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t plen = amp ? (size_t)(amp - p) : strlen(p);
        if (plen > nlen && p[nlen] == '=' && !memcmp(p, name, nlen)) {
            if (found)
                return -2;
            if (url_decode(p + nlen + 1, plen - nlen - 1, 1, out, outlen) != 0)
                return -2;
            found = 1;
        } else if (plen == nlen && !memcmp(p, name, nlen)) {
            if (found)
                return -2;
            if (outlen == 0)
                return -2;
            out[0] = '\0';
            found = 1;
        }
        p = amp ? amp + 1 : NULL;
    }
    return found ? 0 : -1;
}

json_t *http_json_parse_object(const char *body, size_t len)
{
    json_error_t err;
    json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err);

    if (v && !json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

http_cl_result http_content_length_parse(const char *value, size_t max, size_t *len)
{
    unsigned long long n = 0;
    size_t digits = 0;

    if (value == NULL || value[0] == '\0') {
        *len = 0;
        return HTTP_CL_OK;
    }
    for (const char *c = value; *c; c++) {
        if (*c < '0' || *c > '9' || ++digits > 19)
            return HTTP_CL_INVALID;
        n = n * 10 + (unsigned long long)(*c - '0'); /* 19 digits fit in 64 bits */
    }
    if (n > (unsigned long long)max)
        return HTTP_CL_TOO_LARGE;
    *len = (size_t)n;
    return HTTP_CL_OK;
}
