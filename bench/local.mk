# bench/local.mk - the benchmark behind ./stack bench.
noinst_PROGRAMS += bench/idempay-bench
bench_idempay_bench_SOURCES = bench/bench.c bench/bench.h bench/report.c \
	bench/workload.c bench/workload.h bench/proc.c bench/proc.h \
	bench/dbstat.c bench/dbstat.h bench/stats.c bench/stats.h
bench_idempay_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(MARIADB_CFLAGS)
bench_idempay_bench_LDADD = $(COMMON_LIBS) $(MARIADB_LIBS) $(PTHREAD_LIBS) -lm
