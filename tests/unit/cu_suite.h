/* cu_suite - how every idempay CUnit program runs its one suite: register
 * the module's tests from a table, run them verbosely, and exit 0 only when
 * every assertion held (1 on a failure, 2 when CUnit itself failed). */
#ifndef IDEMPAY_CU_SUITE_H
#define IDEMPAY_CU_SUITE_H

#include <CUnit/Basic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    CU_TestFunc fn;
} cu_test;

static inline int cu_suite_run(const char *suite, CU_InitializeFunc init, CU_CleanupFunc clean,
                               const cu_test *tests, size_t n)
{
    CU_pSuite s;
    unsigned int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite(suite, init, clean);
    for (size_t i = 0; s != NULL && i < n; i++)
        if (CU_add_test(s, tests[i].name, tests[i].fn) == NULL)
            s = NULL;
    if (s == NULL) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}

/* The one policy for a service a suite needs (the stack's MariaDB or
 * Redis): when it cannot be reached the suite FAILS, never skips (exit 77),
 * so neither ./stack test nor a make check by hand passes without testing
 * it. Prints "SUITE: SERVICE unreachable (DETAIL): failed ..." on stderr
 * and returns the exit status to return from main (1). */
static inline int cu_service_missing(const char *suite, const char *service, const char *detail)
{
    fprintf(stderr,
            "%s: %s unreachable (%s): failed (a suite that needs it fails without it;"
            " ./stack up starts it)\n",
            suite, service, detail != NULL ? detail : "no detail");
    return 1;
}

/* Writes text into a new private file /tmp/idempay-test-XXXXXX and puts its
 * name into path (len >= 32). Returns 0, or -1 (nothing left behind). The
 * caller unlinks path. */
static inline int cu_temp_file(const char *text, char *path, size_t len)
{
    int fd;
    size_t n = strlen(text);

    if (len < 32)
        return -1;
    snprintf(path, len, "/tmp/idempay-test-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    if (write(fd, text, n) != (ssize_t)n) {
        close(fd);
        unlink(path);
        return -1;
    }
    return close(fd);
}

/* CU_SUITE_RUN("money", NULL, NULL, tests) with tests a cu_test array. */
#define CU_SUITE_RUN(suite, init, clean, tests)                                                    \
    cu_suite_run((suite), (init), (clean), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
