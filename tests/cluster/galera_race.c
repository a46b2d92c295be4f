/* galera_race - shows that the check-then-act trap is real on Galera and that
 * idempay's compare-and-set is not caught by it (docs/CLUSTER.md, "the trap").
 *
 * Each round inserts one order (status 0 = PENDING) and lets two clients,
 * released together by a barrier, each try to pay it. "Paying" is a charge
 * counted in memory (the gateway call: once made, no rollback undoes it),
 * then the row is marked PAID (2). Three ways to decide who charges:
 *
 *   naive       the seed article's check-then-act: SELECT status, and if it
 *               is PENDING, charge, then UPDATE ... SET status = 2 (no
 *               condition). Wrong even on one server.
 *   for-update  the textbook fix on one server: BEGIN; SELECT ... FOR UPDATE;
 *               charge if PENDING; UPDATE; COMMIT. On one server the row lock
 *               serialises the two clients. On Galera the lock is local to a
 *               node: two nodes both grant it, both clients charge, and one
 *               COMMIT fails certification (1213) -- after its charge.
 *   cas         idempay's: UPDATE ... SET status = 1 WHERE id = ? AND
 *               status = 0 (autocommit; 1213 retried, as order_store does);
 *               only the client that changed the row charges (after the
 *               commit, i.e. after certification), then UPDATE ... SET
 *               status = 2 WHERE id = ? AND status = 1.
 *
 * usage: galera_race SOCKET_A SOCKET_B ROUNDS MODE[,MODE...]
 *   connects as root over the two unix sockets (give the same socket twice
 *   for the one-server control), works in database idempay_race. Prints one
 *   line per mode: rounds, rounds charged twice, COMMITs that failed after a
 *   charge, rounds whose final row lost a client's write. Exit 0. */
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum race_mode { RACE_NAIVE, RACE_FOR_UPDATE, RACE_CAS };

typedef struct {
    const char *socket;
    int who;                   /* 1 or 2: written into paid_by */
    MYSQL *db;
} race_client;

typedef struct {
    enum race_mode mode;
    long long id;
    pthread_barrier_t *barrier;
    race_client *client;
    atomic_int *charges;       /* charges made for this round's order */
    atomic_int *failed_commits;/* COMMITs refused after a charge */
    atomic_int *writes;        /* "mark PAID" writes that committed */
    atomic_int *conflicts;     /* 1213 met (certification failures seen by the client) */
} race_turn;

static void race_die(MYSQL *db, const char *what)
{
    fprintf(stderr, "galera_race: %s: %s (%u)\n", what, db ? mysql_error(db) : "?",
            db ? mysql_errno(db) : 0);
    exit(2);
}

static MYSQL *race_connect(const char *socket)
{
    MYSQL *db = mysql_init(NULL);
    if (db == NULL || !mysql_real_connect(db, NULL, "root", NULL, NULL, 0, socket, 0))
        race_die(db, "connect");
    return db;
}

static int race_exec(MYSQL *db, const char *sql)
{
    return mysql_real_query(db, sql, (unsigned long)strlen(sql)) == 0 ? 0 : (int)mysql_errno(db);
}

static void race_must(MYSQL *db, const char *sql)
{
    if (race_exec(db, sql) != 0)
        race_die(db, sql);
}

