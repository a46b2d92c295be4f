/* fcgi_screen - a FastCGI request's parameters checked before libfcgi
 * reads them (see fcgi_screen.h). */
#include "fcgi_screen.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "clocks.h"

#define REC_HEADER 8
#define TYPE_BEGIN 1
#define TYPE_PARAMS 4

/* Reads PARAMS content across records (other record types skipped). */
typedef struct {
    const unsigned char *b;
    size_t pos;  /* next header, or next content byte when left > 0 */
    size_t left; /* content bytes left in the current PARAMS record */
    size_t pad;  /* its padding, skipped when left reaches 0 */
} params_cursor;

/* Pass 1: the total PARAMS content before the empty PARAMS record into
 * *total. MORE when a record or that end is not within len. Before that end
 * only one BEGIN_REQUEST (8 bytes, no padding, a non-zero id) and PARAMS
 * records of its id may come; anything else is BAD: no web server sends it,
 * and libfcgi frames some records differently from the spec (it reads a
 * BEGIN_REQUEST's padding as further records, which hid a PARAMS record
 * from an earlier version of this check) or skips them (another id). */
static fcgi_screen_result find_end(const unsigned char *b, size_t len, size_t *total)
{
    size_t pos = 0;
    long begin_id = -1;

    *total = 0;
    while (pos + REC_HEADER <= len) {
        const unsigned char *h = b + pos;
        size_t clen = (size_t)h[4] << 8 | h[5], rec = REC_HEADER + clen + h[6];
        long id = (long)h[2] << 8 | h[3];

        if (h[1] == TYPE_BEGIN) {
            if (begin_id >= 0 || id == 0 || clen != 8 || h[6] != 0)
                return FCGI_SCREEN_BAD;
            begin_id = id;
        } else if (h[1] == TYPE_PARAMS && id == begin_id) {
            if (clen == 0)
                return FCGI_SCREEN_OK;
        } else {
            return FCGI_SCREEN_BAD;
        }
        if (pos + rec > len)
            break;
        if (h[1] == TYPE_PARAMS)
            *total += clen;
        pos += rec;
    }
    return len >= FCGI_SCREEN_MAX ? FCGI_SCREEN_BAD : FCGI_SCREEN_MORE;
}

/* The next PARAMS content byte; find_end has checked every record is whole. */
static unsigned next_byte(params_cursor *c)
{
    while (c->left == 0) {
        const unsigned char *h = c->b + c->pos;
        size_t clen = (size_t)h[4] << 8 | h[5];

        if (h[1] == TYPE_PARAMS) {
            c->left = clen;
            c->pad = h[6];
            c->pos += REC_HEADER;
        } else {
            c->pos += REC_HEADER + clen + h[6];
        }
    }
    c->left--;
    unsigned v = c->b[c->pos++];
    if (c->left == 0)
        c->pos += c->pad;
    return v;
}

/* A name or value length (1 byte, or 4 with the high bit set), taking from
 * *remaining. Returns 0, or -1 when the parameters end inside it. */
static int read_len(params_cursor *c, size_t *remaining, uint32_t *out)
{
    unsigned b0;

    if (*remaining < 1)
        return -1;
    b0 = next_byte(c);
    (*remaining)--;
    if (b0 < 0x80) {
        *out = b0;
        return 0;
    }
    if (*remaining < 3)
        return -1;
    *out = (uint32_t)(b0 & 0x7f) << 24;
    *out |= (uint32_t)next_byte(c) << 16;
    *out |= (uint32_t)next_byte(c) << 8;
    *out |= next_byte(c);
    *remaining -= 3;
    return 0;
}

fcgi_screen_result fcgi_screen_params(const unsigned char *buf, size_t len)
{
    params_cursor c = { buf, 0, 0, 0 };
    size_t remaining;
    fcgi_screen_result r = find_end(buf, len, &remaining);

    if (r != FCGI_SCREEN_OK)
        return r;
    while (remaining > 0) {
        uint32_t nlen, vlen;

        if (read_len(&c, &remaining, &nlen) != 0 || read_len(&c, &remaining, &vlen) != 0 ||
            (size_t)nlen + vlen > remaining)
            return FCGI_SCREEN_BAD;
        remaining -= (size_t)nlen + vlen;
        for (size_t i = 0; i < (size_t)nlen + vlen; i++)
            (void)next_byte(&c);
    }
    return FCGI_SCREEN_OK;
}

fcgi_screen_result fcgi_screen_wait(int fd, unsigned char *win, long timeout_ms)
{
    long long deadline = clocks_mono_ms() + timeout_ms;
    ssize_t have = -1;

    for (;;) {
        ssize_t n = recv(fd, win, FCGI_SCREEN_MAX, MSG_PEEK | MSG_DONTWAIT);
        struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };
        long long left = deadline - clocks_mono_ms();

        if (n == 0)
            return FCGI_SCREEN_CLOSED;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return FCGI_SCREEN_BAD;
        if (n > 0) {
            fcgi_screen_result r = fcgi_screen_params(win, (size_t)n);
            if (r != FCGI_SCREEN_MORE)
                return r;
        }
        if (left <= 0)
            return n > 0 ? FCGI_SCREEN_BAD : FCGI_SCREEN_CLOSED;
        if (n > 0 && n == have) {
            /* nothing new: data is there, so poll would not wait */
            struct timespec pause = { 0, 2 * 1000000L };
            if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
                return FCGI_SCREEN_BAD; /* the peer stopped mid-request */
            if (nanosleep(&pause, NULL) != 0 && errno == EINTR)
                return FCGI_SCREEN_BAD; /* a signal: the worker may be stopping */
        } else if (n < 0 && poll(&p, 1, (int)left) < 0 && errno == EINTR) {
            return FCGI_SCREEN_CLOSED; /* as libfcgi's own read gave up on EINTR */
        }
        have = n;
    }
}
