/* test_gateway_v3 - CUnit suite for the service's APIv3 dialect without a
 * network or a database: the request's Authorization (it verifies under the
 * merchant certificate over WeChat's five lines), the platform signature
 * check of replies and notifications (valid; a changed body, an unknown
 * serial, a stale timestamp, missing headers refused), the certificate list
 * believed only when it decrypts under the APIv3 key, v3 replies read by the
 * v2 meanings (prepay, query, close 204, errors, refunds), the notification
 * decode (payment and refund; a tampered AEAD tag, another merchant, an
 * event that does not match its refund refused), and the JSAPI paySign.
 * One RSA key plays both the merchant and the platform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cu_suite.h"

#include "callback_v3_verify.h"
#include "gateway_refund.h"
#include "gateway_v3.h"
#include "gateway_v3_reply.h"
#include "pay_prepay.h"
#include "wx3_aead.h"
#include "wx3_sign.h"
#include "wx3_trust.h"

#include <openssl/evp.h>

#include "wx3_test_keys.h"

#define APIV3 "0123456789abcdefghijABCDEFGHIJ01"

static char dir[64], key_path[128], cert_path[128];
static app_config cfg;
static wx3_cert cert;
static wx3_trust trust;

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    size_t n = fwrite(text, 1, strlen(text), f);
    return fclose(f) == 0 && n == strlen(text) ? 0 : -1;
}

static int suite_init(void)
{
    snprintf(dir, sizeof(dir), "/tmp/test_gateway_v3.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
    if (write_file(key_path, test_key_pem) || write_file(cert_path, test_cert_pem) ||
        wx3_cert_load(cert_path, &cert) != 0)
        return -1;
    memset(&cfg, 0, sizeof(cfg));
    snprintf(cfg.appid, sizeof(cfg.appid), "wx0000000000000000");
    snprintf(cfg.mch_id, sizeof(cfg.mch_id), "1900000109");
    cfg.v3.api = WX_API_V3;
    cfg.v3.window_s = 300;
    snprintf(cfg.v3.apiv3_key, sizeof(cfg.v3.apiv3_key), "%s", APIV3);
    snprintf(cfg.v3.serial, sizeof(cfg.v3.serial), "%s", cert.serial);
    if (wx3_key_load(key_path, &cfg.v3.key) != 0)
        return -1;
    wx3_trust_init(&trust);
    return wx3_trust_add(&trust, &cert);
}

static int suite_clean(void)
{
    char cmd[128];
    wx3_trust_clear(&trust);
    wx3_cert_free(&cert);
    EVP_PKEY_free(cfg.v3.key);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The platform's headers over body at ts (signature into sig[1024]). */
static wx3_signed_headers signed_by_platform(const char *body, const char *ts, char *sig)
{
    size_t len = 0;
    char *msg = wx3_response_message(ts, "n0nce", body, strlen(body), &len);
    char *b64 = NULL;
    CU_ASSERT_FATAL(msg != NULL && wx3_sign(cfg.v3.key, msg, len, &b64) == 0);
    snprintf(sig, 1024, "%s", b64);
    free(msg);
    free(b64);
    return (wx3_signed_headers){ cert.serial, sig, ts, "n0nce" };
}

static const char *now_text(long delta)
{
    static char ts[24];
    snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL) + delta);
    return ts;
}

static void test_request_authorization_verifies_under_the_merchant_certificate(void)
{
    char hdr[1536], why[64];
    wx3_auth a;
    const char *body = "{\"mchid\":\"1900000109\"}";
    const char *url = "/v3/pay/transactions/out-trade-no/A1/close";

    CU_ASSERT_FATAL(gateway_v3_authorization(&cfg, "POST", url, body, "1700000000", "NONCE1", hdr,
                                             sizeof(hdr)) == 0);
    CU_ASSERT(strncmp(hdr, "Authorization: ", 15) == 0);
    CU_ASSERT_FATAL(wx3_auth_parse(hdr + 15, &a, why, sizeof(why)) == 0);
    CU_ASSERT_STRING_EQUAL(a.mchid, "1900000109");
    CU_ASSERT_STRING_EQUAL(a.serial_no, cert.serial);
    CU_ASSERT_STRING_EQUAL(a.timestamp, "1700000000");
    char *msg = wx3_request_message("POST", url, "1700000000", "NONCE1", body, strlen(body));
    CU_ASSERT_EQUAL(wx3_verify(cert.pub, msg, strlen(msg), a.signature), 0);
    free(msg);
    /* another URL, body or method is not what was signed */
    msg = wx3_request_message("POST", url, "1700000000", "NONCE1", "{}", 2);
    CU_ASSERT_EQUAL(wx3_verify(cert.pub, msg, strlen(msg), a.signature), -1);
    free(msg);
}

