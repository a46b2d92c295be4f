/* fcgi_adapter - the only code that knows libfcgi: N accept threads, each
 * turning FastCGI requests into http_request and http_response back; the
 * calling thread waits for signals and runs the graceful stop. */
#include "fcgi_adapter.h"

#include <errno.h>
#include <fcgiapp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clocks.h"
#include "env.h"
#include "fcgi_request.h"
#include "log.h"

#define SD_LISTEN_FDS_START 3
#define WAKE_SIGNAL SIGUSR2 /* interrupts a worker blocked in accept */
#define STOP_POLL_MS 20

static _Thread_local int current_fd = -1;
static _Thread_local char **current_envp; /* the request being served, NULL outside one */

/* A worker's state, read by the stopping thread: only a worker in
 * W_ACCEPTING is woken by a signal (a busy one is never interrupted). */
enum { W_STARTING, W_ACCEPTING, W_BUSY, W_DONE };

typedef struct {
    const fcgi_app *app;
    int index;
    int listen_fd;
    int unix_listener; /* the web server reaches us over a unix socket */
    pthread_t tid;
    _Atomic int state;
} worker_arg;

static long adapter_drain_ms; /* > 0: graceful stop (set before the workers start) */
static atomic_int adapter_stopping;
static atomic_int workers_live;

int fcgi_adapter_current_fd(void)
{
    return current_fd;
}

const char *fcgi_adapter_param(const char *name)
{
    return current_envp != NULL ? FCGX_GetParam(name, current_envp) : NULL;
}

/* Whether fd listens on a unix socket (lighttpd's "socket" => path, nginx's
 * fastcgi_pass unix:). */
static int listens_on_unix(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);

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
 * makes libfcgi close without the linger. TCP keeps the linger. */
static void close_without_linger(FCGX_Request *req)
{
    int unread = 0;

    if (ioctl(req->ipcFd, FIONREAD, &unread) == 0 && unread == 0)
        (void)FCGX_Detach(req);
}

/* Accepts one connection on the listen socket with the I/O timeouts set,
 * and hands it to libfcgi: with ipcFd set (and keepConnection, so the
 * FCGX_Finish_r at the start of FCGX_Accept_r leaves it open),
 * FCGX_Accept_r reads the request from it instead of accepting on its own,
 * which would block in its read of the parameters with no timeout. Returns
 * 0, or FCGX_Accept_r's convention (-errno) when accept failed. A
 * connection kept open by the web server (FCGI_KEEP_CONN) is reused as is. */
static int accept_with_timeouts(FCGX_Request *req, int listen_fd)
{
    int fd;

    if (req->ipcFd >= 0)
        return 0;
    fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return errno > 0 ? -errno : -9999;
    if (fcgi_adapter_adopt(req, fd) != 0)
        log_msg(LOG_WARN, "cannot set the FastCGI connection's timeouts: %s", strerror(errno));
    return 0;
}

static void *worker(void *p)
{
    worker_arg *wa = p;
    const fcgi_app *app = wa->app;
    void *tctx = app->thread_init ? app->thread_init(wa->index) : NULL;
    char *body = malloc(HTTP_MAX_BODY + 1);
    unsigned char *win = malloc(FCGI_SCREEN_MAX); /* fcgi_adapter_screen's peek window */
    char path[2048];
    FCGX_Request req;
    int flags = adapter_drain_ms > 0 ? FCGI_FAIL_ACCEPT_ON_INTR : 0;

    /* listen_sock -1: libfcgi never accepts by itself (it would, after a
     * connection that sent no request, with no timeouts); only
     * accept_with_timeouts does, and FCGX_Accept_r then answers -EBADF. */
    if (!body || !win || FCGX_InitRequest(&req, -1, flags) != 0) {
        log_msg(LOG_ERROR, "fastcgi worker %d: cannot initialise", wa->index);
        free(body);
        free(win);
        if (app->thread_fini)
            app->thread_fini(tctx);
        atomic_store(&wa->state, W_DONE);
        atomic_fetch_sub(&workers_live, 1);
        return NULL;
    }
    for (;;) {
        http_request hr;
        http_response resp;
        http_cl_result cl;
        fcgi_screen_result scr;
        int rc;

        atomic_store(&wa->state, W_ACCEPTING);
        if (atomic_load(&adapter_stopping))
            break;
        rc = accept_with_timeouts(&req, wa->listen_fd);
        if (rc == 0 && (scr = fcgi_adapter_screen(&req, win)) != FCGI_SCREEN_OK) {
            if (scr == FCGI_SCREEN_BAD)
                log_msg(LOG_WARN,
                        "fastcgi: refused a connection whose request parameters are "
                        "incomplete, over %d bytes or declare more bytes than they carry",
                        FCGI_SCREEN_MAX);
            continue; /* closed unread: libfcgi never parses it */
        }
        if (rc == 0 && (rc = FCGX_Accept_r(&req)) == -EBADF)
            continue; /* the connection ended (or timed out) before a request came */
        if (rc < 0) {
            if (atomic_load(&adapter_stopping))
                break;
            if (rc == -EINTR)
                continue; /* a stray signal, not a stop */
            log_msg(LOG_ERROR, "fastcgi worker %d: accept failed (%d); worker ends", wa->index, rc);
            break;
        }
        atomic_store(&wa->state, W_BUSY);
        current_fd = req.ipcFd;
        current_envp = req.envp;
        cl = fcgi_adapter_read_request(&req, body, path, sizeof(path), &hr);

        http_response_init(&resp);
        if (cl == HTTP_CL_INVALID)
            http_response_error(&resp, 400, "invalid_request",
                                "CONTENT_LENGTH is not a plain decimal number");
        else
            app->handle(tctx, &hr, &resp);
        fcgi_adapter_write_response(&req, &resp);
        http_response_free(&resp);
        current_fd = -1;
        current_envp = NULL;
        if (wa->unix_listener)
            close_without_linger(&req);
        FCGX_Finish_r(&req);
    }
    if (app->thread_fini)
        app->thread_fini(tctx);
    free(body);
    free(win);
    atomic_store(&wa->state, W_DONE);
    atomic_fetch_sub(&workers_live, 1);
    return NULL;
}

