/* db_retry - running a MariaDB operation again when it failed transiently:
 * the one retry policy of every transaction loop (the mock's stores through
 * gateway-mock/mock_store and its journal; the service's order_store, the
 * callback transaction and the merchant refund transaction).
 *
 * Transient failures: a deadlock (1213, also what a Galera certification
 * failure reports) and a lock wait timeout (1205) (db_conn_retryable), and a
 * lost connection (2006, 2013, ...: db_conn_lost) - the latter only while no
 * write of the failed try can have been committed (a lost connection after
 * COMMIT was sent leaves its fate unknown: never run again). A try that asks
 * for another on its own (the data moved under it) counts like a transient
 * failure. Anything else ends the operation at once.
 *
 * The operation owns its connection: when a try fails it has already rolled
 * back what it started and dropped a lost connection (the next try
 * reconnects); db_run only decides and pauses. Thread-safe (no state). */
#ifndef IDEMPAY_DB_RETRY_H
#define IDEMPAY_DB_RETRY_H

#include <stdbool.h>

/* How often and how patiently. Before try n+1 (n >= 1 tries done) db_run
 * pauses pause_base_ms + pause_step_ms * n plus a random 0..pause_jitter_ms-1
 * ms (no pause when that is 0). */
typedef struct {
    int max_tries;      /* tries in all (>= 1) */
    int max_lost_tries; /* a lost connection after try n is retried only when
                         * n < max_lost_tries (<= max_tries) */
    long pause_base_ms;
    long pause_step_ms;
    long pause_jitter_ms;
    bool retry_any; /* every failure counts as transient (the journal: a
                     * batch whose write failed for any reason is retried) */
    /* The pause; NULL: clocks_sleep_ms. A test injects its own. */
    void (*sleep_ms)(long long ms);
} db_retry_policy;

/* What one try says. */
typedef enum {
    DB_TRY_DONE = 0, /* finished: whatever it found is the caller's outcome */
    DB_TRY_FAILED,   /* MariaDB failed: db_try_report says how */
    DB_TRY_AGAIN     /* nothing kept, and another try may find it otherwise */
} db_try_status;

/* The failure of a try (DB_TRY_FAILED). */
typedef struct {
    unsigned int err_no; /* the MariaDB error number; 0: not MariaDB's (or unknown) */
    bool lost;           /* the connection is gone (or was never there) whatever
                          * err_no says; a db_conn_lost err_no implies it */
    bool write_sent;     /* COMMIT (or an autocommit write) was sent before the
                          * connection was lost: its fate is unknown */
} db_try_report;

/* One try of the operation on arg: DB_TRY_DONE, DB_TRY_AGAIN, or
 * DB_TRY_FAILED with *report filled (zeroed before each try). */
typedef db_try_status (*db_try_fn)(void *arg, db_try_report *report);

/* After try number tries (1-based) ended as status/report: true when policy
 * p allows another, after pausing as p says; false when the operation must
 * end now (no pause). */
bool db_retry_next(const db_retry_policy *p, int tries, db_try_status status,
                   const db_try_report *report);

/* Runs try until it is DB_TRY_DONE or p allows no more tries. Returns 0
 * (done), or -1: the last try's status was FAILED or AGAIN, its report in
 * *last (may be NULL). */
int db_run(const db_retry_policy *p, db_try_fn try_once, void *arg, db_try_report *last);

#endif
