/* idem_key.c - Idempotency-Key records in payment_idempotent: claim by
 * INSERT (the unique (user_id, idem_key) decides concurrent first
 * requests), take over an expired claim by CAS on its lease, store the
 * final answer once, purge by expiry. */
#include "idem_key.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "db_conn.h"
#include "hex.h"
#include "log.h"
#include "order_store.h"

enum {
    IDEM_SQL_INSERT = 0,
    IDEM_SQL_GET,
    IDEM_SQL_TAKE_EXPIRED_LEASE,
    IDEM_SQL_REUSE_EXPIRED,
    IDEM_SQL_COMPLETE,
    IDEM_SQL_RELEASE,
    IDEM_SQL_COUNT
};

static const char *const idem_sql[IDEM_SQL_COUNT] = {
    [IDEM_SQL_INSERT] =
        "INSERT INTO payment_idempotent (caller_id, user_id, idem_key, fingerprint, state,"
        " lease_until, expires_at) VALUES (?, ?, ?, ?, 0, NOW(3) + INTERVAL ? MICROSECOND,"
        " NOW(3) + INTERVAL ? SECOND)",
    [IDEM_SQL_GET] =
        "SELECT id, fingerprint, state, COALESCE(response_code, 0), response_body,"
        " lease_until > NOW(3), expires_at <= NOW(3)"
        " FROM payment_idempotent WHERE caller_id = ? AND user_id = ? AND idem_key = ?",
    /* A claim whose holder died: same request, lease over. */
    [IDEM_SQL_TAKE_EXPIRED_LEASE] =
        "UPDATE payment_idempotent SET lease_until = NOW(3) + INTERVAL ? MICROSECOND"
        " WHERE id = ? AND state = 0 AND lease_until <= NOW(3) AND expires_at > NOW(3)",
    /* A record past its expiry not purged yet: it counts as absent. */
    [IDEM_SQL_REUSE_EXPIRED] =
        "UPDATE payment_idempotent SET fingerprint = ?, state = 0, response_code = NULL,"
        " response_body = NULL, lease_until = NOW(3) + INTERVAL ? MICROSECOND,"
        " created_at = NOW(3), expires_at = NOW(3) + INTERVAL ? SECOND"
        " WHERE id = ? AND expires_at <= NOW(3)",
    [IDEM_SQL_COMPLETE] =
        "UPDATE payment_idempotent SET state = 1, response_code = ?, response_body = ?,"
        " lease_until = NOW(3)"
        " WHERE caller_id = ? AND user_id = ? AND idem_key = ? AND state = 0 AND fingerprint = ?",
    [IDEM_SQL_RELEASE] =
        "DELETE FROM payment_idempotent"
        " WHERE caller_id = ? AND user_id = ? AND idem_key = ? AND state = 0 AND fingerprint = ?",
};

static const char idem_purge_sql[] =
    "DELETE FROM payment_idempotent WHERE expires_at <= NOW(3) LIMIT ?";

/* Rounds of insert / read / take-over before answering "in progress". */
#define IDEM_CLAIM_ROUNDS 4

int idem_key_fingerprint(const char *order_no, long long user_id, int64_t amount_fen,
                         char out[IDEM_FINGERPRINT_LEN + 1])
{
    return idem_key_fingerprint_flow(order_no, user_id, amount_fen, NULL, out);
}

