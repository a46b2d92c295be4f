/* fuzz_refund_notify.c - libFuzzer harness for the refund result
 * notification (app/refund_notify_verify.c), outside input the service
 * receives on POST /api/pay/callback/wechat/refund.
 * The first byte chooses: odd - the rest is a whole notification body;
 * even - the rest is the plain <root> message, encrypted under the
 * development key into a well-formed envelope, so the fuzzer reaches the
 * inner checks. Properties: never a crash; a verified notification has a
 * well-formed out_refund_no and transaction_id, a known refund_status and a
 * positive refund_fee; a refused one says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "harness.h"
#include "refund_notify_verify.h"
#include "wx_refund_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void verify(const app_config *cfg, const char *body, size_t len)
{
    refund_notification n;
    if (refund_notify_verify(cfg, body, len, 0, &n) == 0) {
        FUZZ_CHECK(n.out_refund_no[0] != '\0' && n.transaction_id[0] != '\0');
        FUZZ_CHECK(!strcmp(n.refund_status, "SUCCESS") || !strcmp(n.refund_status, "REFUNDCLOSE") ||
                   !strcmp(n.refund_status, "CHANGE"));
        FUZZ_CHECK(n.refund_fee > 0);
        FUZZ_CHECK(n.reason[0] == '\0');
    } else {
        FUZZ_CHECK(n.reason[0] != '\0');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static app_config cfg;
    char *enc = NULL;

    if (cfg.key[0] == '\0') {
        snprintf(cfg.appid, sizeof(cfg.appid), "%s", FUZZ_APPID);
        snprintf(cfg.mch_id, sizeof(cfg.mch_id), "%s", FUZZ_MCHID);
        snprintf(cfg.key, sizeof(cfg.key), "%s", FUZZ_KEY);
    }
    if (size < 1 || size > 16384)
        return 0;
    if (data[0] & 1) {
        char *body = fuzz_text(data + 1, size - 1);
        verify(&cfg, body, size - 1);
        free(body);
        return 0;
    }
    if (wx_refund_info_encrypt(FUZZ_KEY, (const char *)data + 1, size - 1, &enc) != 0)
        return 0;
    wx_msg m;
    wx_msg_init(&m);
    if (wx_msg_set(&m, "return_code", "SUCCESS") == 0 && wx_msg_set(&m, "appid", FUZZ_APPID) == 0 &&
        wx_msg_set(&m, "mch_id", FUZZ_MCHID) == 0 && wx_msg_set(&m, "req_info", enc) == 0) {
        char *xml = wx_xml_build(&m);
        if (xml != NULL)
            verify(&cfg, xml, strlen(xml));
        free(xml);
    }
    wx_msg_free(&m);
    free(enc);
    return 0;
}
