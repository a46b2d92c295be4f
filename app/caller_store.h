/* caller_store - the merchant door's callers (table payment_caller,
 * sql/014_callers.sql) and their keys.
 *
 * A caller's key is never stored: it is derived on each lookup as
 *   key = HMAC-SHA256(IDEMPAY_WX_KEY, "idempay-caller-v1\n" name "\n" key_salt)
 * from the row's random salt; the row keeps SHA-256(key) (key_check) so a
 * service with another merchant key refuses the caller instead of checking
 * signatures with a wrong key (docs/SECURITY.md, "Caller keys").
 *
 * Lookups use the app_ctx slot STMT_CALLER_BASE; the operator commands
 * (--add-caller, --rekey-caller, --list-callers, --disable-caller of
 * idempay-fcgi) open a
 * context of their own and use STMT_CALLER_BASE + 1..3. */
#ifndef IDEMPAY_CALLER_STORE_H
#define IDEMPAY_CALLER_STORE_H

#include <stdio.h>

#include "app_ctx.h"
#include "caller_sign.h"

#define CALLER_SALT_HEX_LEN 32

typedef struct {
    long long id;
    char name[CALLER_NAME_MAX + 1];
    int enabled;
    int key_ok;                        /* the derived key matches key_check */
    unsigned char key[CALLER_KEY_LEN]; /* the derived key (key_ok); never logged */
} caller_record;

typedef enum {
    CALLER_STORE_OK = 0,
    CALLER_STORE_MISS, /* no caller of that name */
    CALLER_STORE_ERROR /* MariaDB failed; ctx->err says why */
} caller_store_result;

/* Derives the key of (name, salt_hex) under merchant_key into key. Returns 0
 * or -1 (crypto failure, arguments NULL). Pure. */
int caller_store_derive_key(const char *merchant_key, const char *name, const char *salt_hex,
                            unsigned char key[CALLER_KEY_LEN]);

/* Reads caller name into *out (key derived with ctx->cfg->key and checked).
 * A lost connection is retried once. OK, MISS or ERROR. */
caller_store_result caller_store_find(app_ctx *ctx, const char *name, caller_record *out);

/* Operator commands; each prints to out/err and returns the process's exit
 * status: 0 done, 1 refused (a name that is invalid, taken, or unknown),
 * 2 the database could not be used. --add-caller prints the new caller's
 * secret (CALLER_KEY_HEX_LEN hex digits) once, on out's last line. */
int caller_store_add(const app_config *cfg, const char *name, FILE *out, FILE *err);
/* A new salt and key for an existing caller under the current merchant key
 * (after IDEMPAY_WX_KEY changed, or a leaked secret): its id, and so its
 * orders, stay; its old secret stops signing; prints the new secret once. */
int caller_store_rekey(const app_config *cfg, const char *name, FILE *out, FILE *err);
int caller_store_list(const app_config *cfg, FILE *out, FILE *err);
int caller_store_disable(const app_config *cfg, const char *name, FILE *out, FILE *err);

#endif
