/* test_mock_v3_notify.c - CUnit suite for the database-free parts of the
 * mock's APIv3: the notifications (v3_notify: the envelope, the resource
 * decrypting back to the transaction / refund under the APIv3 key and its
 * original_type as AAD, the event per refund status), the RFC 3339 times,
 * and which platform pair is served and signs at each rotation
 * (v3_keys_served / v3_keys_signing). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cu_suite.h"
#include "mock.h"
#include "v3_keys.h"
#include "v3_notify.h"
#include "wx3_aead.h"

static const mock_creds creds = { "wx0000000000000000", "1900000109", MOCK_DEV_KEY, WX_SIGN_MD5 };
#define APIV3 "idempayv3devkey0123456789abcdefA"

/* The decrypted resource of a notification (NULL when it does not decrypt
 * under key), and its envelope in *env. */
static json_t *open_resource(const char *doc, const char *key, json_t **env)
{
    json_error_t e;
    char *plain = NULL;
    size_t len = 0;
    *env = json_loads(doc, 0, &e);
    json_t *r = json_object_get(*env, "resource");
    if (r == NULL ||
        wx3_aead_decrypt(key, json_string_value(json_object_get(r, "nonce")),
                         json_string_value(json_object_get(r, "associated_data")),
                         json_string_value(json_object_get(r, "ciphertext")), &plain, &len) != 0)
        return NULL;
    json_t *o = json_loads(plain, 0, &e);
    free(plain);
    return o;
}

static void test_charge_notification(void)
{
    notifier_charge c;
    json_t *env = NULL;
    memset(&c, 0, sizeof(c));
    snprintf(c.transaction_id, sizeof(c.transaction_id), "4200202612020000000000000001");
    snprintf(c.out_trade_no, sizeof(c.out_trade_no), "ORDER-0001");
    c.total_fee = 1230;
    snprintf(c.trade_type, sizeof(c.trade_type), "NATIVE");
    snprintf(c.openid, sizeof(c.openid), "oUser1");
    snprintf(c.time_end, sizeof(c.time_end), "20261202103000");
    c.api_version = 3;
    char *doc = v3_notify_charge_json(&c, &creds, APIV3);
    CU_ASSERT_FATAL(doc != NULL);
    json_t *t = open_resource(doc, APIV3, &env);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "event_type")),
                           "TRANSACTION.SUCCESS");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "resource_type")),
                           "encrypt-resource");
    json_t *res = json_object_get(env, "resource");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(res, "algorithm")),
                           "AEAD_AES_256_GCM");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(res, "associated_data")),
                           "transaction");
    CU_ASSERT_EQUAL(strlen(json_string_value(json_object_get(res, "nonce"))), 12);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t, "out_trade_no")), "ORDER-0001");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t, "trade_state")), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t, "success_time")),
                           "2026-12-02T10:30:00+08:00");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(t, "amount"), "total")),
                    1230);
    CU_ASSERT_STRING_EQUAL(json_string_value(
                               json_object_get(json_object_get(t, "payer"), "openid")),
                           "oUser1");
    CU_ASSERT_PTR_NULL(strstr(doc, "ORDER-0001")); /* the envelope shows nothing in clear */
    json_t *env2 = NULL;
    CU_ASSERT_PTR_NULL(open_resource(doc, "idempayv3devkey0123456789abcdefB", &env2));
    json_decref(env2);
    json_decref(t);
    json_decref(env);
    free(doc);
}

static void test_refund_notifications(void)
{
    static const struct {
        const char *status, *event, *res_status;
    } cases[] = {
        { "SUCCESS", "REFUND.SUCCESS", "SUCCESS" },
        { "REFUNDCLOSE", "REFUND.CLOSED", "CLOSED" },
        { "CHANGE", "REFUND.ABNORMAL", "ABNORMAL" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        refund_record r;
        json_t *env = NULL;
        memset(&r, 0, sizeof(r));
        snprintf(r.out_refund_no, sizeof(r.out_refund_no), "R-1");
        snprintf(r.refund_id, sizeof(r.refund_id), "5030202612020000000000000001");
        snprintf(r.transaction_id, sizeof(r.transaction_id), "4200202612020000000000000001");
        snprintf(r.out_trade_no, sizeof(r.out_trade_no), "ORDER-0001");
        r.total_fee = 1230;
        r.refund_fee = 230;
        snprintf(r.status, sizeof(r.status), "%s", cases[i].status);
        snprintf(r.ended_at, sizeof(r.ended_at), "2026-12-02 10:20:00");
        char *doc = v3_notify_refund_json(&r, &creds, APIV3);
        json_t *t = doc != NULL ? open_resource(doc, APIV3, &env) : NULL;
        CU_ASSERT_FATAL(t != NULL);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "event_type")),
                               cases[i].event);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t, "refund_status")),
                               cases[i].res_status);
        CU_ASSERT_EQUAL(json_object_get(t, "success_time") != NULL, i == 0);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(t, "amount"), "refund")),
                        230);
        json_decref(t);
        json_decref(env);
        free(doc);
    }
}

static void test_times(void)
{
    char out[V3_TIME_BUF];
    v3_time(0, out);
    CU_ASSERT_STRING_EQUAL(out, "1970-01-01T08:00:00+08:00");
    v3_time_from_compact("20240301073000", out);
    CU_ASSERT_STRING_EQUAL(out, "2024-03-01T07:30:00+08:00");
    v3_time_from_compact("2024030107300", out);
    CU_ASSERT_STRING_EQUAL(out, "");
    v3_time_from_compact("2024030107300x", out);
    CU_ASSERT_STRING_EQUAL(out, "");
    v3_time_from_cst("2024-03-01 07:30:00", out);
    CU_ASSERT_STRING_EQUAL(out, "2024-03-01T07:30:00+08:00");
    v3_time_from_cst("", out);
    CU_ASSERT_STRING_EQUAL(out, "");
}

static void test_rotation(void)
{
    v3_keys one, two;
    memset(&one, 0, sizeof(one));
    memset(&two, 0, sizeof(two));
    one.platform.pairs = 1;
    two.platform.pairs = 2;
    for (long long r = 0; r <= 2; r++) {
        CU_ASSERT_EQUAL(v3_keys_served(&one, r), 1); /* nothing to rotate to */
        CU_ASSERT_EQUAL(v3_keys_signing(&one, r), 0);
    }
    CU_ASSERT_EQUAL(v3_keys_served(&two, 0), 1);
    CU_ASSERT_EQUAL(v3_keys_signing(&two, 0), 0);
    CU_ASSERT_EQUAL(v3_keys_served(&two, 1), 2);  /* announced ... */
    CU_ASSERT_EQUAL(v3_keys_signing(&two, 1), 0); /* ... before it signs */
    CU_ASSERT_EQUAL(v3_keys_served(&two, 2), 2);
    CU_ASSERT_EQUAL(v3_keys_signing(&two, 2), 1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a payment notification has its envelope and decrypts to the transaction",
          test_charge_notification },
        { "a refund notification has an event per status", test_refund_notifications },
        { "times are RFC 3339 in China time", test_times },
        { "a rotated platform certificate is announced before it signs", test_rotation },
    };
    return CU_SUITE_RUN("mock_v3_notify", NULL, NULL, tests);
}
