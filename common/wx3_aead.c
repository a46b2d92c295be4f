/* wx3_aead.c - AEAD_AES_256_GCM as WeChat Pay APIv3 uses it (EVP
 * aes-256-gcm, 16-byte tag appended to the ciphertext, base64). */
#include "wx3_aead.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#define NONCE_MAX 64

char *wx3_base64_encode(const unsigned char *in, size_t len)
{
    if (len > (size_t)1 << 30)
        return NULL;
    char *b64 = malloc(4 * ((len + 2) / 3) + 1);
    if (b64 != NULL)
        EVP_EncodeBlock((unsigned char *)b64, in, (int)len);
    return b64;
}

int wx3_base64_decode(const char *b64, unsigned char **out, size_t *len)
{
    size_t n = b64 != NULL ? strlen(b64) : 0;

    *out = NULL;
    if (n == 0 || n % 4 != 0 || n > (size_t)1 << 30)
        return -1;
    unsigned char *buf = malloc(n / 4 * 3 + 1);
    if (buf == NULL)
        return -1;
    int got = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
    /* EVP_DecodeBlock counts the padding '=' as zero bytes: take them off. */
    if (got < 0) {
        free(buf);
        return -1;
    }
    *len = (size_t)got - (b64[n - 1] == '=') - (b64[n - 2] == '=');
    *out = buf;
    return 0;
}

/* The checks both directions share. */
static int aead_args_ok(const char *key, const char *nonce, const char *aad)
{
    size_t nl = nonce != NULL ? strlen(nonce) : 0;
    return key != NULL && strlen(key) == WX3_AEAD_KEY_LEN && nl > 0 && nl <= NONCE_MAX &&
           aad != NULL;
}

/* One GCM context set up for key/nonce/aad in the given direction, or NULL. */
static EVP_CIPHER_CTX *aead_ctx(const char *key, const char *nonce, const char *aad, int encrypt)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0;

    if (ctx == NULL || EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)strlen(nonce), NULL) != 1 ||
        EVP_CipherInit_ex(ctx, NULL, NULL, (const unsigned char *)key, (const unsigned char *)nonce,
                          encrypt) != 1 ||
        (aad[0] != '\0' &&
         EVP_CipherUpdate(ctx, NULL, &n, (const unsigned char *)aad, (int)strlen(aad)) != 1)) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int wx3_aead_encrypt(const char *key, const char *nonce, const char *aad, const char *plain,
                     size_t len, char **out)
{
    unsigned char *buf = NULL;
    EVP_CIPHER_CTX *ctx = NULL;
    int n1 = 0, n2 = 0, rc = -1;

    *out = NULL;
    if (!aead_args_ok(key, nonce, aad) || plain == NULL || len > WX3_AEAD_MAX ||
        (ctx = aead_ctx(key, nonce, aad, 1)) == NULL ||
        (buf = malloc(len + WX3_AEAD_TAG_LEN + 1)) == NULL)
        goto done;
    if (EVP_CipherUpdate(ctx, buf, &n1, (const unsigned char *)plain, (int)len) != 1 ||
        EVP_CipherFinal_ex(ctx, buf + n1, &n2) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, WX3_AEAD_TAG_LEN, buf + n1 + n2) != 1)
        goto done;
    *out = wx3_base64_encode(buf, (size_t)(n1 + n2) + WX3_AEAD_TAG_LEN);
    rc = *out != NULL ? 0 : -1;
done:
    EVP_CIPHER_CTX_free(ctx);
    free(buf);
    return rc;
}

int wx3_aead_decrypt(const char *key, const char *nonce, const char *aad, const char *b64,
                     char **out, size_t *len)
{
    unsigned char *ct = NULL, *pt = NULL;
    size_t ctlen = 0;
    EVP_CIPHER_CTX *ctx = NULL;
    int n1 = 0, n2 = 0, rc = -1;

    *out = NULL;
    if (!aead_args_ok(key, nonce, aad) || wx3_base64_decode(b64, &ct, &ctlen) != 0 ||
        ctlen < WX3_AEAD_TAG_LEN || ctlen - WX3_AEAD_TAG_LEN > WX3_AEAD_MAX ||
        (ctx = aead_ctx(key, nonce, aad, 0)) == NULL ||
        (pt = malloc(ctlen - WX3_AEAD_TAG_LEN + 1)) == NULL)
        goto done;
    size_t body = ctlen - WX3_AEAD_TAG_LEN;
    if (EVP_CipherUpdate(ctx, pt, &n1, ct, (int)body) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, WX3_AEAD_TAG_LEN, ct + body) != 1 ||
        EVP_CipherFinal_ex(ctx, pt + n1, &n2) != 1) /* the tag is checked here */
        goto done;
    size_t ptlen = (size_t)(n1 + n2);
    if (memchr(pt, '\0', ptlen) != NULL)
        goto done;
    pt[ptlen] = '\0';
    *out = (char *)pt;
    *len = ptlen;
    pt = NULL;
    rc = 0;
done:
    if (pt != NULL)
        OPENSSL_cleanse(pt, ctlen - WX3_AEAD_TAG_LEN + 1);
    free(pt);
    free(ct);
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}
