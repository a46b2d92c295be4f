/* test_fcgi_adapter.c - CUnit suite for fcgi_adapter through real FastCGI
 * round trips: the adapter serves on a unix socket in a temporary
 * directory (2 worker threads) and the test speaks FastCGI to it as
 * lighttpd would. Covers what reaches the handler (method, path without
 * the query, query, content type, Idempotency-Key present or absent,
 * remote address, body, the body limit, an over-long path, the defaults of
 * missing parameters, the connection's fd) and what goes back (Status,
 * Content-Type, Content-Length, extra headers, the body, an empty body). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fcgi_adapter.h"

#define FCGI_BEGIN_REQUEST 1
#define FCGI_END_REQUEST 3
#define FCGI_PARAMS 4
#define FCGI_STDIN 5
#define FCGI_STDOUT 6

static char sock_dir[48];
static char sock_path[96];

/* ---- the handler: echoes what it was given as text ------------------------ */

static void *thread_init(int index)
{
    (void)index;
    return (void *)0x1d;
}

static void handle(void *tctx, const http_request *req, http_response *resp)
{
    char text[HTTP_MAX_BODY + 512];
    int n = snprintf(text, sizeof(text),
                     "tctx=%s method=%s path=%s query=%s ct=%s key=%s remote=%s fd=%s "
                     "too_large=%d len=%zu body=%s",
                     tctx == (void *)0x1d ? "ok" : "bad", req->method, req->path, req->query,
                     req->content_type, req->idempotency_key ? req->idempotency_key : "(none)",
                     req->remote_addr, fcgi_adapter_current_fd() >= 0 ? "yes" : "no",
                     req->body_too_large, req->body_len, req->body);

    if (strcmp(req->path, "/empty") == 0) {
        resp->status = 204;
        snprintf(resp->content_type, sizeof(resp->content_type), "text/plain");
        return;
    }
    http_response_header(resp, "X-Echo", "1");
    http_response_set(resp, 201, "text/plain; charset=utf-8", text,
                      n > 0 && (size_t)n < sizeof(text) ? (size_t)n : 0);
}

static void *serve(void *arg)
{
    static const fcgi_app app = { thread_init, NULL, handle };
    (void)arg;
    fcgi_adapter_run(&app, 2, sock_path);
    return NULL;
}

/* ---- a FastCGI client ----------------------------------------------------- */

