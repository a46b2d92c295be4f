/* workload_v3 - the APIv3 notification of the bench's v3 rows: what the
 * platform would send for a pool order (a TRANSACTION.SUCCESS whose
 * resource is encrypted under the APIv3 key with AEAD_AES_256_GCM, the body
 * signed SHA256withRSA with the platform key, the four Wechatpay-* headers),
 * and the raw baseline's crypto: the same signature verified with the
 * platform certificate and the resource decrypted, as the service does
 * before its database work. All crypto is common/wx3_sign and
 * common/wx3_aead.
 *
 * The material comes from the bench's environment, as ./stack exports it
 * for the mock: IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY (the first
 * platform pair, which signs at the mock's rotation 0) and
 * IDEMPAY_WX_APIV3_KEY (or its _FILE). No key is printed. Loaded once,
 * read-only afterwards: safe from any worker. */
#ifndef IDEMPAY_BENCH_WORKLOAD_V3_H
#define IDEMPAY_BENCH_WORKLOAD_V3_H

#include <stddef.h>

#include "http_client.h"

/* Loads the material. 0, or -1 with the reason (no secret) in err. */
int wl_v3_load(char *err, size_t errlen);
/* Releases it (safe when never loaded). */
void wl_v3_free(void);

/* One notification ready to POST. */
typedef struct {
    char *body;
    char *headers[5]; /* "Wechatpay-...: value" x 4, then NULL */
} wl_v3_msg;

/* The notification of order_no paid fee fen with transaction id txid, from
 * appid / mchid, signed now. 0, or -1 (OOM, crypto, not loaded) with out
 * empty. wl_v3_msg_free either way. */
int wl_v3_notification(const char *appid, const char *mchid, const char *order_no, const char *txid,
                       long fee, wl_v3_msg *out);
void wl_v3_msg_free(wl_v3_msg *m);

/* wl_v3_notification's message POSTed to url with h (a v3 notification
 * URL of the service). 0 when it answered 204 (applied), else -1 with why
 * in err. */
int wl_v3_post(http_client *h, const char *url, const char *appid, const char *mchid,
               const char *order_no, const char *txid, long fee, char *err, size_t errlen);

/* Makes every service process behind url fetch the platform certificates
 * before the callback_v3 row is measured: a just restarted process learns
 * them on the first notification, and refuses (unknown_serial) the others
 * that arrive within the second of that fetch. WL_V3_WARM_THREADS clients
 * each POST a notification of an order that does not exist every 100 ms
 * for 1.5 s (answers ignored: 400 once the signature verified), then it
 * waits out the fetch's second. */
#define WL_V3_WARM_THREADS 8
void wl_v3_warm(const char *url, const char *appid, const char *mchid, const char *run);

/* The raw baseline's crypto of m: its signature verified with the platform
 * certificate, its resource decrypted. 0 with the plain resource in *plain
 * (malloc'd, caller frees), -1 when either check fails. */
int wl_v3_verify_decrypt(const wl_v3_msg *m, char **plain);

#endif