int idem_key_fingerprint_flow(const char *order_no, long long user_id, int64_t amount_fen,
                              const char *flow, char out[IDEM_FINGERPRINT_LEN + 1])
{
    char canon[512];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int n;

    out[0] = '\0';
    n = snprintf(canon, sizeof(canon), "order_no=%s\nuser_id=%lld\namount_fen=%lld\n%s%s%s",
                 order_no, user_id, (long long)amount_fen, flow != NULL ? "flow=" : "",
                 flow != NULL ? flow : "", flow != NULL ? "\n" : "");
    if (n < 0 || (size_t)n >= sizeof(canon))
        return -1;
    if (EVP_Digest(canon, (size_t)n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return -1;
    hex_lower(md, mdlen, out);
    return 0;
}

static MYSQL_STMT *idem_stmt(app_ctx *ctx, int which)
{
    return app_ctx_stmt(ctx, STMT_IDEM_BASE + which, idem_sql[which]);
}

typedef struct {
    long long id;
    char fingerprint[IDEM_FINGERPRINT_LEN + 1];
    long long state;
    long long lease_live;
    long long expired;
} idem_row;

/* Reads the record of (caller_id, user_id, key). 1 found, 0 absent, -1 database failure. */
static int idem_read(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                     idem_row *row, idem_stored *stored)
{
    MYSQL_STMT *st;
    long long code = 0;
    int tries = 0, rc;
    unsigned int err;

    for (;;) {
        st = idem_stmt(ctx, IDEM_SQL_GET);
        rc = st != NULL ? db_stmt_exec(st, "lls", caller_id, user_id, key) : -1;
        if (rc == 0)
            rc = db_stmt_fetch(st, "lsllsll", &row->id, row->fingerprint, sizeof(row->fingerprint),
                               &row->state, &code, stored->body, sizeof(stored->body),
                               &row->lease_live, &row->expired);
        if (rc >= 0)
            break;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            return -1;
    }
    db_stmt_done(st);
    if (rc == 1) {
        stored->status = (int)code;
        stored->body_len = strlen(stored->body);
    }
    return rc;
}

/* Runs one of the claim CAS updates. 1 won, 0 lost, -1 database failure. */
static int idem_cas_take(app_ctx *ctx, const idem_row *row, const char *fingerprint, long lease_ms,
                         long ttl_s)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;
    long long lease_us = (long long)lease_ms * 1000;

    for (;;) {
        if (row->expired) {
            st = idem_stmt(ctx, IDEM_SQL_REUSE_EXPIRED);
            rc = st != NULL
                     ? db_stmt_exec(st, "slll", fingerprint, lease_us, (long long)ttl_s, row->id)
                     : -1;
        } else {
            st = idem_stmt(ctx, IDEM_SQL_TAKE_EXPIRED_LEASE);
            rc = st != NULL ? db_stmt_exec(st, "ll", lease_us, row->id) : -1;
        }
        if (rc == 0)
            return mysql_stmt_affected_rows(st) == 1 ? 1 : 0;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            return -1;
    }
}

idem_result idem_key_claim(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                           const char *fingerprint, long lease_ms, long ttl_s, idem_stored *stored)
{
    MYSQL_STMT *st;
    idem_row row;
    int tries, rc;
    unsigned int err;

    for (int round = 0; round < IDEM_CLAIM_ROUNDS; round++) {
        /* 1. The first request with this key inserts the claim. */
        tries = 0;
        for (;;) {
            st = idem_stmt(ctx, IDEM_SQL_INSERT);
            rc = st != NULL ? db_stmt_exec(st, "llssll", caller_id, user_id, key, fingerprint,
                                           (long long)lease_ms * 1000, (long long)ttl_s)
                            : -1;
            if (rc == 0)
                return IDEM_CLAIMED;
            if (st != NULL && mysql_stmt_errno(st) == 1062)
                break;
            if (!order_store_should_retry(ctx, st, &tries, &err))
                goto unavailable;
        }

        /* 2. The key exists: decide from its record. */
        memset(&row, 0, sizeof(row));
        rc = idem_read(ctx, caller_id, user_id, key, &row, stored);
        if (rc < 0)
            goto unavailable;
        if (rc == 0)
            continue; /* released or purged meanwhile: insert again */
        if (!row.expired) {
            if (strcmp(row.fingerprint, fingerprint) != 0)
                return IDEM_MISMATCH;
            if (row.state == 1)
                return IDEM_REPLAY;
            if (row.lease_live)
                return IDEM_IN_PROGRESS;
        }
        /* 3. An expired record or a dead holder's claim: take it over. */
        rc = idem_cas_take(ctx, &row, fingerprint, lease_ms, ttl_s);
        if (rc < 0)
            goto unavailable;
        if (rc == 1)
            return IDEM_CLAIMED;
    }
    return IDEM_IN_PROGRESS;

unavailable:
    log_msg(LOG_ERROR, "idem_key claim user=%lld: %s", user_id, ctx->err);
    return IDEM_UNAVAILABLE;
}

int idem_key_complete(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                      const char *fingerprint, int status, const char *body)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;

    if (strlen(body) >= IDEM_BODY_MAX) {
        log_msg(LOG_ERROR, "idem_key complete user=%lld: body of %zu bytes not stored", user_id,
                strlen(body));
        return idem_key_release(ctx, caller_id, user_id, key, fingerprint);
    }
    for (;;) {
        st = idem_stmt(ctx, IDEM_SQL_COMPLETE);
        rc = st != NULL ? db_stmt_exec(st, "lsllss", (long long)status, body, caller_id, user_id,
                                       key, fingerprint)
                        : -1;
        if (rc == 0)
            return 0;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    log_msg(LOG_WARN, "idem_key complete user=%lld: %s", user_id, ctx->err);
    return -1;
}

int idem_key_release(app_ctx *ctx, long long caller_id, long long user_id, const char *key,
                     const char *fingerprint)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;

    for (;;) {
        st = idem_stmt(ctx, IDEM_SQL_RELEASE);
        rc = st != NULL ? db_stmt_exec(st, "llss", caller_id, user_id, key, fingerprint) : -1;
        if (rc == 0)
            return 0;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    log_msg(LOG_WARN, "idem_key release user=%lld: %s", user_id, ctx->err);
    return -1;
}

long long idem_key_purge(app_ctx *ctx, int slot, long limit)
{
    MYSQL_STMT *st;
    int tries = 0, rc;
    unsigned int err;

    for (;;) {
        st = app_ctx_stmt(ctx, slot, idem_purge_sql);
        rc = st != NULL ? db_stmt_exec(st, "l", (long long)limit) : -1;
        if (rc == 0)
            return (long long)mysql_stmt_affected_rows(st);
        if (!order_store_should_retry(ctx, st, &tries, &err))
            break;
    }
    log_msg(LOG_WARN, "idem_key purge: %s", ctx->err);
    return -1;
}
