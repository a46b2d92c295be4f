/* caller_store - payment_caller rows, derived keys, operator commands. */
#include "caller_store.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <string.h>

#include "db_conn.h"
#include "hex.h"
#include "log.h"
#include "order_store.h"

#define CALLER_DERIVE_LABEL "idempay-caller-v1"

static const char SQL_FIND[] =
    "SELECT id, name, key_salt, key_check, enabled FROM payment_caller WHERE name = ?";
static const char SQL_ADD[] =
    "INSERT INTO payment_caller (name, key_salt, key_check) VALUES (?, ?, ?)";
static const char SQL_LIST[] =
    "SELECT id, name, enabled, DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s'), "
    "COALESCE(DATE_FORMAT(disabled_at, '%Y-%m-%d %H:%i:%s'), '-') FROM payment_caller ORDER BY id";
static const char SQL_REKEY[] =
    "UPDATE payment_caller SET key_salt = ?, key_check = ? WHERE name = ?";
static const char SQL_DISABLE[] =
    "UPDATE payment_caller SET enabled = 0, disabled_at = NOW(3) WHERE name = ? AND enabled = 1";

int caller_store_derive_key(const char *merchant_key, const char *name, const char *salt_hex,
                            unsigned char key[CALLER_KEY_LEN])
{
    char text[sizeof(CALLER_DERIVE_LABEL) + CALLER_NAME_MAX + CALLER_SALT_HEX_LEN + 8];
    unsigned int len = 0;
    int n;

    if (merchant_key == NULL || name == NULL || salt_hex == NULL)
        return -1;
    n = snprintf(text, sizeof(text), "%s\n%s\n%s", CALLER_DERIVE_LABEL, name, salt_hex);
    if (n < 0 || (size_t)n >= sizeof(text))
        return -1;
    if (HMAC(EVP_sha256(), merchant_key, (int)strlen(merchant_key), (const unsigned char *)text,
             (size_t)n, key, &len) == NULL ||
        len != CALLER_KEY_LEN)
        return -1;
    return 0;
}

