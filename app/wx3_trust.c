/* wx3_trust.c - platform certificates and signed-message checks (see
 * wx3_trust.h). */
#include "wx3_trust.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "wx3_aead.h"

void wx3_trust_init(wx3_trust *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
}

void wx3_trust_clear(wx3_trust *t)
{
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->n; i++) {
        EVP_PKEY_free(t->pub[i]);
        t->pub[i] = NULL;
    }
    t->n = 0;
    pthread_mutex_unlock(&t->lock);
}

/* The slot of serial, or -1. Caller holds the lock. */
static int trust_find(const wx3_trust *t, const char *serial)
{
    for (int i = 0; i < t->n; i++)
        if (strcasecmp(t->serial[i], serial) == 0)
            return i;
    return -1;
}

int wx3_trust_add(wx3_trust *t, const wx3_cert *c)
{
    if (c == NULL || c->pub == NULL || EVP_PKEY_up_ref(c->pub) != 1)
        return -1;
    pthread_mutex_lock(&t->lock);
    int i = trust_find(t, c->serial);
    if (i < 0 && t->n < WX3_TRUST_MAX)
        i = t->n++;
    else if (i < 0) {
        /* full: drop the oldest, keep the order of the others */
        EVP_PKEY_free(t->pub[0]);
        memmove(&t->pub[0], &t->pub[1], sizeof(t->pub[0]) * (WX3_TRUST_MAX - 1));
        memmove(&t->serial[0], &t->serial[1], sizeof(t->serial[0]) * (WX3_TRUST_MAX - 1));
        t->pub[WX3_TRUST_MAX - 1] = NULL;
        i = WX3_TRUST_MAX - 1;
    }
    EVP_PKEY_free(t->pub[i]);
    t->pub[i] = c->pub;
    snprintf(t->serial[i], sizeof(t->serial[i]), "%s", c->serial);
    pthread_mutex_unlock(&t->lock);
    return 0;
}

int wx3_trust_has(wx3_trust *t, const char *serial)
{
    pthread_mutex_lock(&t->lock);
    int found = serial != NULL && trust_find(t, serial) >= 0;
    pthread_mutex_unlock(&t->lock);
    return found;
}

/* The key of serial with a reference for the caller, or NULL. */
static EVP_PKEY *trust_key(wx3_trust *t, const char *serial)
{
    EVP_PKEY *k = NULL;

    pthread_mutex_lock(&t->lock);
    int i = trust_find(t, serial);
    if (i >= 0 && EVP_PKEY_up_ref(t->pub[i]) == 1)
        k = t->pub[i];
    pthread_mutex_unlock(&t->lock);
    return k;
}

/* s is 1..max characters, each accepted by ok. */
static int trust_token(const char *s, size_t max, int (*ok)(int))
{
    size_t n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ok((unsigned char)s[i]))
            return 0;
    return 1;
}

static int trust_printable(int c)
{
    return c > 0x20 && c < 0x7f;
}

wx3_trust_verdict wx3_trust_check(wx3_trust *t, const wx3_signed_headers *h, const char *body,
                                  size_t len, time_t now, long window_s)
{
    wx3_trust_verdict v = WX3_TRUST_BAD_SIGNATURE;
    EVP_PKEY *key = NULL;
    char *msg = NULL;
    size_t mlen = 0;

    if (!trust_token(h->timestamp, 12, isdigit) || !trust_token(h->nonce, 64, trust_printable) ||
        !trust_token(h->serial, WX3_SERIAL_BUF - 1, isxdigit) ||
        !trust_token(h->signature, 1024, trust_printable))
        return WX3_TRUST_MISSING;
    long long ts = strtoll(h->timestamp, NULL, 10);
    if (ts < (long long)now - window_s || ts > (long long)now + window_s)
        return WX3_TRUST_STALE;
    if ((key = trust_key(t, h->serial)) == NULL)
        return WX3_TRUST_UNKNOWN_SERIAL;
    msg = wx3_response_message(h->timestamp, h->nonce, body != NULL ? body : "", len, &mlen);
    if (msg != NULL && wx3_verify(key, msg, mlen, h->signature) == 0)
        v = WX3_TRUST_OK;
    free(msg);
    EVP_PKEY_free(key);
    return v;
}

const char *wx3_trust_verdict_name(wx3_trust_verdict v)
{
    static const char *const names[] = { "ok", "missing_signature_headers", "stale_timestamp",
                                         "unknown_serial", "bad_signature" };
    return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "bad_signature";
}

/* One /v3/certificates entry decrypted and parsed into *c. 0 or -1. */
static int trust_entry(json_t *e, const char *apiv3_key, wx3_cert *c)
{
    json_t *enc = json_object_get(e, "encrypt_certificate");
    const char *serial = json_string_value(json_object_get(e, "serial_no"));
    const char *nonce = json_string_value(json_object_get(enc, "nonce"));
    const char *aad = json_string_value(json_object_get(enc, "associated_data"));
    const char *ct = json_string_value(json_object_get(enc, "ciphertext"));
    char *pem = NULL;
    size_t plen = 0;
    int rc = -1;

    if (serial == NULL || nonce == NULL || ct == NULL ||
        wx3_aead_decrypt(apiv3_key, nonce, aad != NULL ? aad : "", ct, &pem, &plen) != 0)
        return -1;
    if (wx3_cert_parse(pem, plen, c) == 0) {
        rc = strcasecmp(c->serial, serial) == 0 ? 0 : -1;
        if (rc != 0)
            wx3_cert_free(c);
    }
    free(pem);
    return rc;
}

int wx3_trust_load_certificates(wx3_trust *t, const char *body, size_t len, const char *apiv3_key,
                                time_t now, char *why, size_t whylen)
{
    json_t *root = json_loadb(body != NULL ? body : "", len, JSON_REJECT_DUPLICATES, NULL);
    json_t *data = json_object_get(root, "data"), *e;
    wx3_cert *certs = NULL;
    size_t i, n = json_array_size(data);
    int added = -1;

    snprintf(why, whylen, "%s", "not a certificate list");
    if (n == 0 || n > WX3_TRUST_MAX || (certs = calloc(n, sizeof(*certs))) == NULL)
        goto done;
    json_array_foreach(data, i, e)
    {
        if (trust_entry(e, apiv3_key, &certs[i]) != 0) {
            snprintf(why, whylen, "entry %zu does not decrypt under the APIv3 key", i);
            goto done;
        }
    }
    added = 0;
    for (i = 0; i < n; i++)
        if (certs[i].not_before <= now && now <= certs[i].not_after &&
            wx3_trust_add(t, &certs[i]) == 0)
            added++;
    if (added == 0) {
        snprintf(why, whylen, "%s", "no certificate valid now");
        added = -1;
    }
done:
    for (i = 0; certs != NULL && i < n; i++)
        wx3_cert_free(&certs[i]);
    free(certs);
    json_decref(root);
    return added;
}
