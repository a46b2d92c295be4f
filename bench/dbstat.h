/* dbstat - MariaDB's global status counters, read before and after a phase,
 * so the bench can say how many statements, commits, redo writes and fsyncs
 * one request cost the database (every client's, the mock's included).
 *
 * A counter this server does not have (e.g. Innodb_os_log_fsyncs, gone in
 * MariaDB 10.8) reads as -1 and its delta as -1: reported, never guessed. */
#ifndef IDEMPAY_BENCH_DBSTAT_H
#define IDEMPAY_BENCH_DBSTAT_H

#include <mysql.h>

typedef enum {
    DBSTAT_QUESTIONS = 0, /* statements sent by clients (prepared executes too) */
    DBSTAT_COM_SELECT,
    DBSTAT_COM_INSERT,
    DBSTAT_COM_INSERT_SELECT,
    DBSTAT_COM_UPDATE,
    DBSTAT_COM_DELETE,
    DBSTAT_COM_BEGIN,
    DBSTAT_COM_COMMIT, /* explicit COMMIT statements */
    DBSTAT_COM_ROLLBACK,
    DBSTAT_COM_STMT_EXECUTE,
    DBSTAT_HANDLER_COMMIT, /* storage-engine commits, read-only statements' too */
    DBSTAT_LOG_WRITES,     /* Innodb_log_writes: redo log writes */
    DBSTAT_LOG_BYTES,      /* Innodb_os_log_written */
    DBSTAT_OS_LOG_FSYNCS,  /* Innodb_os_log_fsyncs (absent in 10.8+) */
    DBSTAT_DATA_FSYNCS,    /* Innodb_data_fsyncs (the redo log's fsyncs too in 10.11) */
    DBSTAT_COUNT
} dbstat_counter;

typedef struct {
    long long v[DBSTAT_COUNT];
} dbstat;

/* The counter's status variable name. */
const char *dbstat_name(dbstat_counter c);

/* Reads every counter over db (SHOW GLOBAL STATUS). Returns 0, or -1 with
 * every value -1 (the error is mysql_error(db)). */
int dbstat_read(MYSQL *db, dbstat *out);

/* after - before for counter c, or -1 when either is unknown. */
long long dbstat_delta(const dbstat *before, const dbstat *after, dbstat_counter c);

#endif
