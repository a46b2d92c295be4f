/* idempay-migrate - applies sql/NNN_*.sql migrations in order, each once,
 * under a MariaDB lock, and says what it did.
 *
 * Applied versions are rows of idempay.schema_migrations (version = the file
 * name without .sql), the table ./stack has always kept. The whole run holds
 * GET_LOCK('idempay.migrate'), so two migrators (two hosts, a package
 * upgrade and an operator) never apply one file twice; a second one waits
 * up to --lock-timeout seconds, then gives up.
 *
 * It connects as a database administrator (migrations create databases):
 * IDEMPAY_MIGRATE_DB_USER (default root, by unix-socket authentication) and
 * IDEMPAY_MIGRATE_DB_PASSWORD[_FILE], through IDEMPAY_DB_SOCKET or
 * IDEMPAY_DB_HOST/IDEMPAY_DB_PORT, all from the environment over
 * /etc/idempay/idempay.conf like every idempay program. With --create-user
 * it also creates the service's own account (IDEMPAY_DB_USER and
 * IDEMPAY_DB_PASSWORD, at localhost and 127.0.0.1) and grants it the
 * idempay databases.
 *
 * Exit status: 0 done (or nothing to do), 1 a migration failed (the ones
 * before it stay applied; it is retried next run), 2 usage, connection or
 * lock error. */
#include <dirent.h>
#include <errno.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_conn.h"
#include "env.h"

#define MIGRATE_LOCK "idempay.migrate"
#define MIGRATE_MAX_FILES 512
#define MIGRATE_MAX_SQL (1024 * 1024)
#ifndef IDEMPAY_SQL_DIR
#define IDEMPAY_SQL_DIR "/usr/share/idempay/sql"
#endif

/* The service's databases: created and granted by --create-user. */
static const char *const service_databases[] = { "idempay", "idempay_mock", "idempay_seed" };

typedef struct {
    const char *sql_dir;
    int status_only;
    int dry_run;
    int create_user;
    int quiet;
    long lock_timeout_s;
} migrate_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: idempay-migrate [--sql-dir DIR] [--create-user] [--status | --dry-run]\n"
            "                       [--lock-timeout SECONDS] [--quiet]\n"
            "Applies DIR/NNN_*.sql (default %s) that idempay.schema_migrations does not list,\n"
            "in order, under GET_LOCK('%s'). Settings: IDEMPAY_DB_SOCKET | IDEMPAY_DB_HOST +\n"
            "IDEMPAY_DB_PORT, IDEMPAY_MIGRATE_DB_USER (root), IDEMPAY_MIGRATE_DB_PASSWORD[_FILE];\n"
            "--create-user also creates IDEMPAY_DB_USER / IDEMPAY_DB_PASSWORD and grants it\n"
            "the idempay databases. See docs/DEPLOY.md.\n",
            IDEMPAY_SQL_DIR, MIGRATE_LOCK);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs sql (one or more statements), discarding result sets. Returns 0, or
 * -1 with the error printed (what names the step). */
static int run_sql(MYSQL *db, const char *sql, const char *what)
{
    int status, n = 1;

    if (mysql_real_query(db, sql, (unsigned long)strlen(sql)) != 0) {
        fprintf(stderr, "idempay-migrate: %s: statement 1: error %u: %s\n", what, mysql_errno(db),
                mysql_error(db));
        return -1;
    }
    do {
        MYSQL_RES *r = mysql_store_result(db);
        if (r)
            mysql_free_result(r);
        else if (mysql_field_count(db) != 0) {
            fprintf(stderr, "idempay-migrate: %s: statement %d: error %u: %s\n", what, n,
                    mysql_errno(db), mysql_error(db));
            return -1;
        }
        status = mysql_next_result(db);
        n++;
        if (status > 0) {
            fprintf(stderr, "idempay-migrate: %s: statement %d: error %u: %s\n", what, n,
                    mysql_errno(db), mysql_error(db));
            return -1;
        }
    } while (status == 0);
    return 0;
}

/* The first column of the first row of a one-row query as a number, or -1. */
static long long query_number(MYSQL *db, const char *sql)
{
    MYSQL_RES *r;
    MYSQL_ROW row;
    long long v = -1;

    if (mysql_real_query(db, sql, (unsigned long)strlen(sql)) != 0 || !(r = mysql_store_result(db)))
        return -1;
    row = mysql_fetch_row(r);
    if (row && row[0])
        v = strtoll(row[0], NULL, 10);
    mysql_free_result(r);
    return v;
}

