/* clocks - the two clocks every program reads, and a sleep.
 *
 * The monotonic clock (CLOCK_MONOTONIC) measures durations and deadlines: it
 * never jumps with the wall clock. The wall clock (CLOCK_REALTIME) is for
 * times shown or stored (seconds or milliseconds since the epoch, UTC). The
 * mock gateway's own "now" (gateway-mock/clock.c) is the wall clock moved by
 * its clock_offset_ms knob and is built on clocks_real_ms. Thread-safe; no
 * state. */
#ifndef IDEMPAY_CLOCKS_H
#define IDEMPAY_CLOCKS_H

/* The monotonic clock in milliseconds (an arbitrary origin: compare two
 * readings, never show one). */
long long clocks_mono_ms(void);
/* The monotonic clock in seconds, with its sub-second part. */
double clocks_mono_s(void);
/* The wall clock in milliseconds since the epoch (UTC). */
long long clocks_real_ms(void);
/* Sleeps ms milliseconds, resuming after a signal until the time is spent.
 * ms <= 0 returns at once. */
void clocks_sleep_ms(long long ms);

#endif
