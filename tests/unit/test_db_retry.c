/* test_db_retry.c - CUnit suite for db_retry: which failures are tried
 * again and how often (a scripted fake try, pauses recorded by an injected
 * sleep), then a real lock wait timeout (1205) on the stack's MariaDB
 * (IDEMPAY_DB_* as ./stack sets them; no database: the suite FAILS) ended
 * by a second try once the lock is gone. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db_conn.h"
#include "db_retry.h"

/* ---- a scripted try ------------------------------------------------------ */

#define SCRIPT_MAX 32

typedef struct {
    db_try_status status[SCRIPT_MAX]; /* what try i says; past n: the last */
    db_try_report report[SCRIPT_MAX];
    int n;
    int tries;
} script;

static long long pauses[SCRIPT_MAX];
static int npauses;

static void record_sleep(long long ms)
{
    if (npauses < SCRIPT_MAX)
        pauses[npauses] = ms;
    npauses++;
}

static db_try_status scripted_try(void *arg, db_try_report *r)
{
    script *s = arg;
    int i = s->tries < s->n ? s->tries : s->n - 1;

    s->tries++;
    *r = s->report[i];
    return s->status[i];
}

static void script_add(script *s, db_try_status st, unsigned int err_no, bool lost, bool sent)
{
    s->status[s->n] = st;
    s->report[s->n].err_no = err_no;
    s->report[s->n].lost = lost;
    s->report[s->n].write_sent = sent;
    s->n++;
}

static const db_retry_policy policy = {
    .max_tries = 5,
    .max_lost_tries = 2,
    .pause_base_ms = 1,
    .pause_step_ms = 2,
    .sleep_ms = record_sleep,
};

static int run(const db_retry_policy *p, script *s, db_try_report *last)
{
    npauses = 0;
    return db_run(p, scripted_try, s, last);
}

static void test_deadlocks_are_tried_again_until_done(void)
{
    script s = { .n = 0 };
    db_try_report last;

    script_add(&s, DB_TRY_FAILED, 1213, false, false);
    script_add(&s, DB_TRY_FAILED, 1205, false, false);
    script_add(&s, DB_TRY_DONE, 0, false, false);
    CU_ASSERT_EQUAL(run(&policy, &s, &last), 0);
    CU_ASSERT_EQUAL(s.tries, 3);
    /* base 1 + step 2 * tries done */
    CU_ASSERT_EQUAL(npauses, 2);
    CU_ASSERT_EQUAL(pauses[0], 3);
    CU_ASSERT_EQUAL(pauses[1], 5);
}

static void test_a_deadlock_forever_ends_after_max_tries(void)
{
    script s = { .n = 0 };
    db_try_report last;

    script_add(&s, DB_TRY_FAILED, 1213, false, false);
    CU_ASSERT_EQUAL(run(&policy, &s, &last), -1);
    CU_ASSERT_EQUAL(s.tries, 5);
    CU_ASSERT_EQUAL(npauses, 4); /* none after the last try */
    CU_ASSERT_EQUAL(last.err_no, 1213);
}

static void test_a_lost_connection_gets_max_lost_tries(void)
{
    script s = { .n = 0 };

    script_add(&s, DB_TRY_FAILED, 2013, false, false); /* lost by its number */
    CU_ASSERT_EQUAL(run(&policy, &s, NULL), -1);
    CU_ASSERT_EQUAL(s.tries, 2);

    script t = { .n = 0 };
    script_add(&t, DB_TRY_FAILED, 0, true, false); /* lost by the try's word */
    script_add(&t, DB_TRY_DONE, 0, false, false);
    CU_ASSERT_EQUAL(run(&policy, &t, NULL), 0);
    CU_ASSERT_EQUAL(t.tries, 2);
}

static void test_a_lost_connection_after_commit_is_never_tried_again(void)
{
    script s = { .n = 0 };
    db_try_report last;

    script_add(&s, DB_TRY_FAILED, 2006, false, true);
    script_add(&s, DB_TRY_DONE, 0, false, false);
    CU_ASSERT_EQUAL(run(&policy, &s, &last), -1);
    CU_ASSERT_EQUAL(s.tries, 1);
    CU_ASSERT_EQUAL(npauses, 0);
    CU_ASSERT_TRUE(last.write_sent);
}

static void test_other_errors_end_at_once_unless_retry_any(void)
{
    script s = { .n = 0 };

    script_add(&s, DB_TRY_FAILED, 1062, false, false);
    script_add(&s, DB_TRY_DONE, 0, false, false);
    CU_ASSERT_EQUAL(run(&policy, &s, NULL), -1);
    CU_ASSERT_EQUAL(s.tries, 1);
    CU_ASSERT_EQUAL(npauses, 0);

    db_retry_policy any = policy;
    any.retry_any = true;
    s.tries = 0;
    CU_ASSERT_EQUAL(run(&any, &s, NULL), 0);
    CU_ASSERT_EQUAL(s.tries, 2);
}

static void test_again_counts_as_a_try(void)
{
    script s = { .n = 0 };

    script_add(&s, DB_TRY_AGAIN, 0, false, false);
    CU_ASSERT_EQUAL(run(&policy, &s, NULL), -1);
    CU_ASSERT_EQUAL(s.tries, 5);
}

