/* cu_suite - how every idempay CUnit program runs its one suite: register
 * the module's tests from a table, run them verbosely, and exit 0 only when
 * every assertion held (1 on a failure, 2 when CUnit itself failed). */
#ifndef IDEMPAY_CU_SUITE_H
#define IDEMPAY_CU_SUITE_H

#include <CUnit/Basic.h>
#include <stddef.h>

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

/* CU_SUITE_RUN("money", NULL, NULL, tests) with tests a cu_test array. */
#define CU_SUITE_RUN(suite, init, clean, tests) \
    cu_suite_run((suite), (init), (clean), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
