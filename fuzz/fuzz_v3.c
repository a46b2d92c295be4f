/* fuzz_v3.c - libFuzzer harness for the APIv3 input the service receives:
 * notifications on POST /api/pay/callback/wechat/v3 (app/callback_v3_verify.c:
 * the platform signature headers, the envelope, the AES-256-GCM resource,
 * its fields; app/wx3_trust.c) and the gateway's v3 replies
 * (app/gateway_v3_reply.c into the v2 meanings of app/gateway_reply.c).
 * The harness plays the platform with its own RSA key (made at start), so
 * the fuzzer gets past the signature. The first byte chooses (mod 4):
 *  0 - the rest is a notification body, signed now;
 *  1 - the rest is a resource's plain text, encrypted under the APIv3 key
 *      into an envelope whose event_type data[1] chooses, signed now;
 *  2 - data[1] chooses the endpoint, data[1..2] the HTTP status, the rest
 *      is a v3 reply body read by gw3_reply_to_v2 and its v2 meaning;
 *  3 - the rest is "serial\nsignature\ntimestamp\nnonce\nbody": every header
 *      as given (mostly refused: the signature does not verify).
 * Properties: never a crash; a verified payment notification names a valid
 * order number, a transaction and a positive fee; a verified refund one a
 * refund, a v2 refund_status and a positive fee; a refused one says why
 * with 400 or 401; a v3 reply with a 5xx or 429 status (whatever its
 * code), or any status outside 2xx/4xx/5xx, is never more than GW_UNKNOWN; a query reply that
 * charges names its transaction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "callback_v3_verify.h"
#include "gateway_v3_reply.h"
#include "harness.h"
#include "order_no.h"
#include "wx3_aead.h"
#include "wx3_sign.h"

#define FUZZ_APIV3 "0123456789abcdefghijABCDEFGHIJ01"
#define FUZZ_SERIAL "5157F09EFDC096DE"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static app_config cfg;
static wx3_trust trust;
static EVP_PKEY *platform;

static void setup(void)
{
    wx3_cert c;

    snprintf(cfg.appid, sizeof(cfg.appid), "%s", FUZZ_APPID);
    snprintf(cfg.mch_id, sizeof(cfg.mch_id), "%s", FUZZ_MCHID);
    cfg.v3.api = WX_API_V3;
    cfg.v3.window_s = 300;
    snprintf(cfg.v3.apiv3_key, sizeof(cfg.v3.apiv3_key), "%s", FUZZ_APIV3);
    platform = EVP_RSA_gen(1024); /* small: the fuzzer signs on every input */
    FUZZ_CHECK(platform != NULL);
    memset(&c, 0, sizeof(c));
    c.pub = platform;
    snprintf(c.serial, sizeof(c.serial), "%s", FUZZ_SERIAL);
    wx3_trust_init(&trust);
    FUZZ_CHECK(wx3_trust_add(&trust, &c) == 0);
}

static void check_verdict(int rc, const cb3_notification *n)
{
    if (rc != 0) {
        FUZZ_CHECK(n->reason[0] != '\0' && (n->status == 400 || n->status == 401));
        return;
    }
    if (n->kind == CB3_PAYMENT) {
        FUZZ_CHECK(order_no_valid(n->pay.order_no) && n->pay.transaction_id[0] != '\0');
        FUZZ_CHECK(n->pay.total_fee > 0);
    } else {
        FUZZ_CHECK(n->refund.out_refund_no[0] != '\0' && n->refund.transaction_id[0] != '\0');
        FUZZ_CHECK(!strcmp(n->refund.refund_status, "SUCCESS") ||
                   !strcmp(n->refund.refund_status, "REFUNDCLOSE") ||
                   !strcmp(n->refund.refund_status, "CHANGE"));
        FUZZ_CHECK(n->refund.refund_fee > 0);
    }
    FUZZ_CHECK(n->plain != NULL);
}

/* body signed by the platform now, then verified. */
static void signed_notification(const char *body, size_t len)
{
    char ts[24], *msg, *sig = NULL;
    size_t mlen = 0;
    cb3_notification n;

    snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
    msg = wx3_response_message(ts, "fuzznonce", body, len, &mlen);
    FUZZ_CHECK(msg != NULL && wx3_sign(platform, msg, mlen, &sig) == 0);
    const wx3_signed_headers h = { FUZZ_SERIAL, sig, ts, "fuzznonce" };
    check_verdict(callback_v3_verify(&cfg, &trust, &h, body, len, 0, time(NULL), &n), &n);
    callback_v3_free(&n);
    free(sig);
    free(msg);
}

