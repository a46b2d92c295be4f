# common/local.mk - the shared internal library (libidempay_common.a) and its
# unit tests. Included by the top-level Makefile.am (non-recursive build).

noinst_LIBRARIES += common/libidempay_common.a
common_libidempay_common_a_SOURCES = \
	common/env.c common/env.h \
	common/clocks.c common/clocks.h \
	common/text_copy.c common/text_copy.h \
	common/log.c common/log.h \
	common/log_budget.c common/log_budget.h \
	common/http_msg.c common/http_msg.h \
	common/fcgi_adapter.c common/fcgi_adapter.h \
	common/fcgi_request.c common/fcgi_request.h \
	common/fcgi_screen.c common/fcgi_screen.h \
	common/db_conn.c common/db_conn.h \
	common/db_retry.c common/db_retry.h \
	common/wx_xml.c common/wx_xml.h \
	common/wx_sign.c common/wx_sign.h \
	common/wx_refund_info.c common/wx_refund_info.h \
	common/wx3_sign.c common/wx3_sign.h \
	common/wx3_aead.c common/wx3_aead.h \
	common/money.c common/money.h \
	common/order_no.c common/order_no.h \
	common/rng.c common/rng.h \
	common/http_client.c common/http_client.h \
	common/caller_sign.c common/caller_sign.h \
	common/service_windows.c common/service_windows.h \
	common/service_ports.c common/service_ports.h \
	common/wx_endpoint.c common/wx_endpoint.h \
	common/mock_knobs.c common/mock_knobs.h \
	common/dev_merchant.h
common_libidempay_common_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(MXML_CFLAGS) \
	$(MARIADB_CFLAGS) $(CRYPTO_CFLAGS)

# What a program links to use the library (programs that use db_conn or
# fcgi_adapter add $(MARIADB_LIBS) $(FCGI_LIBS) themselves).
COMMON_LIBS = common/libidempay_common.a $(MXML_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) $(CRYPTO_LIBS) \
	$(PTHREAD_LIBS)

# Unit tests of the modules above: one CUnit suite per module.
common_unit_cflags = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(CURL_CFLAGS) $(MXML_CFLAGS) $(CRYPTO_CFLAGS)
common_unit_ldadd = $(COMMON_LIBS) $(CUNIT_LIBS) $(MARIADB_LIBS) $(FCGI_LIBS)

common_unit_tests = \
	tests/unit/test_wx_xml \
	tests/unit/test_wx_sign \
	tests/unit/test_wx_refund_info \
	tests/unit/test_wx3_sign \
	tests/unit/test_wx3_aead \
	tests/unit/test_money \
	tests/unit/test_order_no \
	tests/unit/test_wx_endpoint \
	tests/unit/test_mock_knobs \
	tests/unit/test_rng \
	tests/unit/test_clocks \
	tests/unit/test_text_copy \
	tests/unit/test_http_client \
	tests/unit/test_env \
	tests/unit/test_service_windows \
	tests/unit/test_db_conn \
	tests/unit/test_db_retry \
	tests/unit/test_http_msg \
	tests/unit/test_fcgi_adapter
check_PROGRAMS += $(common_unit_tests)
TESTS += $(common_unit_tests)

tests_unit_test_wx_xml_SOURCES = tests/unit/test_wx_xml.c
tests_unit_test_wx_xml_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx_xml_LDADD = $(common_unit_ldadd)

tests_unit_test_wx_sign_SOURCES = tests/unit/test_wx_sign.c
tests_unit_test_wx_sign_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx_sign_LDADD = $(common_unit_ldadd)

tests_unit_test_wx_refund_info_SOURCES = tests/unit/test_wx_refund_info.c
tests_unit_test_wx_refund_info_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx_refund_info_LDADD = $(common_unit_ldadd)

tests_unit_test_wx3_sign_SOURCES = tests/unit/test_wx3_sign.c
tests_unit_test_wx3_sign_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx3_sign_LDADD = $(common_unit_ldadd)

