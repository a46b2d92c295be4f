/* test_db_conn.c - CUnit suite for db_conn's binding layer against a real
 * MariaDB (IDEMPAY_DB_* as ./stack sets them; no database: the suite
 * FAILS): every parameter and column letter, NULLs, truncation at a
 * buffer's end, malloc'd text ('m') empty, NULL, long and too many letters,
 * a streamed result, the statement cache and the error classes. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"

enum { S_ECHO, S_TEXT, S_ROWS, S_COUNT };

static const char *const sqls[S_COUNT] = {
    [S_ECHO] = "SELECT ?, ?, CAST(? AS SIGNED), NULL, CAST(NULL AS SIGNED)",
    [S_TEXT] = "SELECT REPEAT('x', ?), CAST(NULL AS CHAR), ''",
    [S_ROWS] = "SELECT seq FROM seq_1_to_100 WHERE seq <= ?",
};

static MYSQL *db;
static MYSQL_STMT *slots[S_COUNT];

static MYSQL_STMT *stmt(int sid)
{
    unsigned int no = 0;
    char err[256];
    MYSQL_STMT *st = db_stmt_slot(db, &slots[sid], sqls[sid], &no, err, sizeof(err));
    if (st == NULL)
        fprintf(stderr, "\n  %s\n", err);
    return st;
}

static int suite_init(void)
{
    char err[256];
    if (mysql_library_init(0, NULL, NULL) != 0)
        return -1;
    db = db_conn_open("idempay", err, sizeof(err));
    if (db == NULL)
        fprintf(stderr, "\n  MariaDB not reachable (set IDEMPAY_DB_SOCKET or run ./stack up): %s\n",
                err);
    return db != NULL ? 0 : -1;
}

static int suite_clean(void)
{
    db_conn_close(&db, slots, S_COUNT);
    mysql_library_end();
    return 0;
}

static void test_letters_round_trip(void)
{
    MYSQL_STMT *st = stmt(S_ECHO);
    char a[16], b[16], nul[8] = "junk";
    long long n = 0, nn = 7;
    int a_null = -1, n_null = -1;

    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec(st, "ssl", "order-1", NULL, 42LL), 0);
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "SslsL", a, sizeof(a), &a_null, b, sizeof(b), &n, nul,
                                  sizeof(nul), &nn, &n_null),
                    1);
    CU_ASSERT_STRING_EQUAL(a, "order-1");
    CU_ASSERT_EQUAL(a_null, 0);
    CU_ASSERT_STRING_EQUAL(b, ""); /* NULL parameter, NULL column: "" */
    CU_ASSERT_EQUAL(n, 42);
    CU_ASSERT_STRING_EQUAL(nul, "");
    CU_ASSERT_EQUAL(nn, 0); /* NULL number: 0 */
    CU_ASSERT_EQUAL(n_null, 1);
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "ssls", a, sizeof(a), b, sizeof(b), &n, nul, sizeof(nul)), 0);
}

static void test_text_cut_at_buffer(void)
{
    MYSQL_STMT *st = stmt(S_ECHO);
    char small[4], b[4], c[4];
    long long n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec(st, "ssl", "abcdef", "abc", 1LL), 0);
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "ssls", small, sizeof(small), b, sizeof(b), &n, c, sizeof(c)),
                    1);
    CU_ASSERT_STRING_EQUAL(small, "abc"); /* cap - 1 characters, terminated */
    CU_ASSERT_STRING_EQUAL(b, "abc");     /* exactly cap - 1: whole */
    db_stmt_done(st);
}