/* plain as the resource of an envelope of event (encrypted, signed). */
static void resource(uint8_t pick, const char *plain, size_t len)
{
    static const char *const events[] = { "TRANSACTION.SUCCESS", "REFUND.SUCCESS", "REFUND.CLOSED",
                                          "REFUND.ABNORMAL", "TRANSACTION.CLOSED" };
    const char *event = events[pick % 5];
    const char *aad = pick % 5 == 0 || pick % 5 == 4 ? "transaction" : "refund";
    char *ct = NULL;

    if (wx3_aead_encrypt(FUZZ_APIV3, "fuzznonce123", aad, plain, len, &ct) != 0)
        return;
    size_t cap = strlen(ct) + 400;
    char *body = malloc(cap);
    FUZZ_CHECK(body != NULL);
    int n = snprintf(body, cap,
                     "{\"id\":\"EV\",\"create_time\":\"2026-12-02T12:00:00+08:00\","
                     "\"resource_type\":\"encrypt-resource\",\"event_type\":\"%s\",\"resource\":"
                     "{\"original_type\":\"%s\",\"algorithm\":\"AEAD_AES_256_GCM\",\"ciphertext\":"
                     "\"%s\",\"associated_data\":\"%s\",\"nonce\":\"fuzznonce123\"}}",
                     event, aad, ct, aad);
    signed_notification(body, (size_t)n);
    free(body);
    free(ct);
}

/* A v3 reply of kind with status read in v2's words. */
static void reply(const uint8_t *data, size_t size)
{
    static const long statuses[] = { 200, 204, 400, 401, 403, 404, 429, 500, 502, 302, 100, 600 };
    gw3_kind kind = (gw3_kind)(data[0] % 6);
    long status = statuses[data[1] % 12];
    char *body = fuzz_text(data + 2, size - 2);
    gw_result out;
    wx_msg m;

    gateway_result_init(&out);
    wx_msg_init(&m);
    if (gw3_reply_to_v2(status, body, size - 2, kind, FUZZ_APPID, FUZZ_MCHID, &m, &out) == 0) {
        FUZZ_CHECK(wx_msg_get(&m, "result_code") != NULL);
        if (kind == GW3_PREPAY_NATIVE || kind == GW3_PREPAY_JSAPI)
            gateway_reply_unifiedorder(&m, kind == GW3_PREPAY_NATIVE, &out);
        else if (kind == GW3_QUERY)
            gateway_reply_orderquery(&m, "ORDER0001", &out);
        else if (kind == GW3_CLOSE)
            gateway_reply_closeorder(&m, &out);
        else if (kind == GW3_REFUND)
            gateway_reply_refund(&m, "4200000001", &out);
    } else {
        FUZZ_CHECK(out.outcome == GW_UNKNOWN && out.err_code[0] != '\0');
    }
    if (status >= 500 || status == 429 || status < 200 || (status >= 300 && status < 400))
        FUZZ_CHECK(out.outcome == GW_UNKNOWN);
    if (kind == GW3_QUERY && out.outcome == GW_CHARGED)
        FUZZ_CHECK(out.transaction_id[0] != '\0');
    wx_msg_free(&m);
    free(body);
}

/* "serial\nsignature\ntimestamp\nnonce\nbody" with every header as given. */
static void raw_headers(char *text, size_t len)
{
    char *f[4];
    char *p = text;
    cb3_notification n;

    for (int i = 0; i < 4; i++) {
        char *nl = memchr(p, '\n', len - (size_t)(p - text));
        if (nl == NULL)
            return;
        *nl = '\0';
        f[i] = p;
        p = nl + 1;
    }
    const wx3_signed_headers h = { f[0], f[1], f[2], f[3] };
    check_verdict(callback_v3_verify(&cfg, &trust, &h, p, len - (size_t)(p - text), 0, time(NULL),
                                     &n),
                  &n);
    callback_v3_free(&n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (platform == NULL)
        setup();
    if (size < 3 || size > 16384)
        return 0;
    char *rest = fuzz_text(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0:
        signed_notification(rest, size - 1);
        break;
    case 1:
        resource(data[1], rest + 1, size - 2);
        break;
    case 2:
        reply(data + 1, size - 1);
        break;
    default:
        raw_headers(rest, size - 1);
        break;
    }
    free(rest);
    return 0;
}
