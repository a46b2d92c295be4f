/* wx3_sign.c - SHA256withRSA through EVP_DigestSign / EVP_DigestVerify,
 * PEM loading, the Authorization header's grammar. */
#include "wx3_sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "wx3_aead.h"

int wx3_key_load(const char *path, EVP_PKEY **out)
{
    FILE *f = path != NULL ? fopen(path, "r") : NULL;

    *out = NULL;
    if (f == NULL)
        return -1;
    *out = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    return *out != NULL ? 0 : -1;
}

static time_t cert_time(const ASN1_TIME *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return timegm(&tm);
}

/* The serial number of x as upper-case hex into out. */
static int cert_serial(X509 *x, char out[WX3_SERIAL_BUF])
{
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
    char *hex = bn != NULL ? BN_bn2hex(bn) : NULL;
    int rc = hex != NULL && strlen(hex) < WX3_SERIAL_BUF ? 0 : -1;
    if (rc == 0)
        snprintf(out, WX3_SERIAL_BUF, "%s", hex);
    OPENSSL_free(hex);
    BN_free(bn);
    return rc;
}

/* Fills out from x (not consumed). 0 or -1 (out freed). */
static int cert_from_x509(X509 *x, wx3_cert *out)
{
    BIO *mem = NULL;
    int rc = -1;

    if (x == NULL || cert_serial(x, out->serial) != 0 || (out->pub = X509_get_pubkey(x)) == NULL ||
        (mem = BIO_new(BIO_s_mem())) == NULL || PEM_write_bio_X509(mem, x) != 1)
        goto done;
    int n = BIO_read(mem, out->pem, WX3_MAX_PEM - 1);
    if (n <= 0 || n >= WX3_MAX_PEM - 1)
        goto done;
    out->pem[n] = '\0';
    out->not_before = cert_time(X509_get0_notBefore(x));
    out->not_after = cert_time(X509_get0_notAfter(x));
    rc = 0;
done:
    if (rc != 0)
        wx3_cert_free(out);
    BIO_free(mem);
    return rc;
}

int wx3_cert_load(const char *path, wx3_cert *out)
{
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    X509 *x = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (f == NULL)
        return -1;
    x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    rc = cert_from_x509(x, out);
    X509_free(x);
    return rc;
}

int wx3_cert_parse(const char *pem, size_t len, wx3_cert *out)
{
    BIO *in = NULL;
    X509 *x = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (pem == NULL || len == 0 || len > WX3_MAX_PEM ||
        (in = BIO_new_mem_buf(pem, (int)len)) == NULL)
        return -1;
    x = PEM_read_bio_X509(in, NULL, NULL, NULL);
    rc = cert_from_x509(x, out);
    X509_free(x);
    BIO_free(in);
    return rc;
}

void wx3_cert_free(wx3_cert *c)
{
    if (c == NULL)
        return;
    EVP_PKEY_free(c->pub);
    c->pub = NULL;
}

int wx3_sign(EVP_PKEY *key, const char *msg, size_t len, char **out)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *sig = NULL;
    size_t siglen = 0;
    int rc = -1;

    *out = NULL;
    if (ctx == NULL || key == NULL || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(ctx, NULL, &siglen, (const unsigned char *)msg, len) != 1 ||
        (sig = malloc(siglen)) == NULL ||
        EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)msg, len) != 1)
        goto done;
    *out = wx3_base64_encode(sig, siglen);
    rc = *out != NULL ? 0 : -1;
done:
    free(sig);
    EVP_MD_CTX_free(ctx);
    return rc;
}

int wx3_verify(EVP_PKEY *pub, const char *msg, size_t len, const char *b64)
{
    EVP_MD_CTX *ctx = NULL;
    unsigned char *sig = NULL;
    size_t siglen = 0;
    int rc = -1;

    if (pub == NULL || wx3_base64_decode(b64, &sig, &siglen) != 0 ||
        (ctx = EVP_MD_CTX_new()) == NULL ||
        EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, pub) != 1)
        goto done;
    rc = EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)msg, len) == 1 ? 0 : -1;
done:
    free(sig);
    EVP_MD_CTX_free(ctx);
    return rc;
}

/* The pieces joined, each followed by "\n". */
static char *join_lines(const char *const *parts, const size_t *lens, int n, size_t *total)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += lens[i] + 1;
    char *s = malloc(len + 1), *p = s;
    if (s == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        memcpy(p, parts[i], lens[i]);
        p += lens[i];
        *p++ = '\n';
    }
    *p = '\0';
    if (total != NULL)
        *total = len;
    return s;
}

char *wx3_request_message(const char *method, const char *url, const char *timestamp,
                          const char *nonce, const char *body, size_t body_len)
{
    const char *parts[] = { method, url, timestamp, nonce, body != NULL ? body : "" };
    size_t lens[] = { strlen(method), strlen(url), strlen(timestamp), strlen(nonce),
                      body != NULL ? body_len : 0 };
    return join_lines(parts, lens, 5, NULL);
}

