/* clock.c - the mock's clock: real time plus the clock_offset_ms knob. */
#include "clock.h"

#include <stdatomic.h>

static atomic_llong mock_clock_offset;

void mock_clock_set_offset_ms(long long offset_ms)
{
    atomic_store(&mock_clock_offset, offset_ms);
}

long long mock_clock_offset_ms(void)
{
    return atomic_load(&mock_clock_offset);
}

void mock_clock_now_ts(struct timespec *out)
{
    long long off = atomic_load(&mock_clock_offset);
    clock_gettime(CLOCK_REALTIME, out);
    out->tv_sec += (time_t)(off / 1000);
    out->tv_nsec += (long)(off % 1000) * 1000000L;
    if (out->tv_nsec >= 1000000000L) {
        out->tv_sec += 1;
        out->tv_nsec -= 1000000000L;
    } else if (out->tv_nsec < 0) {
        out->tv_sec -= 1;
        out->tv_nsec += 1000000000L;
    }
}

long long mock_clock_now_ms(void)
{
    struct timespec ts;
    mock_clock_now_ts(&ts);
    return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

time_t mock_clock_now(void)
{
    struct timespec ts;
    mock_clock_now_ts(&ts);
    return ts.tv_sec;
}
