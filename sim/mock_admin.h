/* mock_admin - the mock gateway's admin API as the simulator uses it:
 * reset (empty ledger, default config), set the fault config of a phase,
 * read the ledger. Each call retries a few times (the mock may be restarting
 * under the crash scenario's chaos command). */
#ifndef IDEMPAY_SIM_MOCK_ADMIN_H
#define IDEMPAY_SIM_MOCK_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "schedule.h"

#define MOCK_LEDGER_MAX (256u * 1024u * 1024u) /* bytes of ledger JSON accepted */

/* Knobs a mock may not know yet (an older mock answers 400 to them): the
 * per-endpoint faults and the close switch. mock_admin_filter drops those
 * (only those) that the mock's own config does not list. */
/* clang-format off */
#define MOCK_OPTIONAL_KNOBS {"endpoints", "closeorder_enabled", "notify_enabled", "hold_max_ms", \
                             "close_race_rate", "userpaying_rate", "clock_offset_ms", \
                             "instant_charge", "closeorder_min_age_ms", "userpaying_pay_rate", \
                             "refund_close_rate", "refund_change_rate", "refund_notenough_rate", \
                             "refund_delay_ms", "bill_forge"}
/* clang-format on */

/* POST {gateway}/mock/reset. Returns 0, or -1 with a message in err. */
int mock_admin_reset(const char *gateway, char *err, size_t errlen);

/* PUT {gateway}/mock/config with the JSON object text config.
 * Returns 0, or -1 with a message in err (the mock's answer included). */
int mock_admin_configure(const char *gateway, const char *config, char *err, size_t errlen);

/* GET {gateway}/mock/config: the mock's current config as JSON text
 * (malloc'd, caller frees), or NULL with a message in err. */
char *mock_admin_get_config(const char *gateway, char *err, size_t errlen);

/* A mock config as the simulator writes it (the text a phase sends, and
 * part of the schedule digest): obj as compact JSON with sorted keys and
 * reals of 6 significant digits, into out. 0, or -1 (out of memory, or
 * the text does not fit outlen). */
struct json_t;
int mock_admin_text(const struct json_t *obj, char *out, size_t outlen);

/* Writes config to out with every scalar optional knob it does not name
 * (close_race_rate, userpaying_rate, refund_close_rate, bill_forge ...) set to
 * its value in initial (the mock's config after the run's reset: the stack's
 * defaults), so that a phase never inherits an earlier phase's (the mock
 * merges what it is given). initial NULL: config as it is. Returns 0, or -1
 * (config not a JSON object, out too small). */
int mock_admin_with_defaults(const char *config, const char *initial, char *out, size_t outlen);

/* Writes config (a JSON object text) to out without the optional knobs that
 * known (the mock's own config, JSON text; NULL: keep everything) lacks, at
 * the top level and inside "endpoints". The names dropped are appended to
 * dropped (comma separated, "" when none). Returns 0, or -1 when config is
 * not a JSON object or out is too small. */
int mock_admin_filter(const char *config, const char *known, char *out, size_t outlen,
                      char *dropped, size_t droppedlen);

/* A ledger time ("2024-02-29T23:30:00.123456Z", UTC) as microseconds since
 * 1970, or INT64_MIN when it is not one. */
int64_t mock_admin_time_us(const char *iso);

/* GET {gateway}/mock/requests?out_trade_no=X: what the mock did with every
 * call of that order (endpoint, fault drawn, reply, latency) and every
 * notification delivery, as text lines (4-space indent, times on the run's
 * clock: wall time minus origin_epoch_us). *text is malloc'd (caller frees);
 * "" when the mock keeps no journal (an older mock: 404). Returns 0, or -1
 * with a message in err. */
int mock_admin_journal(const char *gateway, const char *out_trade_no, int64_t origin_epoch_us,
                       char **text, char *err, size_t errlen);

/* Formats a journal body (the same as mock_admin_journal). 0 or -1. */
int mock_admin_format_journal(const char *body, size_t len, int64_t origin_epoch_us, char **text);

/* GET {gateway}/mock/ledger; keeps the charges whose out_trade_no starts
 * with prefix, each mapped to its schedule order (or -1). *out is malloc'd
 * (caller frees, also when *n is 0); *notifications is notifications_sent or
 * -1. Returns 0, or -1 with a message in err and *out NULL. */
int mock_admin_ledger(const char *gateway, const sim_schedule *s, const char *prefix,
                      sim_charge **out, size_t *n, long long *notifications, char *err,
                      size_t errlen);

/* Parses a ledger body (the same filtering as mock_admin_ledger). */
int mock_admin_parse_ledger(const char *body, size_t len, const sim_schedule *s, const char *prefix,
                            sim_charge **out, size_t *n, long long *notifications, char *err,
                            size_t errlen);

#endif
