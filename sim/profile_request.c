/* profile_request.c - builds one request of a target profile (profile.h):
 * the URL (path placeholders and query parameters percent-encoded), the
 * JSON body (fields in profile_value order, dotted names nested) and the
 * header lines. Everything lands in the caller's profile_request. */
#include "profile.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "caller_sign.h"
#include "env.h"

__attribute__((format(printf, 3, 4))) static int preq_fail(char *err, size_t len, const char *fmt,
                                                           ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends s percent-encoded (RFC 3986 unreserved characters kept) to out
 * at *used. 0, or -1 when it does not fit. */
static int preq_escape(char *out, size_t len, size_t *used, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t u = *used;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int plain = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= 'A' && *p <= 'Z') || strchr("-._~", *p) != NULL;
        if (u + (plain ? 1 : 3) >= len)
            return -1;
        if (plain) {
            out[u++] = (char)*p;
        } else {
            out[u++] = '%';
            out[u++] = hex[*p >> 4];
            out[u++] = hex[*p & 15];
        }
    }
    out[u] = '\0';
    *used = u;
    return 0;
}

static int preq_append(char *out, size_t len, size_t *used, const char *s)
{
    size_t n = strlen(s);
    if (*used + n >= len)
        return -1;
    memcpy(out + *used, s, n + 1);
    *used += n;
    return 0;
}

/* Value v as text (NULL when it is not sent). */
static const char *preq_text(const profile_values *v, int value, const profile_slot *s,
                             char buf[32])
{
    switch (value) {
    case PROF_VAL_ORDER_NO:
        return v->order_no;
    case PROF_VAL_USER_ID:
        if (v->user_id <= 0)
            return NULL;
        snprintf(buf, 32, "%" PRId64, v->user_id);
        return buf;
    case PROF_VAL_AMOUNT:
        if (v->amount == NULL)
            return NULL;
        if (s->as != PROF_AS_FEN)
            return v->amount;
        snprintf(buf, 32, "%" PRId64, v->amount_fen);
        return buf;
    case PROF_VAL_TOKEN:
        return v->token;
    case PROF_VAL_TRADE_TYPE:
        return v->trade_type;
    case PROF_VAL_AUTH_CODE:
        return v->auth_code;
    case PROF_VAL_OPENID:
        return v->openid;
    default:
        return v->idem_key;
    }
}

/* The path with its placeholders filled, then the query parameters. */
static int preq_url(const profile_endpoint *ep, const char *base, const profile_values *v,
                    profile_request *out)
{
    char buf[32];
    size_t used = 0;
    int first = 1;
    if (preq_append(out->url, sizeof(out->url), &used, base) < 0)
        return -1;
    for (const char *p = ep->path; *p;) {
        const char *lbrace = strchr(p, '{');
        size_t lit = lbrace ? (size_t)(lbrace - p) : strlen(p);
        if (used + lit >= sizeof(out->url))
            return -1;
        memcpy(out->url + used, p, lit);
        used += lit;
        out->url[used] = '\0';
        if (lbrace == NULL)
            break;
        const char *rbrace = strchr(lbrace, '}');
        size_t n = rbrace ? (size_t)(rbrace - lbrace - 1) : 0;
        int value = 0;
        while (value < PROF_VAL_COUNT && (strlen(profile_value_name(value)) != n ||
                                          strncmp(profile_value_name(value), lbrace + 1, n) != 0))
            value++;
        const char *t = value < PROF_VAL_COUNT ? preq_text(v, value, &ep->send[value], buf) : NULL;
        if (t == NULL || preq_escape(out->url, sizeof(out->url), &used, t) < 0)
            return -1;
        p = rbrace + 1;
    }
    for (int value = 0; value < PROF_VAL_COUNT; value++) {
        const char *t = preq_text(v, value, &ep->send[value], buf);
        if (ep->send[value].in != PROF_IN_QUERY || t == NULL)
            continue;
        if (preq_append(out->url, sizeof(out->url), &used, first ? "?" : "&") < 0 ||
            preq_escape(out->url, sizeof(out->url), &used, ep->send[value].name) < 0 ||
            preq_append(out->url, sizeof(out->url), &used, "=") < 0 ||
            preq_escape(out->url, sizeof(out->url), &used, t) < 0)
            return -1;
        first = 0;
    }
    return 0;
}

