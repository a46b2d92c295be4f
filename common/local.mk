# common/local.mk - the shared internal library (libidempay_common.a) and its
# unit tests. Included by the top-level Makefile.am (non-recursive build).

noinst_LIBRARIES += common/libidempay_common.a
common_libidempay_common_a_SOURCES = \
	common/env.c common/env.h \
	common/clocks.c common/clocks.h \
	common/text_copy.c common/text_copy.h \
	common/text_token.c common/text_token.h \
	common/hex.c common/hex.h \
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
	common/wx3_platform.c common/wx3_platform.h \
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

# What a program links to use the library (programs that use db_conn or
# fcgi_adapter add $(MARIADB_LIBS) $(FCGI_LIBS) themselves).
COMMON_LIBS = common/libidempay_common.a $(MXML_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) $(CRYPTO_LIBS) \
	$(PTHREAD_LIBS)

# Unit tests of the modules above: one CUnit suite per module.
UNIT_SUITES += \
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
	tests/unit/test_text_token \
	tests/unit/test_http_client \
	tests/unit/test_env \
	tests/unit/test_service_windows \
	tests/unit/test_db_conn \
	tests/unit/test_db_retry \
	tests/unit/test_http_msg \
	tests/unit/test_fcgi_adapter

