/* journal.c - the journal's queue, its writer thread (group commits of up to
 * JOURNAL_BATCH entries) and its reader, through db_conn's prepared
 * statements on connections of their own. */
#include "journal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "db_conn.h"
#include "db_retry.h"
#include "env.h"
#include "ledger.h"
#include "log.h"

#define JOURNAL_BATCH 256
#define JOURNAL_TRIES 3

static const char journal_insert_sql[] =
    "INSERT INTO mock_journal (kind, at, endpoint, out_trade_no, transaction_id, fault, reply, "
    "return_code, return_msg, result_code, err_code, copy_no, attempt, notify_url, http_status, "
    "error, latency_ms, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* The newest entries (the inner query), oldest first. */
#define JOURNAL_COLS                                                                                 \
    "SELECT seq, DATE_FORMAT(at, '%Y-%m-%dT%H:%i:%s.%fZ'), endpoint, out_trade_no, transaction_id, " \
    "fault, reply, return_code, return_msg, result_code, err_code, copy_no, attempt, notify_url, "   \
    "http_status, error, latency_ms, rule FROM (SELECT * FROM mock_journal "
#define JOURNAL_NEWEST " ORDER BY seq DESC LIMIT ?) AS newest ORDER BY seq"

enum { R_ALL, R_OTN, R_PREFIX, R_COUNT };
static const char *const journal_read_sql[R_COUNT] = {
    [R_ALL] = JOURNAL_COLS "WHERE kind = ?" JOURNAL_NEWEST,
    [R_OTN] = JOURNAL_COLS "WHERE kind = ? AND out_trade_no = ?" JOURNAL_NEWEST,
    /* the pattern is the prefix (letters and digits only) and '%' */
    [R_PREFIX] = JOURNAL_COLS "WHERE kind = ? AND out_trade_no LIKE ?" JOURNAL_NEWEST,
};

typedef struct {
    journal_entry *v;
    size_t len, cap;
} journal_vec;

struct journal {
    faults_state *faults;
    pthread_mutex_t mu;
    pthread_cond_t work; /* entries queued (writer waits) */
    pthread_cond_t done; /* done_seq moved (request threads wait) */
    journal_vec queue;
    unsigned long long next_seq; /* of the next entry queued */
    unsigned long long done_seq; /* every entry below it is committed or dropped */
    unsigned long generation;    /* bumped by a reset */
    pthread_mutex_t write_mu;    /* held while a batch is written, and by a reset */
    MYSQL *wdb;                  /* the writer's connection */
    MYSQL_STMT *wstmt[1];
    pthread_mutex_t read_mu;
    MYSQL *rdb; /* the reader's connection */
    MYSQL_STMT *rstmt[R_COUNT];
};

static const char *journal_db(void)
{
    return env_str("IDEMPAY_MOCK_DB", LEDGER_DB);
}

void journal_entry_begin(journal_entry *e, bool notification)
{
    memset(e, 0, sizeof(*e));
    e->notification = notification;
    e->rule = -1;
    clock_gettime(CLOCK_REALTIME, &e->at);
    e->started_ms = clocks_mono_ms();
}

long long journal_elapsed_ms(const journal_entry *e)
{
    return clocks_mono_ms() - e->started_ms;
}

/* ---- writing --------------------------------------------------------------- */

static const char *journal_opt(const char *s)
{
    return s[0] != '\0' ? s : NULL;
}

/* n as text, or NULL when 0 (binds SQL NULL). */
static const char *journal_int(long n, char buf[24])
{
    if (n == 0)
        return NULL;
    snprintf(buf, 24, "%ld", n);
    return buf;
}

