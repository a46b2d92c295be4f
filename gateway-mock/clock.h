/* clock - the mock's one notion of "now": the real time plus the knob
 * clock_offset_ms (PUT /mock/config), so tests and the simulator reach "5
 * minutes later" or "tomorrow 10:00" without waiting. Every rule of the
 * mock that reads the time (prepay expiry, closeorder's minimum age, the
 * USERPAYING delay, reverse's wait, the time a charge is recorded at) reads
 * it here. The offset only moves forward in the sense that the knob is
 * never negative; lowering it moves "now" back (a test's business).
 * Thread-safe (an atomic). */
#ifndef IDEMPAY_MOCK_CLOCK_H
#define IDEMPAY_MOCK_CLOCK_H

#include <time.h>

/* Sets the offset (faults_set / faults_init call it with the knob). */
void mock_clock_set_offset_ms(long long offset_ms);
/* The offset now in force. */
long long mock_clock_offset_ms(void);
/* The mock's now: CLOCK_REALTIME plus the offset, as a timespec. */
void mock_clock_now_ts(struct timespec *out);
/* The mock's now in ms since the epoch (UTC). */
long long mock_clock_now_ms(void);
/* The mock's now in seconds since the epoch (UTC). */
time_t mock_clock_now(void);

#endif