/* The JSON value of one body field. New reference or NULL. */
static json_t *preq_json(const profile_values *v, int value, const profile_slot *s)
{
    char buf[32];
    const char *t = preq_text(v, value, s, buf);
    if (t == NULL)
        return NULL;
    if (value == PROF_VAL_USER_ID && s->as != PROF_AS_STRING)
        return json_integer(v->user_id);
    if (value == PROF_VAL_AMOUNT && s->as == PROF_AS_FEN)
        return json_integer(v->amount_fen);
    if (value == PROF_VAL_AMOUNT && s->as == PROF_AS_NUMBER)
        return json_real((double)v->amount_fen / 100.0);
    return json_string(t);
}

/* Sets root.a.b.c = val (steals val), creating the objects on the way. */
static int preq_set(json_t *root, const char *path, json_t *val)
{
    char seg[PROFILE_FIELD_MAX];
    json_t *o = root;
    for (;;) {
        size_t n = strcspn(path, ".");
        memcpy(seg, path, n);
        seg[n] = '\0';
        if (path[n] == '\0')
            return json_object_set_new(o, seg, val);
        json_t *next = json_object_get(o, seg);
        if (next == NULL) {
            next = json_object();
            if (json_object_set_new(o, seg, next) < 0)
                next = NULL;
        }
        if (!json_is_object(next)) {
            json_decref(val);
            return -1;
        }
        o = next;
        path += n + 1;
    }
}