static int journal_insert(MYSQL_STMT *st, const journal_entry *e)
{
    char at[40], copy[24], attempt[24], status[24], rule[24];
    struct tm tm;

    gmtime_r(&e->at.tv_sec, &tm);
    size_t n = strftime(at, sizeof(at), "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(at + n, sizeof(at) - n, ".%06ld", e->at.tv_nsec / 1000);
    if (e->rule >= 0)
        snprintf(rule, sizeof(rule), "%d", e->rule);
    return db_stmt_exec(st, "ssssssssssssssssls", e->notification ? "notification" : "request", at,
                        journal_opt(e->endpoint), journal_opt(e->out_trade_no),
                        journal_opt(e->transaction_id), journal_opt(e->fault),
                        journal_opt(e->reply), journal_opt(e->return_code),
                        journal_opt(e->return_msg), journal_opt(e->result_code),
                        journal_opt(e->err_code), journal_int(e->copy, copy),
                        journal_int(e->attempt, attempt), journal_opt(e->notify_url),
                        journal_int(e->http_status, status), journal_opt(e->error), e->latency_ms,
                        e->rule >= 0 ? rule : NULL);
}

/* Writes v[0..n) in one transaction. 0, or -1 with *lost telling whether
 * the connection must be replaced; err gets the reason. */
static int journal_write_batch(journal *j, const journal_entry *v, size_t n, bool *lost, char *err,
                               size_t errlen)
{
    unsigned int no = 0;
    *lost = false;
    if (j->wdb == NULL) {
        j->wdb = db_conn_open_as(DB_ACCOUNT_MOCK, journal_db(), err, errlen);
        if (j->wdb == NULL) {
            *lost = true;
            return -1;
        }
    }
    MYSQL_STMT *st = db_stmt_slot(j->wdb, &j->wstmt[0], journal_insert_sql, &no, err, errlen);
    if (st == NULL) {
        *lost = db_conn_lost(no);
        return -1;
    }
    if (db_exec_simple(j->wdb, "START TRANSACTION") != 0)
        goto fail_db;
    for (size_t i = 0; i < n; i++) {
        if (journal_insert(st, &v[i]) != 0) {
            no = mysql_stmt_errno(st);
            snprintf(err, errlen, "insert: %s (%u)", mysql_stmt_error(st), no);
            *lost = db_conn_lost(no);
            (void)mysql_rollback(j->wdb);
            return -1;
        }
    }
    if (mysql_commit(j->wdb) != 0)
        goto fail_db;
    return 0;
fail_db:
    no = mysql_errno(j->wdb);
    snprintf(err, errlen, "%s (%u)", mysql_error(j->wdb), no);
    *lost = db_conn_lost(no);
    (void)mysql_rollback(j->wdb);
    return -1;
}

/* A batch whose write failed for any reason is written again, up to
 * JOURNAL_TRIES tries, 50 ms more of a pause before each. */
static const db_retry_policy journal_retry = {
    .max_tries = JOURNAL_TRIES,
    .max_lost_tries = JOURNAL_TRIES,
    .pause_step_ms = 50,
    .retry_any = true,
};

typedef struct {
    journal *j;
    const journal_entry *v;
    size_t n;
    char err[256];
} journal_batch;

/* One try of a batch; a lost connection is dropped (the next try opens one). */
static db_try_status journal_try_batch(void *arg, db_try_report *r)
{
    journal_batch *b = arg;
    bool lost = false;

    if (journal_write_batch(b->j, b->v, b->n, &lost, b->err, sizeof(b->err)) == 0)
        return DB_TRY_DONE;
    if (lost)
        db_conn_close(&b->j->wdb, b->j->wstmt, 1);
    r->lost = lost;
    return DB_TRY_FAILED;
}

/* Writes every entry of v in batches; entries that cannot be written after
 * JOURNAL_TRIES are dropped and logged. Caller holds write_mu. */
static void journal_write_all(journal *j, const journal_vec *v)
{
    for (size_t off = 0; off < v->len; off += JOURNAL_BATCH) {
        size_t n = v->len - off < JOURNAL_BATCH ? v->len - off : JOURNAL_BATCH;
        journal_batch b = { j, v->v + off, n, "" };
        if (db_run(&journal_retry, journal_try_batch, &b, NULL) != 0)
            log_msg(LOG_WARN, "journal: %zu entries dropped: %s", b.n, b.err);
    }
}

static void *journal_writer(void *arg)
{
    journal *j = arg;
    journal_vec batch = { NULL, 0, 0 };

    for (;;) {
        pthread_mutex_lock(&j->mu);
        while (j->queue.len == 0)
            pthread_cond_wait(&j->work, &j->mu);
        journal_vec t = j->queue; /* take every queued entry: a group commit */
        j->queue = batch;
        j->queue.len = 0;
        batch = t;
        unsigned long long upto = j->next_seq;
        unsigned long gen = j->generation;
        pthread_mutex_unlock(&j->mu);

        pthread_mutex_lock(&j->write_mu);
        pthread_mutex_lock(&j->mu);
        bool current = gen == j->generation; /* a reset in between dropped them */
        pthread_mutex_unlock(&j->mu);
        if (current)
            journal_write_all(j, &batch);
        pthread_mutex_unlock(&j->write_mu);

        pthread_mutex_lock(&j->mu);
        if (j->done_seq < upto)
            j->done_seq = upto;
        pthread_cond_broadcast(&j->done);
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

journal *journal_start(faults_state *faults)
{
    journal *j = calloc(1, sizeof(*j));
    pthread_condattr_t ca;
    pthread_attr_t ta;
    pthread_t t;

    if (j == NULL)
        return NULL;
    j->faults = faults;
    pthread_mutex_init(&j->mu, NULL);
    pthread_mutex_init(&j->write_mu, NULL);
    pthread_mutex_init(&j->read_mu, NULL);
    pthread_cond_init(&j->work, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->done, &ca);
    pthread_condattr_destroy(&ca);
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &ta, journal_writer, j);
    pthread_attr_destroy(&ta);
    if (rc != 0) {
        log_msg(LOG_ERROR, "journal: pthread_create: %s", strerror(rc));
        free(j);
        return NULL;
    }
    return j;
}

/* Appends e to the queue; its seq in *seq. -1 when full or OOM. Caller holds mu. */
static int journal_push(journal *j, const journal_entry *e, unsigned long long *seq)
{
    journal_vec *q = &j->queue;
    if (q->len >= JOURNAL_MAX_QUEUE)
        return -1;
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        journal_entry *v = realloc(q->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->len++] = *e;
    *seq = ++j->next_seq;
    return 0;
}

void journal_append(journal *j, const journal_entry *e, bool wait)
{
    faults_config cfg;
    unsigned long long seq = 0;

    if (j == NULL)
        return;
    faults_get(j->faults, &cfg);
    if (!cfg.journal)
        return;
    pthread_mutex_lock(&j->mu);
    if (journal_push(j, e, &seq) != 0) {
        pthread_mutex_unlock(&j->mu);
        log_msg(LOG_WARN, "journal: queue full; an entry of %s was dropped",
                e->out_trade_no[0] ? e->out_trade_no : "(no out_trade_no)");
        return;
    }
    pthread_cond_signal(&j->work);
    if (wait) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += JOURNAL_WAIT_MS / 1000;
        until.tv_nsec += (JOURNAL_WAIT_MS % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (j->done_seq < seq)
            if (pthread_cond_timedwait(&j->done, &j->mu, &until) == ETIMEDOUT)
                break;
    }
    pthread_mutex_unlock(&j->mu);
}

void journal_reset_begin(journal *j)
{
    if (j == NULL)
        return;
    pthread_mutex_lock(&j->write_mu);
    pthread_mutex_lock(&j->mu);
    j->queue.len = 0;
    j->generation++;
    j->done_seq = j->next_seq;
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->mu);
}

void journal_reset_end(journal *j)
{
    if (j == NULL)
        return;
    pthread_mutex_unlock(&j->write_mu);
}

/* ---- reading --------------------------------------------------------------- */

typedef struct {
    long long seq, copy, attempt, status, latency, rule;
    int null_copy, null_attempt, null_status, null_rule;
    char at[40], endpoint[16], otn[33], txid[TXID_BUF], fault[24], reply[16];
    char return_code[16], return_msg[128], result_code[16], err_code[32];
    char notify_url[257], error[256];
    int n_endpoint, n_otn, n_txid, n_fault, n_reply, n_rc, n_rm, n_res, n_err, n_url, n_error;
} journal_row;

static int journal_fetch(MYSQL_STMT *st, journal_row *r)
{
    return db_stmt_fetch(st, "lsSSSSSSSSSLLSLSlL", &r->seq, r->at, sizeof(r->at), r->endpoint,
                         sizeof(r->endpoint), &r->n_endpoint, r->otn, sizeof(r->otn), &r->n_otn,
                         r->txid, sizeof(r->txid), &r->n_txid, r->fault, sizeof(r->fault),
                         &r->n_fault, r->reply, sizeof(r->reply), &r->n_reply, r->return_code,
                         sizeof(r->return_code), &r->n_rc, r->return_msg, sizeof(r->return_msg),
                         &r->n_rm, r->result_code, sizeof(r->result_code), &r->n_res, r->err_code,
                         sizeof(r->err_code), &r->n_err, &r->copy, &r->null_copy, &r->attempt,
                         &r->null_attempt, r->notify_url, sizeof(r->notify_url), &r->n_url,
                         &r->status, &r->null_status, r->error, sizeof(r->error), &r->n_error,
                         &r->latency, &r->rule, &r->null_rule);
}

static json_t *journal_str(const char *s, int is_null)
{
    return is_null ? json_null() : json_string(s);
}

static json_t *journal_num(long long v, int is_null)
{
    return is_null ? json_null() : json_integer(v);
}

static json_t *journal_row_json(const journal_row *r, bool notification)
{
    if (!notification)
        return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "seq",
                         (json_int_t)r->seq, "time", r->at, "endpoint",
                         journal_str(r->endpoint, r->n_endpoint), "out_trade_no",
                         journal_str(r->otn, r->n_otn), "fault", journal_str(r->fault, r->n_fault),
                         "rule", journal_num(r->rule, r->null_rule), "reply",
                         journal_str(r->reply, r->n_reply), "return_code",
                         journal_str(r->return_code, r->n_rc), "return_msg",
                         journal_str(r->return_msg, r->n_rm), "result_code",
                         journal_str(r->result_code, r->n_res), "err_code",
                         journal_str(r->err_code, r->n_err), "transaction_id",
                         journal_str(r->txid, r->n_txid), "latency_ms", (json_int_t)r->latency);
    /* v2: HTTP 200 with return_code SUCCESS; v3: 200 or 204 (noted SUCCESS). */
    bool ack = !r->null_status && (r->status == 200 || r->status == 204) && !r->n_rc &&
               strcmp(r->return_code, "SUCCESS") == 0;
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:I}", "seq",
                     (json_int_t)r->seq, "time", r->at, "out_trade_no",
                     journal_str(r->otn, r->n_otn), "transaction_id",
                     journal_str(r->txid, r->n_txid), "copy", journal_num(r->copy, r->null_copy),
                     "attempt", journal_num(r->attempt, r->null_attempt), "notify_url",
                     journal_str(r->notify_url, r->n_url), "http_status",
                     journal_num(r->status, r->null_status), "return_code",
                     journal_str(r->return_code, r->n_rc), "return_msg",
                     journal_str(r->return_msg, r->n_rm), "acknowledged", ack, "error",
                     journal_str(r->error, r->n_error), "latency_ms", (json_int_t)r->latency);
}

