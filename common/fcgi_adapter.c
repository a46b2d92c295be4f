/* fcgi_adapter - the only code that knows libfcgi: N accept threads, each
 * turning FastCGI requests into http_request and http_response back. */
#include "fcgi_adapter.h"

#include <fcgiapp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "log.h"

static _Thread_local int current_fd = -1;

typedef struct {
    const fcgi_app *app;
    int index;
    int listen_fd;
    bool unix_listener;      /* the web server reaches us over a unix socket */
} worker_arg;

int fcgi_adapter_current_fd(void)
{
    return current_fd;
}

static const char *param(FCGX_Request *r, const char *name, const char *dflt)
{
    const char *v = FCGX_GetParam(name, r->envp);
    return v ? v : dflt;
}

/* Reads the request body into buf (HTTP_MAX_BODY + 1 bytes). Sets *too_large
 * when the body is bigger than HTTP_MAX_BODY; returns the length read. */
static size_t read_body(FCGX_Request *r, char *buf, int *too_large)
{
    const char *cl = param(r, "CONTENT_LENGTH", "");
    long long want = cl[0] ? strtoll(cl, NULL, 10) : 0;
    size_t got = 0;

    *too_large = 0;
    if (want > HTTP_MAX_BODY) {
        *too_large = 1;
        buf[0] = '\0';
        return 0;
    }
    while (got < (size_t)want) {
        int n = FCGX_GetStr(buf + got, (int)((size_t)want - got), r->in);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

static void write_response(FCGX_Request *r, const http_response *resp)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "Status: %d\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
                     resp->status, resp->content_type, resp->body ? resp->body_len : 0,
                     resp->headers);

    if (n < 0 || (size_t)n >= sizeof head)
        n = snprintf(head, sizeof head, "Status: 500\r\nContent-Length: 0\r\n\r\n");
    FCGX_PutStr(head, n, r->out);
    if (resp->body && resp->body_len)
        FCGX_PutStr(resp->body, (int)resp->body_len, r->out);
}

/* Whether fd listens on a unix socket (lighttpd's "socket" => path). */
static bool listens_on_unix(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;

    return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 && sa.ss_family == AF_UNIX;
}

/* Lets FCGX_Finish_r close the connection at once instead of libfcgi's
 * lingering close (shutdown, then poll and read until the web server has
 * closed its end: a second wake-up of this thread per request, there to
 * keep a TCP stack from answering late input with a RST that would destroy
 * the response in flight). On a unix socket nothing destroys a response
 * already queued to the peer, and with nothing unread on our side the web
 * server simply reads the response and then EOF; so when the connection is
 * a unix socket with nothing left to read, the request is detached, which
 * makes libfcgi close without the linger. */
static void close_without_linger(FCGX_Request *req)
{
    int unread = 0;

    if (ioctl(req->ipcFd, FIONREAD, &unread) == 0 && unread == 0)
        (void)FCGX_Detach(req);
}

static void *worker(void *p)
{
    worker_arg *wa = p;
    const fcgi_app *app = wa->app;
    void *tctx = app->thread_init ? app->thread_init(wa->index) : NULL;
    char *body = malloc(HTTP_MAX_BODY + 1);
    char path[2048];
    FCGX_Request req;

    if (!body || FCGX_InitRequest(&req, wa->listen_fd, 0) != 0) {
        log_msg(LOG_ERROR, "fastcgi worker %d: cannot initialise", wa->index);
        free(body);
        return NULL;
    }
    for (;;) {
        http_request hr;
        http_response resp;
        const char *uri, *q;
        size_t plen;

        if (FCGX_Accept_r(&req) < 0)
            break;
        current_fd = req.ipcFd;
        memset(&hr, 0, sizeof hr);
        hr.method = param(&req, "REQUEST_METHOD", "GET");
        uri = param(&req, "REQUEST_URI", "/");
        q = strchr(uri, '?');
        plen = q ? (size_t)(q - uri) : strlen(uri);
        if (plen >= sizeof path)
            plen = sizeof path - 1;
        memcpy(path, uri, plen);
        path[plen] = '\0';
        hr.path = path;
        hr.query = param(&req, "QUERY_STRING", "");
        hr.content_type = param(&req, "CONTENT_TYPE", "");
        hr.idempotency_key = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", req.envp);
        hr.remote_addr = param(&req, "REMOTE_ADDR", "");
        hr.body_len = read_body(&req, body, &hr.body_too_large);
        hr.body = body;

        http_response_init(&resp);
        app->handle(tctx, &hr, &resp);
        write_response(&req, &resp);
        http_response_free(&resp);
        current_fd = -1;
        if (wa->unix_listener)
            close_without_linger(&req);
        FCGX_Finish_r(&req);
    }
    if (app->thread_fini)
        app->thread_fini(tctx);
    free(body);
    return NULL;
}

int fcgi_adapter_run(const fcgi_app *app, int nthreads, const char *listen_spec)
{
    pthread_t *tids;
    worker_arg *args;
    int listen_fd = 0;
    bool unix_listener;

    signal(SIGPIPE, SIG_IGN);
    if (FCGX_Init() != 0)
        return -1;
    if (listen_spec) {
        listen_fd = FCGX_OpenSocket(listen_spec, 256);
        if (listen_fd < 0) {
            log_msg(LOG_ERROR, "cannot listen on %s", listen_spec);
            return -1;
        }
    }
    unix_listener = listens_on_unix(listen_fd);
    if (nthreads < 1)
        nthreads = 1;
    tids = calloc((size_t)nthreads, sizeof *tids);
    args = calloc((size_t)nthreads, sizeof *args);
    if (!tids || !args) {
        free(tids);
        free(args);
        return -1;
    }
    for (int i = 0; i < nthreads; i++) {
        args[i].app = app;
        args[i].index = i;
        args[i].listen_fd = listen_fd;
        args[i].unix_listener = unix_listener;
        if (pthread_create(&tids[i], NULL, worker, &args[i]) != 0) {
            log_msg(LOG_ERROR, "cannot start worker thread %d", i);
            nthreads = i;
            break;
        }
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    free(args);
    return 0;
}
