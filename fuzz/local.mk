# fuzz/local.mk - libFuzzer harnesses (clang -fsanitize=fuzzer,address,undefined)
# for every parser of outside input; see docs/FUZZING.md.
#   make fuzz FUZZ_SECONDS=N   builds them, replays fuzz/regressions/, fuzzes
#                              each for N seconds (default 60), fails on a crash
#   make fuzz-build            builds only;  make fuzz-clean  removes it all
# Independent of CC and of the main build's flags: each harness compiles the
# common/ and app/ sources it tests with clang and links only mxml, jansson and
# libcrypto (no MariaDB, Redis), and fuzz_fcgi libfcgi as well: it feeds the
# FastCGI record stream through libfcgi into the adapter and the router.
# Nothing here is part of all/check.

FUZZ_CC = clang
FUZZ_SECONDS = 60
fuzz_compile_flags = -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-Wall -Wextra -Wno-unused-parameter \
	-DIDEMPAY_VERSION='"fuzz"' -DIDEMPAY_REVISION='"fuzz"'
# app headers include mysql.h / hiredis.h for their types: headers only.
fuzz_include_flags = -I$(top_srcdir)/common -I$(top_srcdir)/app -I$(top_srcdir)/fuzz \
	$(JANSSON_CFLAGS) $(MXML_CFLAGS) $(CRYPTO_CFLAGS) $(MARIADB_CFLAGS) $(HIREDIS_CFLAGS)
# Each harness links only pure modules (callback_verify.c, gateway_reply.c,
# pay_request.c, statement_parse.c, common/): no MariaDB, Redis or FastCGI.
fuzz_link_flags =
fuzz_libs = $(MXML_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS)

FUZZ_HARNESSES = fuzz_notify fuzz_pay_request fuzz_amount fuzz_gateway_reply fuzz_statement \
	fuzz_refund_info fuzz_refund_notify fuzz_fcgi fuzz_v3
FUZZ_PROGS = $(FUZZ_HARNESSES:%=fuzz/%)

# The sources each harness tests (compiled once each, with coverage).
fuzz_units_notify = fuzz/fuzz_notify app/callback_verify common/http_msg common/wx_xml common/wx_sign \
	common/money common/order_no common/text_token
fuzz_units_pay_request = fuzz/fuzz_pay_request app/pay_request common/http_msg \
	common/money common/order_no common/text_token
fuzz_units_amount = fuzz/fuzz_amount common/money
fuzz_units_gateway_reply = fuzz/fuzz_gateway_reply app/gateway_reply common/wx_xml common/wx_sign \
	common/money common/text_copy
fuzz_units_statement = fuzz/fuzz_statement app/statement_parse common/money common/order_no \
	common/text_copy common/text_token
fuzz_units_refund_info = fuzz/fuzz_refund_info common/wx_refund_info
fuzz_units_refund_notify = fuzz/fuzz_refund_notify app/refund_notify_verify common/wx_refund_info \
	common/wx_xml common/money common/text_token
# APIv3: the notification (signature, envelope, AEAD resource, fields) and
# the gateway's v3 replies read by the v2 meanings.
fuzz_units_v3 = fuzz/fuzz_v3 app/callback_v3_verify app/wx3_trust app/gateway_v3_reply \
	app/gateway_reply common/wx3_sign common/wx3_aead common/wx_xml common/wx_sign common/money \
	common/order_no common/http_msg common/text_copy common/text_token
# The FastCGI edge: libfcgi's decoding, the adapter's request building, the
# router of both doors with stand-in handlers and caller check
# (fuzz/fuzz_fcgi.c), the pure request parsers and signature checks.
fuzz_units_fcgi = fuzz/fuzz_fcgi common/fcgi_request common/fcgi_screen app/router app/metrics app/pay_request \
	common/http_msg common/log common/env common/money common/order_no app/caller_auth common/caller_sign common/log_budget \
	common/clocks common/text_token common/hex

fuzz_header_deps = $(wildcard $(top_srcdir)/common/*.h $(top_srcdir)/app/*.h $(top_srcdir)/fuzz/*.h)

fuzz/out/obj/%.o: $(top_srcdir)/%.c $(fuzz_header_deps)
	@mkdir -p $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(fuzz_include_flags) $(fuzz_compile_flags) -fsanitize=fuzzer-no-link -c -o $@ $<

fuzz_link = $(FUZZ_CC) $(fuzz_compile_flags) -fsanitize=fuzzer $(fuzz_link_flags)

fuzz/fuzz_notify: $(fuzz_units_notify:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_pay_request: $(fuzz_units_pay_request:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_amount: $(fuzz_units_amount:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_gateway_reply: $(fuzz_units_gateway_reply:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)

fuzz/fuzz_statement: $(fuzz_units_statement:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_refund_info: $(fuzz_units_refund_info:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_refund_notify: $(fuzz_units_refund_notify:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_v3: $(fuzz_units_v3:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs)
fuzz/fuzz_fcgi: $(fuzz_units_fcgi:%=fuzz/out/obj/%.o)
	$(AM_V_CCLD)$(fuzz_link) -o $@ $^ $(fuzz_libs) $(FCGI_LIBS)

fuzz-build: $(FUZZ_PROGS)

fuzz: $(FUZZ_PROGS)
	@$(SHELL) $(top_srcdir)/fuzz/run-fuzzers $(FUZZ_SECONDS) $(top_srcdir)/fuzz fuzz \
		$(FUZZ_HARNESSES)

fuzz-clean:
	rm -rf fuzz/out $(FUZZ_PROGS)

.PHONY: fuzz fuzz-build fuzz-clean

CLEANFILES += $(FUZZ_PROGS)
EXTRA_DIST += fuzz/local.mk fuzz/run-fuzzers fuzz/harness.h fuzz/fuzz_notify.c \
	fuzz/fuzz_pay_request.c fuzz/fuzz_amount.c fuzz/fuzz_gateway_reply.c fuzz/fuzz_statement.c fuzz/fuzz_refund_info.c fuzz/fuzz_refund_notify.c \
	fuzz/fuzz_fcgi.c fuzz/fuzz_fcgi.supp fuzz/fuzz_v3.c \
	fuzz/gen_corpus.py fuzz/corpus fuzz/dict fuzz/regressions
