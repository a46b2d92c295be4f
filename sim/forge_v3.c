/* forge_v3.c - APIv3 notifications with one defect each (forge_v3.h). The
 * resource and the envelope are jansson objects, the crypto is
 * common/wx3_aead and common/wx3_sign: no crypto code here. */
#include "forge_v3.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "env.h"
#include "wx3_aead.h"
#include "wx3_platform.h"
#include "wx3_sign.h"

#define FV3_DEFAULT_WINDOW_S 300
#define FV3_STALE_MARGIN_S 60 /* how far past the window a stale timestamp lies, at least */
#define FV3_PAIR_ROLE " (the platform's key, to sign like it)" /* in "... are unset" */

struct forge_v3_keys {
    wx3_platform platform; /* the mock's pairs (the second optional) and the APIv3 key */
    long long window_s;
};

forge_v3_keys *forge_v3_load(char *why, size_t whylen)
{
    forge_v3_keys *k = calloc(1, sizeof(*k));
    snprintf(why, whylen, "%s", "");
    if (k == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    /* a rotation target that does not load: tasks that name it sign with
     * the first pair (forge_v3.h) */
    if (wx3_platform_load(&k->platform, FV3_PAIR_ROLE, why, whylen) != 0) {
        forge_v3_free(k);
        return NULL;
    }
    k->window_s = env_int("IDEMPAY_WX_V3_TIME_WINDOW_S", FV3_DEFAULT_WINDOW_S);
    return k;
}

void forge_v3_free(forge_v3_keys *k)
{
    if (k == NULL)
        return;
    wx3_platform_free(&k->platform);
    free(k);
}

void forge_v3_msg_free(forge_v3_msg *m)
{
    if (m == NULL)
        return;
    free(m->body);
    wx3_lines_free(m->headers);
    memset(m, 0, sizeof(*m));
}

/* now (UTC seconds) as RFC 3339 China time, as v3 writes times. */
static void fv3_time(time_t now, char out[32])
{
    struct tm tm;
    time_t cst = now + 8 * 3600;
    out[0] = '\0';
    if (gmtime_r(&cst, &tm) == NULL || strftime(out, 32, "%Y-%m-%dT%H:%M:%S+08:00", &tm) == 0)
        out[0] = '\0';
}

/* The decrypted resource: a paid transaction of no (malloc'd JSON). */
static char *fv3_transaction(const char *appid, const char *mchid, const char *no, const char *txn,
                             int64_t fee, const char *when)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s}, "
                          "s:{s:I, s:I, s:s, s:s}}",
                          "appid", appid, "mchid", mchid, "out_trade_no", no, "transaction_id", txn,
                          "trade_type", "NATIVE", "trade_state", "SUCCESS", "trade_state_desc",
                          "支付成功", "bank_type", "OTHERS", "attach", "", "success_time", when,
                          "payer", "openid", "oSimulatorForgedPayer000000", "amount", "total",
                          (json_int_t)fee, "payer_total", (json_int_t)fee, "currency", "CNY",
                          "payer_currency", "CNY");
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

/* b64 with one byte changed (malloc'd): in the GCM tag (the last 16 bytes)
 * when tag, else in the ciphertext before it; which byte and how from seed.
 * NULL on failure. */
static char *fv3_tamper(const char *b64, int tag, uint64_t seed)
{
    unsigned char *raw = NULL;
    size_t len = 0;
    char *out = NULL;
    if (wx3_base64_decode(b64, &raw, &len) != 0 || len <= WX3_AEAD_TAG_LEN)
        goto done;
    size_t body = len - WX3_AEAD_TAG_LEN;
    size_t at = tag ? body + (size_t)(seed % WX3_AEAD_TAG_LEN) : (size_t)(seed % body);
    raw[at] ^= (unsigned char)(1u << ((seed >> 8) % 8));
    out = wx3_base64_encode(raw, len);
done:
    free(raw);
    return out;
}

/* The envelope around ciphertext ct (malloc'd JSON), or NULL. */
static char *fv3_envelope(const char *ct, const char *nonce, const char *when)
{
    char id[37];
    if (wx3_nonce(id, sizeof(id), 36) != 0)
        return NULL;
    json_t *env = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "id", id,
                            "create_time", when, "resource_type", "encrypt-resource", "event_type",
                            "TRANSACTION.SUCCESS", "summary", "支付成功", "resource",
                            "original_type", "transaction", "algorithm", "AEAD_AES_256_GCM",
                            "ciphertext", ct, "associated_data", "transaction", "nonce", nonce);
    char *s = env != NULL ? json_dumps(env, JSON_COMPACT) : NULL;
    json_decref(env);
    return s;
}