tests_unit_test_wx3_aead_SOURCES = tests/unit/test_wx3_aead.c
tests_unit_test_wx3_aead_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx3_aead_LDADD = $(common_unit_ldadd)

tests_unit_test_money_SOURCES = tests/unit/test_money.c
tests_unit_test_money_CFLAGS = $(common_unit_cflags)
tests_unit_test_money_LDADD = $(common_unit_ldadd)

tests_unit_test_order_no_SOURCES = tests/unit/test_order_no.c
tests_unit_test_wx_endpoint_SOURCES = tests/unit/test_wx_endpoint.c
tests_unit_test_wx_endpoint_CFLAGS = $(common_unit_cflags)
tests_unit_test_wx_endpoint_LDADD = $(common_unit_ldadd)
tests_unit_test_order_no_CFLAGS = $(common_unit_cflags)
tests_unit_test_order_no_LDADD = $(common_unit_ldadd)

tests_unit_test_mock_knobs_SOURCES = tests/unit/test_mock_knobs.c
tests_unit_test_mock_knobs_CFLAGS = $(common_unit_cflags) $(JANSSON_CFLAGS)
tests_unit_test_mock_knobs_LDADD = $(common_unit_ldadd)

tests_unit_test_rng_SOURCES = tests/unit/test_rng.c
tests_unit_test_rng_CFLAGS = $(common_unit_cflags)
tests_unit_test_rng_LDADD = $(common_unit_ldadd)

tests_unit_test_clocks_SOURCES = tests/unit/test_clocks.c
tests_unit_test_clocks_CFLAGS = $(common_unit_cflags)
tests_unit_test_clocks_LDADD = $(common_unit_ldadd)

tests_unit_test_text_copy_SOURCES = tests/unit/test_text_copy.c
tests_unit_test_text_copy_CFLAGS = $(common_unit_cflags)
tests_unit_test_text_copy_LDADD = $(common_unit_ldadd)

tests_unit_test_http_client_SOURCES = tests/unit/test_http_client.c
tests_unit_test_http_client_CFLAGS = $(common_unit_cflags)
tests_unit_test_http_client_LDADD = $(common_unit_ldadd)

tests_unit_test_service_windows_SOURCES = tests/unit/test_service_windows.c
tests_unit_test_service_windows_CFLAGS = $(common_unit_cflags)
tests_unit_test_service_windows_LDADD = $(common_unit_ldadd)

tests_unit_test_env_SOURCES = tests/unit/test_env.c
tests_unit_test_env_CFLAGS = $(common_unit_cflags)
tests_unit_test_env_LDADD = $(common_unit_ldadd)

tests_unit_test_db_conn_SOURCES = tests/unit/test_db_conn.c
tests_unit_test_db_conn_CFLAGS = $(common_unit_cflags) $(MARIADB_CFLAGS)
tests_unit_test_db_conn_LDADD = $(common_unit_ldadd)

tests_unit_test_db_retry_SOURCES = tests/unit/test_db_retry.c
tests_unit_test_db_retry_CFLAGS = $(common_unit_cflags) $(MARIADB_CFLAGS)
tests_unit_test_db_retry_LDADD = $(common_unit_ldadd)

tests_unit_test_http_msg_SOURCES = tests/unit/test_http_msg.c
tests_unit_test_http_msg_CFLAGS = $(common_unit_cflags) $(JANSSON_CFLAGS)
tests_unit_test_http_msg_LDADD = $(common_unit_ldadd)

tests_unit_test_fcgi_adapter_SOURCES = tests/unit/test_fcgi_adapter.c
tests_unit_test_fcgi_adapter_CFLAGS = $(common_unit_cflags) $(JANSSON_CFLAGS)
tests_unit_test_fcgi_adapter_LDADD = $(common_unit_ldadd)