static void test_jitter_stays_in_its_range(void)
{
    db_retry_policy p = policy;
    db_try_report r = { 1213, false, false };

    p.pause_jitter_ms = 5;
    p.max_tries = 1000;
    npauses = 0;
    for (int i = 1; i <= 20; i++) {
        CU_ASSERT_TRUE(db_retry_next(&p, 1, DB_TRY_FAILED, &r));
        CU_ASSERT_TRUE(pauses[0] >= 3 && pauses[0] <= 7);
        npauses = 0;
    }
    CU_ASSERT_FALSE(db_retry_next(&p, 1, DB_TRY_DONE, &r));
    CU_ASSERT_EQUAL(npauses, 0);
}

/* ---- a real lock wait timeout ------------------------------------------- */

static MYSQL *holder, *waiter;
static char order_no[32];

static int exec1(MYSQL *db, const char *sql, const char *arg)
{
    MYSQL_STMT *st = mysql_stmt_init(db);
    int rc = -1;

    if (st != NULL && mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) == 0)
        rc = arg != NULL ? db_stmt_exec(st, "s", arg) : db_stmt_exec(st, "");
    if (rc != 0 && st != NULL)
        fprintf(stderr, "\n  %s: %s\n", sql, mysql_stmt_error(st));
    if (st != NULL)
        mysql_stmt_close(st);
    return rc;
}

typedef struct {
    int tries;
    unsigned int first_err;
} waiter_arg;

/* Updates the held row; after the first failure the holder lets go. */
static db_try_status waiter_try(void *arg, db_try_report *r)
{
    waiter_arg *w = arg;
    MYSQL_STMT *st = mysql_stmt_init(waiter);
    static const char sql[] = "UPDATE payment_order SET attempts = attempts + 1 WHERE order_no = ?";
    db_try_status s = DB_TRY_FAILED;

    w->tries++;
    if (st != NULL && mysql_stmt_prepare(st, sql, sizeof(sql) - 1) == 0 &&
        db_stmt_exec(st, "s", order_no) == 0)
        s = DB_TRY_DONE;
    else if (st != NULL)
        r->err_no = mysql_stmt_errno(st);
    if (w->tries == 1)
        w->first_err = r->err_no;
    if (st != NULL)
        mysql_stmt_close(st);
    if (s != DB_TRY_DONE)
        (void)exec1(holder, "ROLLBACK", NULL);
    return s;
}

static void test_a_lock_wait_timeout_is_tried_again(void)
{
    waiter_arg w = { 0, 0 };
    db_retry_policy p = { .max_tries = 3, .max_lost_tries = 2, .pause_step_ms = 10 };

    CU_ASSERT_FATAL(holder != NULL && waiter != NULL);
    CU_ASSERT_EQUAL_FATAL(exec1(holder, "START TRANSACTION", NULL), 0);
    CU_ASSERT_EQUAL_FATAL(exec1(holder, "SELECT 1 FROM payment_order WHERE order_no = ? FOR UPDATE",
                                order_no),
                          0);
    CU_ASSERT_EQUAL(db_run(&p, waiter_try, &w, NULL), 0);
    CU_ASSERT_EQUAL(w.first_err, 1205);
    CU_ASSERT_EQUAL(w.tries, 2);
}

static int suite_init(void)
{
    char err[256];

    if (mysql_library_init(0, NULL, NULL) != 0)
        return -1;
    holder = db_conn_open("idempay", err, sizeof(err));
    waiter = holder != NULL ? db_conn_open("idempay", err, sizeof(err)) : NULL;
    if (waiter == NULL) {
        fprintf(stderr, "test_db_retry: MariaDB unavailable: %s\n", err);
        return -1;
    }
    snprintf(order_no, sizeof(order_no), "DBRT%05d", (int)(getpid() % 100000));
    (void)exec1(holder, "DELETE FROM payment_order WHERE order_no = ?", order_no);
    if (exec1(holder,
              "INSERT INTO payment_order (order_no, user_id, amount, status) "
              "VALUES (?, 1, 1.00, 0)",
              order_no) != 0 ||
        exec1(waiter, "SET SESSION innodb_lock_wait_timeout = 1", NULL) != 0)
        return -1;
    return 0;
}

static int suite_clean(void)
{
    if (holder != NULL)
        (void)exec1(holder, "DELETE FROM payment_order WHERE order_no = ?", order_no);
    if (holder != NULL)
        mysql_close(holder);
    if (waiter != NULL)
        mysql_close(waiter);
    mysql_library_end();
    return 0;
}

int main(void)
{
    static const cu_test tests[] = {
        { "deadlocks are tried again until done", test_deadlocks_are_tried_again_until_done },
        { "a deadlock forever ends after max_tries", test_a_deadlock_forever_ends_after_max_tries },
        { "a lost connection gets max_lost_tries", test_a_lost_connection_gets_max_lost_tries },
        { "a lost connection after COMMIT is never tried again",
          test_a_lost_connection_after_commit_is_never_tried_again },
        { "other errors end at once unless retry_any",
          test_other_errors_end_at_once_unless_retry_any },
        { "DB_TRY_AGAIN counts as a try", test_again_counts_as_a_try },
        { "the jitter stays in its range", test_jitter_stays_in_its_range },
        { "a real lock wait timeout is tried again", test_a_lock_wait_timeout_is_tried_again },
    };
    return CU_SUITE_RUN("db_retry", suite_init, suite_clean, tests);
}
