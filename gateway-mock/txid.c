/* txid.c - transaction, refund and prepay ids: a date part plus a scrambled
 * process-wide counter, so ids are unique within a process and look random. */
#include "txid.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define TXID_SPACE 10000000000000000ULL /* 10^16 */
/* Odd and not a multiple of 5, so x -> x*M mod 10^16 is a bijection. */
#define TXID_MULT 6364136223846793ULL
#define TXID_ADD 1442695040888963ULL

static _Atomic uint64_t txid_counter;

void txid_init(uint64_t start)
{
    atomic_store(&txid_counter, start % TXID_SPACE);
}

int txid_init_random(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) == (ssize_t)sizeof(r)) {
        txid_init(r);
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    txid_init((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
    return -1;
}

/* The next 16-digit tail: counter value scrambled by an affine bijection. */
static uint64_t txid_tail(void)
{
    uint64_t c = atomic_fetch_add(&txid_counter, 1) % TXID_SPACE;
    unsigned __int128 x = (unsigned __int128)c * TXID_MULT + TXID_ADD;
    return (uint64_t)(x % TXID_SPACE);
}

/* Writes the low `width` decimal digits of v at o (zero-padded). */
static char *txid_digits(char *o, unsigned long long v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + width;
}

/* Broken-down UTC+8 time of t. */
static void txid_cst(time_t t, struct tm *tm)
{
    time_t shifted = t + 8 * 3600;
    gmtime_r(&shifted, tm);
}

/* prefix is 4 characters. */
static void txid_make(const char *prefix, time_t t, char out[TXID_BUF])
{
    struct tm tm;
    txid_cst(t, &tm);
    char *o = out;
    memcpy(o, prefix, 4);
    o = txid_digits(o + 4, (unsigned long long)(tm.tm_year + 1900), 4);
    o = txid_digits(o, (unsigned long long)(tm.tm_mon + 1), 2);
    o = txid_digits(o, (unsigned long long)tm.tm_mday, 2);
    o = txid_digits(o, txid_tail(), 16);
    *o = '\0';
}

void txid_transaction(time_t t, char out[TXID_BUF])
{
    txid_make("4200", t, out);
}

void txid_refund(time_t t, char out[TXID_BUF])
{
    txid_make("5030", t, out);
}

void txid_prepay(time_t t, char out[TXID_PREPAY_BUF])
{
    char when[15];
    uint64_t a = txid_tail(), b = txid_tail();
    txid_time_end(t, when);
    snprintf(out, TXID_PREPAY_BUF, "wx%s%010llx%010llx", when,
             (unsigned long long)(a & 0xFFFFFFFFFFULL), (unsigned long long)(b & 0xFFFFFFFFFFULL));
}

bool txid_transaction_valid(const char *s)
{
    if (s == NULL || strncmp(s, "4200", 4) != 0)
        return false;
    for (size_t i = 0; i < TXID_LEN; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return s[TXID_LEN] == '\0';
}

char *txid_time_end(time_t t, char out[15])
{
    struct tm tm;
    txid_cst(t, &tm);
    char *o = txid_digits(out, (unsigned long long)(tm.tm_year + 1900), 4);
    o = txid_digits(o, (unsigned long long)(tm.tm_mon + 1), 2);
    o = txid_digits(o, (unsigned long long)tm.tm_mday, 2);
    o = txid_digits(o, (unsigned long long)tm.tm_hour, 2);
    o = txid_digits(o, (unsigned long long)tm.tm_min, 2);
    o = txid_digits(o, (unsigned long long)tm.tm_sec, 2);
    *o = '\0';
    return out;
}