/* The newest limit entries of one kind, oldest first, into a new array at
 * *out. 0, or -1 with err set (*lost: replace the connection). */
static int journal_read_kind(journal *j, bool notification, const journal_filter *fl,
                             long long limit, json_t **out, bool *lost, char *err, size_t errlen)
{
    unsigned int no = 0;
    char pattern[JOURNAL_PREFIX_MAX + 2];
    const char *otn = fl->out_trade_no;
    int sid = R_ALL;
    if (fl->out_trade_no != NULL) {
        sid = R_OTN;
    } else if (fl->prefix != NULL) {
        sid = R_PREFIX;
        snprintf(pattern, sizeof(pattern), "%s%%", fl->prefix);
        otn = pattern;
    }
    const char *kind = notification ? "notification" : "request";
    journal_row r;
    int f, rc;

    *out = NULL;
    *lost = false;
    MYSQL_STMT *st = db_stmt_slot(j->rdb, &j->rstmt[sid], journal_read_sql[sid], &no, err, errlen);
    if (st == NULL) {
        *lost = db_conn_lost(no);
        return -1;
    }
    rc = sid != R_ALL ? db_stmt_exec(st, "ssl", kind, otn, limit)
                      : db_stmt_exec(st, "sl", kind, limit);
    json_t *a = json_array();
    if (rc != 0 || a == NULL)
        goto fail;
    while ((f = journal_fetch(st, &r)) == 1) {
        json_t *e = journal_row_json(&r, notification);
        if (e == NULL || json_array_append_new(a, e) != 0)
            goto fail;
    }
    if (f < 0)
        goto fail;
    *out = a;
    return 0;
fail:
    json_decref(a);
    no = mysql_stmt_errno(st);
    snprintf(err, errlen, "journal read: %s (%u)", no ? mysql_stmt_error(st) : "out of memory", no);
    *lost = db_conn_lost(no);
    db_stmt_done(st);
    return -1;
}

json_t *journal_json(journal *j, const journal_filter *filter, long long limit, char *err,
                     size_t errlen)
{
    json_t *req = NULL, *ntf = NULL, *o = NULL;
    bool lost = false;

    pthread_mutex_lock(&j->read_mu);
    for (int attempt = 0; attempt < 2 && o == NULL; attempt++) {
        if (j->rdb == NULL &&
            (j->rdb = db_conn_open_as(DB_ACCOUNT_MOCK, journal_db(), err, errlen)) == NULL)
            break;
        if (journal_read_kind(j, false, filter, limit, &req, &lost, err, errlen) == 0 &&
            journal_read_kind(j, true, filter, limit, &ntf, &lost, err, errlen) == 0) {
            o = json_pack("{s:o, s:o}", "requests", req, "notifications", ntf);
            if (o == NULL)
                snprintf(err, errlen, "out of memory");
            break;
        }
        json_decref(req);
        req = NULL;
        if (!lost)
            break;
        db_conn_close(&j->rdb, j->rstmt, R_COUNT);
    }
    pthread_mutex_unlock(&j->read_mu);
    return o;
}
