/* fcgi_screen - checks the start of a FastCGI connection's next request
 * before libfcgi reads it. libfcgi (2.4.2, Debian 12's CVE-2025-23016 patch
 * included) allocates nameLength + valueLength + 2 bytes for every PARAMS
 * name-value pair as the peer declares them, in int: two 4-byte lengths of
 * 0x5ddddddd overflow to a negative size, malloc fails and libfcgi's
 * assert() aborts the whole process; lengths near 2^31 that do not overflow
 * make it allocate up to 4 GiB per request whatever the peer really sends.
 * Found by fuzz/fuzz_fcgi. The screen lets a request reach libfcgi only when
 * every record up to the end of its parameters (the empty PARAMS record) is
 * there, within FCGI_SCREEN_MAX bytes, made of one BEGIN_REQUEST (8 bytes,
 * no padding) and PARAMS records of its id only, and every pair's declared
 * lengths fit in the parameter bytes that really follow. nginx and lighttpd send a few
 * KiB of parameters in one go. */
#ifndef IDEMPAY_FCGI_SCREEN_H
#define IDEMPAY_FCGI_SCREEN_H

#include <stddef.h>

#define FCGI_SCREEN_MAX 65536 /* bytes of stream before the parameters end */

typedef enum {
    FCGI_SCREEN_OK = 0, /* the parameters are complete and sane: hand it to libfcgi */
    FCGI_SCREEN_MORE,   /* not complete yet (pure check only) */
    FCGI_SCREEN_BAD,    /* refuse: close the connection without reading it */
    FCGI_SCREEN_CLOSED  /* the peer closed (or timed out) before sending anything */
} fcgi_screen_result;

/* Pure: screens the stream prefix buf[0..len): OK, MORE (len below
 * FCGI_SCREEN_MAX and the parameters not yet ended) or BAD. */
fcgi_screen_result fcgi_screen_params(const unsigned char *buf, size_t len);

/* Peeks (never consumes) at connected socket fd until fcgi_screen_params
 * decides, the peer stops sending (BAD, or CLOSED when nothing came) or
 * timeout_ms passes or a signal interrupts the wait (BAD, or CLOSED when
 * nothing came: a graceful stop wakes a waiting worker this way). win holds
 * FCGI_SCREEN_MAX bytes. */
fcgi_screen_result fcgi_screen_wait(int fd, unsigned char *win, long timeout_ms);

#endif
