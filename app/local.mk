# app/local.mk - the payment service (idempay-fcgi) and the unit suites of
# its modules. Every module but main.c goes into app/libidempay_app.a, so a
# CUnit test links the modules it needs without the FastCGI main.
# Source lists: one file per line (helpers append their own).

noinst_LIBRARIES += app/libidempay_app.a
app_libidempay_app_a_SOURCES = \
	app/router.c \
	app/router.h \
	app/app_ctx.c \
	app/app_ctx.h \
	app/config.c \
	app/config.h \
	app/config_report.c \
	app/config_limits.c \
	app/config_limits.h \
	app/rate_limit.c \
	app/rate_limit.h \
	app/redis_room.c \
	app/redis_room.h \
	app/config_report.h \
	app/metrics.c \
	app/metrics.h \
	app/health.c \
	app/health.h \
	app/pay.c \
	app/pay.h \
	app/pay_get.c \
	app/paid_cache.c \
	app/paid_cache.h \
	app/pay_request.c \
	app/pay_request.h \
	app/pay_prepay.c \
	app/pay_prepay.h \
	app/trade_store.c \
	app/trade_store.h \
	app/trade_type.h \
	app/settle_micropay.c \
	app/settle_micropay.h \
	app/order_state.c \
	app/order_state.h \
	app/order_store.c \
	app/order_store.h \
	app/order_archive.c \
	app/order_archive.h \
	app/idem_key.c \
	app/idem_key.h \
	app/gateway.c \
	app/gateway.h \
	app/gateway_reply.c \
	app/gateway_reply.h \
	app/reconciler.c \
	app/reconciler.h \
	app/token.c \
	app/token.h \
	app/callback.c \
	app/callback.h \
	app/callback_verify.c \
	app/callback_verify.h \
	app/refund_queue.c \
	app/refund_queue.h \
	app/refund_state.c \
	app/refund_state.h \
	app/refund_api.c \
	app/refund_api.h \
	app/refund_notify.c \
	app/refund_notify.h \
	app/refund_notify_verify.c \
	app/refund_notify_verify.h \
	app/refund_admin.c \
	app/refund_admin.h \
	app/gateway_refund.c \
	app/gateway_refund.h \
	app/config_refund.c \
	app/config_refund.h \
	app/config_v3.c \
	app/config_v3.h \
	app/gateway_v3.c \
	app/gateway_v3.h \
	app/gateway_v3_reply.c \
	app/gateway_v3_reply.h \
	app/wx3_trust.c \
	app/wx3_trust.h \
	app/callback_v3.c \
	app/callback_v3.h \
	app/callback_v3_verify.c \
	app/callback_v3_verify.h \
	app/settle.c \
	app/settle.h \
	app/statement.c \
	app/statement.h \
	app/statement_parse.c \
	app/statement_parse.h \
	app/caller_auth.c \
	app/caller_auth.h \
	app/caller_store.c \
	app/caller_store.h \
	app/caller_gate.c \
	app/caller_gate.h

bin_PROGRAMS += app/idempay-fcgi
app_idempay_fcgi_SOURCES = \
	app/main.c
app_idempay_fcgi_LDADD = app/libidempay_app.a $(COMMON_LIBS) $(HIREDIS_LIBS) $(MARIADB_LIBS) \
	$(FCGI_LIBS) $(MATH_LIBS)

# Unit suites of the pay modules (test_order_store needs a reachable
# MariaDB through IDEMPAY_DB_*, and fails when there is none).
UNIT_SUITES += \
	tests/unit/test_pay_request \
	tests/unit/test_pay_flows \
	tests/unit/test_order_state \
	tests/unit/test_idem_key \
	tests/unit/test_order_store \
	tests/unit/test_gateway_v3

# Unit suites of the token, callback and refund modules (test_token talks to
# the stack's Redis and fails when there is none).
UNIT_SUITES += \
	tests/unit/test_caller_auth \
	tests/unit/test_metrics \
	tests/unit/test_token \
	tests/unit/test_callback \
	tests/unit/test_callback_apply \
	tests/unit/test_statement \
	tests/unit/test_refund_queue \
	tests/unit/test_refund_state

# Unit suites of the router, the paid cache, the pay flow and the
# reconciler (test_paid_cache is pure; the others run against the stack's
# MariaDB, Redis and mock gateway and fail when there is none).
UNIT_SUITES += \
	tests/unit/test_router \
	tests/unit/test_paid_cache \
	tests/unit/test_pay \
	tests/unit/test_reconciler \
	tests/unit/test_limits \
	tests/unit/test_order_archive

# reconciler_run_once settles every expired order in the database, other
# suites' too: test_reconciler runs after the suites that leave orders
# expired on purpose (make check -j would otherwise race them). Named
# through a variable, so automake still writes the log's own rule.
test_reconciler_log = tests/unit/test_reconciler.log
$(test_reconciler_log): tests/unit/test_order_store.log tests/unit/test_statement.log \
	tests/unit/test_callback.log tests/unit/test_callback_apply.log \
	tests/unit/test_refund_queue.log tests/unit/test_idem_key.log tests/unit/test_pay.log \
	tests/unit/test_router.log
