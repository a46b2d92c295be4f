/* wx_refund_info.c - req_info: MD5 of the key as hex, AES-256-ECB with
 * PKCS#7 padding (OpenSSL's default), base64 without line breaks. */
#include "wx_refund_info.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#define AES_BLOCK 16

/* The AES key: the 32 lower-case hex digits of MD5(key) as bytes. */
static int refund_info_key(const char *key, unsigned char out[32])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    size_t mdlen = 0;

    if (key == NULL || !EVP_Q_digest(NULL, "MD5", NULL, key, strlen(key), md, &mdlen) ||
        mdlen != 16)
        return -1;
    for (size_t i = 0; i < 16; i++) {
        out[2 * i] = (unsigned char)hex[md[i] >> 4];
        out[2 * i + 1] = (unsigned char)hex[md[i] & 15];
    }
    return 0;
}

/* Runs AES-256-ECB (PKCS#7) over in; 0 with a malloc'd result in *out
 * (NUL-terminated, length *outlen), or -1. */
static int refund_info_cipher(const char *key, int encrypt, const unsigned char *in, size_t inlen,
                              unsigned char **out, size_t *outlen)
{
    unsigned char k[32];
    int n1 = 0, n2 = 0, rc = -1;
    EVP_CIPHER_CTX *ctx = NULL;
    unsigned char *buf = NULL;

    *out = NULL;
    if (refund_info_key(key, k) != 0 || (ctx = EVP_CIPHER_CTX_new()) == NULL)
        goto done;
    buf = malloc(inlen + AES_BLOCK + 1);
    if (buf == NULL || EVP_CipherInit_ex(ctx, EVP_aes_256_ecb(), NULL, k, NULL, encrypt) != 1 ||
        EVP_CipherUpdate(ctx, buf, &n1, in, (int)inlen) != 1 ||
        EVP_CipherFinal_ex(ctx, buf + n1, &n2) != 1)
        goto done;
    buf[n1 + n2] = '\0';
    *out = buf;
    *outlen = (size_t)(n1 + n2);
    buf = NULL;
    rc = 0;
done:
    OPENSSL_cleanse(k, sizeof(k));
    EVP_CIPHER_CTX_free(ctx);
    free(buf);
    return rc;
}

int wx_refund_info_encrypt(const char *key, const char *plain, size_t len, char **out)
{
    unsigned char *ct = NULL;
    size_t ctlen = 0;

    *out = NULL;
    if (plain == NULL || len > WX_REFUND_INFO_MAX ||
        refund_info_cipher(key, 1, (const unsigned char *)plain, len, &ct, &ctlen) != 0)
        return -1;
    char *b64 = malloc(4 * ((ctlen + 2) / 3) + 1);
    if (b64 != NULL)
        EVP_EncodeBlock((unsigned char *)b64, ct, (int)ctlen);
    free(ct);
    *out = b64;
    return b64 != NULL ? 0 : -1;
}

int wx_refund_info_decrypt(const char *key, const char *b64, char **out, size_t *len)
{
    size_t n = b64 != NULL ? strlen(b64) : 0;
    unsigned char *ct = NULL, *pt = NULL;
    size_t ptlen = 0;
    int rc = -1;

    *out = NULL;
    /* A whole number of AES blocks, each 4 base64 characters per 3 bytes. */
    if (n == 0 || n % 4 != 0 || n / 4 * 3 > WX_REFUND_INFO_MAX + AES_BLOCK)
        return -1;
    ct = malloc(n / 4 * 3 + 1);
    if (ct == NULL)
        return -1;
    int got = EVP_DecodeBlock(ct, (const unsigned char *)b64, (int)n);
    if (got < 0)
        goto done;
    /* EVP_DecodeBlock counts the padding '=' as zero bytes: take them off. */
    size_t ctlen = (size_t)got - (b64[n - 1] == '=') - (b64[n - 2] == '=');
    if (ctlen == 0 || ctlen % AES_BLOCK != 0 ||
        refund_info_cipher(key, 0, ct, ctlen, &pt, &ptlen) != 0)
        goto done;
    if (ptlen > WX_REFUND_INFO_MAX || memchr(pt, '\0', ptlen) != NULL) {
        free(pt);
        goto done;
    }
    *out = (char *)pt;
    *len = ptlen;
    rc = 0;
done:
    free(ct);
    return rc;
}
