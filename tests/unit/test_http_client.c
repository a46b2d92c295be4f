/* test_http_client.c - CUnit suite for http_client against a small HTTP/1.1
 * server on 127.0.0.1 run in a thread: methods and bodies, captured headers,
 * keep-alive reuse, the reply limit, and the mapping of connect failures,
 * resets and timeouts. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <curl/curl.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_client.h"

/* ---- the test server ---- */

typedef struct {
    int listen_fd;
    int port;
    pthread_t thread;
    pthread_mutex_t lock;
    int connections; /* accepted so far */
    int requests;    /* requests read so far */
    char method[16]; /* last request seen */
    char path[128];
    char content_type[128];
    char custom[128]; /* X-Test header */
    int saw_expect;
    size_t body_len;
    char body[4096];
} test_server;

static test_server srv;

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_str(int fd, const char *s)
{
    return send_all(fd, s, strlen(s));
}

/* Value of header name in the header block, or "" */
static void header_value(const char *head, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (const char *line = strstr(head, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
            h += nl + 1;
            while (*h == ' ')
                h++;
            const char *end = strstr(h, "\r\n");
            size_t vl = end ? (size_t)(end - h) : strlen(h);
            snprintf(out, outlen, "%.*s", (int)vl, h);
            return;
        }
    }
}

/* Sends n bytes of 'x' in chunks. */
static int send_filler(int fd, size_t n)
{
    char chunk[8192];
    memset(chunk, 'x', sizeof(chunk));
    while (n > 0) {
        size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
        if (send_all(fd, chunk, k) != 0)
            return -1;
        n -= k;
    }
    return 0;
}

/* Serves one request on fd. Returns 0 to keep the connection, -1 to close. */
static int serve_one(int fd)
{
    static char buf[16384];
    size_t have = 0;
    char *end = NULL;
    char value[128];

    while (end == NULL) {
        if (have + 1 >= sizeof(buf))
            return -1;
        ssize_t r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - buf) + 4;
    header_value(buf, "Content-Length", value, sizeof(value));
    size_t clen = value[0] ? (size_t)strtoul(value, NULL, 10) : 0;
    if (clen > sizeof(buf) - 1 - head_len)
        return -1;
    while (have < head_len + clen) {
        ssize_t r = recv(fd, buf + have, head_len + clen - have, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }

    pthread_mutex_lock(&srv.lock);
    srv.requests++;
    sscanf(buf, "%15s %127s", srv.method, srv.path);
    header_value(buf, "Content-Type", srv.content_type, sizeof(srv.content_type));
    header_value(buf, "X-Test", srv.custom, sizeof(srv.custom));
    header_value(buf, "Expect", value, sizeof(value));
    srv.saw_expect = value[0] != '\0';
    srv.body_len = clen < sizeof(srv.body) ? clen : sizeof(srv.body);
    memcpy(srv.body, buf + head_len, srv.body_len);
    char path[128];
    snprintf(path, sizeof(path), "%s", srv.path);
    pthread_mutex_unlock(&srv.lock);

    char reply[512];
    if (strcmp(path, "/ok") == 0) {
        snprintf(reply, sizeof(reply),
                 "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nretry-after:   3  \r\n"
                 "IDEMPOTENT-REPLAYED: true\r\nContent-Length: %zu\r\n\r\n",
                 clen);
        if (send_str(fd, reply) != 0 || send_all(fd, buf + head_len, clen) != 0)
            return -1;
        return 0;
    }
    if (strcmp(path, "/busy") == 0) {
        return send_str(fd, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n"
                            "Content-Type: text/plain\r\nContent-Length: 4\r\n\r\nbusy");
    }
    if (strcmp(path, "/exact") == 0) {
        snprintf(reply, sizeof(reply), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n",
                 HTTP_CLIENT_MAX_REPLY);
        if (send_str(fd, reply) != 0 || send_filler(fd, HTTP_CLIENT_MAX_REPLY) != 0)
            return -1;
        return 0;
    }
    if (strcmp(path, "/big-length") == 0) {
        snprintf(reply, sizeof(reply), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n",
                 HTTP_CLIENT_MAX_REPLY + 1);
        send_str(fd, reply);
        send_filler(fd, HTTP_CLIENT_MAX_REPLY + 1);
        return -1;
    }
    if (strcmp(path, "/big-stream") == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        send_filler(fd, HTTP_CLIENT_MAX_REPLY + 1);
        return -1;
    }
    if (strcmp(path, "/partial") == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..");
        return -1;
    }
    if (strcmp(path, "/slow") == 0) {
        /* Never answer; wait (bounded) for the client to give up. */
        struct pollfd p = { .fd = fd, .events = POLLIN };
        poll(&p, 1, 5000);
        return -1;
    }
    return -1; /* "/close" and anything else: close without a reply */
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(srv.listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* listen socket shut down */
        }
        pthread_mutex_lock(&srv.lock);
        srv.connections++;
        pthread_mutex_unlock(&srv.lock);
        while (serve_one(fd) == 0) {
        }
        close(fd);
    }
}

