/* log - one line per event on stderr (lighttpd collects it into the
 * component's log; systemd into the journal), or in IDEMPAY_LOG_FILE when
 * that is set (spawn-fcgi and the like). Lines are written with a single
 * write(2), so threads never interleave. Under journald (stderr is the
 * JOURNAL_STREAM) a line carries no timestamp, only its syslog priority
 * prefix ("<3>"), since the journal stamps it. Never pass secrets; pass
 * tokens through log_token. */
#ifndef IDEMPAY_LOG_H
#define IDEMPAY_LOG_H

#include <stddef.h>

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

/* Sets the program name shown on each line and the minimum level
 * (IDEMPAY_LOG_LEVEL=debug|info|warn|error overrides), and opens
 * IDEMPAY_LOG_FILE onto stderr when it is set. Returns 0, or -1 when that
 * file cannot be opened (logging then stays on stderr; a line says why). */
int log_init(const char *program);
/* Reopens IDEMPAY_LOG_FILE (after logrotate moved it) onto stderr; does
 * nothing without one. Async-signal-safe: a SIGHUP handler may call it.
 * Returns 0, or -1 when the file cannot be opened (the old one stays). */
int log_reopen(void);
/* 1 when lines go to the journal (stderr is $JOURNAL_STREAM), else 0. */
int log_to_journal(void);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes a loggable form of a secret-ish token into out: its first 6
 * characters then "...". Returns out. */
char *log_token(const char *token, char *out, size_t outlen);

#endif
