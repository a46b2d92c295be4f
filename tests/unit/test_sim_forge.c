/* test_sim_forge.c - CUnit suite for the simulator's forged notifications:
 * each forgery kind yields a WeChat notification the service can parse,
 * signed (MD5 or HMAC-SHA256, as the schedule drew) with the merchant's key
 * unless the kind is a bad signature, carrying the fee, transaction id and
 * mch_id the kind calls for. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "forge.h"
#include "wx_sign.h"
#include "wx_xml.h"

#define KEY IDEMPAY_DEV_KEY

static const client_merchant merchant = { .appid = "wx0000000000000000",
                                          .mch_id = "1900000109",
                                          .key = KEY };

/* Builds t's notification and parses it back into m. */
static void forged(sched_task *t, int64_t fee, wx_msg *m)
{
    char perr[64];
    char *xml = forge_notification_xml(&merchant, t, "s1ab00001xyz", "4200000000000000000000000001",
                                       fee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(m);
    CU_ASSERT_EQUAL(wx_xml_parse(xml, strlen(xml), m, perr, sizeof(perr)), 0);
    free(xml);
}

static void test_wrong_fee_is_signed(void)
{
    sched_task t = { .forge = FORGE_WRONG_FEE, .jitter_seed = 0 };
    wx_msg m;
    forged(&t, 1234, &m);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "total_fee"), "1234");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "out_trade_no"), "s1ab00001xyz");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "mch_id"), "1900000109");
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "sign_type"));
    CU_ASSERT_EQUAL(wx_sign_verify(&m, KEY, WX_SIGN_MD5), 1);
    wx_msg_free(&m);
}

static void test_hmac_when_drawn(void)
{
    sched_task t = { .forge = FORGE_REPLAY_TXN, .jitter_seed = 1u << 7 };
    wx_msg m;
    forged(&t, 100, &m);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "sign_type"), "HMAC-SHA256");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "transaction_id"), "4200000000000000000000000001");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, KEY, WX_SIGN_MD5), 1);
    wx_msg_free(&m);
}

static void test_bad_sign_fails_verification(void)
{
    sched_task t = { .forge = FORGE_BAD_SIGN };
    wx_msg m;
    forged(&t, 100, &m);
    CU_ASSERT_PTR_NOT_NULL(wx_msg_get(&m, "sign"));
    CU_ASSERT_EQUAL(wx_sign_verify(&m, KEY, WX_SIGN_MD5), 0);
    wx_msg_free(&m);
}

static void test_wrong_mch_is_signed(void)
{
    sched_task t = { .forge = FORGE_WRONG_MCH };
    wx_msg m;
    forged(&t, 100, &m);
    CU_ASSERT_STRING_NOT_EQUAL(wx_msg_get(&m, "mch_id"), "1900000109");
    CU_ASSERT_EQUAL(wx_sign_verify(&m, KEY, WX_SIGN_MD5), 1);
    wx_msg_free(&m);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a wrong-fee forgery is signed with that fee", test_wrong_fee_is_signed },
        { "a forgery is signed HMAC-SHA256 when the schedule draws it", test_hmac_when_drawn },
        { "bad signature does not verify", test_bad_sign_fails_verification },
        { "a forgery for another mch_id is correctly signed", test_wrong_mch_is_signed },
    };
    return CU_SUITE_RUN("sim_forge", NULL, NULL, tests);
}
