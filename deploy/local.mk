# deploy/local.mk - what `make install` puts around the programs: the config
# file, systemd units, tmpfiles.d and logrotate snippets, and working example
# fronts for nginx and lighttpd, all for the installed paths (deploy/*.in,
# @dir@ words replaced here, as the GNU coding standards ask).

deploy_in = \
	deploy/idempay.conf.in \
	deploy/idempay.socket.in \
	deploy/idempay.service.in \
	deploy/idempay-public.socket.in \
	deploy/idempay-public.service.in \
	deploy/idempay-gateway-mock.socket.in \
	deploy/idempay-gateway-mock.service.in \
	deploy/nginx-idempay.conf.in \
	deploy/lighttpd-idempay.conf.in \
	deploy/idempay.tmpfiles.in \
	deploy/idempay.logrotate.in
EXTRA_DIST += $(deploy_in) deploy/build-deb
deploy_out = $(deploy_in:.in=)
CLEANFILES += $(deploy_out)
noinst_DATA = $(deploy_out)

# Where the fronts and units meet the service (the defaults of DEPLOY.md).
IDEMPAY_LISTEN_SERVICE = 127.0.0.1:8080
IDEMPAY_LISTEN_MOCK = 127.0.0.1:8081
IDEMPAY_LISTEN_PUBLIC = 127.0.0.1:8084

deploy_subst = sed \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|@localstatedir[@]|$(localstatedir)|g' \
	-e 's|@runstatedir[@]|$(runstatedir)|g' \
	-e 's|@docdir[@]|$(docdir)|g' \
	-e 's|@datadir[@]|$(datadir)|g' \
	-e 's|@fcgi_socket[@]|$(runstatedir)/idempay/fcgi.sock|g' \
	-e 's|@mock_socket[@]|$(runstatedir)/idempay/mock.sock|g' \
	-e 's|@public_socket[@]|$(runstatedir)/idempay/public.sock|g' \
	-e 's|@listen_public[@]|$(IDEMPAY_LISTEN_PUBLIC)|g' \
	-e 's|@listen_service[@]|$(IDEMPAY_LISTEN_SERVICE)|g' \
	-e 's|@listen_mock[@]|$(IDEMPAY_LISTEN_MOCK)|g' \
	-e 's|@nginx_confdir[@]|/etc/nginx|g'

$(deploy_out): %: %.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(deploy_subst) $(srcdir)/$@.in > $@.tmp && mv $@.tmp $@

systemdsystemunit_DATA = \
	deploy/idempay.socket \
	deploy/idempay.service \
	deploy/idempay-public.socket \
	deploy/idempay-public.service \
	deploy/idempay-gateway-mock.socket \
	deploy/idempay-gateway-mock.service

idempayexamplesdir = $(datadir)/idempay/examples
idempayexamples_DATA = \
	deploy/nginx-idempay.conf \
	deploy/lighttpd-idempay.conf \
	deploy/idempay.conf

dist_doc_DATA = README.md docs/DEPLOY.md docs/API.md docs/MOCK.md docs/SIMULATOR.md \
	docs/CALLBACKS.md docs/PERFORMANCE.md

dist_man1_MANS = deploy/man/idempay-fcgi.1 deploy/man/idempay-gateway-mock.1 deploy/man/idempay-sim.1
dist_man8_MANS = deploy/man/idempay-migrate.8

# The config file and the system snippets: the config file only when there
# is none yet (an operator's edits survive a re-install).
install-data-local: deploy/idempay.conf deploy/idempay.tmpfiles deploy/idempay.logrotate
	$(MKDIR_P) $(DESTDIR)$(sysconfdir)/idempay $(DESTDIR)$(sysconfdir)/logrotate.d \
		$(DESTDIR)$(tmpfilesdir)
	test -f $(DESTDIR)$(sysconfdir)/idempay/idempay.conf || \
		$(INSTALL_DATA) deploy/idempay.conf $(DESTDIR)$(sysconfdir)/idempay/idempay.conf
	$(INSTALL_DATA) deploy/idempay.tmpfiles $(DESTDIR)$(tmpfilesdir)/idempay.conf
	$(INSTALL_DATA) deploy/idempay.logrotate $(DESTDIR)$(sysconfdir)/logrotate.d/idempay

uninstall-local:
	rm -f $(DESTDIR)$(tmpfilesdir)/idempay.conf $(DESTDIR)$(sysconfdir)/logrotate.d/idempay

# make deb: idempay_VERSION_ARCH.deb in the build dir (debian/, debhelper),
# then lintian. See deploy/build-deb.
deb:
	$(srcdir)/deploy/build-deb $(srcdir) $(abs_builddir)
.PHONY: deb