static int suite_init(void)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    memset(&srv, 0, sizeof(srv));
    pthread_mutex_init(&srv.lock, NULL);
    if (http_client_global_init() != 0)
        return -1;
    srv.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (srv.listen_fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(srv.listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(srv.listen_fd, 8) != 0 ||
        getsockname(srv.listen_fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    srv.port = ntohs(a.sin_port);
    return pthread_create(&srv.thread, NULL, server_main, NULL) == 0 ? 0 : -1;
}

static int suite_clean(void)
{
    shutdown(srv.listen_fd, SHUT_RDWR);
    pthread_join(srv.thread, NULL);
    close(srv.listen_fd);
    pthread_mutex_destroy(&srv.lock);
    curl_global_cleanup(); /* pairs with http_client_global_init */
    return 0;
}

static void url(char *out, size_t n, const char *path)
{
    snprintf(out, n, "http://127.0.0.1:%d%s", srv.port, path);
}

static int server_connections(void)
{
    pthread_mutex_lock(&srv.lock);
    int n = srv.connections;
    pthread_mutex_unlock(&srv.lock);
    return n;
}

static int server_requests(void)
{
    pthread_mutex_lock(&srv.lock);
    int n = srv.requests;
    pthread_mutex_unlock(&srv.lock);
    return n;
}

/* ---- tests ---- */

static void test_status_names(void)
{
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_OK), "ok");
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_ERR_TIMEOUT), "timeout");
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_ERR_CONNECT), "connect");
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_ERR_RESET), "reset");
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_ERR_TOO_LARGE), "too_large");
    CU_ASSERT_STRING_EQUAL(http_status_name(HTTP_ERR_OTHER), "other");
    CU_ASSERT_STRING_EQUAL(http_status_name((http_status)42), "unknown");
    http_client_free(NULL);
}