static void test_reply_signature_valid_is_believed(void)
{
    char sig[1024];
    const char *body = "{\"code_url\":\"weixin://wxpay/bizpayurl?pr=abc\"}";
    wx3_signed_headers h = signed_by_platform(body, now_text(0), sig);

    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, strlen(body), time(NULL), 300), WX3_TRUST_OK);
    /* a 204's empty body is signed too */
    h = signed_by_platform("", now_text(0), sig);
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, "", 0, time(NULL), 300), WX3_TRUST_OK);
}

static void test_reply_with_a_changed_body_is_refused(void)
{
    char sig[1024];
    const char *body = "{\"trade_state\":\"NOTPAY\"}";
    wx3_signed_headers h = signed_by_platform(body, now_text(0), sig);
    const char *forged = "{\"trade_state\":\"SUCCESS\"}";

    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, forged, strlen(forged), time(NULL), 300),
                    WX3_TRUST_BAD_SIGNATURE);
}

static void test_reply_of_an_unknown_serial_asks_for_the_certificates(void)
{
    char sig[1024];
    const char *body = "{}";
    wx3_signed_headers h = signed_by_platform(body, now_text(0), sig);

    h.serial = "7E57AB1E7E57AB1E";
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, 2, time(NULL), 300),
                    WX3_TRUST_UNKNOWN_SERIAL);
    CU_ASSERT_STRING_EQUAL(wx3_trust_verdict_name(WX3_TRUST_UNKNOWN_SERIAL), "unknown_serial");
}

static void test_reply_with_a_stale_timestamp_is_refused(void)
{
    char sig[1024], ts[24];
    const char *body = "{}";
    /* one "now" for the timestamps and the check: signing takes seconds
     * under valgrind, and 301 s ahead read a second later is 300 */
    time_t now = time(NULL);
    snprintf(ts, sizeof(ts), "%lld", (long long)now - 301);
    wx3_signed_headers h = signed_by_platform(body, ts, sig);
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, 2, now, 300), WX3_TRUST_STALE);
    snprintf(ts, sizeof(ts), "%lld", (long long)now + 301);
    h = signed_by_platform(body, ts, sig);
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, 2, now, 300), WX3_TRUST_STALE);
    snprintf(ts, sizeof(ts), "%lld", (long long)now - 299);
    h = signed_by_platform(body, ts, sig);
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, 2, now, 300), WX3_TRUST_OK);
}

static void test_reply_without_signature_headers_is_refused(void)
{
    char sig[1024];
    const char *body = "{}";
    wx3_signed_headers h = signed_by_platform(body, now_text(0), sig);
    wx3_signed_headers none = { NULL, NULL, NULL, NULL };

    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &none, body, 2, time(NULL), 300), WX3_TRUST_MISSING);
    h.timestamp = "17e9";
    CU_ASSERT_EQUAL(wx3_trust_check(&trust, &h, body, 2, time(NULL), 300), WX3_TRUST_MISSING);
}

/* /v3/certificates' body with the test certificate encrypted under key. */
static char *certificates_body(const char *key)
{
    char *ct = NULL;
    CU_ASSERT_FATAL(wx3_aead_encrypt(key, "c3rtn0nce123", "certificate", test_cert_pem,
                                     strlen(test_cert_pem), &ct) == 0);
    size_t cap = strlen(ct) + 512;
    char *b = malloc(cap);
    snprintf(
        b, cap,
        "{\"data\":[{\"serial_no\":\"%s\",\"effective_time\":\"x\",\"expire_time\":\"y\","
        "\"encrypt_certificate\":{\"algorithm\":\"AEAD_AES_256_GCM\",\"nonce\":\"c3rtn0nce123\","
        "\"associated_data\":\"certificate\",\"ciphertext\":\"%s\"}}]}",
        cert.serial, ct);
    free(ct);
    return b;
}