typedef struct {
    unsigned char *buf;
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->buf = realloc(b->buf, b->cap);
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

static void record(bytes *b, int type, const void *content, size_t n)
{
    unsigned char h[8] = {
        1, (unsigned char)type, 0, 1, (unsigned char)(n >> 8), (unsigned char)(n & 0xff), 0, 0
    };
    put(b, h, 8);
    put(b, content, n);
}

static void nv_len(bytes *b, size_t n)
{
    if (n < 128) {
        unsigned char c = (unsigned char)n;
        put(b, &c, 1);
    } else {
        unsigned char c[4] = { (unsigned char)(0x80 | (n >> 24)), (unsigned char)(n >> 16),
                               (unsigned char)(n >> 8), (unsigned char)n };
        put(b, c, 4);
    }
}

/* Sends one request (params: NULL-terminated name, value list) with body
 * and returns what came back on stdout (malloc'd, NUL-terminated). */
static char *fcgi_call(const char *const *params, const char *body, size_t body_len)
{
    static const unsigned char begin[8] = { 0, 1, 0, 0, 0, 0, 0, 0 }; /* responder */
    bytes out = { 0 }, nv = { 0 }, in = { 0 };
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    for (int i = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0; i++) {
        struct timespec ts = { 0, 20000000L };
        if (i > 250)
            return NULL;
        nanosleep(&ts, NULL); /* the adapter is still starting */
    }
    record(&out, FCGI_BEGIN_REQUEST, begin, sizeof(begin));
    for (size_t i = 0; params[i] != NULL; i += 2) {
        nv_len(&nv, strlen(params[i]));
        nv_len(&nv, strlen(params[i + 1]));
        put(&nv, params[i], strlen(params[i]));
        put(&nv, params[i + 1], strlen(params[i + 1]));
    }
    for (size_t off = 0; off < nv.len; off += 65535)
        record(&out, FCGI_PARAMS, nv.buf + off, nv.len - off > 65535 ? 65535 : nv.len - off);
    record(&out, FCGI_PARAMS, "", 0);
    for (size_t off = 0; off < body_len; off += 65535)
        record(&out, FCGI_STDIN, body + off, body_len - off > 65535 ? 65535 : body_len - off);
    record(&out, FCGI_STDIN, "", 0);
    for (size_t off = 0; off < out.len;) {
        ssize_t w = write(fd, out.buf + off, out.len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    /* Read records until END_REQUEST, keeping stdout's content. */
    for (;;) {
        unsigned char h[8], pad[256];
        if (recv(fd, h, 8, MSG_WAITALL) != 8)
            break;
        size_t n = ((size_t)h[4] << 8) | h[5];
        unsigned char *c = malloc(n + 1);
        if (n > 0 && recv(fd, c, n, MSG_WAITALL) != (ssize_t)n) {
            free(c);
            break;
        }
        if (h[6] > 0 && recv(fd, pad, h[6], MSG_WAITALL) != h[6]) {
            free(c);
            break;
        }
        if (h[1] == FCGI_STDOUT)
            put(&in, c, n);
        free(c);
        if (h[1] == FCGI_END_REQUEST)
            break;
    }
    close(fd);
    put(&in, "", 1);
    free(out.buf);
    free(nv.buf);
    return (char *)in.buf;
}

static int suite_init(void)
{
    pthread_t t;

    snprintf(sock_dir, sizeof(sock_dir), "/tmp/idempay-fcgi-XXXXXX");
    if (mkdtemp(sock_dir) == NULL)
        return -1;
    snprintf(sock_path, sizeof(sock_path), "%s/adapter.sock", sock_dir);
    /* Serves until the process exits. */
    if (pthread_create(&t, NULL, serve, NULL) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

static int suite_clean(void)
{
    unlink(sock_path);
    rmdir(sock_dir);
    return 0;
}

/* ---- cases -------------------------------------------------------------------- */

typedef struct {
    const char *name;
    const char *const *params;
    const char *body;
    const char *const *expect; /* substrings of the reply, NULL-terminated */
} fcgi_case;

static const char *const p_get[] = { "REQUEST_METHOD",
                                     "GET",
                                     "REQUEST_URI",
                                     "/api/pay/orders/A1?x=1&y=2",
                                     "QUERY_STRING",
                                     "x=1&y=2",
                                     "REMOTE_ADDR",
                                     "127.0.0.1",
                                     NULL };
static const char *const e_get[] = { "Status: 201\r\n",
                                     "Content-Type: text/plain; charset=utf-8\r\n",
                                     "X-Echo: 1\r\n",
                                     "tctx=ok method=GET path=/api/pay/orders/A1 ",
                                     "query=x=1&y=2 ct= key=(none) remote=127.0.0.1 fd=yes",
                                     "too_large=0 len=0 body=",
                                     NULL };
static const char *const p_post[] = { "REQUEST_METHOD",
                                      "POST",
                                      "REQUEST_URI",
                                      "/api/pay",
                                      "CONTENT_TYPE",
                                      "application/json",
                                      "CONTENT_LENGTH",
                                      "12",
                                      "HTTP_IDEMPOTENCY_KEY",
                                      "k-1",
                                      NULL };
static const char *const e_post[] = {
    "method=POST path=/api/pay query= ct=application/json key=k-1", "len=12 body={\"amount\":1}",
    "Content-Length: ", NULL
};
static const char *const p_bare[] = { NULL }; /* no parameters at all: the defaults */
static const char *const e_bare[] = { "method=GET path=/ query= ct= key=(none) remote= ", NULL };
static const char *const p_big[] = { "REQUEST_METHOD", "POST",  "REQUEST_URI", "/api/pay",
                                     "CONTENT_LENGTH", "65537", NULL };
static const char *const e_big[] = { "too_large=1 len=0 body=", NULL };
static const char *const p_empty[] = { "REQUEST_URI", "/empty", NULL };
static const char *const e_empty[] = {
    "Status: 204\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n", NULL
};

static void run_case(const fcgi_case *c)
{
    char *reply = fcgi_call(c->params, c->body, c->body ? strlen(c->body) : 0);

    CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
    for (size_t i = 0; c->expect[i] != NULL; i++) {
        int found = strstr(reply, c->expect[i]) != NULL;
        CU_ASSERT_TRUE(found);
        if (!found)
            fprintf(stderr, "\n  %s: no \"%s\" in:\n%.400s\n", c->name, c->expect[i], reply);
    }
    free(reply);
}

static void test_requests(void)
{
    static const fcgi_case cases[] = {
        { "GET with a query", p_get, NULL, e_get },
        { "POST with a body and a key", p_post, "{\"amount\":1}", e_post },
        { "no parameters", p_bare, NULL, e_bare },
        { "body over the limit", p_big, NULL, e_big },
        { "an empty reply", p_empty, NULL, e_empty },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

static void test_body_at_the_limit(void)
{
    static char body[HTTP_MAX_BODY + 1];
    char cl[16], want[64];
    memset(body, 'b', HTTP_MAX_BODY);
    snprintf(cl, sizeof(cl), "%d", HTTP_MAX_BODY);
    const char *const params[] = { "REQUEST_METHOD", "POST", "REQUEST_URI", "/b",
                                   "CONTENT_LENGTH", cl,     NULL };
    char *reply = fcgi_call(params, body, HTTP_MAX_BODY);
    CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
    snprintf(want, sizeof(want), "too_large=0 len=%d body=bbbb", HTTP_MAX_BODY);
    CU_ASSERT_PTR_NOT_NULL(strstr(reply, want));
    free(reply);
}

static void test_long_path_is_cut(void)
{
    static char uri[4096];
    memset(uri, 'p', sizeof(uri) - 1);
    uri[0] = '/';
    const char *const params[] = { "REQUEST_URI", uri, NULL };
    char *reply = fcgi_call(params, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
    char *p = strstr(reply, "path=");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    size_t n = strcspn(p + 5, " ");
    CU_ASSERT_EQUAL(n, 2047); /* the adapter's path buffer, NUL-terminated */
    free(reply);
}

static void test_outside_a_request(void)
{
    CU_ASSERT_EQUAL(fcgi_adapter_current_fd(), -1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "requests come in and responses go out", test_requests },
        { "a body of exactly the limit is accepted", test_body_at_the_limit },
        { "an over-long path is cut", test_long_path_is_cut },
        { "no fd is held outside a request", test_outside_a_request },
    };
    return CU_SUITE_RUN("fcgi_adapter", suite_init, suite_clean, tests);
}