char *wx3_response_message(const char *timestamp, const char *nonce, const char *body,
                           size_t body_len, size_t *len)
{
    const char *parts[] = { timestamp, nonce, body != NULL ? body : "" };
    size_t lens[] = { strlen(timestamp), strlen(nonce), body != NULL ? body_len : 0 };
    return join_lines(parts, lens, 3, len);
}

/* Stores one key="value" pair into *out; -1 for an unknown or repeated key
 * or a value that does not fit. seen is a bit per key. */
static int auth_store(wx3_auth *out, unsigned *seen, const char *k, size_t kl, const char *v,
                      size_t vl)
{
    struct {
        const char *name;
        char *dst;
        size_t cap;
    } f[] = {
        { "mchid", out->mchid, sizeof(out->mchid) },
        { "nonce_str", out->nonce_str, sizeof(out->nonce_str) },
        { "timestamp", out->timestamp, sizeof(out->timestamp) },
        { "serial_no", out->serial_no, sizeof(out->serial_no) },
        { "signature", out->signature, sizeof(out->signature) },
    };
    for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (strlen(f[i].name) != kl || memcmp(f[i].name, k, kl) != 0)
            continue;
        if ((*seen & (1u << i)) != 0 || vl == 0 || vl >= f[i].cap)
            return -1;
        *seen |= 1u << i;
        memcpy(f[i].dst, v, vl);
        f[i].dst[vl] = '\0';
        return 0;
    }
    return -1;
}

int wx3_auth_parse(const char *header, wx3_auth *out, char *why, size_t whylen)
{
    size_t sl = strlen(WX3_AUTH_SCHEMA);
    unsigned seen = 0;

    memset(out, 0, sizeof(*out));
    snprintf(why, whylen, "%s", "");
    if (header == NULL || strncmp(header, WX3_AUTH_SCHEMA, sl) != 0 || header[sl] != ' ') {
        snprintf(why, whylen, "the Authorization header is missing or not %s", WX3_AUTH_SCHEMA);
        return -1;
    }
    const char *p = header + sl + 1;
    while (*p != '\0') {
        const char *eq = strchr(p, '=');
        const char *q = eq != NULL && eq[1] == '"' ? strchr(eq + 2, '"') : NULL;
        if (q == NULL ||
            auth_store(out, &seen, p, (size_t)(eq - p), eq + 2, (size_t)(q - eq - 2)) != 0) {
            snprintf(why, whylen, "the Authorization header's parameters are malformed");
            return -1;
        }
        p = q + 1;
        if (*p == ',')
            p++;
        else if (*p != '\0') {
            snprintf(why, whylen, "the Authorization header's parameters are malformed");
            return -1;
        }
    }
    if (seen != 0x1f) {
        snprintf(why, whylen,
                 "the Authorization header lacks a parameter (mchid, nonce_str, "
                 "timestamp, serial_no, signature)");
        return -1;
    }
    return 0;
}

int wx3_nonce(char *out, size_t cap, size_t len)
{
    static const char alpha[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    unsigned char r[128];

    if (len >= cap || len > sizeof(r) || RAND_bytes(r, (int)len) != 1)
        return -1;
    for (size_t i = 0; i < len; i++)
        out[i] = alpha[r[i] % 62];
    out[len] = '\0';
    return 0;
}

int wx3_pair_load(const char *cert_path, const char *key_path, wx3_cert *cert, EVP_PKEY **key)
{
    *key = NULL;
    if (cert_path == NULL || key_path == NULL || wx3_cert_load(cert_path, cert) != 0)
        return -1;
    if (wx3_key_load(key_path, key) != 0) {
        wx3_cert_free(cert);
        *key = NULL;
        return -1;
    }
    return 0;
}

int wx3_signed_lines(const char *serial, const char *signature, const char *timestamp,
                     const char *nonce, char *lines[5])
{
    static const char *const name[4] = { "Wechatpay-Serial", "Wechatpay-Signature",
                                         "Wechatpay-Timestamp", "Wechatpay-Nonce" };
    const char *value[4] = { serial, signature, timestamp, nonce };
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        size_t len = strlen(name[i]) + strlen(value[i]) + 3;
        if ((lines[i] = malloc(len)) != NULL)
            snprintf(lines[i], len, "%s: %s", name[i], value[i]);
        else
            rc = -1;
    }
    lines[4] = NULL;
    if (rc != 0)
        wx3_lines_free(lines);
    return rc;
}

void wx3_lines_free(char *lines[5])
{
    for (int i = 0; i < 5; i++) {
        free(lines[i]);
        lines[i] = NULL;
    }
}