static void test_post_and_headers(void)
{
    http_client *c = http_client_new(1000, 3000);
    http_reply r;
    char u[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    url(u, sizeof(u), "/ok");

    /* A body with a NUL byte goes out with its exact length. */
    static const char body[] = "{\"a\":1}\0tail";
    const char *const hdrs[] = { "X-Test: hello", NULL };
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, "application/json", body, sizeof(body) - 1,
                                        hdrs, 0, &r),
                    HTTP_OK);
    CU_ASSERT_EQUAL(r.code, 200);
    CU_ASSERT_EQUAL(r.body_len, sizeof(body) - 1);
    CU_ASSERT_EQUAL(memcmp(r.body, body, sizeof(body) - 1), 0);
    CU_ASSERT_EQUAL(r.body[r.body_len], '\0');
    CU_ASSERT_STRING_EQUAL(r.retry_after, "3"); /* trimmed, any header case */
    CU_ASSERT_STRING_EQUAL(r.replayed, "true");
    CU_ASSERT_STRING_EQUAL(r.content_type, "application/json");
    CU_ASSERT_STRING_EQUAL(r.error, "");
    CU_ASSERT_STRING_EQUAL(srv.method, "POST");
    CU_ASSERT_STRING_EQUAL(srv.content_type, "application/json");
    CU_ASSERT_STRING_EQUAL(srv.custom, "hello");

    /* A large body is sent at once: no "Expect: 100-continue". */
    static char large[3000];
    memset(large, 'L', sizeof(large));
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, "text/plain", large, sizeof(large), NULL, 0,
                                        &r),
                    HTTP_OK);
    CU_ASSERT_EQUAL(srv.saw_expect, 0);
    CU_ASSERT_EQUAL(srv.body_len, sizeof(large));
    CU_ASSERT_STRING_EQUAL(srv.custom, ""); /* headers do not leak into the next request */

    /* Methods; a GET after a POST carries no body. */
    CU_ASSERT_EQUAL(http_client_request(c, "PUT", u, "application/json", "{}", 2, NULL, 0, &r),
                    HTTP_OK);
    CU_ASSERT_STRING_EQUAL(srv.method, "PUT");
    CU_ASSERT_EQUAL(srv.body_len, 2);
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_STRING_EQUAL(srv.method, "GET");
    CU_ASSERT_EQUAL(srv.body_len, 0);
    CU_ASSERT_EQUAL(r.body_len, 0);
    CU_ASSERT_STRING_EQUAL(r.body, "");
    CU_ASSERT_EQUAL(http_client_request(c, "DELETE", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_STRING_EQUAL(srv.method, "DELETE");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_STRING_EQUAL(srv.method, "POST");
    CU_ASSERT_EQUAL(srv.body_len, 0);

    /* Other status codes are complete answers; headers of the previous reply are gone. */
    url(u, sizeof(u), "/busy");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_EQUAL(r.code, 503);
    CU_ASSERT_STRING_EQUAL(r.body, "busy");
    CU_ASSERT_STRING_EQUAL(r.retry_after, "2");
    CU_ASSERT_STRING_EQUAL(r.replayed, "");
    CU_ASSERT_STRING_EQUAL(r.content_type, "text/plain");
    http_client_free(c);
}

static void test_keep_alive(void)
{
    http_client *c = http_client_new(1000, 3000);
    http_reply r;
    char u[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    url(u, sizeof(u), "/ok");
    int before = server_connections();
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(http_client_request(c, i % 2 ? "GET" : "POST", u, "text/plain", "x", 1,
                                            NULL, 0, &r),
                        HTTP_OK);
        CU_ASSERT_EQUAL(r.code, 200);
    }
    CU_ASSERT_EQUAL(server_connections() - before, 1); /* one connection for all five */
    http_client_free(c);
}

static void test_limits(void)
{
    http_client *c = http_client_new(1000, 5000);
    http_reply r;
    char u[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);

    url(u, sizeof(u), "/exact");
    http_status st = http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r);
    CU_ASSERT_EQUAL(st, HTTP_OK);
    if (st != HTTP_OK)
        fprintf(stderr, "  /exact: %s (%s)\n", http_status_name(st), r.error);
    CU_ASSERT_EQUAL(r.body_len, HTTP_CLIENT_MAX_REPLY);
    CU_ASSERT_EQUAL(r.body[r.body_len], '\0');

    url(u, sizeof(u), "/big-length");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_TOO_LARGE);
    CU_ASSERT_EQUAL(r.body_len, 0);
    CU_ASSERT(r.error[0] != '\0');

    url(u, sizeof(u), "/big-stream");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_TOO_LARGE);
    CU_ASSERT_EQUAL(r.body_len, 0);
    CU_ASSERT_STRING_EQUAL(r.body, "");

    /* The client is still usable afterwards. */
    url(u, sizeof(u), "/ok");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, "again", 5, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_STRING_EQUAL(r.body, "again");

    /* A raised limit takes both oversized replies whole; a lowered one
     * refuses the reply that fitted the default. */
    CU_ASSERT_EQUAL(http_client_set_max_reply(c, 0), -1);
    CU_ASSERT_EQUAL_FATAL(http_client_set_max_reply(c, HTTP_CLIENT_MAX_REPLY + 1), 0);
    url(u, sizeof(u), "/big-length");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_EQUAL(r.body_len, HTTP_CLIENT_MAX_REPLY + 1);
    url(u, sizeof(u), "/big-stream");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_EQUAL(r.body_len, HTTP_CLIENT_MAX_REPLY + 1);
    CU_ASSERT_EQUAL_FATAL(http_client_set_max_reply(c, HTTP_CLIENT_MAX_REPLY - 1), 0);
    url(u, sizeof(u), "/exact");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_TOO_LARGE);
    http_client_free(c);
}

