/* txid - WeChat-like identifiers the mock hands out: 28-digit transaction_id
 * ("4200" + yyyymmdd + 16 digits), 28-digit refund_id ("5030" + yyyymmdd +
 * 16 digits) and prepay_id ("wx" + yyyymmddHHMMSS + 20 hex digits).
 *
 * The 16-digit tail is a process-wide counter scrambled by a bijection of
 * [0, 10^16), so ids never repeat within a process (until 10^16 ids); the
 * counter starts at an OS-random offset, and the ledger's primary key catches
 * the unlikely clash between processes (the caller draws again). Thread-safe. */
#ifndef IDEMPAY_MOCK_TXID_H
#define IDEMPAY_MOCK_TXID_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define TXID_LEN 28
#define TXID_BUF (TXID_LEN + 1)
#define TXID_PREPAY_BUF 37 /* "wx" + 14 + 20 + NUL */

/* Sets the counter's start. txid_init_random() draws it from the OS random
 * source (returns 0, or -1 when that fails and the clock was used instead).
 * Without either, the counter starts at 0. */
void txid_init(uint64_t start);
int txid_init_random(void);

/* A new transaction_id for a charge made at t (its date is China Standard
 * Time, UTC+8, as WeChat's). out receives 28 digits and a NUL. */
void txid_transaction(time_t t, char out[TXID_BUF]);
/* A new refund_id, same shape with prefix "5030". */
void txid_refund(time_t t, char out[TXID_BUF]);
/* A new prepay_id: "wx" + yyyymmddHHMMSS (UTC+8) + 20 lower-case hex digits. */
void txid_prepay(time_t t, char out[TXID_PREPAY_BUF]);

/* true when s is exactly 28 ASCII digits starting with "4200". */
bool txid_transaction_valid(const char *s);

/* The WeChat time form yyyymmddHHMMSS of t in UTC+8 (time_end). out has room
 * for 15 bytes. Returns out. */
char *txid_time_end(time_t t, char out[15]);

#endif