/* The Wechatpay-* headers of signed (the body the signature covers) into
 * out->headers, as t's kind wants them. 0 or -1. */
static int fv3_sign_headers(const forge_v3_keys *k, const sched_task *t, const char *signed_body,
                            forge_v3_msg *out)
{
    int pair = t->aux_order == 1 && k->platform.pairs == 2 ? 1 : 0;
    long long now = (long long)time(NULL), ts = now;
    char tsbuf[24], nonce[33], sent_nonce[33], serial[WX3_SERIAL_BUF];
    char *sig = NULL;
    size_t mlen = 0;
    if (t->forge == FORGE_V3_STALE) {
        long long off = k->window_s + FV3_STALE_MARGIN_S + (long long)(t->jitter_seed % 600);
        ts = (t->jitter_seed >> 16) & 1 ? now + off : now - off;
    }
    snprintf(tsbuf, sizeof(tsbuf), "%lld", ts);
    snprintf(serial, sizeof(serial), "%s", k->platform.cert[pair].serial);
    if (t->forge == FORGE_V3_WRONG_SERIAL) /* a serial of the same shape, no certificate's */
        snprintf(serial, sizeof(serial), "5157F09EFDC096DE15EBE81A47057A72%08llX",
                 (unsigned long long)(t->jitter_seed & 0xFFFFFFFFu));
    if (wx3_nonce(nonce, sizeof(nonce), 32) != 0 ||
        wx3_nonce(sent_nonce, sizeof(sent_nonce), 32) != 0)
        return -1;
    char *msg = wx3_response_message(tsbuf, nonce, signed_body, strlen(signed_body), &mlen);
    int rc = msg != NULL ? wx3_sign(k->platform.key[pair], msg, mlen, &sig) : -1;
    free(msg);
    if (rc == 0)
        rc = wx3_signed_lines(serial, sig, tsbuf,
                              t->forge == FORGE_V3_NEW_NONCE ? sent_nonce : nonce, out->headers);
    free(sig);
    return rc;
}

int forge_v3_build(const forge_v3_keys *k, const sched_task *t, const char *appid,
                   const char *mchid, const char *no, const char *txn, int64_t fee,
                   forge_v3_msg *out)
{
    char when[32], nonce[WX3_AEAD_NONCE_LEN + 1];
    char *plain = NULL, *ct = NULL, *bad = NULL, *genuine = NULL;
    int rc = -1;
    int tag = t->forge == FORGE_V3_TAG || t->forge == FORGE_V3_TAG_SIGNED;
    int tampered = tag || t->forge == FORGE_V3_CIPHERTEXT || t->forge == FORGE_V3_CIPHERTEXT_SIGNED;
    int resigned = t->forge == FORGE_V3_CIPHERTEXT_SIGNED || t->forge == FORGE_V3_TAG_SIGNED;

    memset(out, 0, sizeof(*out));
    fv3_time(time(NULL), when);
    if (!sched_forge_is_v3(t->forge) || wx3_nonce(nonce, sizeof(nonce), WX3_AEAD_NONCE_LEN) != 0 ||
        (plain = fv3_transaction(appid, mchid, no, txn, fee, when)) == NULL ||
        wx3_aead_encrypt(k->platform.apiv3_key, nonce, "transaction", plain, strlen(plain), &ct) !=
            0 ||
        (genuine = fv3_envelope(ct, nonce, when)) == NULL)
        goto done;
    if (tampered && ((bad = fv3_tamper(ct, tag, t->jitter_seed)) == NULL ||
                     (out->body = fv3_envelope(bad, nonce, when)) == NULL))
        goto done;
    if (!tampered) {
        out->body = genuine;
        genuine = NULL;
    }
    /* the signature covers the body sent, except where a byte changed after signing */
    rc = fv3_sign_headers(k, t, tampered && !resigned ? genuine : out->body, out);
done:
    if (plain != NULL)
        OPENSSL_cleanse(plain, strlen(plain));
    free(plain);
    free(ct);
    free(bad);
    free(genuine);
    if (rc != 0)
        forge_v3_msg_free(out);
    return rc;
}