static void test_failures(void)
{
    http_client *c = http_client_new(1000, 3000);
    http_reply r;
    char u[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);

    /* A port nobody listens on: refused, the request was not sent. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_EQUAL_FATAL(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    CU_ASSERT_EQUAL_FATAL(getsockname(s, (struct sockaddr *)&a, &alen), 0);
    close(s);
    snprintf(u, sizeof(u), "http://127.0.0.1:%d/pay", ntohs(a.sin_port));
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, "text/xml", "<xml/>", 6, NULL, 0, &r),
                    HTTP_ERR_CONNECT);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT(r.error[0] != '\0');
    CU_ASSERT_STRING_EQUAL(r.body, "");

    /* Closed without a reply, or mid-body: the outcome is unknown. */
    url(u, sizeof(u), "/close");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, "x", 1, NULL, 0, &r), HTTP_ERR_RESET);
    url(u, sizeof(u), "/partial");
    CU_ASSERT_EQUAL(http_client_request(c, "GET", u, NULL, NULL, 0, NULL, 0, &r), HTTP_ERR_RESET);
    CU_ASSERT_EQUAL(r.body_len, 0);

    /* A kept-alive connection closed without a reply: reported, never
     * silently sent again (libcurl would otherwise resend it on a new
     * connection, and a payment request must not be repeated behind our back). */
    url(u, sizeof(u), "/ok");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, "x", 1, NULL, 0, &r), HTTP_OK);
    int before = server_requests();
    url(u, sizeof(u), "/close");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, "text/xml", "<xml/>", 6, NULL, 0, &r),
                    HTTP_ERR_RESET);
    CU_ASSERT_EQUAL(server_requests() - before, 1);
    url(u, sizeof(u), "/ok");
    CU_ASSERT_EQUAL(http_client_request(c, "PUT", u, NULL, "y", 1, NULL, 0, &r), HTTP_OK);
    before = server_requests();
    url(u, sizeof(u), "/close");
    CU_ASSERT_EQUAL(http_client_request(c, "PUT", u, NULL, "y", 1, NULL, 0, &r), HTTP_ERR_RESET);
    CU_ASSERT_EQUAL(server_requests() - before, 1);

    /* No answer in time: per-request timeout overrides the default. */
    url(u, sizeof(u), "/slow");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, "x", 1, NULL, 300, &r),
                    HTTP_ERR_TIMEOUT);
    CU_ASSERT(r.error[0] != '\0');

    /* Bad URLs and arguments are "other". */
    CU_ASSERT_EQUAL(http_client_request(c, "GET", "ftp://127.0.0.1/x", NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_OTHER);
    CU_ASSERT_EQUAL(http_client_request(c, "GET", "http://[::1", NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_OTHER);
    CU_ASSERT_EQUAL(http_client_request(c, "GET", NULL, NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_OTHER);
    CU_ASSERT_EQUAL(http_client_request(NULL, "GET", u, NULL, NULL, 0, NULL, 0, &r),
                    HTTP_ERR_OTHER);
    CU_ASSERT_STRING_EQUAL(r.body, "");

    /* And after all that, a normal request works on the same client. */
    url(u, sizeof(u), "/ok");
    CU_ASSERT_EQUAL(http_client_request(c, "POST", u, NULL, "fine", 4, NULL, 0, &r), HTTP_OK);
    CU_ASSERT_EQUAL(r.code, 200);
    CU_ASSERT_STRING_EQUAL(r.body, "fine");
    http_client_free(c);
}

int main(void)
{
    static const cu_test tests[] = {
        { "every status has a name, an unknown one too", test_status_names },
        { "methods, bodies and headers are sent as given", test_post_and_headers },
        { "requests reuse one kept-alive connection", test_keep_alive },
        { "a reply over the limit is too_large", test_limits },
        { "refused, reset and timed-out requests report their status", test_failures },
    };
    return CU_SUITE_RUN("http_client", suite_init, suite_clean, tests);
}
