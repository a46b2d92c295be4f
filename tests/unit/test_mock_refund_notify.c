/* test_mock_refund_notify.c - CUnit suite for the database-free parts of
 * the mock's refunds: the refund result notification (refund_notify: the
 * inner <root> document, the outer document, req_info decrypting back to
 * it) and the client-certificate check (refund_flow_cert_ok). */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <stdlib.h>
#include <string.h>

#include "mock.h"
#include "refund_flow.h"
#include "refund_notify.h"
#include "wx_refund_info.h"
#include "wx_xml.h"

static const mock_creds creds = { "wx0000000000000000", "1900000109", MOCK_DEV_KEY, WX_SIGN_MD5 };

static void record(refund_record *r, const char *status)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->out_refund_no, sizeof(r->out_refund_no), "R-0001");
    snprintf(r->refund_id, sizeof(r->refund_id), "5030202612020000000000000001");
    snprintf(r->transaction_id, sizeof(r->transaction_id), "4200202612020000000000000001");
    snprintf(r->out_trade_no, sizeof(r->out_trade_no), "ORDER-0001");
    r->total_fee = 1230;
    r->refund_fee = 230;
    snprintf(r->status, sizeof(r->status), "%s", status);
    snprintf(r->accepted_at, sizeof(r->accepted_at), "2026-12-02 10:00:00");
    snprintf(r->ended_at, sizeof(r->ended_at), "2026-12-02 10:20:00");
}

/* Parses "<root>...</root>" as WeChat's flat XML (renamed to <xml>). */
static int parse_root(const char *root, wx_msg *m)
{
    size_t n = strlen(root);
    char err[128];
    if (n < 13 || strncmp(root, "<root>", 6) != 0 || strcmp(root + n - 7, "</root>") != 0)
        return -1;
    char *doc = malloc(n);
    if (doc == NULL)
        return -1;
    memcpy(doc, "<xml>", 5);
    memcpy(doc + 5, root + 6, n - 13);
    memcpy(doc + 5 + n - 13, "</xml>", 7);
    int rc = wx_xml_parse(doc, strlen(doc), m, err, sizeof(err));
    free(doc);
    return rc;
}

static void test_inner_document(void)
{
    refund_record r;
    wx_msg m;
    record(&r, "SUCCESS");
    char *inner = refund_notify_inner_xml(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(parse_root(inner, &m), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "refund_status"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "out_refund_no"), "R-0001");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "refund_fee"), "230");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "settlement_refund_fee"), "230");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "total_fee"), "1230");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "success_time"), "2026-12-02 10:20:00");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "refund_request_source"), "API");
    CU_ASSERT_PTR_NOT_NULL(wx_msg_get(&m, "refund_recv_accout"));
    wx_msg_free(&m);
    free(inner);

    /* Not SUCCESS: no success_time, nothing settled. */
    record(&r, "REFUNDCLOSE");
    inner = refund_notify_inner_xml(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(parse_root(inner, &m), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "refund_status"), "REFUNDCLOSE");
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "success_time"));
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "settlement_refund_fee"), "0");
    wx_msg_free(&m);
    free(inner);
}

static void test_outer_document_decrypts(void)
{
    refund_record r;
    wx_msg outer, inner_m;
    char err[128], *plain = NULL;
    size_t len = 0;

    record(&r, "CHANGE");
    char *xml = refund_notify_build_xml(&r, &creds, "noncenoncenonce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    wx_msg_init(&outer);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &outer, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&outer, "return_code"), "SUCCESS");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&outer, "appid"), creds.appid);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&outer, "mch_id"), creds.mch_id);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&outer, "nonce_str"), "noncenoncenonce");
    CU_ASSERT_PTR_NULL(wx_msg_get(&outer, "sign"));          /* WeChat does not sign it */
    CU_ASSERT_PTR_NULL(wx_msg_get(&outer, "refund_status")); /* only inside req_info */
    CU_ASSERT_EQUAL_FATAL(wx_refund_info_decrypt(creds.key, wx_msg_get(&outer, "req_info"), &plain,
                                                 &len),
                          0);
    char *inner = refund_notify_inner_xml(&r);
    CU_ASSERT_STRING_EQUAL(plain, inner);
    wx_msg_init(&inner_m);
    CU_ASSERT_EQUAL(parse_root(plain, &inner_m), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&inner_m, "refund_status"), "CHANGE");
    /* Another merchant key cannot read it. */
    char *other = NULL;
    if (wx_refund_info_decrypt("another-merchant-key", wx_msg_get(&outer, "req_info"), &other,
                               &len) == 0) {
        CU_ASSERT(strcmp(other, inner) != 0);
        free(other);
    }
    wx_msg_free(&inner_m);
    wx_msg_free(&outer);
    free(inner);
    free(plain);
    free(xml);
}

static void test_client_certificate(void)
{
    mock_app app;
    faults_config cfg;
    memset(&app, 0, sizeof(app));
    app.creds = creds;
    faults_config_defaults(&cfg);
    cfg.require_client_cert = true;
    faults_init(&app.faults, &cfg);

    CU_ASSERT_TRUE(refund_flow_cert_ok(&app, "SUCCESS", "CN=1900000109,O=idempay test merchant"));
    CU_ASSERT_TRUE(refund_flow_cert_ok(&app, "SUCCESS", "O=idempay test merchant,CN=1900000109"));
    CU_ASSERT_TRUE(refund_flow_cert_ok(&app, "SUCCESS", "/O=idempay test merchant/CN=1900000109"));
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, NULL, NULL));   /* plain HTTP */
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "NONE", NULL)); /* no certificate */
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "FAILED:unable to verify", "CN=1900000109"));
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "SUCCESS", "CN=1900000999"));  /* another merchant */
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "SUCCESS", "CN=19000001090")); /* a longer CN */
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "SUCCESS", "OU=CN=1900000109")); /* not the CN */
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "SUCCESS", NULL));
    CU_ASSERT_FALSE(refund_flow_cert_ok(&app, "success", "CN=1900000109"));

    cfg.require_client_cert = false;
    faults_set(&app.faults, &cfg, 0);
    CU_ASSERT_TRUE(refund_flow_cert_ok(&app, NULL, NULL));
}

int main(void)
{
    static const cu_test tests[] = {
        { "the inner document has the refund's fields", test_inner_document },
        { "a refund notification's req_info decrypts to the inner document",
          test_outer_document_decrypts },
        { "a client certificate is verified and its CN must be the mch_id",
          test_client_certificate },
    };
    return CU_SUITE_RUN("mock_refund_notify", NULL, NULL, tests);
}