/* SHA-256 hex of key into out (65 bytes). 0 or -1. */
static int key_check_of(const unsigned char key[CALLER_KEY_LEN], char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (EVP_Digest(key, CALLER_KEY_LEN, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
        return -1;
    hex_lower(md, 32, out);
    return 0;
}

caller_store_result caller_store_find(app_ctx *ctx, const char *name, caller_record *out)
{
    char salt[CALLER_SALT_HEX_LEN + 8], check[72], want[65];
    long long enabled = 0;
    int tries = 0, rc;
    unsigned int err;
    MYSQL_STMT *st;

    memset(out, 0, sizeof(*out));
    for (;;) {
        st = app_ctx_stmt(ctx, STMT_CALLER_BASE, SQL_FIND);
        rc = st != NULL ? db_stmt_exec(st, "s", name) : -1;
        if (rc == 0)
            rc = db_stmt_fetch(st, "lsssl", &out->id, out->name, sizeof(out->name), salt,
                               sizeof(salt), check, sizeof(check), &enabled);
        if (rc >= 0)
            break;
        if (!order_store_should_retry(ctx, st, &tries, &err))
            return CALLER_STORE_ERROR;
    }
    db_stmt_done(st);
    if (rc == 0)
        return CALLER_STORE_MISS;
    out->enabled = enabled == 1;
    out->key_ok = caller_store_derive_key(ctx->cfg->key, out->name, salt, out->key) == 0 &&
                  key_check_of(out->key, want) == 0 && strlen(check) == 64 &&
                  CRYPTO_memcmp(want, check, 64) == 0;
    if (!out->key_ok)
        OPENSSL_cleanse(out->key, sizeof(out->key));
    return CALLER_STORE_OK;
}

/* A context for an operator command, or NULL with the reason on err. */
static app_ctx *admin_ctx(const app_config *cfg, FILE *err)
{
    app_ctx *ctx = app_ctx_new(cfg, 0);

    if (ctx == NULL || app_ctx_db(ctx) != 0) {
        fprintf(err, "cannot reach the database: %s\n", ctx != NULL ? ctx->err : "out of memory");
        app_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

/* A new salt, the key derived from it and its check, for name. 0, or 2
 * with the reason on err. */
static int new_key(const app_config *cfg, const char *name, char salt[CALLER_SALT_HEX_LEN + 1],
                   unsigned char key[CALLER_KEY_LEN], char check[65], FILE *err)
{
    unsigned char raw[CALLER_SALT_HEX_LEN / 2];

    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        fprintf(err, "the random source failed\n");
        return 2;
    }
    hex_lower(raw, sizeof(raw), salt);
    if (caller_store_derive_key(cfg->key, name, salt, key) != 0 || key_check_of(key, check) != 0) {
        fprintf(err, "the crypto library failed\n");
        return 2;
    }
    return 0;
}

/* Adds (rekey 0) or re-keys (rekey 1) caller name; see caller_store.h. */
static int issue(const app_config *cfg, const char *name, int rekey, FILE *out, FILE *err)
{
    unsigned char key[CALLER_KEY_LEN];
    char salt[CALLER_SALT_HEX_LEN + 1], check[65], secret[CALLER_KEY_HEX_LEN + 1];
    int rc = 2;
    app_ctx *ctx = NULL;
    MYSQL_STMT *st;

    if (!caller_sign_name_valid(name)) {
        fprintf(err, "a caller name is 1 to %d characters of [A-Za-z0-9_.-]\n", CALLER_NAME_MAX);
        return 1;
    }
    if (new_key(cfg, name, salt, key, check, err) != 0)
        goto done;
    ctx = admin_ctx(cfg, err);
    st = ctx == NULL ? NULL
         : rekey     ? app_ctx_stmt(ctx, STMT_CALLER_BASE + 1, SQL_REKEY)
                     : app_ctx_stmt(ctx, STMT_CALLER_BASE + 1, SQL_ADD);
    if (st == NULL)
        goto done;
    if (rekey ? db_stmt_exec(st, "sss", salt, check, name) != 0
              : db_stmt_exec(st, "sss", name, salt, check) != 0) {
        rc = mysql_stmt_errno(st) == 1062 ? 1 : 2;
        fprintf(err,
                rc == 1 ? "caller %s exists already (--disable-caller, then add another name)\n"
                        : "cannot write caller %s: %s\n",
                name, mysql_stmt_error(st));
        goto done;
    }
    if (rekey && mysql_stmt_affected_rows(st) != 1) {
        fprintf(err, "no caller named %s\n", name);
        rc = 1;
        goto done;
    }
    hex_lower(key, sizeof(key), secret);
    fprintf(out,
            "caller %s %s; its secret (shown once, keep it in the caller's secret store):\n"
            "%s\n",
            name, rekey ? "re-keyed (its old secret no longer signs)" : "added", secret);
    OPENSSL_cleanse(secret, sizeof(secret));
    rc = 0;
done:
    OPENSSL_cleanse(key, sizeof(key));
    app_ctx_free(ctx);
    return rc;
}

int caller_store_add(const app_config *cfg, const char *name, FILE *out, FILE *err)
{
    return issue(cfg, name, 0, out, err);
}

int caller_store_rekey(const app_config *cfg, const char *name, FILE *out, FILE *err)
{
    return issue(cfg, name, 1, out, err);
}

int caller_store_list(const app_config *cfg, FILE *out, FILE *err)
{
    char name[CALLER_NAME_MAX + 8], created[32], disabled[32];
    long long id = 0, enabled = 0;
    int got, n = 0;
    app_ctx *ctx = admin_ctx(cfg, err);
    MYSQL_STMT *st = ctx != NULL ? app_ctx_stmt(ctx, STMT_CALLER_BASE + 2, SQL_LIST) : NULL;

    if (st == NULL || db_stmt_exec(st, "") != 0) {
        if (ctx != NULL)
            fprintf(err, "cannot read the callers: %s\n", ctx->err);
        app_ctx_free(ctx);
        return 2;
    }
    fprintf(out, "id\tname\tstatus\tcreated_utc\tdisabled_utc\n");
    while ((got = db_stmt_fetch(st, "lslss", &id, name, sizeof(name), &enabled, created,
                                sizeof(created), disabled, sizeof(disabled))) > 0) {
        fprintf(out, "%lld\t%s\t%s\t%s\t%s\n", id, name, enabled ? "enabled" : "disabled", created,
                disabled);
        n++;
    }
    if (got < 0)
        fprintf(err, "reading the callers failed: %s\n", mysql_stmt_error(st));
    else
        fprintf(out, "%d caller(s)\n", n);
    app_ctx_free(ctx);
    return got < 0 ? 2 : 0;
}

int caller_store_disable(const app_config *cfg, const char *name, FILE *out, FILE *err)
{
    int rc = 2;
    app_ctx *ctx = admin_ctx(cfg, err);
    MYSQL_STMT *st = ctx != NULL ? app_ctx_stmt(ctx, STMT_CALLER_BASE + 3, SQL_DISABLE) : NULL;

    if (st == NULL || db_stmt_exec(st, "s", name ? name : "") != 0) {
        if (ctx != NULL)
            fprintf(err, "cannot disable caller %s: %s\n", name ? name : "", ctx->err);
        goto done;
    }
    if (mysql_stmt_affected_rows(st) == 1) {
        fprintf(out, "caller %s disabled: its requests get 401 from now on\n", name);
        rc = 0;
    } else {
        fprintf(err, "no enabled caller named %s\n", name ? name : "");
        rc = 1;
    }
done:
    app_ctx_free(ctx);
    return rc;
}
