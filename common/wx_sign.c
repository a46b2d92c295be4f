/* wx_sign.c - WeChat Pay v2 signatures (MD5 / HMAC-SHA256 over the sorted
 * non-empty fields plus "&key=KEY") with OpenSSL 3, constant-time checks and
 * OS-random nonces. The string holding the key is wiped before it is freed. */
#include "wx_sign.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

static int wx_sign_cmp_field(const void *a, const void *b)
{
    const wx_field *fa = *(const wx_field *const *)a;
    const wx_field *fb = *(const wx_field *const *)b;
    return strcmp(fa->name, fb->name); /* strcmp compares bytes as unsigned char */
}

/* "k1=v1&k2=v2&...&key=KEY" (malloc'd, *len set) or NULL on OOM. */
static char *wx_sign_string(const wx_msg *m, const char *key, size_t *len)
{
    const wx_field *sorted[WX_MSG_MAX_FIELDS];
    size_t n = 0;
    size_t total = strlen("key=") + strlen(key) + 1;

    for (size_t i = 0; i < m->n && n < WX_MSG_MAX_FIELDS; i++) {
        const wx_field *f = &m->field[i];
        if (f->value[0] == '\0' || strcmp(f->name, "sign") == 0)
            continue;
        sorted[n++] = f;
        total += strlen(f->name) + 1 + strlen(f->value) + 1;
    }
    qsort(sorted, n, sizeof(sorted[0]), wx_sign_cmp_field);

    char *s = malloc(total);
    if (s == NULL)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(sorted[i]->name), vl = strlen(sorted[i]->value);
        memcpy(s + at, sorted[i]->name, nl);
        at += nl;
        s[at++] = '=';
        memcpy(s + at, sorted[i]->value, vl);
        at += vl;
        s[at++] = '&';
    }
    size_t kl = strlen(key);
    memcpy(s + at, "key=", 4);
    at += 4;
    memcpy(s + at, key, kl);
    at += kl;
    s[at] = '\0';
    *len = at;
    return s;
}

int wx_sign_compute(const wx_msg *m, const char *key, wx_sign_type type, char out[WX_SIGN_HEX_MAX])
{
    static const char hex[] = "0123456789ABCDEF";
    unsigned char md[EVP_MAX_MD_SIZE];
    size_t mdlen = 0;
    int rc = -1;

    out[0] = '\0';
    if (m == NULL || key == NULL)
        return -1;
    size_t len = 0;
    char *s = wx_sign_string(m, key, &len);
    if (s == NULL)
        return -1;

    if (type == WX_SIGN_MD5) {
        if (!EVP_Q_digest(NULL, "MD5", NULL, s, len, md, &mdlen))
            goto done;
    } else if (type == WX_SIGN_HMAC_SHA256) {
        unsigned int hl = 0;
        if (HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)s, len, md, &hl) ==
            NULL)
            goto done;
        mdlen = hl;
    } else {
        goto done;
    }
    if (mdlen * 2 >= WX_SIGN_HEX_MAX)
        goto done;
    for (size_t i = 0; i < mdlen; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 0x0F];
    }
    out[2 * mdlen] = '\0';
    rc = 0;
done:
    OPENSSL_cleanse(s, len);
    free(s);
    OPENSSL_cleanse(md, sizeof(md));
    return rc;
}

int wx_sign_type_of(const wx_msg *m, wx_sign_type dflt, wx_sign_type *out)
{
    const char *t = wx_msg_get(m, "sign_type");
    if (t == NULL || t[0] == '\0') {
        *out = dflt;
        return 0;
    }
    return wx_sign_type_parse(t, out);
}

int wx_sign_type_parse(const char *text, wx_sign_type *out)
{
    if (text != NULL && strcmp(text, "MD5") == 0)
        *out = WX_SIGN_MD5;
    else if (text != NULL && strcmp(text, "HMAC-SHA256") == 0)
        *out = WX_SIGN_HMAC_SHA256;
    else
        return -1;
    return 0;
}

const char *wx_sign_type_name(wx_sign_type t)
{
    return t == WX_SIGN_HMAC_SHA256 ? "HMAC-SHA256" : "MD5";
}

int wx_sign_type_allowed(wx_sign_type used, wx_sign_type configured)
{
    return used == WX_SIGN_HMAC_SHA256 || configured == WX_SIGN_MD5;
}

int wx_sign_msg(wx_msg *m, const char *key, wx_sign_type type, int set_type)
{
    char sig[WX_SIGN_HEX_MAX];

    if (m == NULL)
        return -1;
    wx_msg_del(m, "sign");
    if (set_type) {
        /* A stale sign_type naming the other algorithm is corrected too. */
        const char *declared = type == WX_SIGN_HMAC_SHA256 ? "HMAC-SHA256" : "MD5";
        if ((type == WX_SIGN_HMAC_SHA256 || wx_msg_get(m, "sign_type") != NULL) &&
            wx_msg_set(m, "sign_type", declared) != 0)
            return -1;
    }
    if (wx_sign_compute(m, key, type, sig) != 0)
        return -1;
    return wx_msg_set(m, "sign", sig) == 0 ? 0 : -1;
}

int wx_sign_verify(const wx_msg *m, const char *key, wx_sign_type dflt)
{
    char expect[WX_SIGN_HEX_MAX];
    wx_sign_type type;

    const char *given = wx_msg_get(m, "sign");
    if (given == NULL || given[0] == '\0' || key == NULL)
        return 0;
    if (wx_sign_type_of(m, dflt, &type) != 0)
        return 0;
    if (wx_sign_compute(m, key, type, expect) != 0)
        return 0;
    size_t n = strlen(expect);
    /* The length of a signature is public; its content is compared in constant time. */
    int ok = strlen(given) == n && CRYPTO_memcmp(expect, given, n) == 0;
    OPENSSL_cleanse(expect, sizeof(expect));
    return ok;
}

int wx_nonce(char out[33])
{
    static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    unsigned char pool[64];
    size_t have = 0, used = 0, n = 0;

    out[0] = '\0';
    while (n < 32) {
        if (used == have) {
            if (RAND_bytes(pool, (int)sizeof(pool)) != 1) {
                out[0] = '\0';
                return -1;
            }
            have = sizeof(pool);
            used = 0;
        }
        unsigned char b = pool[used++];
        if (b < 248) /* 248 = 4 * 62: rejection keeps every character equally likely */
            out[n++] = alphabet[b % 62];
    }
    out[32] = '\0';
    OPENSSL_cleanse(pool, sizeof(pool));
    return 0;
}
