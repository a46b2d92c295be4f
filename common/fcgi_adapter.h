/* fcgi_adapter - the only code that knows libfcgi. Runs N threads, each
 * accepting FastCGI requests on the inherited listen socket (or the one named
 * by a path/port), turns each into an http_request, calls the handler, and
 * writes the http_response back. */
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

/* Serves forever with nthreads workers (returns only when accepting fails
 * in every thread). listen_spec NULL: the socket inherited on fd 0 (lighttpd
 * bin-path / spawn-fcgi); otherwise ":PORT" or a unix socket path.
 * Returns 0 after clean shutdown, -1 on a setup error. */
int fcgi_adapter_run(const fcgi_app *app, int nthreads, const char *listen_spec);

/* In a handler thread: the FastCGI connection's fd for the request being
 * served, or -1. Lets a handler that withholds a reply poll for the peer
 * closing the connection. */
int fcgi_adapter_current_fd(void);

#endif