static void test_certificate_list_is_believed_only_under_the_apiv3_key(void)
{
    wx3_trust t;
    char why[128];
    char *good = certificates_body(APIV3),
         *other = certificates_body("ZZZZ456789abcdefghijABCDEFGHIJ01");

    wx3_trust_init(&t);
    CU_ASSERT_EQUAL(wx3_trust_load_certificates(&t, other, strlen(other), APIV3, time(NULL), why,
                                                sizeof(why)),
                    -1);
    CU_ASSERT_FALSE(wx3_trust_has(&t, cert.serial));
    CU_ASSERT_EQUAL(wx3_trust_load_certificates(&t, good, strlen(good), APIV3, time(NULL), why,
                                                sizeof(why)),
                    1);
    CU_ASSERT_TRUE(wx3_trust_has(&t, cert.serial));
    wx3_trust_clear(&t);
    free(good);
    free(other);
}

/* The outcome of a v3 reply of kind about subject. */
static gw_outcome meaning(long status, const char *body, gw3_kind kind, const char *subject,
                          gw_result *out)
{
    wx_msg m;
    wx_msg_init(&m);
    gateway_result_init(out);
    if (gw3_reply_to_v2(status, body, strlen(body), kind, cfg.appid, cfg.mch_id, &m, out) == 0) {
        if (kind == GW3_PREPAY_NATIVE || kind == GW3_PREPAY_JSAPI)
            gateway_reply_unifiedorder(&m, kind == GW3_PREPAY_NATIVE, out);
        else if (kind == GW3_QUERY)
            gateway_reply_orderquery(&m, subject, out);
        else if (kind == GW3_CLOSE)
            gateway_reply_closeorder(&m, out);
        else if (kind == GW3_REFUND)
            gateway_reply_refund(&m, subject, out);
        else
            gateway_reply_refundquery(&m, subject, out);
    }
    wx_msg_free(&m);
    return out->outcome;
}

