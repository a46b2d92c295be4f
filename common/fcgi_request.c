/* fcgi_request - an accepted FCGX_Request into an http_request, and an
 * http_response back (see fcgi_request.h). */
#include "fcgi_request.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int fcgi_adapter_adopt(FCGX_Request *r, int fd)
{
    struct timeval tv = { FCGI_IO_TIMEOUT_MS / 1000, (FCGI_IO_TIMEOUT_MS % 1000) * 1000 };
    int rc = 0;

    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
        rc = -1;
    r->ipcFd = fd;
    r->keepConnection = 1;
    return rc;
}

fcgi_screen_result fcgi_adapter_screen(FCGX_Request *r, unsigned char *win)
{
    fcgi_screen_result res = fcgi_screen_wait(r->ipcFd, win, FCGI_IO_TIMEOUT_MS);

    if (res != FCGI_SCREEN_OK) {
        close(r->ipcFd);
        r->ipcFd = -1;
    }
    return res;
}

static const char *param(FCGX_Request *r, const char *name, const char *dflt)
{
    const char *v = FCGX_GetParam(name, r->envp);
    return v ? v : dflt;
}

/* Reads the request body into buf (HTTP_MAX_BODY + 1 bytes): at most the
 * CONTENT_LENGTH it announced, never more than the buffer holds. Returns
 * HTTP_CL_OK with *len read (a peer that stops early gives a short body),
 * HTTP_CL_TOO_LARGE or HTTP_CL_INVALID with nothing read (*len 0). */
static http_cl_result read_body(FCGX_Request *r, char *buf, size_t *len)
{
    size_t want = 0, got = 0;
    http_cl_result cl = http_content_length_parse(FCGX_GetParam("CONTENT_LENGTH", r->envp),
                                                  HTTP_MAX_BODY, &want);

    *len = 0;
    buf[0] = '\0';
    if (cl != HTTP_CL_OK)
        return cl;
    while (got < want) {
        int n = FCGX_GetStr(buf + got, (int)(want - got), r->in); /* want <= HTTP_MAX_BODY */
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    *len = got;
    return HTTP_CL_OK;
}

http_cl_result fcgi_adapter_read_request(FCGX_Request *r, char *body, char *path, size_t pathcap,
                                         http_request *out)
{
    const char *uri = param(r, "REQUEST_URI", "/");
    const char *q = strchr(uri, '?');
    size_t plen = q ? (size_t)(q - uri) : strlen(uri);
    http_cl_result cl;

    if (plen >= pathcap)
        plen = pathcap - 1;
    memcpy(path, uri, plen);
    path[plen] = '\0';
    memset(out, 0, sizeof(*out));
    out->method = param(r, "REQUEST_METHOD", "GET");
    out->path = path;
    out->query = param(r, "QUERY_STRING", "");
    out->content_type = param(r, "CONTENT_TYPE", "");
    out->idempotency_key = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", r->envp);
    out->remote_addr = param(r, "REMOTE_ADDR", "");
    out->auth_caller = FCGX_GetParam("HTTP_X_IDEMPAY_CALLER", r->envp);
    out->auth_timestamp = FCGX_GetParam("HTTP_X_IDEMPAY_TIMESTAMP", r->envp);
    out->auth_nonce = FCGX_GetParam("HTTP_X_IDEMPAY_NONCE", r->envp);
    out->auth_signature = FCGX_GetParam("HTTP_X_IDEMPAY_SIGNATURE", r->envp);
    out->wx_serial = FCGX_GetParam("HTTP_WECHATPAY_SERIAL", r->envp);
    out->wx_signature = FCGX_GetParam("HTTP_WECHATPAY_SIGNATURE", r->envp);
    out->wx_timestamp = FCGX_GetParam("HTTP_WECHATPAY_TIMESTAMP", r->envp);
    out->wx_nonce = FCGX_GetParam("HTTP_WECHATPAY_NONCE", r->envp);
    cl = read_body(r, body, &out->body_len);
    out->body_too_large = cl == HTTP_CL_TOO_LARGE;
    out->body = body;
    return cl;
}

void fcgi_adapter_write_response(FCGX_Request *r, const http_response *resp)
{
    char head[HTTP_MAX_EXTRA_HEADERS + 512];
    int n = snprintf(head, sizeof(head),
                     "Status: %d\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
                     resp->status, resp->content_type, resp->body ? resp->body_len : 0,
                     resp->headers);

    if (n < 0 || (size_t)n >= sizeof(head))
        n = snprintf(head, sizeof(head), "Status: 500\r\nContent-Length: 0\r\n\r\n");
    FCGX_PutStr(head, n, r->out);
    if (resp->body && resp->body_len)
        FCGX_PutStr(resp->body, (int)resp->body_len, r->out);
}
