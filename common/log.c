/* log - timestamped one-line records on stderr, one write(2) per line. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "env.h"

static char log_program[32] = "idempay";
static log_level log_min = LOG_INFO;

void log_init(const char *program)
{
    const char *lv = env_str("IDEMPAY_LOG_LEVEL", "info");

    snprintf(log_program, sizeof log_program, "%s", program ? program : "idempay");
    if (!strcasecmp(lv, "debug"))
        log_min = LOG_DEBUG;
    else if (!strcasecmp(lv, "warn"))
        log_min = LOG_WARN;
    else if (!strcasecmp(lv, "error"))
        log_min = LOG_ERROR;
    else
        log_min = LOG_INFO;
}

void log_msg(log_level level, const char *fmt, ...)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    char line[1024];
    struct timeval tv;
    struct tm tm;
    size_t n;
    int k;
    va_list ap;

    if (level < log_min)
        return;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    k = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec, (long)(tv.tv_usec / 1000), log_program, (int)getpid(),
                 names[level]);
    n = (k < 0) ? 0 : (size_t)k;
    if (n < sizeof line) {
        va_start(ap, fmt);
        k = vsnprintf(line + n, sizeof line - n, fmt, ap);
        va_end(ap);
        n = (k < 0) ? n : n + (size_t)k;
    }
    if (n >= sizeof line - 1)
        n = sizeof line - 2;   /* truncated: keep room for the newline */
    line[n++] = '\n';
    for (size_t off = 0; off < n;) {
        ssize_t w = write(STDERR_FILENO, line + off, n - off);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

char *log_token(const char *token, char *out, size_t outlen)
{
    if (!outlen)
        return out;
    if (!token) {
        snprintf(out, outlen, "-");
        return out;
    }
    snprintf(out, outlen, "%.6s...", token);
    return out;
}
