/* workload_v3.c - the v3 rows' notification and the raw baseline's crypto
 * (workload_v3.h). */
#include "workload_v3.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "wx3_aead.h"
#include "wx3_sign.h"

static struct {
    int loaded;
    wx3_cert cert;
    EVP_PKEY *key;
    char apiv3_key[WX3_AEAD_KEY_LEN + 1];
} wl3;

int wl_v3_load(char *err, size_t errlen)
{
    const char *cert = env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT", NULL);
    const char *key = env_str("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY", NULL);
    const char *apikey = env_str("IDEMPAY_WX_APIV3_KEY", NULL);

    if (wl3.loaded)
        return 0;
    if (wx3_pair_load(cert, key, &wl3.cert, &wl3.key) != 0) {
        snprintf(err, errlen,
                 "the v3 rows: IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY are unset "
                 "or unreadable");
        return -1;
    }
    if (apikey == NULL || strlen(apikey) != WX3_AEAD_KEY_LEN) {
        snprintf(err, errlen, "the v3 rows: IDEMPAY_WX_APIV3_KEY (32 characters) is missing");
        wl_v3_free();
        return -1;
    }
    snprintf(wl3.apiv3_key, sizeof(wl3.apiv3_key), "%s", apikey);
    wl3.loaded = 1;
    return 0;
}

void wl_v3_free(void)
{
    wx3_cert_free(&wl3.cert);
    EVP_PKEY_free(wl3.key);
    OPENSSL_cleanse(wl3.apiv3_key, sizeof(wl3.apiv3_key));
    memset(&wl3, 0, sizeof(wl3));
}

void wl_v3_msg_free(wl_v3_msg *m)
{
    free(m->body);
    wx3_lines_free(m->headers);
    memset(m, 0, sizeof(*m));
}

/* The encrypted resource of the payment inside its envelope (malloc'd). */
static char *wl3_body(const char *appid, const char *mchid, const char *order_no, const char *txid,
                      long fee)
{
    char nonce[WX3_AEAD_NONCE_LEN + 1], id[37];
    char *plain = NULL, *ct = NULL, *body = NULL;
    json_t *res = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s}, "
                            "s:{s:I, s:I, s:s, s:s}}",
                            "appid", appid, "mchid", mchid, "out_trade_no", order_no,
                            "transaction_id", txid, "trade_type", "NATIVE", "trade_state",
                            "SUCCESS", "trade_state_desc", "OK", "bank_type", "OTHERS",
                            "success_time", "2026-11-30T08:00:00+08:00", "payer", "openid",
                            "oBenchPayer", "amount", "total", (json_int_t)fee, "payer_total",
                            (json_int_t)fee, "currency", "CNY", "payer_currency", "CNY");
    json_t *env = NULL;

    if (res == NULL || (plain = json_dumps(res, JSON_COMPACT)) == NULL ||
        wx3_nonce(nonce, sizeof(nonce), WX3_AEAD_NONCE_LEN) != 0 ||
        wx3_nonce(id, sizeof(id), 36) != 0 ||
        wx3_aead_encrypt(wl3.apiv3_key, nonce, "transaction", plain, strlen(plain), &ct) != 0)
        goto done;
    env = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "id", id,
                    "create_time", "2026-11-30T08:00:00+08:00", "resource_type", "encrypt-resource",
                    "event_type", "TRANSACTION.SUCCESS", "summary", "OK", "resource",
                    "original_type", "transaction", "algorithm", "AEAD_AES_256_GCM", "ciphertext",
                    ct, "associated_data", "transaction", "nonce", nonce);
    body = env != NULL ? json_dumps(env, JSON_COMPACT) : NULL;
done:
    json_decref(res);
    json_decref(env);
    free(plain);
    free(ct);
    return body;
}

int wl_v3_notification(const char *appid, const char *mchid, const char *order_no, const char *txid,
                       long fee, wl_v3_msg *out)
{
    char ts[24], nonce[33];
    char *msg = NULL, *sig = NULL;
    size_t mlen = 0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
    if (!wl3.loaded || wx3_nonce(nonce, sizeof(nonce), 32) != 0 ||
        (out->body = wl3_body(appid, mchid, order_no, txid, fee)) == NULL ||
        (msg = wx3_response_message(ts, nonce, out->body, strlen(out->body), &mlen)) == NULL ||
        wx3_sign(wl3.key, msg, mlen, &sig) != 0)
        goto done;
    rc = wx3_signed_lines(wl3.cert.serial, sig, ts, nonce, out->headers);
done:
    free(msg);
    free(sig);
    if (rc != 0)
        wl_v3_msg_free(out);
    return rc;
}

