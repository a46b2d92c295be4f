# tests/local.mk - test tooling owned by the stack (unit suites are
# registered by each module's own local.mk).
EXTRA_DIST += tests/unit/cu_suite.h tests/unit/db_suite.h tests/unit/sim_checker_fixture.h tests/unit/wx3_test_keys.h tests/run-integration tests/junit_integration.py tests/valgrind-wrap tests/lighttpd-variant.conf tests/valgrind.supp \
	tests/integration/lib.py tests/integration/lib_mock.py tests/integration/test_config_table.py