static void test_v3_replies_mean_what_v2_replies_mean(void)
{
    gw_result r;

    CU_ASSERT_EQUAL(meaning(200, "{\"code_url\":\"weixin://wxpay/bizpayurl?pr=Ab12\"}",
                            GW3_PREPAY_NATIVE, "A1", &r),
                    GW_PREPAY);
    CU_ASSERT_STRING_EQUAL(r.prepay_id, "Ab12");
    CU_ASSERT_EQUAL(meaning(200, "{\"prepay_id\":\"wx26112\"}", GW3_PREPAY_JSAPI, "A1", &r),
                    GW_PREPAY);
    CU_ASSERT_EQUAL(meaning(400, "{\"code\":\"ORDER_PAID\",\"message\":\"x\"}", GW3_PREPAY_JSAPI,
                            "A1", &r),
                    GW_ORDERPAID);
    CU_ASSERT_EQUAL(meaning(500, "{\"code\":\"SYSTEM_ERROR\",\"message\":\"x\"}", GW3_PREPAY_NATIVE,
                            "A1", &r),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(meaning(502, "", GW3_PREPAY_NATIVE, "A1", &r), GW_UNKNOWN);
    /* a 5xx or 429 is not known, whatever code it names (found by fuzz_v3) */
    CU_ASSERT_EQUAL(meaning(500, "{\"code\":\"SYSEMT_ERROR\"}", GW3_PREPAY_NATIVE, "A1", &r),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(meaning(429, "{\"code\":\"RATE\"}", GW3_REFUND, "4200001", &r), GW_UNKNOWN);
    CU_ASSERT_EQUAL(meaning(400, "{\"code\":\"PARAM_ERROR\",\"message\":\"x\"}", GW3_PREPAY_NATIVE,
                            "A1", &r),
                    GW_NOT_CHARGED);
    CU_ASSERT_EQUAL(meaning(204, "", GW3_CLOSE, "A1", &r), GW_CLOSED);
    CU_ASSERT_EQUAL(meaning(400, "{\"code\":\"ORDER_CLOSED\"}", GW3_CLOSE, "A1", &r), GW_CLOSED);
    CU_ASSERT_EQUAL(meaning(500, "{\"code\":\"SYSTEM_ERROR\"}", GW3_CLOSE, "A1", &r), GW_UNKNOWN);
}

static void test_v3_query_reports_the_charge_of_our_order_only(void)
{
    gw_result r;
    const char *paid = "{\"appid\":\"wx0000000000000000\",\"mchid\":\"1900000109\","
                       "\"out_trade_no\":\"A1\",\"trade_state\":\"SUCCESS\",\"transaction_id\":"
                       "\"4200001\",\"amount\":{\"total\":1230,\"currency\":\"CNY\"}}";
    const char *other = "{\"appid\":\"wx0000000000000000\",\"mchid\":\"1900000999\","
                        "\"out_trade_no\":\"A1\",\"trade_state\":\"SUCCESS\",\"transaction_id\":"
                        "\"4200001\",\"amount\":{\"total\":1230}}";

    CU_ASSERT_EQUAL(meaning(200, paid, GW3_QUERY, "A1", &r), GW_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.transaction_id, "4200001");
    CU_ASSERT_EQUAL(r.total_fee, 1230);
    CU_ASSERT_EQUAL(meaning(200, paid, GW3_QUERY, "B2", &r), GW_UNKNOWN);  /* another order */
    CU_ASSERT_EQUAL(meaning(200, other, GW3_QUERY, "A1", &r), GW_UNKNOWN); /* another merchant */
    CU_ASSERT_EQUAL(meaning(200,
                            "{\"appid\":\"wx0000000000000000\",\"mchid\":\"1900000109\","
                            "\"out_trade_no\":\"A1\",\"trade_state\":\"NOTPAY\"}",
                            GW3_QUERY, "A1", &r),
                    GW_NOT_CHARGED);
    CU_ASSERT_EQUAL(meaning(404, "{\"code\":\"ORDER_NOT_EXIST\"}", GW3_QUERY, "A1", &r),
                    GW_NOT_CHARGED);
    CU_ASSERT_EQUAL(meaning(200, "not json", GW3_QUERY, "A1", &r), GW_UNKNOWN);
}

static void test_v3_refund_statuses_are_v2s(void)
{
    gw_result r;
    const char *closed = "{\"out_refund_no\":\"RM1\",\"refund_id\":\"5001\",\"status\":\"CLOSED\","
                         "\"amount\":{\"refund\":100,\"total\":1230}}";

    CU_ASSERT_EQUAL(meaning(200,
                            "{\"transaction_id\":\"4200001\",\"out_refund_no\":\"RM1\","
                            "\"status\":\"PROCESSING\"}",
                            GW3_REFUND, "4200001", &r),
                    GW_CHARGED);
    CU_ASSERT_EQUAL(meaning(200, "{\"transaction_id\":\"4299999\",\"status\":\"PROCESSING\"}",
                            GW3_REFUND, "4200001", &r),
                    GW_UNKNOWN);
    CU_ASSERT_EQUAL(meaning(403, "{\"code\":\"NOT_ENOUGH\"}", GW3_REFUND, "4200001", &r),
                    GW_NOT_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.err_code, "NOTENOUGH");
    CU_ASSERT_EQUAL(meaning(200, closed, GW3_REFUNDQUERY, "RM1", &r), GW_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.trade_state, "REFUNDCLOSE");
    CU_ASSERT_EQUAL(r.total_fee, 100);
    CU_ASSERT_EQUAL(meaning(404, "{\"code\":\"RESOURCE_NOT_EXISTS\"}", GW3_REFUNDQUERY, "RM1", &r),
                    GW_NOT_CHARGED);
    CU_ASSERT_STRING_EQUAL(r.trade_state, "REFUNDNOTEXIST");
}

/* A notification envelope of event with resource (JSON) encrypted under
 * APIV3 (tag flipped when tamper) into a malloc'd body. */
static char *envelope(const char *event, const char *aad, const char *resource, int tamper)
{
    char *ct = NULL;
    CU_ASSERT_FATAL(wx3_aead_encrypt(APIV3, "n0tifyn0nce1", aad, resource, strlen(resource), &ct) ==
                    0);
    if (tamper) {
        size_t n = strlen(ct);
        ct[n - 6] = ct[n - 6] == 'A' ? 'B' : 'A'; /* inside the tag's base64 */
    }
    size_t cap = strlen(ct) + 512;
    char *b = malloc(cap);
    snprintf(b, cap,
             "{\"id\":\"EV-1\",\"create_time\":\"2026-12-02T12:00:00+08:00\","
             "\"resource_type\":\"encrypt-resource\",\"event_type\":\"%s\",\"summary\":\"s\","
             "\"resource\":{\"original_type\":\"%s\",\"algorithm\":\"AEAD_AES_256_GCM\","
             "\"ciphertext\":\"%s\",\"associated_data\":\"%s\",\"nonce\":\"n0tifyn0nce1\"}}",
             event, aad, ct, aad);
    free(ct);
    return b;
}

#define PAYMENT                                                                                    \
    "{\"appid\":\"wx0000000000000000\",\"mchid\":\"1900000109\",\"out_trade_no\":"                 \
    "\"ORDER0001\",\"transaction_id\":\"4200000001\",\"trade_state\":\"SUCCESS\","                 \
    "\"amount\":{\"total\":1230,\"payer_total\":1230,\"currency\":\"CNY\"}}"

/* callback_v3_verify of body signed now (or with headers h when given). */
static int decode(const char *body, cb3_notification *n)
{
    char sig[1024];
    wx3_signed_headers h = signed_by_platform(body, now_text(0), sig);
    return callback_v3_verify(&cfg, &trust, &h, body, strlen(body), 0, time(NULL), n);
}

static void test_payment_notification_decodes_to_the_v2_fields(void)
{
    cb3_notification n;
    char *b = envelope("TRANSACTION.SUCCESS", "transaction", PAYMENT, 0);

    CU_ASSERT_EQUAL_FATAL(decode(b, &n), 0);
    CU_ASSERT_EQUAL(n.kind, CB3_PAYMENT);
    CU_ASSERT_STRING_EQUAL(n.pay.order_no, "ORDER0001");
    CU_ASSERT_STRING_EQUAL(n.pay.transaction_id, "4200000001");
    CU_ASSERT_EQUAL(n.pay.total_fee, 1230);
    CU_ASSERT_PTR_NOT_NULL(strstr(n.plain, "\"trade_state\":\"SUCCESS\""));
    callback_v3_free(&n);
    free(b);
}

static void test_notification_with_a_tampered_tag_is_refused(void)
{
    cb3_notification n;
    char *b = envelope("TRANSACTION.SUCCESS", "transaction", PAYMENT, 1);

    /* signed after the change: only the AEAD tag can catch it */
    CU_ASSERT_EQUAL(decode(b, &n), -1);
    CU_ASSERT_EQUAL(n.status, 400);
    CU_ASSERT_PTR_NOT_NULL(strstr(n.reason, "decrypt"));
    CU_ASSERT_PTR_NULL(n.plain);
    callback_v3_free(&n);
    free(b);
}

static void test_notification_with_a_wrong_serial_or_stale_timestamp_is_refused(void)
{
    cb3_notification n;
    char sig[1024];
    char *b = envelope("TRANSACTION.SUCCESS", "transaction", PAYMENT, 0);
    wx3_signed_headers h = signed_by_platform(b, now_text(0), sig);

    h.serial = "0A0B0C";
    CU_ASSERT_EQUAL(callback_v3_verify(&cfg, &trust, &h, b, strlen(b), 0, time(NULL), &n), -1);
    CU_ASSERT_EQUAL(n.status, 401);
    CU_ASSERT_EQUAL(n.trust, WX3_TRUST_UNKNOWN_SERIAL);
    callback_v3_free(&n);
    h = signed_by_platform(b, now_text(-1000), sig);
    CU_ASSERT_EQUAL(callback_v3_verify(&cfg, &trust, &h, b, strlen(b), 0, time(NULL), &n), -1);
    CU_ASSERT_EQUAL(n.trust, WX3_TRUST_STALE);
    CU_ASSERT_EQUAL(n.verdict, CB_VERDICT_SIGNATURE);
    callback_v3_free(&n);
    free(b);
}

static void test_notification_of_another_merchant_is_refused(void)
{
    cb3_notification n;
    char *b =
        envelope("TRANSACTION.SUCCESS", "transaction",
                 "{\"appid\":\"wx0000000000000000\",\"mchid\":\"1900000999\",\"out_trade_no\":"
                 "\"ORDER0001\",\"transaction_id\":\"4200000001\",\"trade_state\":\"SUCCESS\","
                 "\"amount\":{\"total\":1230}}",
                 0);

    CU_ASSERT_EQUAL(decode(b, &n), -1);
    CU_ASSERT_EQUAL(n.verdict, CB_VERDICT_MERCHANT);
    callback_v3_free(&n);
    free(b);
}

static void test_refund_notification_decodes_in_v2_words(void)
{
    cb3_notification n;
    const char *res = "{\"mchid\":\"1900000109\",\"out_trade_no\":\"ORDER0001\",\"transaction_id\":"
                      "\"4200000001\",\"out_refund_no\":\"RM0001\",\"refund_id\":\"5000001\","
                      "\"refund_status\":\"CLOSED\",\"amount\":{\"total\":1230,\"refund\":100,"
                      "\"payer_total\":1230,\"payer_refund\":100}}";
    char *b = envelope("REFUND.CLOSED", "refund", res, 0);
    char *wrong = envelope("REFUND.SUCCESS", "refund", res, 0);

    CU_ASSERT_EQUAL_FATAL(decode(b, &n), 0);
    CU_ASSERT_EQUAL(n.kind, CB3_REFUND);
    CU_ASSERT_STRING_EQUAL(n.refund.out_refund_no, "RM0001");
    CU_ASSERT_STRING_EQUAL(n.refund.refund_status, "REFUNDCLOSE");
    CU_ASSERT_EQUAL(n.refund.refund_fee, 100);
    callback_v3_free(&n);
    CU_ASSERT_EQUAL(decode(wrong, &n), -1); /* the event says SUCCESS, the refund CLOSED */
    callback_v3_free(&n);
    free(b);
    free(wrong);
}

static void test_a_bill_is_taken_only_with_its_sha1(void)
{
    const char *bill = "交易时间,公众账号ID\n`2026-12-02 10:00:00,`wx0000000000000000\n";
    const char *other = "8c0b3ed4ea4c2e1b5c3f3d7ff0b0f4e1b4a5b1c9"; /* another text's */
    unsigned char md[20];
    char hex[41];
    size_t n = 0;

    CU_ASSERT_FATAL(EVP_Q_digest(NULL, "SHA1", NULL, bill, strlen(bill), md, &n) == 1);
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02X", md[i]);
    CU_ASSERT_EQUAL(gateway_v3_bill_hash_ok(bill, strlen(bill), hex), 0); /* either case */
    CU_ASSERT_EQUAL(gateway_v3_bill_hash_ok(bill, strlen(bill) - 1, hex), -1);
    CU_ASSERT_EQUAL(gateway_v3_bill_hash_ok(bill, strlen(bill), other), -1);
    CU_ASSERT_EQUAL(gateway_v3_bill_hash_ok(bill, strlen(bill), NULL), -1);
}

static void test_v3_fails_closed_without_its_material(void)
{
    v3_config vc;

    /* before the first setting is read: no file, no key file (./stack's) */
    setenv("IDEMPAY_CONFIG", "none", 1);
    unsetenv("IDEMPAY_WX_APIV3_KEY_FILE");
    unsetenv("IDEMPAY_WX_API");
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), 0); /* v2: nothing v3 read */
    CU_ASSERT_EQUAL(vc.api, WX_API_V2);
    CU_ASSERT_PTR_NULL(vc.key);
    setenv("IDEMPAY_WX_API", "v4", 1);
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), -1);
    setenv("IDEMPAY_WX_API", "v3", 1);
    unsetenv("IDEMPAY_WX_APIV3_KEY");
    setenv("IDEMPAY_WX_V3_CERT", cert_path, 1);
    setenv("IDEMPAY_WX_V3_CERT_KEY", key_path, 1);
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), -1); /* no APIv3 key */
    setenv("IDEMPAY_WX_APIV3_KEY", "short", 1);
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), -1); /* not 32 characters */
    setenv("IDEMPAY_WX_APIV3_KEY", APIV3, 1);
    setenv("IDEMPAY_WX_V3_CERT_KEY", cert_path, 1);
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), -1); /* a certificate is no key */
    setenv("IDEMPAY_WX_V3_CERT_KEY", key_path, 1);
    unsetenv("IDEMPAY_WX_V3_CERT");
    CU_ASSERT_EQUAL(config_v3_load(&vc, 18084), -1); /* no certificate */
    setenv("IDEMPAY_WX_V3_CERT", cert_path, 1);
    CU_ASSERT_EQUAL_FATAL(config_v3_load(&vc, 18084), 0);
    CU_ASSERT_STRING_EQUAL(vc.serial, cert.serial);
    CU_ASSERT_STRING_EQUAL(vc.notify_url, "http://127.0.0.1:18084/api/pay/callback/wechat/v3");
    CU_ASSERT_PTR_NOT_NULL(vc.key);
    EVP_PKEY_free(vc.key);
    unsetenv("IDEMPAY_WX_API");
}