static void on_wake(int sig)
{
    (void)sig; /* only there to make accept() fail with EINTR */
}

static void on_hup(int sig)
{
    (void)sig;
    log_reopen();
}

void fcgi_adapter_block_signals(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Tells systemd our state when it asked ($NOTIFY_SOCKET); no-op otherwise. */
static void notify_systemd(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    size_t n;
    int fd;

    if (!path || !*path || (path[0] != '/' && path[0] != '@'))
        return;
    n = strlen(path);
    if (n >= sizeof(sa.sun_path))
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, n);
    if (sa.sun_path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract namespace */
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
               (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
        log_msg(LOG_WARN, "cannot notify systemd (%s): %s", state, strerror(errno));
    close(fd);
}

/* The socket systemd passed (socket activation), or -1. Clears LISTEN_* so
 * child processes do not take it for theirs. */
static int systemd_listen_fd(void)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    int fd = -1;

    if (pid && fds && strtol(pid, NULL, 10) == (long)getpid() && strtol(fds, NULL, 10) >= 1) {
        if (strtol(fds, NULL, 10) > 1)
            log_msg(LOG_WARN, "systemd passed %s sockets; serving the first only", fds);
        fd = SD_LISTEN_FDS_START;
    }
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return fd;
}

/* 1 when fd is a listening socket. */
/* IDEMPAY_SOCKET_MODE: the permissions of a socket path this program
 * creates, octal, default 0600 (only the program's own user may connect).
 * Returns the mode, or -1 when the value is not an octal 0600..0666 with
 * the owner's read and write bits and no execute bits. */
static int socket_mode_setting(void)
{
    const char *v = env_str("IDEMPAY_SOCKET_MODE", "0600");
    char *end;
    long m = strtol(v, &end, 8);

    if (*v == '\0' || *end != '\0' || m < 0600 || m > 0666 || (m & 0111) != 0 || (m & 0600) != 0600)
        return -1;
    return (int)m;
}

/* Opens the listen socket of listen_spec: ":PORT" on loopback,
 * "HOST:PORT", or a unix socket path created with IDEMPAY_SOCKET_MODE (the
 * umask keeps it closed between bind and chmod). Returns the fd or -1
 * (logged). */
static int open_listener(const char *listen_spec)
{
    char loopback[64];
    int fd, mode = socket_mode_setting();
    int is_path = strchr(listen_spec, ':') == NULL;

    if (mode < 0) {
        log_msg(LOG_ERROR, "IDEMPAY_SOCKET_MODE must be an octal mode 0600..0666 without"
                           " execute bits, e.g. 0600 (default) or 0660");
        return -1;
    }
    /* ":PORT" listens on loopback only; "0.0.0.0:PORT" must be asked for */
    if (listen_spec[0] == ':' &&
        snprintf(loopback, sizeof(loopback), "127.0.0.1%s", listen_spec) < (int)sizeof(loopback))
        listen_spec = loopback;
    mode_t old = umask(0177);
    fd = FCGX_OpenSocket(listen_spec, 1024);
    umask(old);
    if (fd < 0) {
        log_msg(LOG_ERROR, "cannot listen on %s", listen_spec);
        return -1;
    }
    if (is_path && chmod(listen_spec, (mode_t)mode) != 0) {
        log_msg(LOG_ERROR, "cannot set mode %04o on %s: %s", mode, listen_spec, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int is_listening(int fd)
{
    int on = 0;
    socklen_t len = sizeof(on);

    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

/* Waits for SIGTERM/SIGINT (SIGHUP reopens the log) or for every worker to
 * end on its own. Returns the stopping signal, or 0. */
static int wait_for_stop(void)
{
    sigset_t set;
    struct timespec tick = { 0, 200 * 1000000L };

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    for (;;) {
        int sig = sigtimedwait(&set, NULL, &tick);

        if (sig == SIGHUP) {
            if (log_reopen() == 0)
                log_msg(LOG_INFO, "SIGHUP: log reopened");
            else
                log_msg(LOG_ERROR, "SIGHUP: cannot reopen the log file: %s", strerror(errno));
        } else if (sig == SIGTERM || sig == SIGINT) {
            return sig;
        }
        if (atomic_load(&workers_live) == 0)
            return 0;
    }
}

/* The graceful stop: no new requests, wake the idle workers, give the busy
 * ones until the deadline. Returns the number of workers still busy. */
static int drain(worker_arg *args, int nthreads, long drain_ms)
{
    long long deadline = clocks_mono_ms() + drain_ms;
    int busy = 0;

    atomic_store(&adapter_stopping, 1);
    FCGX_ShutdownPending();
    for (int i = 0; i < nthreads; i++)
        busy += atomic_load(&args[i].state) == W_BUSY;
    log_msg(LOG_INFO, "stopping: no new requests; %d in flight, waiting up to %ld ms", busy,
            drain_ms);
    for (;;) {
        struct timespec pause = { 0, STOP_POLL_MS * 1000000L };

        /* a worker may enter accept() just after being signalled: signal again */
        for (int i = 0; i < nthreads; i++)
            if (atomic_load(&args[i].state) == W_ACCEPTING)
                pthread_kill(args[i].tid, WAKE_SIGNAL);
        if (atomic_load(&workers_live) == 0)
            return 0;
        if (clocks_mono_ms() >= deadline)
            break;
        nanosleep(&pause, NULL);
    }
    busy = 0;
    for (int i = 0; i < nthreads; i++)
        busy += atomic_load(&args[i].state) != W_DONE;
    return busy;
}

int fcgi_adapter_run(const fcgi_app *app, int nthreads, const char *listen_spec)
{
    return fcgi_adapter_serve(app, nthreads, listen_spec, 0);
}

/* The process's signals for serving: SIGPIPE ignored; with a drain, the
 * wake signal interrupts accept() and SIGTERM/SIGINT are left to
 * wait_for_stop; without, SIGHUP reopens the log (unless the program set
 * its own handler). */
static void adapter_signals(long drain_ms)
{
    struct sigaction sa;
    sigset_t wake;

    signal(SIGPIPE, SIG_IGN);
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    if (drain_ms > 0) {
        /* installed before FCGX_Init, whose own SIGTERM/SIGUSR1 handlers
         * only apply where the disposition is still the default */
        sa.sa_handler = on_wake; /* no SA_RESTART: accept() returns EINTR */
        sigaction(WAKE_SIGNAL, &sa, NULL);
        sigemptyset(&wake);
        sigaddset(&wake, WAKE_SIGNAL);
        pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
        fcgi_adapter_block_signals();
    } else {
        struct sigaction old;
        if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
            sa.sa_handler = on_hup;
            sa.sa_flags = SA_RESTART;
            sigaction(SIGHUP, &sa, NULL);
        }
    }
}

int fcgi_adapter_serve(const fcgi_app *app, int nthreads, const char *listen_spec, long drain_ms)
{
    worker_arg *args;
    int listen_fd = 0, sig, busy;

    adapter_drain_ms = drain_ms;
    adapter_signals(drain_ms);
    if (FCGX_Init() != 0)
        return -1;
    if (listen_spec) {
        listen_fd = open_listener(listen_spec);
        if (listen_fd < 0)
            return -1;
    } else {
        int sd = systemd_listen_fd();
        if (sd >= 0)
            listen_fd = sd;
    }
    if (!is_listening(listen_fd)) {
        log_msg(LOG_ERROR,
                "fd %d is not a listening socket: run under lighttpd, spawn-fcgi or a "
                "systemd socket, or give \":PORT\" or a socket path",
                listen_fd);
        return -1;
    }
    if (nthreads < 1)
        nthreads = 1;
    args = calloc((size_t)nthreads, sizeof(*args));
    if (!args)
        return -1;
    atomic_store(&adapter_stopping, 0);
    atomic_store(&workers_live, nthreads);
    for (int i = 0; i < nthreads; i++) {
        args[i].app = app;
        args[i].index = i;
        args[i].listen_fd = listen_fd;
        args[i].unix_listener = listens_on_unix(listen_fd);
        atomic_store(&args[i].state, W_STARTING);
        if (pthread_create(&args[i].tid, NULL, worker, &args[i]) != 0) {
            log_msg(LOG_ERROR, "cannot start worker thread %d", i);
            atomic_fetch_sub(&workers_live, nthreads - i);
            nthreads = i;
            break;
        }
    }
    notify_systemd("READY=1");
    if (drain_ms <= 0) {
        for (int i = 0; i < nthreads; i++)
            pthread_join(args[i].tid, NULL);
        free(args);
        return 0;
    }
    sig = wait_for_stop();
    notify_systemd("STOPPING=1");
    if (sig)
        log_msg(LOG_INFO, "%s received", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    busy = drain(args, nthreads, drain_ms);
    if (busy > 0) {
        /* the workers still use args: leave it to the process's end */
        log_msg(LOG_WARN, "stop: %d requests still running after %ld ms; leaving them", busy,
                drain_ms);
        return 1;
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(args[i].tid, NULL);
    free(args);
    log_msg(LOG_INFO, "stopped: every request in flight was answered");
    return 0;
}
