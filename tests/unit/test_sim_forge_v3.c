/* test_sim_forge_v3.c - CUnit suite for v3-attacks' APIv3 notifications
 * (sim/forge_v3.h): each FORGE_V3_* kind has exactly its own defect and no
 * other - its timestamp, nonce, serial, signature and resource checked here
 * with common/wx3_sign and common/wx3_aead as the service checks them - so
 * a refusal of it can only come from the check it aims at. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "forge_v3.h"
#include "wx3_aead.h"
#include "wx3_sign.h"
#include "wx3_test_keys.h"

#define APIV3_KEY "sim0forge0v3apiv3key0123456789AB"

static char cert_path[64], key_path[64];
static forge_v3_keys *keys;
static wx3_cert cert;

static int write_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok ? 0 : -1;
}

static int setup(void)
{
    char why[256];
    snprintf(cert_path, sizeof(cert_path), "/tmp/fv3certXXXXXX");
    snprintf(key_path, sizeof(key_path), "/tmp/fv3keyXXXXXX");
    if (write_file(cert_path, test_cert_pem) != 0 || write_file(key_path, test_key_pem) != 0 ||
        wx3_cert_load(cert_path, &cert) != 0)
        return -1;
    unsetenv("IDEMPAY_WX_APIV3_KEY_FILE");
    unsetenv("IDEMPAY_MOCK_V3_PLATFORM2_CERT");
    setenv("IDEMPAY_MOCK_V3_PLATFORM_CERT", cert_path, 1);
    setenv("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY", key_path, 1);
    setenv("IDEMPAY_WX_APIV3_KEY", APIV3_KEY, 1);
    setenv("IDEMPAY_WX_V3_TIME_WINDOW_S", "300", 1);
    keys = forge_v3_load(why, sizeof(why));
    return keys != NULL ? 0 : -1;
}

static int teardown(void)
{
    forge_v3_free(keys);
    wx3_cert_free(&cert);
    unlink(cert_path);
    unlink(key_path);
    return 0;
}

typedef struct {
    int fresh, signed_ok, serial_ok, decrypts;
    char resource[1024];
} verdict;

static const char *header(const forge_v3_msg *m, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < 4; i++)
        if (m->headers[i] != NULL && strncmp(m->headers[i], name, n) == 0)
            return m->headers[i] + n + 2;
    return "";
}

/* Builds kind's notification and judges each of its parts. */
static void judge(int kind, uint64_t seed, verdict *v)
{
    sched_task t = { .forge = (uint8_t)kind, .aux_order = 0, .jitter_seed = seed };
    forge_v3_msg m;
    size_t mlen = 0, plen = 0;
    char *plain = NULL;

    memset(v, 0, sizeof(*v));
    CU_ASSERT_EQUAL_FATAL(forge_v3_build(keys, &t, "wx0000000000000000", "1900000109",
                                         "s1v300001xyz", "4299000000000000000000000001", 4321, &m),
                          0);
    long long ts = atoll(header(&m, "Wechatpay-Timestamp"));
    v->fresh = llabs(ts - (long long)time(NULL)) <= 300;
    v->serial_ok = strcmp(header(&m, "Wechatpay-Serial"), cert.serial) == 0;
    char *msg = wx3_response_message(header(&m, "Wechatpay-Timestamp"),
                                     header(&m, "Wechatpay-Nonce"), m.body, strlen(m.body), &mlen);
    v->signed_ok = wx3_verify(cert.pub, msg, mlen, header(&m, "Wechatpay-Signature")) == 0;
    free(msg);
    json_t *env = json_loads(m.body, 0, NULL), *r = json_object_get(env, "resource");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "event_type")),
                           "TRANSACTION.SUCCESS");
    v->decrypts = wx3_aead_decrypt(APIV3_KEY, json_string_value(json_object_get(r, "nonce")),
                                   json_string_value(json_object_get(r, "associated_data")),
                                   json_string_value(json_object_get(r, "ciphertext")), &plain,
                                   &plen) == 0;
    if (plain != NULL)
        snprintf(v->resource, sizeof(v->resource), "%s", plain);
    free(plain);
    json_decref(env);
    forge_v3_msg_free(&m);
}

static void test_stale_is_only_stale(void)
{
    verdict v;
    for (uint64_t seed = 0; seed < 4; seed++) { /* past and future (bit 16) */
        judge(FORGE_V3_STALE, seed << 15, &v);
        CU_ASSERT(!v.fresh && v.signed_ok && v.serial_ok && v.decrypts);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(v.resource, "\"out_trade_no\":\"s1v300001xyz\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.resource, "\"total\":4321"));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.resource, "\"trade_state\":\"SUCCESS\""));
}

static void test_new_nonce_breaks_only_the_signature(void)
{
    verdict v;
    judge(FORGE_V3_NEW_NONCE, 1, &v);
    CU_ASSERT(v.fresh && !v.signed_ok && v.serial_ok && v.decrypts);
}

static void test_wrong_serial_is_signed_by_the_platform(void)
{
    verdict v;
    judge(FORGE_V3_WRONG_SERIAL, 2, &v);
    CU_ASSERT(v.fresh && v.signed_ok && !v.serial_ok && v.decrypts);
}

static void test_changed_bytes(void)
{
    static const struct {
        int kind, signed_ok;
    } cases[] = {
        { FORGE_V3_CIPHERTEXT, 0 },
        { FORGE_V3_CIPHERTEXT_SIGNED, 1 },
        { FORGE_V3_TAG, 0 },
        { FORGE_V3_TAG_SIGNED, 1 },
    };
    verdict v;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (uint64_t seed = 0; seed < 40; seed += 7) {
            judge(cases[i].kind, seed * 0x9E37u, &v);
            CU_ASSERT(v.fresh && v.serial_ok && !v.decrypts);
            CU_ASSERT_EQUAL(v.signed_ok, cases[i].signed_ok);
        }
}

static void test_load_needs_the_platform_key(void)
{
    char why[256];
    unsetenv("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY");
    CU_ASSERT_PTR_NULL(forge_v3_load(why, sizeof(why)));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "IDEMPAY_MOCK_V3_PLATFORM_CERT"));
    setenv("IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY", key_path, 1);
    setenv("IDEMPAY_WX_APIV3_KEY", "short", 1);
    CU_ASSERT_PTR_NULL(forge_v3_load(why, sizeof(why)));
    CU_ASSERT_PTR_NULL(strstr(why, "short")); /* never the key */
    setenv("IDEMPAY_WX_APIV3_KEY", APIV3_KEY, 1);
}

int main(void)
{
    static const cu_test tests[] = {
        { "stale: only its timestamp", test_stale_is_only_stale },
        { "new nonce: only its signature", test_new_nonce_breaks_only_the_signature },
        { "wrong serial: signed by the platform key", test_wrong_serial_is_signed_by_the_platform },
        { "changed ciphertext or tag: AEAD refuses, signed or not", test_changed_bytes },
        { "load needs the platform key, never prints the APIv3 key",
          test_load_needs_the_platform_key },
    };
    return CU_SUITE_RUN("sim_forge_v3", setup, teardown, tests);
}