/* Reads the file at path (at most MIGRATE_MAX_SQL bytes) into a new string. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    size_t n;

    if (!f)
        return NULL;
    buf = malloc(MIGRATE_MAX_SQL + 1);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    n = fread(buf, 1, MIGRATE_MAX_SQL + 1, f);
    fclose(f);
    if (n > MIGRATE_MAX_SQL) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static int is_migration(const char *name)
{
    size_t n = strlen(name);

    return n > 8 && name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' &&
           name[2] >= '0' && name[2] <= '9' && name[3] == '_' && !strcmp(name + n - 4, ".sql") &&
           n - 4 < 200;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The migration file names in dir, sorted. Returns the count, or -1. */
static int list_migrations(const char *dir, char **names, int cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d) {
        fprintf(stderr, "idempay-migrate: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) && n < cap)
        if (is_migration(e->d_name) && (names[n] = strdup(e->d_name)))
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    return n;
}

static MYSQL *connect_admin(void)
{
    db_conn_params p;
    const char *user = env_str("IDEMPAY_MIGRATE_DB_USER", "root");
    const char *pass = env_str("IDEMPAY_MIGRATE_DB_PASSWORD", NULL);
    unsigned int timeout = 10;
    MYSQL *db;

    db_conn_params_get(&p);
    db = mysql_init(NULL);
    if (!db)
        return NULL;
    mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (!mysql_real_connect(db, p.socket ? NULL : p.host, user, pass, NULL,
                            p.socket ? 0 : p.port, p.socket, CLIENT_MULTI_STATEMENTS)) {
        fprintf(stderr, "idempay-migrate: cannot connect as %s to %s: %s\n", user,
                p.socket ? p.socket : p.host, mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    return db;
}

/* CREATE USER / GRANT for the service's account (strings escaped). */
static int create_service_user(MYSQL *db, int quiet)
{
    db_conn_params p;
    char user[256], pass[512], sql[4096];
    static const char *const hosts[] = { "localhost", "127.0.0.1" };
    size_t ul, pl;

    db_conn_params_get(&p);
    ul = strlen(p.user);
    pl = strlen(p.password);
    if (ul == 0 || ul > 80 || pl > 200) {
        fprintf(stderr, "idempay-migrate: IDEMPAY_DB_USER/IDEMPAY_DB_PASSWORD too long or empty\n");
        return -1;
    }
    mysql_real_escape_string(db, user, p.user, (unsigned long)ul);
    mysql_real_escape_string(db, pass, p.password, (unsigned long)pl);
    for (size_t h = 0; h < sizeof hosts / sizeof hosts[0]; h++) {
        snprintf(sql, sizeof sql, "CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s'", user,
                 hosts[h], pass);
        if (run_sql(db, sql, "create user") != 0)
            return -1;
        for (size_t d = 0; d < sizeof service_databases / sizeof service_databases[0]; d++) {
            snprintf(sql, sizeof sql, "GRANT ALL ON `%s`.* TO '%s'@'%s'", service_databases[d],
                     user, hosts[h]);
            if (run_sql(db, sql, "grant") != 0)
                return -1;
        }
    }
    if (!quiet)
        printf("idempay-migrate: database account %s (localhost, 127.0.0.1) may use %s, %s, %s\n",
           p.user, service_databases[0], service_databases[1], service_databases[2]);
    return 0;
}

static int parse_args(int argc, char **argv, migrate_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sql_dir = env_str("IDEMPAY_SQL_DIR", IDEMPAY_SQL_DIR);
    o->lock_timeout_s = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sql-dir") && i + 1 < argc)
            o->sql_dir = argv[++i];
        else if (!strcmp(argv[i], "--lock-timeout") && i + 1 < argc)
            o->lock_timeout_s = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--status"))
            o->status_only = 1;
        else if (!strcmp(argv[i], "--dry-run"))
            o->dry_run = 1;
        else if (!strcmp(argv[i], "--create-user"))
            o->create_user = 1;
        else if (!strcmp(argv[i], "--quiet"))
            o->quiet = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            return -1;
        }
    }
    return o->lock_timeout_s >= 0 ? 0 : -1;
}

/* What the run found and did. */
typedef struct {
    int applied, present;
    char last[256];          /* the latest version applied, "none" */
} migrate_tally;

/* Takes the migration lock, makes schema_migrations and (when asked) the
 * service's user. Returns 0, or the exit status (2). */
static int migrate_prepare(MYSQL *db, const migrate_opts *o)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT GET_LOCK('%s', %ld)", MIGRATE_LOCK, o->lock_timeout_s);
    long long got = query_number(db, sql);
    if (got != 1) {
        fprintf(stderr, "idempay-migrate: another migration holds the lock '%s' (waited %ld s)%s%s\n",
                MIGRATE_LOCK, o->lock_timeout_s, got < 0 ? ": " : "", got < 0 ? mysql_error(db) : "");
        return 2;
    }
    if (run_sql(db,
                "CREATE DATABASE IF NOT EXISTS idempay CHARACTER SET utf8mb4;"
                "CREATE TABLE IF NOT EXISTS idempay.schema_migrations ("
                "  version VARCHAR(255) NOT NULL PRIMARY KEY,"
                "  applied_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP) ENGINE=InnoDB",
                "schema_migrations") != 0 ||
        mysql_select_db(db, "idempay") != 0)
        return 2;
    if (o->create_user && !o->status_only && !o->dry_run && create_service_user(db, o->quiet) != 0)
        return 2;
    return 0;
}

