# tools/local.mk - operator tools: idempay-migrate (installed to sbin).

sbin_PROGRAMS += tools/idempay-migrate
tools_idempay_migrate_SOURCES = tools/migrate.c
tools_idempay_migrate_CFLAGS = $(AM_CFLAGS) $(MARIADB_CFLAGS) -DIDEMPAY_SQL_DIR='"$(sqldir)"'
tools_idempay_migrate_LDADD = $(COMMON_LIBS) $(MARIADB_LIBS)
