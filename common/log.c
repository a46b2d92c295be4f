/* log - one-line records on stderr (timestamped, unless journald stamps
 * them), one write(2) per line; stderr may be IDEMPAY_LOG_FILE. */
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "env.h"

static char log_program[32] = "idempay";
static log_level log_min = LOG_INFO;
static int log_journal;
static char log_file[512]; /* IDEMPAY_LOG_FILE, "" for none */

int log_reopen(void)
{
    int fd;

    if (!log_file[0])
        return 0;
    fd = open(log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return -1;
    if (fd != STDERR_FILENO) {
        /* dup2 replaces fd 2 atomically: a concurrent write goes to one file or the other */
        if (dup2(fd, STDERR_FILENO) < 0) {
            close(fd);
            return -1;
        }
        close(fd);
    }
    return 0;
}

int log_to_journal(void)
{
    return log_journal;
}

/* 1 when stderr is the stream journald gave us (JOURNAL_STREAM=dev:inode). */
static int stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) != 0)
        return 0;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int log_init(const char *program)
{
    const char *lv = env_str("IDEMPAY_LOG_LEVEL", "info");
    const char *file = env_str("IDEMPAY_LOG_FILE", "");
    int rc = 0;

    snprintf(log_program, sizeof(log_program), "%s", program ? program : "idempay");
    if (!strcasecmp(lv, "debug"))
        log_min = LOG_DEBUG;
    else if (!strcasecmp(lv, "warn"))
        log_min = LOG_WARN;
    else if (!strcasecmp(lv, "error"))
        log_min = LOG_ERROR;
    else
        log_min = LOG_INFO;
    snprintf(log_file, sizeof(log_file), "%s", file);
    if (log_file[0] && log_reopen() != 0) {
        rc = -1;
        log_msg(LOG_ERROR, "cannot open IDEMPAY_LOG_FILE %s; logging to stderr", log_file);
        log_file[0] = '\0';
    }
    log_journal = !log_file[0] && stderr_is_journal();
    return rc;
}

void log_msg(log_level level, const char *fmt, ...)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    static const int syslog_prio[] = { 7, 6, 4, 3 };
    char line[1024];
    struct timeval tv;
    struct tm tm;
    size_t n;
    int k;
    va_list ap;

    if (level < log_min)
        return;
    if (log_journal) {
        /* the journal adds time, program and pid itself */
        k = snprintf(line, sizeof(line), "<%d>%s: ", syslog_prio[level], names[level]);
    } else {
        gettimeofday(&tv, NULL);
        gmtime_r(&tv.tv_sec, &tm);
        k = snprintf(line, sizeof(line),
                     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (long)(tv.tv_usec / 1000), log_program, (int)getpid(), names[level]);
    }
    n = (k < 0) ? 0 : (size_t)k;
    if (n < sizeof(line)) {
        va_start(ap, fmt);
        k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
        n = (k < 0) ? n : n + (size_t)k;
    }
    if (n >= sizeof(line) - 1)
        n = sizeof(line) - 2; /* truncated: keep room for the newline */
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
