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
 * /etc/idempay/idempay.conf like every idempay program. With --create-users
 * (--create-user is the old name) it first connects as the database root
 * by unix socket and makes one account per program, each with only what it
 * needs (least privilege, docs/SECURITY.md): the service's (IDEMPAY_DB_USER:
 * SELECT, INSERT, UPDATE, DELETE on idempay), and, when their user is set,
 * the migration account (IDEMPAY_MIGRATE_DB_USER: all privileges on the
 * idempay databases, no global ones), the mock's (IDEMPAY_MOCK_DB_USER: the
 * same data privileges on its ledger database) and the simulator's
 * (IDEMPAY_SIM_DB_USER: SELECT on idempay.payment_order, granted after the
 * migrations). Each at localhost and 127.0.0.1; passwords are set again on
 * every run and never printed; privileges beyond the plan on the idempay
 * databases (an older GRANT ALL) are revoked.
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

#include "clocks.h"
#include "db_conn.h"
#include "env.h"

#define MIGRATE_LOCK "idempay.migrate"
#define MIGRATE_MAX_FILES 512
#define MIGRATE_MAX_SQL (1024 * 1024)
#ifndef IDEMPAY_SQL_DIR
#define IDEMPAY_SQL_DIR "/usr/share/idempay/sql"
#endif

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
            "usage: idempay-migrate [--sql-dir DIR] [--create-users] [--status | --dry-run]\n"
            "                       [--lock-timeout SECONDS] [--quiet]\n"
            "Applies DIR/NNN_*.sql (default %s) that idempay.schema_migrations does not list,\n"
            "in order, under GET_LOCK('%s'). Settings: IDEMPAY_DB_SOCKET | IDEMPAY_DB_HOST +\n"
            "IDEMPAY_DB_PORT, IDEMPAY_MIGRATE_DB_USER (root), IDEMPAY_MIGRATE_DB_PASSWORD[_FILE];\n"
            "--create-users (as root by unix socket) first makes the accounts: the service's\n"
            "(IDEMPAY_DB_USER: SELECT, INSERT, UPDATE, DELETE on idempay), and, when their user\n"
            "is set, the migration account (IDEMPAY_MIGRATE_DB_USER: all on the idempay\n"
            "databases), the mock's (IDEMPAY_MOCK_DB_USER) and the simulator's\n"
            "(IDEMPAY_SIM_DB_USER: SELECT on idempay.payment_order). See docs/DEPLOY.md.\n",
            IDEMPAY_SQL_DIR, MIGRATE_LOCK);
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
    qsort(names, (size_t)n, sizeof(*names), cmp_names);
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
    if (!mysql_real_connect(db, p.socket ? NULL : p.host, user, pass, NULL, p.socket ? 0 : p.port,
                            p.socket, CLIENT_MULTI_STATEMENTS)) {
        fprintf(stderr, "idempay-migrate: cannot connect as %s to %s: %s\n", user,
                p.socket ? p.socket : p.host, mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    return db;
}

/* The hosts every account is created at: the unix socket and TCP loopback
 * (HAProxy and the cluster's nodes connect from 127.0.0.1). */
static const char *const account_hosts[] = { "localhost", "127.0.0.1" };

/* Database-level privileges a program account never holds: revoked where
 * it keeps its data privileges, so an account made by an older
 * --create-user (GRANT ALL) loses them without a moment without SELECT. */
#define ACCOUNT_NOT_DATA                                                                           \
    "CREATE, DROP, GRANT OPTION, REFERENCES, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, " \
    "EXECUTE, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER, DELETE HISTORY"
#define ACCOUNT_DATA "SELECT, INSERT, UPDATE, DELETE"
/* MariaDB: "There is no such grant defined" (a REVOKE of nothing). */
#define ER_NONEXISTING_GRANT_ 1141
#define ER_NONEXISTING_TABLE_GRANT_ 1147

/* One account --create-users makes (docs/DEPLOY.md): whose settings, and
 * which of the idempay databases it gets data privileges (DML) or all
 * privileges on; the simulator's SELECT on payment_order is granted after
 * the migrations made the table. */
typedef struct {
    db_account account;
    const char *what;
    int data_on[3]; /* ACCOUNT_DATA on databases[i] */
    int all_on[3];  /* ALL PRIVILEGES on databases[i] (the migration account) */
} account_plan;

/* The idempay databases: the service's, the mock's ledger (IDEMPAY_MOCK_DB),
 * the seed fixture's. */
static void account_databases(const char *dbs[3])
{
    dbs[0] = "idempay";
    dbs[1] = env_str("IDEMPAY_MOCK_DB", "idempay_mock");
    dbs[2] = "idempay_seed";
}

static const account_plan account_plans[] = {
    { DB_ACCOUNT_MIGRATE, "migrations", { 0, 0, 0 }, { 1, 1, 1 } },
    { DB_ACCOUNT_SERVICE, "service", { 1, 0, 0 }, { 0, 0, 0 } },
    { DB_ACCOUNT_MOCK, "mock gateway", { 0, 1, 0 }, { 0, 0, 0 } },
    { DB_ACCOUNT_SIM, "simulator", { 0, 0, 0 }, { 0, 0, 0 } },
};

/* Whether --create-users makes this account: the service's always (as
 * --create-user did), the others when their user is set (a production
 * host sets no mock or simulator account), never root. */
static int account_wanted(const account_plan *a, const db_conn_params *p)
{
    static const char *const user_settings[] = {
        [DB_ACCOUNT_SERVICE] = "IDEMPAY_DB_USER",
        [DB_ACCOUNT_MOCK] = "IDEMPAY_MOCK_DB_USER",
        [DB_ACCOUNT_SIM] = "IDEMPAY_SIM_DB_USER",
        [DB_ACCOUNT_MIGRATE] = "IDEMPAY_MIGRATE_DB_USER",
    };
    if (strcmp(p->user, "root") == 0)
        return 0;
    return a->account == DB_ACCOUNT_SERVICE || env_source(user_settings[a->account]) != NULL;
}

static int db_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* run_sql, but a REVOKE of a grant that does not exist is fine. */
static int run_revoke(MYSQL *db, const char *sql)
{
    if (mysql_real_query(db, sql, (unsigned long)strlen(sql)) == 0)
        return 0;
    if (mysql_errno(db) == ER_NONEXISTING_GRANT_ || mysql_errno(db) == ER_NONEXISTING_TABLE_GRANT_)
        return 0;
    fprintf(stderr, "idempay-migrate: revoke: error %u: %s\n", mysql_errno(db), mysql_error(db));
    return -1;
}

/* The account at one host: created, its password set (never printed), the
 * planned privileges granted, the rest on the idempay databases revoked. */
static int account_make_at(MYSQL *db, const account_plan *a, const char *user, const char *pass,
                           const char *host)
{
    const char *dbs[3];
    char sql[1024];

    account_databases(dbs);
    snprintf(sql, sizeof(sql), "CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s'", user, host,
             pass);
    if (run_sql(db, sql, "create user") != 0)
        return -1;
    snprintf(sql, sizeof(sql), "ALTER USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, pass);
    if (run_sql(db, sql, "set password") != 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (a->all_on[i])
            snprintf(sql, sizeof(sql), "GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'%s'", dbs[i], user,
                     host);
        else if (a->data_on[i])
            snprintf(sql, sizeof(sql), "GRANT " ACCOUNT_DATA " ON `%s`.* TO '%s'@'%s'", dbs[i],
                     user, host);
        else
            snprintf(sql, sizeof(sql), "REVOKE ALL PRIVILEGES ON `%s`.* FROM '%s'@'%s'", dbs[i],
                     user, host);
        if (a->all_on[i] || a->data_on[i] ? run_sql(db, sql, "grant") : run_revoke(db, sql))
            return -1;
        if (!a->all_on[i] && !a->data_on[i]) {
            snprintf(sql, sizeof(sql), "REVOKE GRANT OPTION ON `%s`.* FROM '%s'@'%s'", dbs[i], user,
                     host);
            if (run_revoke(db, sql) != 0)
                return -1;
        }
        if (a->data_on[i]) {
            snprintf(sql, sizeof(sql), "REVOKE " ACCOUNT_NOT_DATA " ON `%s`.* FROM '%s'@'%s'",
                     dbs[i], user, host);
            if (run_revoke(db, sql) != 0)
                return -1;
        }
    }
    return 0;
}

/* Escapes a's user and password into user and pass. 0, or -1 with a
 * message naming the settings (never their values). */
static int account_escape(MYSQL *db, const account_plan *a, const db_conn_params *p, char *user,
                          char *pass)
{
    size_t ul = strlen(p->user), pl = p->password ? strlen(p->password) : 0;

    if (ul == 0 || ul > 80 || pl == 0 || pl > 200) {
        fprintf(stderr,
                "idempay-migrate: the %s account: user and password must be set, the user"
                " at most 80 and the password at most 200 characters\n",
                a->what);
        return -1;
    }
    mysql_real_escape_string(db, user, p->user, (unsigned long)ul);
    mysql_real_escape_string(db, pass, p->password, (unsigned long)pl);
    return 0;
}

/* --create-users, before the migrations: every wanted account with its
 * database-level privileges (db is the root connection). 0 or -1. */
static int accounts_make(MYSQL *db, int quiet)
{
    const char *dbs[3];

    account_databases(dbs);
    for (int i = 0; i < 3; i++)
        if (!db_name_ok(dbs[i])) {
            fprintf(stderr, "idempay-migrate: IDEMPAY_MOCK_DB must be [A-Za-z0-9_], 1..64\n");
            return -1;
        }
    for (size_t k = 0; k < sizeof(account_plans) / sizeof(account_plans[0]); k++) {
        const account_plan *a = &account_plans[k];
        db_conn_params p;
        char user[256], pass[512];

        db_conn_params_of(a->account, &p);
        if (!account_wanted(a, &p))
            continue;
        if (account_escape(db, a, &p, user, pass) != 0)
            return -1;
        for (size_t h = 0; h < sizeof(account_hosts) / sizeof(account_hosts[0]); h++)
            if (account_make_at(db, a, user, pass, account_hosts[h]) != 0)
                return -1;
        if (!quiet)
            printf("idempay-migrate: database account %s (%s) at localhost and 127.0.0.1\n", p.user,
                   a->what);
    }
    return 0;
}

/* --create-users, after the migrations: the simulator's SELECT on
 * idempay.payment_order (a table grant needs the table). 0 or -1. */
static int accounts_grant_tables(MYSQL *db)
{
    const account_plan *a = &account_plans[3];
    db_conn_params p;
    char user[256], pass[512], sql[1024];

    db_conn_params_of(a->account, &p);
    if (!account_wanted(a, &p))
        return 0;
    if (account_escape(db, a, &p, user, pass) != 0)
        return -1;
    for (size_t h = 0; h < sizeof(account_hosts) / sizeof(account_hosts[0]); h++) {
        snprintf(sql, sizeof(sql), "GRANT SELECT ON `idempay`.`payment_order` TO '%s'@'%s'", user,
                 account_hosts[h]);
        if (run_sql(db, sql, "grant") != 0)
            return -1;
    }
    return 0;
}

/* The database root for --create-users: root by unix-socket authentication
 * (IDEMPAY_DB_SOCKET), as Debian's mariadb-server and ./stack have it. */
static MYSQL *connect_root(void)
{
    db_conn_params p;
    unsigned int timeout = 10;
    MYSQL *db;

    db_conn_params_of(DB_ACCOUNT_MIGRATE, &p);
    db = mysql_init(NULL);
    if (!db)
        return NULL;
    mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (!mysql_real_connect(db, p.socket ? NULL : p.host, "root", NULL, NULL, p.socket ? 0 : p.port,
                            p.socket, 0)) {
        fprintf(stderr,
                "idempay-migrate: --create-users: cannot connect as root (unix socket %s):"
                " %s\n",
                p.socket ? p.socket : "(IDEMPAY_DB_SOCKET unset)", mysql_error(db));
        mysql_close(db);
        return NULL;
    }
    return db;
}

static int parse_args(int argc, char **argv, migrate_opts *o)
{
    memset(o, 0, sizeof(*o));
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
        else if (!strcmp(argv[i], "--create-users") || !strcmp(argv[i], "--create-user"))
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
    char last[256]; /* the latest version applied, "none" */
} migrate_tally;

/* Takes the migration lock and makes schema_migrations. Returns 0, or the exit status (2). */
static int migrate_prepare(MYSQL *db, const migrate_opts *o)
{
    char sql[1024];
    snprintf(sql, sizeof(sql), "SELECT GET_LOCK('%s', %ld)", MIGRATE_LOCK, o->lock_timeout_s);
    long long got = query_number(db, sql);
    if (got != 1) {
        fprintf(stderr,
                "idempay-migrate: another migration holds the lock '%s' (waited %ld s)%s%s\n",
                MIGRATE_LOCK, o->lock_timeout_s, got < 0 ? ": " : "",
                got < 0 ? mysql_error(db) : "");
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
    double t0 = clocks_mono_s();
    if (run_sql(db, text, version) != 0) {
        free(text);
        fprintf(stderr, "idempay-migrate: %s failed; nothing after it was applied\n", version);
        return 1;
    }
    free(text);
    snprintf(sql, sizeof(sql), "INSERT INTO idempay.schema_migrations (version) VALUES ('%s')",
             version);
    if (run_sql(db, sql, "record") != 0)
        return 1;
    printf("idempay-migrate: applied %s (%.0f ms)\n", version, (clocks_mono_s() - t0) * 1e3);
    return 0;
}

/* One migration file: skipped when applied, listed when only asked about,
 * applied otherwise. Returns 0, or the exit status (1, 2). */
static int migrate_one(MYSQL *db, const migrate_opts *o, const char *name, migrate_tally *t)
{
    char version[256], path[4096], sql[1024];
    long long got;
    snprintf(version, sizeof(version), "%.*s", (int)(strlen(name) - 4), name);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM idempay.schema_migrations WHERE version = '%s'",
             version); /* version is [0-9]{3}_ + a file name: no quotes can reach it */
    if (strchr(version, '\'') || strchr(version, '\\') || (got = query_number(db, sql)) < 0) {
        fprintf(stderr, "idempay-migrate: cannot read schema_migrations: %s\n", mysql_error(db));
        return 2;
    }
    if (got > 0) {
        t->present++;
        snprintf(t->last, sizeof(t->last), "%s", version);
        if (o->status_only && !o->quiet)
            printf("applied  %s\n", version);
        return 0;
    }
    if (o->status_only || o->dry_run) {
        printf("pending  %s\n", version);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/%s", o->sql_dir, name);
    if (migrate_apply(db, path, version) != 0)
        return 1;
    t->applied++;
    snprintf(t->last, sizeof(t->last), "%s", version);
    return 0;
}

/* Connects (the root for --create-users, then the migration account),
 * makes the accounts and applies the migrations. The exit status. */
static int migrate_run(const migrate_opts *o, char **names, int n)
{
    migrate_tally t = { .last = "none" };
    char sql[1024];
    int rc = 2;
    /* --create-users: the accounts first (the migration account must exist
     * to connect), as the database root */
    int make_users = o->create_user && !o->status_only && !o->dry_run;
    MYSQL *root = make_users ? connect_root() : NULL;
    MYSQL *db = NULL;

    if (make_users && (root == NULL || accounts_make(root, o->quiet) != 0))
        goto done;
    if (!(db = connect_admin()))
        goto done;
    rc = migrate_prepare(db, o);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = migrate_one(db, o, names[i], &t);
    if (rc == 0 && make_users && accounts_grant_tables(root) != 0)
        rc = 2;
    if (rc == 0 && (!o->quiet || t.applied))
        printf("idempay-migrate: %d applied now, %d already applied, %d pending; schema at %s\n",
               t.applied, t.present, o->status_only || o->dry_run ? n - t.present : 0, t.last);
    snprintf(sql, sizeof(sql), "SELECT RELEASE_LOCK('%s')", MIGRATE_LOCK);
    query_number(db, sql);
done:
    mysql_close(db);
    mysql_close(root);
    return rc;
}

int main(int argc, char **argv)
{
    migrate_opts o;
    char *names[MIGRATE_MAX_FILES];
    char err[512];
    int n, rc = 2;

    if (parse_args(argc, argv, &o) != 0)
        return 2;
    if (env_config_load(err, sizeof(err)) != 0) {
        fprintf(stderr, "idempay-migrate: configuration: %s\n", err);
        return 2;
    }
    n = list_migrations(o.sql_dir, names, MIGRATE_MAX_FILES);
    if (n < 0)
        return 2;
    if (mysql_library_init(0, NULL, NULL) == 0) {
        rc = migrate_run(&o, names, n);
        mysql_library_end();
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    return rc;
}