static void test_jsapi_pay_sign_is_rsa_over_the_four_lines(void)
{
    pay_jsapi js;
    const char *msg = "wx0000000000000000\n1700000000\nN0NCE\nprepay_id=wx26112\n";

    CU_ASSERT_EQUAL_FATAL(pay_prepay_jsapi_sign_v3(&cfg, "1700000000", "N0NCE", "wx26112", &js), 0);
    CU_ASSERT_STRING_EQUAL(js.sign_type, "RSA");
    CU_ASSERT_STRING_EQUAL(js.package, "prepay_id=wx26112");
    CU_ASSERT_EQUAL(wx3_verify(cert.pub, msg, strlen(msg), js.pay_sign), 0);
}

int main(void)
{
    static const cu_test tests[] = {
        { "request Authorization verifies under the merchant certificate",
          test_request_authorization_verifies_under_the_merchant_certificate },
        { "a validly signed reply is believed", test_reply_signature_valid_is_believed },
        { "a reply with a changed body is refused", test_reply_with_a_changed_body_is_refused },
        { "a reply of an unknown serial asks for the certificates",
          test_reply_of_an_unknown_serial_asks_for_the_certificates },
        { "a reply with a stale timestamp is refused",
          test_reply_with_a_stale_timestamp_is_refused },
        { "a reply without signature headers is refused",
          test_reply_without_signature_headers_is_refused },
        { "the certificate list is believed only under the APIv3 key",
          test_certificate_list_is_believed_only_under_the_apiv3_key },
        { "v3 replies mean what v2 replies mean", test_v3_replies_mean_what_v2_replies_mean },
        { "a v3 query reports the charge of our order only",
          test_v3_query_reports_the_charge_of_our_order_only },
        { "v3 refund statuses are v2's", test_v3_refund_statuses_are_v2s },
        { "a payment notification decodes to the v2 fields",
          test_payment_notification_decodes_to_the_v2_fields },
        { "a notification with a tampered tag is refused",
          test_notification_with_a_tampered_tag_is_refused },
        { "a notification with a wrong serial or a stale timestamp is refused",
          test_notification_with_a_wrong_serial_or_stale_timestamp_is_refused },
        { "a notification of another merchant is refused",
          test_notification_of_another_merchant_is_refused },
        { "a refund notification decodes in v2's words",
          test_refund_notification_decodes_in_v2_words },
        { "a bill is taken only with its SHA1", test_a_bill_is_taken_only_with_its_sha1 },
        { "v3 fails closed without its material", test_v3_fails_closed_without_its_material },
        { "the JSAPI paySign is RSA over the four lines",
          test_jsapi_pay_sign_is_rsa_over_the_four_lines },
    };
    return CU_SUITE_RUN("gateway_v3", suite_init, suite_clean, tests);
}
