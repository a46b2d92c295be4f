/* fuzz_notify.c - libFuzzer harness for WeChat payment-result notifications
 * up to the database: callback_verify (size, strict XML, result codes,
 * merchant, signature, fields) and callback_check_order, cross-checked with
 * wx_xml_parse, wx_sign_verify and money_parse_fen. Every parsable input is
 * also re-signed with the merchant key and fed back, so the checks behind
 * the signature are fuzzed too. The input is the raw request body. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callback_verify.h"
#include "config.h"
#include "harness.h"
#include "money.h"
#include "order_no.h"
#include "wx_sign.h"
#include "wx_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const app_config *fuzz_config(void)
{
    static app_config cfg;
    static int ready;

    if (!ready) {
        memset(&cfg, 0, sizeof(cfg));
        snprintf(cfg.appid, sizeof(cfg.appid), "%s", FUZZ_APPID);
        snprintf(cfg.mch_id, sizeof(cfg.mch_id), "%s", FUZZ_MCHID);
        snprintf(cfg.key, sizeof(cfg.key), "%s", FUZZ_KEY);
        ready = 1;
    }
    return &cfg;
}

/* What a verdict promises about the notification it accepted or refused. */
static void check_verdict(const app_config *cfg, const wx_msg *m, int parsed, callback_verdict v,
                          const callback_notification *n)
{
    FUZZ_CHECK(fuzz_terminated(n->reason, sizeof(n->reason)));
    FUZZ_CHECK(fuzz_terminated(n->order_no, sizeof(n->order_no)));
    FUZZ_CHECK(fuzz_terminated(n->transaction_id, sizeof(n->transaction_id)));
    FUZZ_CHECK(n->order_no[0] == '\0' || order_no_valid(n->order_no));
    FUZZ_CHECK(callback_verdict_metric(v) == -1 ? v == CB_VERDICT_OK : v != CB_VERDICT_OK);
    if (!parsed) {
        FUZZ_CHECK(v == CB_VERDICT_MALFORMED);
        FUZZ_CHECK(n->reason[0] != '\0');
        return;
    }
    if (v != CB_VERDICT_OK) {
        FUZZ_CHECK(n->reason[0] != '\0');
        return;
    }

    /* Accepted: everything the apply step relies on holds. */
    int64_t fee;
    const char *txn = wx_msg_get(m, "transaction_id");
    FUZZ_CHECK(n->reason[0] == '\0');
    FUZZ_CHECK(wx_sign_verify(m, cfg->key, WX_SIGN_MD5) == 1);
    FUZZ_CHECK(strcmp(wx_msg_get(m, "return_code"), "SUCCESS") == 0);
    FUZZ_CHECK(strcmp(wx_msg_get(m, "result_code"), "SUCCESS") == 0);
    FUZZ_CHECK(strcmp(wx_msg_get(m, "appid"), cfg->appid) == 0);
    FUZZ_CHECK(strcmp(wx_msg_get(m, "mch_id"), cfg->mch_id) == 0);
    FUZZ_CHECK(order_no_valid(n->order_no));
    FUZZ_CHECK(strcmp(n->order_no, wx_msg_get(m, "out_trade_no")) == 0);
    FUZZ_CHECK(txn != NULL && txn[0] != '\0' && strcmp(n->transaction_id, txn) == 0);
    FUZZ_CHECK(money_parse_fen(wx_msg_get(m, "total_fee"), &fee) == 0);
    FUZZ_CHECK(fee == n->total_fee && fee >= MONEY_MIN_FEN && fee <= MONEY_MAX_FEN);

    /* The order check compares amounts by value. */
    char amount[MONEY_STR_MAX];
    callback_notification c = *n;
    FUZZ_CHECK(callback_check_order(&c, 1, money_format(n->total_fee, amount)) == CB_VERDICT_OK);
    c = *n;
    FUZZ_CHECK(callback_check_order(&c, 0, amount) == CB_VERDICT_UNKNOWN_ORDER);
    FUZZ_CHECK(c.reason[0] != '\0');
    c = *n;
    money_format(n->total_fee == MONEY_MAX_FEN ? 1 : n->total_fee + 1, amount);
    FUZZ_CHECK(callback_check_order(&c, 1, amount) == CB_VERDICT_AMOUNT);
}

/* Signs the parsed fields with the merchant key, rebuilds the XML and
 * checks that it parses back to the same fields and passes the signature
 * check of callback_verify. */
static void check_resigned(const app_config *cfg, wx_msg *m)
{
    wx_sign_type type;
    char err[128];

    if (wx_sign_type_of(m, WX_SIGN_MD5, &type) != 0 || wx_sign_msg(m, cfg->key, type, 0) != 0)
        return; /* unknown sign_type, or no room for the sign field */
    char *xml = wx_xml_build(m);
    FUZZ_CHECK(xml != NULL);
    size_t len = strlen(xml);
    if (len <= WX_XML_MAX_BODY) {
        wx_msg back;
        callback_notification n;
        wx_msg_init(&back);
        FUZZ_CHECK(wx_xml_parse(xml, len, &back, err, sizeof(err)) == 0);
        FUZZ_CHECK(fuzz_msg_equal(m, &back));
        FUZZ_CHECK(wx_sign_verify(&back, cfg->key, WX_SIGN_MD5) == 1);
        callback_verdict v = callback_verify(cfg, xml, len, 0, &n);
        FUZZ_CHECK(v != CB_VERDICT_SIGNATURE);
        check_verdict(cfg, &back, 1, v, &n);
        wx_msg_free(&back);
    }
    free(xml);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const app_config *cfg = fuzz_config();
    const char *body = (const char *)data;
    callback_notification n;
    wx_msg m;
    char err[128];

    callback_verdict v = callback_verify(cfg, body, size, 0, &n);
    wx_msg_init(&m);
    int parsed = wx_xml_parse(body, size, &m, err, sizeof(err)) == 0;
    FUZZ_CHECK(fuzz_terminated(err, sizeof(err)));
    FUZZ_CHECK(parsed ? m.n <= WX_MSG_MAX_FIELDS : m.n == 0 && err[0] != '\0');
    check_verdict(cfg, &m, parsed, v, &n);

    /* A body the adapter flagged as too large is refused whatever it holds. */
    FUZZ_CHECK(callback_verify(cfg, body, size, 1, &n) == CB_VERDICT_MALFORMED);

    if (parsed)
        check_resigned(cfg, &m);
    wx_msg_free(&m);
    return 0;
}
