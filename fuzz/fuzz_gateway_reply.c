/* fuzz_gateway_reply.c - libFuzzer harness for what the service trusts in a
 * gateway reply (unifiedorder / orderquery / refund): wx_xml_parse on the
 * reply body, then app/gateway_reply.c's own acceptance (gateway_reply_trusted:
 * return_code, signature, appid/mch_id; gateway_reply_charge:
 * transaction_id, total_fee) after unifiedorder's result_code SUCCESS.
 * Properties: a verdict is
 * deterministic; a reply re-signed with the merchant key verifies (MD5 and
 * HMAC-SHA256) and survives wx_xml_build -> wx_xml_parse unchanged; changing
 * any signed field, the sign_type or the key makes it fail. The input is the
 * raw reply body. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_reply.h"
#include "harness.h"
#include "money.h"
#include "wx_sign.h"
#include "wx_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the service records a charge from this unifiedorder reply, with
 * its amount in *fee (-1 when the reply carries none). */
static bool reply_reports_charge(const wx_msg *m, int64_t *fee)
{
    gw_result r;
    const char *result = wx_msg_get(m, "result_code");

    gateway_result_init(&r);
    *fee = -1;
    if (gateway_reply_trusted(m, FUZZ_KEY, WX_SIGN_MD5, FUZZ_APPID, FUZZ_MCHID, &r) != 0 ||
        result == NULL || strcmp(result, "SUCCESS") != 0 || gateway_reply_charge(m, &r) != 0)
        return false;
    FUZZ_CHECK(r.transaction_id[0] != '\0' && strlen(r.transaction_id) <= 32);
    *fee = r.total_fee;
    return true;
}

/* Hex digits of the declared type's length, upper case. */
static void check_signature_text(const char *sig, wx_sign_type type)
{
    size_t want = type == WX_SIGN_MD5 ? 32 : 64;
    FUZZ_CHECK(strlen(sig) == want);
    for (size_t i = 0; i < want; i++)
        FUZZ_CHECK((sig[i] >= '0' && sig[i] <= '9') || (sig[i] >= 'A' && sig[i] <= 'F'));
}

/* Re-signs m (type chosen by the input) and checks what a signature must
 * guarantee. pick selects the field to tamper with. */
static void check_signing(wx_msg *m, wx_sign_type type, size_t pick)
{
    char sig[WX_SIGN_HEX_MAX], err[128];

    if (wx_sign_msg(m, FUZZ_KEY, type, 1) != 0)
        return; /* no room for sign / sign_type */
    FUZZ_CHECK(wx_sign_verify(m, FUZZ_KEY, WX_SIGN_MD5) == 1);
    FUZZ_CHECK(wx_sign_verify(m, "another-key-0123456789abcdefABCD", WX_SIGN_MD5) == 0);
    FUZZ_CHECK(wx_sign_compute(m, FUZZ_KEY, type, sig) == 0);
    check_signature_text(sig, type);
    FUZZ_CHECK(strcmp(sig, wx_msg_get(m, "sign")) == 0);

    /* The XML the service would send or receive carries the same fields. */
    char *xml = wx_xml_build(m);
    FUZZ_CHECK(xml != NULL);
    size_t len = strlen(xml);
    if (len <= WX_XML_MAX_BODY) {
        wx_msg back;
        wx_msg_init(&back);
        FUZZ_CHECK(wx_xml_parse(xml, len, &back, err, sizeof(err)) == 0);
        FUZZ_CHECK(fuzz_msg_equal(m, &back));
        FUZZ_CHECK(wx_sign_verify(&back, FUZZ_KEY, WX_SIGN_MD5) == 1);
        wx_msg_free(&back);
    }
    free(xml);

    /* Any change to a signed field breaks the signature. */
    const wx_field *f = &m->field[pick % m->n];
    if (strcmp(f->name, "sign") != 0 && strlen(f->value) < WX_FIELD_MAX_VALUE) {
        char name[WX_FIELD_MAX_NAME + 1];
        char *old = strdup(f->value);
        size_t ol = strlen(old);
        char *changed = malloc(ol + 2);
        FUZZ_CHECK(old != NULL && changed != NULL);
        snprintf(name, sizeof(name), "%s", f->name);
        memcpy(changed, old, ol);
        changed[ol] = ol > 0 && old[ol - 1] == 'x' ? 'y' : 'x';
        changed[ol + 1] = '\0';
        FUZZ_CHECK(wx_msg_set(m, name, changed) == 0);
        /* a changed sign_type names no valid type: refused too */
        FUZZ_CHECK(wx_sign_verify(m, FUZZ_KEY, WX_SIGN_MD5) == 0);
        FUZZ_CHECK(wx_msg_set(m, name, old) == 0);
        FUZZ_CHECK(wx_sign_verify(m, FUZZ_KEY, WX_SIGN_MD5) == 1);
        free(old);
        free(changed);
    }
    /* Claiming the other algorithm fails. */
    if (wx_msg_set(m, "sign_type", type == WX_SIGN_MD5 ? "HMAC-SHA256" : "MD5") == 0)
        FUZZ_CHECK(wx_sign_verify(m, FUZZ_KEY, WX_SIGN_MD5) == 0);
    /* Without a sign nothing verifies. */
    wx_msg_del(m, "sign");
    FUZZ_CHECK(wx_msg_get(m, "sign") == NULL);
    FUZZ_CHECK(wx_sign_verify(m, FUZZ_KEY, WX_SIGN_MD5) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    wx_msg m, again;
    char err[128], err2[128];
    int64_t fee, fee2;

    wx_msg_init(&m);
    wx_msg_init(&again);
    int rc = wx_xml_parse(body, size, &m, err, sizeof(err));
    FUZZ_CHECK(fuzz_terminated(err, sizeof(err)));
    /* Parsing is a function of the bytes alone. */
    FUZZ_CHECK(wx_xml_parse(body, size, &again, err2, sizeof(err2)) == rc);
    FUZZ_CHECK(strcmp(err, err2) == 0);
    if (rc != 0) {
        FUZZ_CHECK(m.n == 0 && err[0] != '\0');
        goto done;
    }
    FUZZ_CHECK(fuzz_msg_equal(&m, &again));
    for (size_t i = 0; i < m.n; i++) {
        FUZZ_CHECK(strlen(m.field[i].name) >= 1 && strlen(m.field[i].name) <= WX_FIELD_MAX_NAME);
        FUZZ_CHECK(strlen(m.field[i].value) <= WX_FIELD_MAX_VALUE);
        FUZZ_CHECK(wx_msg_get(&m, m.field[i].name) == m.field[i].value); /* names are unique */
    }

    bool charged = reply_reports_charge(&m, &fee);
    FUZZ_CHECK(reply_reports_charge(&again, &fee2) == charged && fee == fee2);
    if (charged && fee >= 0) {
        char text[MONEY_STR_MAX];
        int64_t back;
        FUZZ_CHECK(fee >= MONEY_MIN_FEN && fee <= MONEY_MAX_FEN);
        FUZZ_CHECK(money_parse_yuan(money_format(fee, text), &back) == 0 && back == fee);
    }

    if (m.n > 0) {
        wx_sign_type type = size > 0 && (data[size - 1] & 1) ? WX_SIGN_HMAC_SHA256 : WX_SIGN_MD5;
        check_signing(&m, type, size > 0 ? data[0] : 0);
    }
done:
    wx_msg_free(&m);
    wx_msg_free(&again);
    return 0;
}