static void test_malloc_text(void)
{
    MYSQL_STMT *st = stmt(S_TEXT);
    char *big = (char *)1, *none = (char *)1, *empty = (char *)1;

    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec(st, "l", 70000LL), 0);
    CU_ASSERT_EQUAL_FATAL(db_stmt_fetch(st, "mmm", &big, &none, &empty), 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    CU_ASSERT_EQUAL(strlen(big), 70000);
    CU_ASSERT_EQUAL(big[69999], 'x');
    CU_ASSERT_PTR_NULL(none); /* NULL column: NULL */
    CU_ASSERT_PTR_NOT_NULL(empty);
    if (empty != NULL)
        CU_ASSERT_STRING_EQUAL(empty, "");
    free(big);
    free(empty);
    /* No more rows: every 'm' target NULL, nothing to free. */
    big = (char *)1;
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "mmm", &big, &none, &empty), 0);
    CU_ASSERT_PTR_NULL(big);
}

static void test_bad_letters(void)
{
    MYSQL_STMT *st = stmt(S_ECHO);
    char *t = (char *)1;
    long long n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(db_stmt_exec(st, "sx", "a", "b"), -1);
    CU_ASSERT_EQUAL(db_stmt_exec(st, "sssssssssssssssssssssssss", "", "", "", "", "", "", "", "",
                                 "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
                                 ""),
                    -1); /* 25 letters: more than it binds */
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec(st, "ssl", "a", "b", 1LL), 0);
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "mlq", &t, &n), -1);
    CU_ASSERT_PTR_NULL(t);
    db_stmt_done(st);
}

static void test_streamed_rows(void)
{
    MYSQL_STMT *st = stmt(S_ROWS);
    long long v = 0, sum = 0;
    int rc, rows = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec_stream(st, "l", 10LL), 0);
    while ((rc = db_stmt_fetch(st, "l", &v)) == 1) {
        rows++;
        sum += v;
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(rows, 10);
    CU_ASSERT_EQUAL(sum, 55);
    /* Stopped half-way, freed: the connection runs the next statement. */
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec_stream(st, "l", 50LL), 0);
    CU_ASSERT_EQUAL(db_stmt_fetch(st, "l", &v), 1);
    db_stmt_done(st);
    CU_ASSERT_EQUAL(db_exec_simple(db, "DO 1"), 0);
    CU_ASSERT_EQUAL_FATAL(db_stmt_exec(st, "l", 3LL), 0);
    CU_ASSERT_EQUAL(mysql_stmt_affected_rows(st), 3);
    db_stmt_done(st);
}

static void test_slot_reuse_and_prepare_error(void)
{
    MYSQL_STMT *bad = NULL;
    unsigned int no = 0;
    char err[256];

    CU_ASSERT_PTR_EQUAL(stmt(S_ECHO), stmt(S_ECHO));
    CU_ASSERT_PTR_NULL(db_stmt_slot(db, &bad, "SELEC nonsense", &no, err, sizeof(err)));
    CU_ASSERT_PTR_NULL(bad);
    CU_ASSERT_EQUAL(no, 1064);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "prepare: "));
    db_stmt_done(NULL);
}

static void test_error_classes(void)
{
    CU_ASSERT_TRUE(db_conn_lost(2006));
    CU_ASSERT_TRUE(db_conn_lost(2013));
    CU_ASSERT_FALSE(db_conn_lost(1062));
    CU_ASSERT_TRUE(db_conn_retryable(1213));
    CU_ASSERT_TRUE(db_conn_retryable(1205));
    CU_ASSERT_FALSE(db_conn_retryable(1062));
}

int main(void)
{
    static const cu_test tests[] = {
        { "every parameter and column letter round-trips, NULLs included",
          test_letters_round_trip },
        { "a text column is cut at the buffer's end", test_text_cut_at_buffer },
        { "'m' returns malloc'd text, long, NULL or empty", test_malloc_text },
        { "an unknown letter or too many letters is refused", test_bad_letters },
        { "rows stream and can be stopped half-way", test_streamed_rows },
        { "statement slots are reused and a prepare error is reported",
          test_slot_reuse_and_prepare_error },
        { "errors are classed as lost connection or retryable", test_error_classes },
    };
    return CU_SUITE_RUN("db_conn", suite_init, suite_clean, tests);
}
