/* wx3_trust - the WeChat Pay platform certificates the service believes, and
 * the check of a platform-signed message (an APIv3 reply or notification):
 * Wechatpay-Serial / -Signature / -Timestamp / -Nonce over
 * "TIMESTAMP\nNONCE\nBODY\n" (common/wx3_sign.h).
 *
 * A store holds at most WX3_TRUST_MAX certificates' public keys by serial;
 * it is shared by a process's threads (a mutex guards it; keys handed out
 * are reference-counted, so a replaced certificate stays valid for a
 * verification in flight). Certificates enter from a pinned file
 * (IDEMPAY_WX_V3_PLATFORM_CERT) or from /v3/certificates, whose entries are
 * believed only when they decrypt under the APIv3 key (AEAD: only WeChat
 * and the merchant know it) and the reply verifies under one of them.
 * Nothing here does I/O: gateway_v3.c fetches, the unit tests feed it. */
#ifndef IDEMPAY_WX3_TRUST_H
#define IDEMPAY_WX3_TRUST_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "wx3_sign.h"

#define WX3_TRUST_MAX 4

typedef enum {
    WX3_TRUST_OK = 0,
    WX3_TRUST_MISSING,        /* a Wechatpay-* header is absent or malformed */
    WX3_TRUST_STALE,          /* Wechatpay-Timestamp outside the window around now */
    WX3_TRUST_UNKNOWN_SERIAL, /* no certificate with that serial (fetch the list, retry) */
    WX3_TRUST_BAD_SIGNATURE   /* the signature does not verify under that certificate */
} wx3_trust_verdict;

/* The four headers as received (any may be NULL). */
typedef struct {
    const char *serial, *signature, *timestamp, *nonce;
} wx3_signed_headers;

typedef struct {
    pthread_mutex_t lock;
    int n;
    char serial[WX3_TRUST_MAX][WX3_SERIAL_BUF];
    EVP_PKEY *pub[WX3_TRUST_MAX];
} wx3_trust;

/* An empty store. */
void wx3_trust_init(wx3_trust *t);
/* Frees every key; the store is empty (and may be used again). */
void wx3_trust_clear(wx3_trust *t);
/* Believes c from now on (its key is referenced, not taken): replaces a
 * certificate of the same serial, else takes a free slot, else the oldest.
 * 0 or -1 (c has no key). */
int wx3_trust_add(wx3_trust *t, const wx3_cert *c);
/* 1 when a certificate of serial is believed. */
int wx3_trust_has(wx3_trust *t, const char *serial);

/* The check of a platform-signed body[0..len): headers present and well
 * formed (timestamp decimal, nonce 1..64 printable, serial 1..64 hex),
 * timestamp within window_s of now, serial known, signature valid. Pure
 * apart from the store's lock. */
wx3_trust_verdict wx3_trust_check(wx3_trust *t, const wx3_signed_headers *h, const char *body,
                                  size_t len, time_t now, long window_s);
/* A short name for logs and FAIL messages ("stale_timestamp", ...). */
const char *wx3_trust_verdict_name(wx3_trust_verdict v);

/* Reads a /v3/certificates reply body: every entry's encrypt_certificate
 * (AEAD_AES_256_GCM, associated_data as given) decrypted under apiv3_key
 * and parsed, its serial equal to serial_no; each one valid at now is
 * added to t. Returns the number added (>= 1), or -1 with why set (not
 * JSON, an entry that does not decrypt or parse: nothing added then). */
int wx3_trust_load_certificates(wx3_trust *t, const char *body, size_t len, const char *apiv3_key,
                                time_t now, char *why, size_t whylen);

#endif
