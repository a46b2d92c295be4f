/* log - one line per event on stderr (lighttpd collects it into the
 * component's log). Lines are written with a single write(2), so threads
 * never interleave. Never pass secrets; pass tokens through log_token. */
#ifndef IDEMPAY_LOG_H
#define IDEMPAY_LOG_H

#include <stddef.h>

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

/* Sets the program name shown on each line and the minimum level
 * (IDEMPAY_LOG_LEVEL=debug|info|warn|error overrides). */
void log_init(const char *program);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes a loggable form of a secret-ish token into out: its first 6
 * characters then "...". Returns out. */
char *log_token(const char *token, char *out, size_t outlen);

#endif