/* Applies the file at path as version and records it. 0, or 1. */
static int migrate_apply(MYSQL *db, const char *path, const char *version)
{
    char sql[1024];
    char *text = read_file(path);
    if (!text) {
        fprintf(stderr, "idempay-migrate: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    double t0 = now_s();
    if (run_sql(db, text, version) != 0) {
        free(text);
        fprintf(stderr, "idempay-migrate: %s failed; nothing after it was applied\n", version);
        return 1;
    }
    free(text);
    snprintf(sql, sizeof sql, "INSERT INTO idempay.schema_migrations (version) VALUES ('%s')",
             version);
    if (run_sql(db, sql, "record") != 0)
        return 1;
    printf("idempay-migrate: applied %s (%.0f ms)\n", version, (now_s() - t0) * 1e3);
    return 0;
}

/* One migration file: skipped when applied, listed when only asked about,
 * applied otherwise. Returns 0, or the exit status (1, 2). */
static int migrate_one(MYSQL *db, const migrate_opts *o, const char *name, migrate_tally *t)
{
    char version[256], path[4096], sql[1024];
    long long got;
    snprintf(version, sizeof version, "%.*s", (int)(strlen(name) - 4), name);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM idempay.schema_migrations WHERE version = '%s'",
             version);   /* version is [0-9]{3}_ + a file name: no quotes can reach it */
    if (strchr(version, '\'') || strchr(version, '\\') || (got = query_number(db, sql)) < 0) {
        fprintf(stderr, "idempay-migrate: cannot read schema_migrations: %s\n", mysql_error(db));
        return 2;
    }
    if (got > 0) {
        t->present++;
        snprintf(t->last, sizeof t->last, "%s", version);
        if (o->status_only && !o->quiet)
            printf("applied  %s\n", version);
        return 0;
    }
    if (o->status_only || o->dry_run) {
        printf("pending  %s\n", version);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s", o->sql_dir, name);
    if (migrate_apply(db, path, version) != 0)
        return 1;
    t->applied++;
    snprintf(t->last, sizeof t->last, "%s", version);
    return 0;
}

int main(int argc, char **argv)
{
    migrate_opts o;
    char *names[MIGRATE_MAX_FILES];
    char err[512], sql[1024];
    migrate_tally t = {.last = "none"};
    int n, rc;
    MYSQL *db;

    if (parse_args(argc, argv, &o) != 0)
        return 2;
    if (env_config_load(err, sizeof err) != 0) {
        fprintf(stderr, "idempay-migrate: configuration: %s\n", err);
        return 2;
    }
    n = list_migrations(o.sql_dir, names, MIGRATE_MAX_FILES);
    if (n < 0)
        return 2;
    if (mysql_library_init(0, NULL, NULL) != 0 || !(db = connect_admin()))
        return 2;
    rc = migrate_prepare(db, &o);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = migrate_one(db, &o, names[i], &t);
    if (rc == 0 && (!o.quiet || t.applied))
        printf("idempay-migrate: %d applied now, %d already applied, %d pending; schema at %s\n",
               t.applied, t.present, o.status_only || o.dry_run ? n - t.present : 0, t.last);
    snprintf(sql, sizeof sql, "SELECT RELEASE_LOCK('%s')", MIGRATE_LOCK);
    query_number(db, sql);
    mysql_close(db);
    for (int i = 0; i < n; i++)
        free(names[i]);
    mysql_library_end();
    return rc;
}