/* The status of order id as db sees it (-1: no row). */
static int race_status(MYSQL *db, long long id, int for_update)
{
    char sql[128];
    MYSQL_RES *res;
    MYSQL_ROW row;
    int st = -1;

    snprintf(sql, sizeof(sql), "SELECT status FROM race_order WHERE id = %lld%s", id,
             for_update ? " FOR UPDATE" : "");
    if (race_exec(db, sql) != 0)
        return -2;
    res = mysql_store_result(db);
    if (res != NULL && (row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        st = atoi(row[0]);
    mysql_free_result(res);
    return st;
}

static void race_charge(race_turn *t)
{
    atomic_fetch_add(t->charges, 1);
}

static void *race_turn_main(void *arg)
{
    race_turn *t = arg;
    MYSQL *db = t->client->db;
    char sql[160];
    int e;

    pthread_barrier_wait(t->barrier);
    switch (t->mode) {
    case RACE_NAIVE:
        if (race_status(db, t->id, 0) == 0) {
            race_charge(t);
            snprintf(sql, sizeof(sql), "UPDATE race_order SET status = 2, paid_by = %d WHERE id = %lld",
                     t->client->who, t->id);
            e = race_exec(db, sql);
            if (e == 0)
                atomic_fetch_add(t->writes, 1);
            else if (e == 1213)
                atomic_fetch_add(t->conflicts, 1);
        }
        break;
    case RACE_FOR_UPDATE:
        race_must(db, "START TRANSACTION");
        if (race_status(db, t->id, 1) == 0) {
            race_charge(t);
            snprintf(sql, sizeof(sql), "UPDATE race_order SET status = 2, paid_by = %d WHERE id = %lld",
                     t->client->who, t->id);
            e = race_exec(db, sql);
            if (e == 0)
                e = race_exec(db, "COMMIT");
            if (e == 0)
                atomic_fetch_add(t->writes, 1);
            if (e == 1213)
                atomic_fetch_add(t->conflicts, 1);
            if (e != 0) {
                atomic_fetch_add(t->failed_commits, 1);
                (void)race_exec(db, "ROLLBACK");
            }
        } else {
            (void)race_exec(db, "ROLLBACK");
        }
        break;
    case RACE_CAS:
        snprintf(sql, sizeof(sql), "UPDATE race_order SET status = 1, paid_by = %d"
                 " WHERE id = %lld AND status = 0", t->client->who, t->id);
        for (int tries = 0; tries < 3; tries++) {
            e = race_exec(db, sql);
            if (e == 1213 || e == 1205) {
                atomic_fetch_add(t->conflicts, 1);
                continue; /* certification failure: nothing committed; ask again */
            }
            if (e == 0 && mysql_affected_rows(db) == 1) {
                race_charge(t);
                snprintf(sql, sizeof(sql), "UPDATE race_order SET status = 2"
                         " WHERE id = %lld AND status = 1 AND paid_by = %d", t->id, t->client->who);
                if (race_exec(db, sql) == 0 && mysql_affected_rows(db) == 1)
                    atomic_fetch_add(t->writes, 1);
            }
            break;
        }
        break;
    }
    return NULL;
}

/* wsrep_local_cert_failures + wsrep_local_bf_aborts of db's node: the
 * conflicts Galera resolved there (0 on a server without wsrep). */
static long long race_node_conflicts(MYSQL *db)
{
    static const char sql[] =
        "SELECT COALESCE(SUM(VARIABLE_VALUE), 0) FROM information_schema.GLOBAL_STATUS"
        " WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')";
    MYSQL_RES *res;
    MYSQL_ROW row;
    long long n = 0;

    if (race_exec(db, sql) != 0)
        return 0;
    res = mysql_store_result(db);
    if (res != NULL && (row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        n = atoll(row[0]);
    mysql_free_result(res);
    return n;
}

static const char *race_mode_name(enum race_mode m)
{
    return m == RACE_NAIVE ? "naive" : m == RACE_FOR_UPDATE ? "for-update" : "cas";
}

static void race_run(race_client *a, race_client *b, enum race_mode mode, int rounds, long long *next_id)
{
    int twice = 0, failed_after_charge = 0, lost = 0, conflicts_seen = 0;
    int same = strcmp(a->socket, b->socket) == 0;
    long long server0 = race_node_conflicts(a->db) + (same ? 0 : race_node_conflicts(b->db));

    for (int r = 0; r < rounds; r++) {
        long long id = (*next_id)++;
        char sql[128];
        atomic_int charges = 0, failed = 0, writes = 0, conflicts = 0;
        pthread_barrier_t barrier;
        pthread_t ta, tb;
        race_turn turn_a = {mode, id, &barrier, a, &charges, &failed, &writes, &conflicts};
        race_turn turn_b = {mode, id, &barrier, b, &charges, &failed, &writes, &conflicts};

        snprintf(sql, sizeof(sql), "INSERT INTO race_order (id, status, paid_by) VALUES (%lld, 0, 0)", id);
        race_must(a->db, sql);
        /* B waits (wsrep_sync_wait) until the row is there. */
        while (race_status(b->db, id, 0) != 0)
            usleep(1000);
        pthread_barrier_init(&barrier, NULL, 2);
        pthread_create(&ta, NULL, race_turn_main, &turn_a);
        pthread_create(&tb, NULL, race_turn_main, &turn_b);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&barrier);
        if (charges > 1)
            twice++;
        failed_after_charge += failed;
        /* Both clients' "mark PAID" committed, the row keeps one: the
         * other's write is overwritten without an error (a lost update). */
        if (writes > 1)
            lost++;
        conflicts_seen += conflicts;
    }
    long long server = race_node_conflicts(a->db) + (same ? 0 : race_node_conflicts(b->db)) - server0;
    printf("%-11s rounds %4d  charged twice %4d  lost updates %4d  COMMITs refused after a charge %4d"
           "  1213 seen by clients %4d  conflicts resolved by Galera %4lld\n", race_mode_name(mode),
           rounds, twice, lost, failed_after_charge, conflicts_seen, server);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    race_client a = {0}, b = {0};
    long long next_id = 1;
    int rounds;
    char *modes, *m;

    if (argc != 5) {
        fprintf(stderr, "usage: galera_race SOCKET_A SOCKET_B ROUNDS MODE[,MODE...]\n");
        return 2;
    }
    rounds = atoi(argv[3]);
    if (mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    a.socket = argv[1];
    a.who = 1;
    b.socket = argv[2];
    b.who = 2;
    a.db = race_connect(a.socket);
    race_must(a.db, "CREATE DATABASE IF NOT EXISTS idempay_race");
    race_must(a.db, "USE idempay_race");
    race_must(a.db, "CREATE TABLE IF NOT EXISTS race_order (id BIGINT PRIMARY KEY,"
                    " status TINYINT NOT NULL, paid_by TINYINT NOT NULL) ENGINE=InnoDB");
    race_must(a.db, "DELETE FROM race_order");
    b.db = race_connect(b.socket);
    race_must(b.db, "USE idempay_race");
    race_must(b.db, "SET SESSION wsrep_sync_wait = 1");
    race_must(a.db, "SET SESSION wsrep_sync_wait = 1");
    printf("galera_race: A=%s B=%s%s\n", a.socket, b.socket,
           strcmp(a.socket, b.socket) == 0 ? " (one server)" : " (two Galera nodes)");
    modes = argv[4];
    while ((m = strsep(&modes, ",")) != NULL) {
        if (strcmp(m, "naive") == 0)
            race_run(&a, &b, RACE_NAIVE, rounds, &next_id);
        else if (strcmp(m, "for-update") == 0)
            race_run(&a, &b, RACE_FOR_UPDATE, rounds, &next_id);
        else if (strcmp(m, "cas") == 0)
            race_run(&a, &b, RACE_CAS, rounds, &next_id);
        else {
            fprintf(stderr, "galera_race: unknown mode %s\n", m);
            return 2;
        }
    }
    race_must(a.db, "DROP DATABASE idempay_race");
    mysql_close(a.db);
    mysql_close(b.db);
    mysql_library_end();
    return 0;
}