static int preq_body(const profile_endpoint *ep, const profile_values *v, profile_request *out)
{
    json_t *root = NULL;
    int rc = -1;
    for (int value = 0; value < PROF_VAL_COUNT; value++) {
        if (ep->send[value].in != PROF_IN_BODY)
            continue;
        if (root == NULL && (root = json_object()) == NULL)
            return -1;
        json_t *j = preq_json(v, value, &ep->send[value]);
        if (j != NULL && preq_set(root, ep->send[value].name, j) < 0)
            goto done;
    }
    rc = 0;
    if (root != NULL) {
        size_t n = json_dumpb(root, out->body, sizeof(out->body) - 1,
                              JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        rc = n > 0 && n < sizeof(out->body) ? 0 : -1;
        out->body_len = rc == 0 ? n : 0;
        out->body[out->body_len] = '\0';
        out->content_type = "application/json";
    }
done:
    json_decref(root);
    return rc;
}

static int preq_headers(const profile_endpoint *ep, const profile_values *v, profile_request *out)
{
    char buf[32];
    size_t n = 0;
    for (int value = 0; value < PROF_VAL_COUNT; value++) {
        const char *t = preq_text(v, value, &ep->send[value], buf);
        if (ep->send[value].in != PROF_IN_HEADER || t == NULL)
            continue;
        if (n == PROFILE_HEADERS_MAX || strpbrk(t, "\r\n") != NULL)
            return -1;
        int w = snprintf(out->hdr[n], sizeof(out->hdr[n]), "%s: %s", ep->send[value].name, t);
        if (w < 0 || (size_t)w >= sizeof(out->hdr[n]))
            return -1;
        out->headers[n] = out->hdr[n];
        n++;
    }
    out->headers[n] = NULL;
    return 0;
}

/* The caller every request is signed as; "" name: unsigned. Written once
 * before the threads start (profile_request_sign_as). */
static char sign_name[CALLER_NAME_MAX + 1];
static char sign_secret[CALLER_KEY_HEX_LEN + 1];

int profile_request_sign_as(const char *name, const char *secret_hex)
{
    unsigned char key[CALLER_KEY_LEN];

    if (!caller_sign_name_valid(name) || caller_sign_key_from_hex(secret_hex, key) != 0)
        return -1;
    snprintf(sign_name, sizeof(sign_name), "%s", name);
    snprintf(sign_secret, sizeof(sign_secret), "%s", secret_hex);
    return 0;
}

int profile_request_sign_from_env(void)
{
    const char *path = env_str("IDEMPAY_CALLER_SECRET_FILE", NULL);
    const char *name = env_str("IDEMPAY_CALLER", "dev");
    char line[128] = "";
    FILE *f = path != NULL && path[0] ? fopen(path, "r") : NULL;

    if (f == NULL)
        return 0;
    if (fgets(line, sizeof(line), f) == NULL)
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (profile_request_sign_as(name, line) != 0) {
        fprintf(stderr,
                "idempay-sim: IDEMPAY_CALLER=%s or the secret in %s is not a caller's"
                " (64 hex digits)\n",
                name, path);
        return -1;
    }
    return 1;
}

int profile_sign_lines(const char *method, const char *url, const char *body, size_t len,
                       char lines[4][CALLER_HEADER_LINE_MAX])
{
    char path[PROFILE_URL_MAX];
    const char *target, *q;

    if (sign_name[0] == '\0')
        return 0;
    target = strstr(url, "://");
    target = target != NULL ? strchr(target + 3, '/') : NULL;
    if (target == NULL)
        target = "/";
    q = strchr(target, '?');
    snprintf(path, sizeof(path), "%.*s", q ? (int)(q - target) : (int)strlen(target), target);
    if (caller_sign_headers(sign_name, sign_secret, (long long)time(NULL), method, path,
                            q ? q + 1 : "", body ? body : "", len, lines) != 0)
        return -1;
    return 4;
}

/* Appends the signature headers of out (its method, URL's path and query,
 * body) when a caller is set. 0, or -1 when they do not fit. */
static int preq_sign(profile_request *out)
{
    char lines[4][CALLER_HEADER_LINE_MAX];
    size_t n = 0;
    int got;

    while (out->headers[n] != NULL)
        n++;
    got = profile_sign_lines(out->method, out->url, out->body, out->body_len, lines);
    if (got == 0)
        return 0;
    if (got < 0 || n + 4 > PROFILE_HEADERS_MAX)
        return -1;
    for (int i = 0; i < 4; i++, n++) {
        snprintf(out->hdr[n], sizeof(out->hdr[n]), "%.*s", CALLER_HEADER_LINE_MAX - 1, lines[i]);
        out->headers[n] = out->hdr[n];
    }
    out->headers[n] = NULL;
    return 0;
}

int profile_request_build(const sim_profile *p, profile_op op, const char *base,
                          const profile_values *v, profile_request *out, char *err, size_t errlen)
{
    const profile_endpoint *ep = (unsigned)op < PROF_OP_COUNT ? &p->ep[op] : NULL;
    memset(out, 0, sizeof(*out));
    if (ep == NULL || !ep->present)
        return preq_fail(err, errlen, "the profile %s has no such operation", p->name);
    out->method = ep->method;
    if (preq_url(ep, base, v, out) < 0)
        return preq_fail(err, errlen, "%s %s: the URL does not fit (or a path value is missing)",
                         ep->method, ep->path);
    if (preq_body(ep, v, out) < 0)
        return preq_fail(err, errlen, "%s %s: the body does not fit", ep->method, ep->path);
    if (preq_headers(ep, v, out) < 0)
        return preq_fail(err, errlen, "%s %s: a header does not fit or has a line break",
                         ep->method, ep->path);
    if (preq_sign(out) < 0)
        return preq_fail(err, errlen, "%s %s: the caller signature could not be made", ep->method,
                         ep->path);
    return 0;
}
