/* clock.c - the mock's clock: real time plus the clock_offset_ms knob. */
#include "clock.h"

#include <stdatomic.h>

#include "clocks.h"

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
    return clocks_real_ms() + atomic_load(&mock_clock_offset);
}

time_t mock_clock_now(void)
{
    long long ms = mock_clock_now_ms();
    return (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
}
