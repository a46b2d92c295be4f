# tools/local.mk - operator tools: idempay-migrate (installed to sbin).

sbin_PROGRAMS += tools/idempay-migrate
tools_idempay_migrate_SOURCES = tools/migrate.c
tools_idempay_migrate_CFLAGS = $(AM_CFLAGS) $(MARIADB_CFLAGS) -DIDEMPAY_SQL_DIR='"$(sqldir)"'
tools_idempay_migrate_LDADD = $(COMMON_LIBS) $(MARIADB_LIBS)

# the shell parts ./stack and cluster/cluster share, and the stack's config templates
EXTRA_DIST += tools/lib.sh tools/stack_parts.sh tools/stack_memory.sh tools/mock_scale.py \
	tools/conf/redis.conf.in tools/conf/redis-acl.conf.in tools/conf/nginx.conf.in \
	tools/conf/nginx-mock-tls.conf.in
