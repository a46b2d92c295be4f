# gateway-mock/local.mk - the mock WeChat Pay v2 gateway (idempay-gateway-mock)
# and its unit tests. Included by the top-level Makefile.am.

# The modules, as a library the program and the unit tests share.
noinst_LIBRARIES += gateway-mock/libidempay_mock.a
gateway_mock_libidempay_mock_a_SOURCES = \
	gateway-mock/mock.h \
	gateway-mock/api.c gateway-mock/api_handle.c gateway-mock/api.h \
	gateway-mock/bill.c gateway-mock/bill.h \
	gateway-mock/clock.c gateway-mock/clock.h \
	gateway-mock/flows.c gateway-mock/flows_micropay.c gateway-mock/flows.h gateway-mock/api_call.h \
	gateway-mock/flows_rules.c gateway-mock/flows_rules.h \
	gateway-mock/prepay.c gateway-mock/prepay.h \
	gateway-mock/payer.c gateway-mock/payer.h \
	gateway-mock/journal.c gateway-mock/journal.h \
	gateway-mock/admin.c gateway-mock/admin.h \
	gateway-mock/notifier.c gateway-mock/notifier.h \
	gateway-mock/ledger.c gateway-mock/ledger.h gateway-mock/ledger_db.h \
	gateway-mock/ledger_charge.c gateway-mock/ledger_close.c gateway-mock/ledger_refund.c \
	gateway-mock/ledger_rows.c gateway-mock/mock_store.c gateway-mock/mock_store.h \
	gateway-mock/faults.c gateway-mock/faults.h \
	gateway-mock/rules.c gateway-mock/rules.h \
	gateway-mock/txid.c gateway-mock/txid.h \
	gateway-mock/refund_store.c gateway-mock/refund_store.h \
	gateway-mock/refund_flow.c gateway-mock/refund_flow.h \
	gateway-mock/refund_notify.c gateway-mock/refund_notify.h \
	gateway-mock/v3_keys.c gateway-mock/v3_keys.h \
	gateway-mock/v3_notify.c gateway-mock/v3_notify.h \
	gateway-mock/v3_api.c gateway-mock/v3_map.c gateway-mock/v3_api.h gateway-mock/v3_call.h

bin_PROGRAMS += gateway-mock/idempay-gateway-mock
gateway_mock_idempay_gateway_mock_SOURCES = gateway-mock/main.c
gateway_mock_idempay_gateway_mock_LDADD = gateway-mock/libidempay_mock.a $(COMMON_LIBS) \
	$(MARIADB_LIBS) $(FCGI_LIBS) $(PTHREAD_LIBS) $(ZLIB_LIBS)

# Unit tests: one CUnit suite per module. None needs FastCGI; the ledger,
# journal, prepay and refund-store suites need MariaDB (the stack's; without
# one they fail, as every suite that needs a service: cu_service_missing).
UNIT_SUITES += \
	tests/unit/test_mock_api \
	tests/unit/test_mock_bill \
	tests/unit/test_mock_ledger \
	tests/unit/test_mock_journal \
	tests/unit/test_mock_txid \
	tests/unit/test_mock_faults \
	tests/unit/test_mock_rules \
	tests/unit/test_mock_notifier \
	tests/unit/test_mock_flows \
	tests/unit/test_mock_refund_notify \
	tests/unit/test_mock_refund_store \
	tests/unit/test_mock_prepay \
	tests/unit/test_mock_v3_notify
# refund_notify.h: the mock's, not app's (Makefile.am)
tests_unit_test_mock_refund_notify_CFLAGS = -I$(top_srcdir)/gateway-mock $(AM_CFLAGS)
