/* fcgi_adapter - the only code that knows libfcgi. Runs N threads, each
 * accepting FastCGI requests on the listen socket, turns each into an
 * http_request, calls the handler, and writes the http_response back.
 *
 * The listen socket: the one named by a path or ":PORT", else the one
 * systemd passed (LISTEN_FDS/LISTEN_PID, socket activation), else the one
 * inherited on fd 0 (lighttpd bin-path, spawn-fcgi). ":PORT" listens on
 * 127.0.0.1 only; a path is created with mode IDEMPAY_SOCKET_MODE (octal,
 * default 0600: only this program's user connects; 0660 lets its group in,
 * which must then hold only the web server). Readiness and stopping
 * are reported to systemd ($NOTIFY_SOCKET) when it asks.
 *
 * Graceful stop (drain_ms > 0): SIGTERM or SIGINT stops accepting at once,
 * lets the requests in flight finish within drain_ms, and returns; SIGHUP
 * reopens the log file (log_reopen). A connection that was accepted but
 * whose request had not been read yet may be closed without an answer (the
 * front then answers 502/503); nothing of it was processed. */
#ifndef IDEMPAY_FCGI_ADAPTER_H
#define IDEMPAY_FCGI_ADAPTER_H

#include "http_msg.h"

typedef struct {
    /* Called once in each worker thread before it accepts; its result is
     * passed to every handle call of that thread. May be NULL. */
    void *(*thread_init)(int thread_index);
    void (*thread_fini)(void *thread_ctx);
    /* Fills resp (already initialised) for req. Must not keep pointers into
     * req after returning. */
    void (*handle)(void *thread_ctx, const http_request *req, http_response *resp);
} fcgi_app;

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, so every thread
 * it starts afterwards leaves them to fcgi_adapter_serve. Call first in main
 * before fcgi_adapter_serve. */
void fcgi_adapter_block_signals(void);

/* Serves with nthreads workers until SIGTERM/SIGINT (graceful stop above,
 * drain_ms > 0 the bound for requests in flight; the program must have
 * called fcgi_adapter_block_signals before starting any thread) or until
 * accepting fails in every thread. listen_spec NULL: the socket systemd
 * passed, else fd 0; otherwise ":PORT" or a unix socket path. Returns 0
 * after a clean stop (every worker finished and ran thread_fini), 1 when
 * the drain deadline passed with requests still running (workers are left
 * running: the caller must _exit), -1 on a setup error (logged). */
int fcgi_adapter_serve(const fcgi_app *app, int nthreads, const char *listen_spec, long drain_ms);

/* fcgi_adapter_serve without the graceful stop: the program handles SIGTERM
 * itself (or dies of it); SIGHUP only reopens the log. Returns when
 * accepting fails in every thread: 0, or -1 on a setup error. */
int fcgi_adapter_run(const fcgi_app *app, int nthreads, const char *listen_spec);

/* In a handler thread: the FastCGI connection's fd for the request being
 * served, or -1. Lets a handler that withholds a reply poll for the peer
 * closing the connection. */
int fcgi_adapter_current_fd(void);

/* In a handler thread: the FastCGI parameter name of the request being
 * served (e.g. SSL_CLIENT_VERIFY, which a TLS front sets), or NULL when the
 * request has none or no request is being served. Valid until the handler
 * returns. */
const char *fcgi_adapter_param(const char *name);

#endif
