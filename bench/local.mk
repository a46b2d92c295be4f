# bench/local.mk - the benchmark behind ./stack bench.
noinst_PROGRAMS += bench/idempay-bench
bench_idempay_bench_SOURCES = bench/bench.c bench/bench.h bench/report.c \
	bench/workload.c bench/workload.h bench/workload_int.h bench/workload_fixtures.c \
	bench/workload_v3.c bench/workload_v3.h \
	bench/proc.c bench/proc.h \
	bench/dbstat.c bench/dbstat.h bench/stats.c bench/stats.h
bench_idempay_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(MARIADB_CFLAGS)
bench_idempay_bench_LDADD = $(COMMON_LIBS) $(MARIADB_LIBS) $(PTHREAD_LIBS) -lm

# Unit tests of the bench's own modules.
bench_unit_tests = tests/unit/test_bench_stats tests/unit/test_bench_proc
check_PROGRAMS += $(bench_unit_tests)
TESTS += $(bench_unit_tests)
tests_unit_test_bench_stats_SOURCES = tests/unit/test_bench_stats.c bench/stats.c
tests_unit_test_bench_stats_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/bench -I$(top_srcdir)/tests/unit
tests_unit_test_bench_stats_LDADD = $(CUNIT_LIBS) -lm
tests_unit_test_bench_proc_SOURCES = tests/unit/test_bench_proc.c bench/proc.c
tests_unit_test_bench_proc_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/bench -I$(top_srcdir)/tests/unit
tests_unit_test_bench_proc_LDADD = $(CUNIT_LIBS)
