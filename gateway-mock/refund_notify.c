/* refund_notify.c - the refund result notification: the inner <root>
 * document built through wx_xml (CDATA values), then encrypted. */
#include "refund_notify.h"

#include <stdlib.h>
#include <string.h>

#include "wx_refund_info.h"
#include "wx_xml.h"

/* Where the mock's refunds go and come from (WeChat's values). */
#define RECV_ACCOUNT "支付用户零钱"
#define REFUND_ACCOUNT "REFUND_SOURCE_UNSETTLED_FUNDS"

char *refund_notify_inner_xml(const refund_record *r)
{
    wx_msg m;
    char *xml = NULL, *root = NULL;
    bool success = strcmp(r->status, "SUCCESS") == 0;
    const wx_pair fields[] = {
        WX_TEXT("transaction_id", r->transaction_id),
        WX_TEXT("out_trade_no", r->out_trade_no),
        WX_TEXT("refund_id", r->refund_id),
        WX_TEXT("out_refund_no", r->out_refund_no),
        WX_NUM("total_fee", r->total_fee),
        WX_NUM("settlement_total_fee", r->total_fee),
        WX_NUM("refund_fee", r->refund_fee),
        WX_NUM("settlement_refund_fee", success ? r->refund_fee : 0),
        WX_TEXT("refund_status", r->status),
        WX_TEXT("success_time", success ? r->ended_at : NULL),
        WX_TEXT("refund_recv_accout", RECV_ACCOUNT),
        WX_TEXT("refund_account", REFUND_ACCOUNT),
        WX_TEXT("refund_request_source", "API"),
    };

    wx_msg_init(&m);
    if (WX_MSG_SET_PAIRS(&m, fields) != 0 || (xml = wx_xml_build(&m)) == NULL)
        goto done;
    /* <xml>...</xml> becomes <root>...</root>, as WeChat names it. */
    size_t n = strlen(xml);
    if (n < 11 || strncmp(xml, "<xml>", 5) != 0 || strcmp(xml + n - 6, "</xml>") != 0)
        goto done;
    root = malloc(n + 3);
    if (root == NULL)
        goto done;
    memcpy(root, "<root>", 6);
    memcpy(root + 6, xml + 5, n - 11);
    memcpy(root + 6 + n - 11, "</root>", 8);
done:
    free(xml);
    wx_msg_free(&m);
    return root;
}

char *refund_notify_build_xml(const refund_record *r, const mock_creds *creds, const char *nonce)
{
    wx_msg m;
    char *inner = refund_notify_inner_xml(r), *req_info = NULL, *xml = NULL;

    wx_msg_init(&m);
    if (inner == NULL || wx_refund_info_encrypt(creds->key, inner, strlen(inner), &req_info) != 0)
        goto done;
    const wx_pair fields[] = {
        WX_TEXT("return_code", "SUCCESS"), WX_TEXT("appid", creds->appid),
        WX_TEXT("mch_id", creds->mch_id),  WX_TEXT("nonce_str", nonce),
        WX_TEXT("req_info", req_info),
    };
    if (WX_MSG_SET_PAIRS(&m, fields) == 0)
        xml = wx_xml_build(&m);
done:
    free(inner);
    free(req_info);
    wx_msg_free(&m);
    return xml;
}
