# sim/local.mk - idempay-sim, the duplicate-charge simulator, and the unit
# suites of its modules. Every module but main.c goes into sim/libidempay_sim.a
# so the CUnit tests link the checker, schedule, report ... without main().

noinst_LIBRARIES += sim/libidempay_sim.a
sim_libidempay_sim_a_SOURCES = \
	sim/dialect.c \
	sim/dialect.h \
	sim/histogram.c sim/histogram.h \
	sim/schedule.c sim/schedule.h \
	sim/windows.c sim/windows.h \
	sim/gen.c sim/gen.h sim/gen_clients.c sim/gen_clients.h \
	sim/scenarios.c sim/scenarios.h sim/scenario_table.h \
	sim/scenario_clicks.c sim/scenario_misuse.c sim/scenario_faults.c \
	sim/nemesis.c sim/nemesis.h \
	sim/history.c sim/history.h \
	sim/checker.c sim/checker_charges.c sim/checker_clients.c sim/checker_answers.c \
	sim/checker_money.c sim/checker_refund.c sim/checker_fence.c sim/checker.h sim/checker_int.h \
	sim/refund_obs.c sim/refund_obs.h \
	sim/client_refund.c sim/client_refund.h \
	sim/scenario_edge.c sim/scenario_edge.h \
	sim/report.c sim/report.h \
	sim/witness.c sim/witness.h \
	sim/pool.c sim/pool.h \
	sim/client.c sim/client.h \
	sim/forge.c sim/forge.h \
	sim/forge_v3.c sim/forge_v3.h \
	sim/payer.c sim/payer.h \
	sim/client_payer.c sim/client_payer.h \
	sim/scenario_payer.c sim/scenario_payer.h \
	sim/scenario_v3.c sim/scenario_v3.h \
	sim/driver.c sim/driver.h \
	sim/readback.c sim/readback.h \
	sim/mock_admin.c sim/mock_admin.h sim/gateway_calls.c sim/gateway_calls.h \
	sim/dbread.c sim/dbread.h \
	sim/chaos.c sim/chaos.h \
	sim/pending.c sim/pending.h \
	sim/profile.c sim/profile_request.c sim/profile_answer.c sim/profile.h \
	sim/run.c sim/run_settle.c sim/run.h sim/run_int.h \
	sim/saved_run.c sim/saved_run_meta.c sim/saved_run_load.c sim/saved_history.c \
	sim/saved_run.h sim/saved_run_format.h \
	sim/timeline.c sim/timeline.h \
	sim/report_charts.c sim/report_charts.h \
	sim/report_html.c sim/report_html.h \
	sim/results.c sim/results.h \
	sim/progress.c sim/progress.h \
	sim/threshold.c sim/threshold.h \
	sim/scenario_file.c sim/scenario_file.h \
	sim/args.c sim/args.h

bin_PROGRAMS += sim/idempay-sim
sim_idempay_sim_SOURCES = sim/main.c
sim_idempay_sim_LDADD = sim/libidempay_sim.a $(COMMON_LIBS) $(MARIADB_LIBS) $(PTHREAD_LIBS) \
	$(MATH_LIBS)

UNIT_SUITES += \
	tests/unit/test_sim_histogram \
	tests/unit/test_sim_schedule \
	tests/unit/test_sim_windows \
	tests/unit/test_sim_checker \
	tests/unit/test_sim_checker_money \
	tests/unit/test_sim_report \
	tests/unit/test_sim_mock_admin \
	tests/unit/test_sim_driver \
	tests/unit/test_sim_forge \
	tests/unit/test_sim_forge_v3 \
	tests/unit/test_sim_payer \
	tests/unit/test_sim_pending \
	tests/unit/test_sim_results \
	tests/unit/test_sim_profile \
	tests/unit/test_sim_threshold \
	tests/unit/test_sim_scenario_file \
	tests/unit/test_sim_dialect

# the suite reads sim/profiles/ from the source tree
tests_unit_test_sim_profile_CFLAGS = $(AM_CFLAGS) -DIDEMPAY_SRCDIR='"$(abs_top_srcdir)"'

# target profiles (--profile FILE): idempay's own API (also built in) and the
# seed article's API shape
simprofilesdir = $(datadir)/idempay/profiles
dist_simprofiles_DATA = sim/profiles/idempay.json sim/profiles/seed-article.json

EXTRA_DIST += docs/SIMULATOR.md tests/integration/test_sim.py tests/integration/test_mutants.py \
	tests/integration/test_results.py \
	tests/integration/test_sim_ci.py $(wildcard $(top_srcdir)/sim/scenarios/*.json) \
	tests/mutants/mutants.py $(wildcard $(top_srcdir)/tests/mutants/*.mutant)
