/* refund_notify_verify.c - a refund notification checked without any I/O
 * (see refund_notify_verify.h). The decrypted plain text is wiped before it
 * is freed. */
#include "refund_notify_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "text_token.h"
#include "wx_refund_info.h"
#include "wx_xml.h"

static void rn_reason(refund_notification *n, const char *why)
{
    snprintf(n->reason, sizeof(n->reason), "%s", why);
}

/* Copies a field of [0-9A-Za-z_|*@-], 1..cap-1 long; -1 otherwise. */
static int rn_field(char *dst, size_t cap, const char *v)
{
    if (cap == 0 || !text_token_valid(v, 1, cap - 1, "_-|*@"))
        return -1;
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

/* WeChat names req_info's root <root>; wx_xml_parse reads <xml> messages:
 * "<root>...</root>" (trailing blanks allowed) is rewritten in place to
 * "<xml> ...</xml>  " (same length). Returns 0, or -1 for another root. */
static int rn_root_to_xml(char *plain, size_t len)
{
    while (len > 0 && (plain[len - 1] == ' ' || plain[len - 1] == '\n' || plain[len - 1] == '\r' ||
                       plain[len - 1] == '\t'))
        len--;
    if (len < 13 || memcmp(plain, "<root>", 6) != 0 || memcmp(plain + len - 7, "</root>", 7) != 0)
        return -1;
    memcpy(plain, "<xml> ", 6);
    memcpy(plain + len - 7, "</xml>  ", 7);
    return 0;
}

/* The decrypted req_info's fields into n. 0 or -1 (n->reason). */
static int rn_inner(char *plain, size_t len, refund_notification *n)
{
    wx_msg m;
    char err[128];
    int64_t fee = 0;
    int rc = -1;
    const char *status;

    wx_msg_init(&m);
    if (rn_root_to_xml(plain, len) != 0 || wx_xml_parse(plain, len, &m, err, sizeof(err)) != 0) {
        rn_reason(n, "req_info is not a valid XML message");
        goto done;
    }
    status = wx_msg_get(&m, "refund_status");
    if (rn_field(n->out_refund_no, sizeof(n->out_refund_no), wx_msg_get(&m, "out_refund_no")) ||
        rn_field(n->transaction_id, sizeof(n->transaction_id), wx_msg_get(&m, "transaction_id"))) {
        rn_reason(n, "req_info without a valid out_refund_no or transaction_id");
        goto done;
    }
    if (status == NULL ||
        (strcmp(status, "SUCCESS") && strcmp(status, "REFUNDCLOSE") && strcmp(status, "CHANGE"))) {
        rn_reason(n, "req_info refund_status is not SUCCESS, REFUNDCLOSE or CHANGE");
        goto done;
    }
    snprintf(n->refund_status, sizeof(n->refund_status), "%s", status);
    if (money_parse_fen(wx_msg_get(&m, "refund_fee") ? wx_msg_get(&m, "refund_fee") : "", &fee)) {
        rn_reason(n, "req_info refund_fee is not an amount in fen");
        goto done;
    }
    n->refund_fee = fee;
    if (rn_field(n->refund_id, sizeof(n->refund_id), wx_msg_get(&m, "refund_id")) != 0)
        n->refund_id[0] = '\0';
    rc = 0;
done:
    wx_msg_free(&m);
    return rc;
}

int refund_notify_verify(const app_config *cfg, const char *body, size_t len, int too_large,
                         refund_notification *out)
{
    wx_msg m;
    char err[128];
    char *plain = NULL;
    size_t plain_len = 0;
    int rc = -1;
    const char *appid, *mch;

    memset(out, 0, sizeof(*out));
    wx_msg_init(&m);
    if (too_large || len > WX_XML_MAX_BODY || wx_xml_parse(body, len, &m, err, sizeof(err)) != 0) {
        rn_reason(out, "malformed notification");
        goto done;
    }
    if (strcmp(wx_msg_get(&m, "return_code") ? wx_msg_get(&m, "return_code") : "", "SUCCESS")) {
        rn_reason(out, "return_code is not SUCCESS");
        goto done;
    }
    appid = wx_msg_get(&m, "appid");
    mch = wx_msg_get(&m, "mch_id");
    if (appid == NULL || mch == NULL || strcmp(appid, cfg->appid) || strcmp(mch, cfg->mch_id)) {
        rn_reason(out, "appid or mch_id is not ours");
        goto done;
    }
    if (wx_msg_get(&m, "req_info") == NULL ||
        wx_refund_info_decrypt(cfg->key, wx_msg_get(&m, "req_info"), &plain, &plain_len) != 0) {
        rn_reason(out, "req_info does not decrypt under our key");
        goto done;
    }
    rc = rn_inner(plain, plain_len, out);
done:
    if (plain != NULL) {
        memset(plain, 0, plain_len);
        free(plain);
    }
    wx_msg_free(&m);
    return rc;
}
