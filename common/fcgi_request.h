/* fcgi_request - internal to the FastCGI edge (fcgi_adapter.c and the
 * fuzz/fuzz_fcgi harness, nothing else): turns a request libfcgi has
 * accepted (FCGX_Accept_r returned 0) into an http_request, and writes an
 * http_response back on it. No threads, no sockets of its own: the request's
 * streams are all it touches. */
#ifndef IDEMPAY_FCGI_REQUEST_H
#define IDEMPAY_FCGI_REQUEST_H

#include <fcgiapp.h>
#include <stddef.h>

#include "fcgi_screen.h"
#include "http_msg.h"

/* Every read and write on a FastCGI connection gives up after this long: a
 * peer that connects and sends nothing (or stops reading) frees its worker
 * instead of holding it. The web servers in front buffer request bodies, so
 * a real request never pauses this long. */
#define FCGI_IO_TIMEOUT_MS 10000

/* Hands the connected socket fd to libfcgi for r (initialised with
 * FCGX_InitRequest(r, -1, ...)): sets the I/O timeouts on fd, then ipcFd and
 * keepConnection, so the FCGX_Finish_r at the start of FCGX_Accept_r leaves
 * it open and FCGX_Accept_r reads the request from it instead of accepting
 * on its own. Returns 0, or -1 (errno set) when the timeouts could not be
 * set (fd is handed over all the same). */
int fcgi_adapter_adopt(FCGX_Request *r, int fd);

/* Before each FCGX_Accept_r on an adopted connection (a new one or one
 * kept open): waits up to FCGI_IO_TIMEOUT_MS for the next request's
 * parameters and screens them (fcgi_screen.h); win holds FCGI_SCREEN_MAX
 * bytes. On anything but FCGI_SCREEN_OK the connection is closed unread and
 * r->ipcFd is -1, so libfcgi never parses it. */
fcgi_screen_result fcgi_adapter_screen(FCGX_Request *r, unsigned char *win);

/* Fills *out from r's parameters and body: method (REQUEST_METHOD, default
 * "GET"), path (REQUEST_URI cut at the first '?', at most pathcap - 1 bytes,
 * copied into path), query (QUERY_STRING), content type, Idempotency-Key
 * (HTTP_IDEMPOTENCY_KEY, NULL when absent), the X-Idempay-* signature headers
 * (NULL when absent), remote address, and the body read
 * into body (HTTP_MAX_BODY + 1 bytes): at most the CONTENT_LENGTH announced,
 * never more than the buffer holds. out's strings point into r's parameters,
 * path and body: valid until the request is finished. Returns HTTP_CL_OK;
 * HTTP_CL_TOO_LARGE (out->body_too_large set, body empty); or
 * HTTP_CL_INVALID (CONTENT_LENGTH is not plain digits: body empty, the
 * caller answers 400 without calling the handler). pathcap >= 1. */
http_cl_result fcgi_adapter_read_request(FCGX_Request *r, char *body, char *path, size_t pathcap,
                                         http_request *out);

/* Writes resp (status, Content-Type, Content-Length, its extra headers,
 * body) to r's output stream; a header block over 1 KiB becomes a bare 500.
 * Write errors (the peer gone) are left to libfcgi's stream state. */
void fcgi_adapter_write_response(FCGX_Request *r, const http_response *resp);

#endif