int wl_v3_post(http_client *h, const char *url, const char *appid, const char *mchid,
               const char *order_no, const char *txid, long fee, char *err, size_t errlen)
{
    wl_v3_msg m;
    http_reply rep;

    if (wl_v3_notification(appid, mchid, order_no, txid, fee, &m) != 0) {
        snprintf(err, errlen, "could not build a v3 notification");
        return -1;
    }
    http_status hs = http_client_request(h, "POST", url, "application/json", m.body, strlen(m.body),
                                         (const char *const *)m.headers, 0, &rep);
    wl_v3_msg_free(&m);
    if (hs != HTTP_OK)
        snprintf(err, errlen, "POST v3 callback: no answer (%s): %s", http_status_name(hs),
                 rep.error);
    else if (rep.code != 204)
        snprintf(err, errlen, "POST v3 callback: HTTP %ld: %.300s", rep.code,
                 rep.body ? rep.body : "");
    return hs == HTTP_OK && rep.code == 204 ? 0 : -1;
}

typedef struct {
    const char *url, *appid, *mchid, *run;
    int index;
} wl3_warmer;

static void *wl3_warm_thread(void *arg)
{
    const wl3_warmer *w = arg;
    http_client *h = http_client_new(2000, 5000);
    char no[64], txid[40], err[64];

    for (int i = 0; h != NULL && i < 15; i++) {
        snprintf(no, sizeof(no), "W3%s_%d_%d", w->run, w->index, i);
        snprintf(txid, sizeof(txid), "42%sX%04d%04d", w->run, w->index, i);
        (void)wl_v3_post(h, w->url, w->appid, w->mchid, no, txid, 100, err, sizeof(err));
        usleep(100000);
    }
    http_client_free(h);
    return NULL;
}

void wl_v3_warm(const char *url, const char *appid, const char *mchid, const char *run)
{
    pthread_t t[WL_V3_WARM_THREADS];
    wl3_warmer w[WL_V3_WARM_THREADS];
    int started = 0;

    for (int i = 0; i < WL_V3_WARM_THREADS; i++) {
        w[i] = (wl3_warmer){ url, appid, mchid, run, i };
        if (pthread_create(&t[started], NULL, wl3_warm_thread, &w[i]) == 0)
            started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    usleep(1100000);
}

/* The value of header line "Name: value" of m, or NULL. */
static const char *wl3_value(const wl_v3_msg *m, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < 4; i++)
        if (m->headers[i] != NULL && strncmp(m->headers[i], name, n) == 0 &&
            m->headers[i][n] == ':')
            return m->headers[i] + n + 2;
    return NULL;
}

int wl_v3_verify_decrypt(const wl_v3_msg *m, char **plain)
{
    const char *ts = wl3_value(m, "Wechatpay-Timestamp"), *nonce = wl3_value(m, "Wechatpay-Nonce");
    const char *sig = wl3_value(m, "Wechatpay-Signature");
    size_t mlen = 0, plen = 0;
    char *msg = NULL;
    json_t *env = NULL;
    int rc = -1;

    *plain = NULL;
    if (ts == NULL || nonce == NULL || sig == NULL ||
        (msg = wx3_response_message(ts, nonce, m->body, strlen(m->body), &mlen)) == NULL ||
        wx3_verify(wl3.cert.pub, msg, mlen, sig) != 0 ||
        (env = json_loads(m->body, 0, NULL)) == NULL)
        goto done;
    json_t *r = json_object_get(env, "resource");
    const char *ct = json_string_value(json_object_get(r, "ciphertext"));
    const char *rn = json_string_value(json_object_get(r, "nonce"));
    const char *aad = json_string_value(json_object_get(r, "associated_data"));
    if (ct != NULL && rn != NULL &&
        wx3_aead_decrypt(wl3.apiv3_key, rn, aad != NULL ? aad : "", ct, plain, &plen) == 0)
        rc = 0;
done:
    free(msg);
    json_decref(env);
    return rc;
}
