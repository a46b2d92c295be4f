/* v3_api.c - APIv3's pipeline: route, draw the faults (as v2 does, for
 * every call that arrives), check the merchant's signature, run the v2
 * flow, sign and send the reply; and /v3/certificates. */
#include "v3_api.h"
#include "clocks.h"
#include "v3_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fcgi_adapter.h"
#include "journal.h"
#include "log.h"
#include "v3_keys.h"
#include "v3_notify.h"
#include "wx3_aead.h"
#include "wx3_sign.h"

#define JSON_TYPE "application/json; charset=utf-8"
/* How far the merchant's timestamp may be from the mock's real clock.
 * WeChat rejects "很久之前发起的请求" without a number; 5 minutes is the
 * window its SDKs apply to replies (wechatpay-axios-plugin's
 * MAXIMUM_CLOCK_OFFSET). */
#define V3_CLOCK_SKEW_S 300
#define MSG_SIGN_ERROR "错误的签名，验签失败"

bool v3_api_path(const char *path)
{
    return strncmp(path, "/v3/", 4) == 0;
}

/* ---- routing ---------------------------------------------------------------- */

static const struct {
    v3_route route;
    const char *method, *prefix, *suffix; /* suffix NULL: the path is exactly prefix */
    api_endpoint ep;
    const char *name; /* the journal's endpoint */
} v3_routes[] = {
    { V3_NATIVE, "POST", "/v3/pay/transactions/native", NULL, API_UNIFIEDORDER, "v3_native" },
    { V3_JSAPI, "POST", "/v3/pay/transactions/jsapi", NULL, API_UNIFIEDORDER, "v3_jsapi" },
    { V3_CLOSE, "POST", "/v3/pay/transactions/out-trade-no/", "/close", API_CLOSEORDER,
      "v3_close" },
    { V3_QUERY_OTN, "GET", "/v3/pay/transactions/out-trade-no/", "", API_ORDERQUERY, "v3_query" },
    { V3_QUERY_ID, "GET", "/v3/pay/transactions/id/", "", API_ORDERQUERY, "v3_query" },
    { V3_REFUND, "POST", "/v3/refund/domestic/refunds", NULL, API_REFUND, "v3_refund" },
    { V3_REFUND_QUERY, "GET", "/v3/refund/domestic/refunds/", "", API_REFUNDQUERY,
      "v3_refundquery" },
    { V3_TRADEBILL, "GET", "/v3/bill/tradebill", NULL, API_DOWNLOADBILL, "v3_tradebill" },
    { V3_BILLFILE, "GET", "/v3/billdownload/file", NULL, API_DOWNLOADBILL, "v3_billfile" },
    { V3_CERTIFICATES, "GET", "/v3/certificates", NULL, API_NONE, "v3_certificates" },
};
#define V3_NROUTES (sizeof(v3_routes) / sizeof(v3_routes[0]))

/* The route of method + path (its key segment into key); -1 when none. */
static int v3_route_of(const char *method, const char *path, char *key, size_t keylen)
{
    for (size_t i = 0; i < V3_NROUTES; i++) {
        size_t pl = strlen(v3_routes[i].prefix);
        if (strcmp(method, v3_routes[i].method) != 0 || strncmp(path, v3_routes[i].prefix, pl) != 0)
            continue;
        if (v3_routes[i].suffix == NULL) {
            if (path[pl] == '\0')
                return (int)i;
            continue;
        }
        const char *seg = path + pl, *end = strchr(seg, '/');
        size_t sl = end != NULL ? (size_t)(end - seg) : strlen(seg);
        const char *rest = seg + sl;
        char raw[210];
        if (sl == 0 || sl >= sizeof(raw) || strcmp(rest, v3_routes[i].suffix) != 0)
            continue;
        memcpy(raw, seg, sl);
        raw[sl] = '\0';
        if (http_path_decode(raw, key, keylen) == 0)
            return (int)i;
    }
    return -1;
}

/* ---- replies ---------------------------------------------------------------- */

/* The four signed headers of body into resp; -1 when signing failed. */
static int v3_sign_headers(mock_app *app, http_response *resp, const char *body, size_t len)
{
    faults_config cfg;
    v3_signed s;

    faults_get(&app->faults, &cfg);
    if (v3_keys_sign(app->v3, cfg.v3_platform_rotation, body, len, &s) != 0)
        return -1;
    int rc = http_response_header(resp, "Wechatpay-Nonce", s.nonce) != 0 ||
                     http_response_header(resp, "Wechatpay-Signature", s.signature) != 0 ||
                     http_response_header(resp, "Wechatpay-Timestamp", s.timestamp) != 0 ||
                     http_response_header(resp, "Wechatpay-Serial", s.serial) != 0 ||
                     http_response_header(resp, "Wechatpay-Signature-Type", WX3_AUTH_SCHEMA) != 0
                 ? -1
                 : 0;
    v3_signed_free(&s);
    return rc;
}

void v3_reply(v3_call *vc, int status, json_t *body)
{
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    http_response *resp = vc->c.resp;

    json_decref(body);
    vc->answered = true;
    api_copy(vc->c.je.reply, sizeof(vc->c.je.reply), "json");
    if (body != NULL && text == NULL) {
        http_response_set(resp, 500, "text/plain", "reply failed\n", 13);
        return;
    }
    size_t len = text != NULL ? strlen(text) : 0;
    if (http_response_set(resp, status, JSON_TYPE, text != NULL ? text : "", len) != 0 ||
        v3_sign_headers(vc->c.app, resp, text != NULL ? text : "", len) != 0) {
        log_msg(LOG_ERROR, "v3: cannot build or sign a reply");
        http_response_set(resp, 500, "text/plain", "reply failed\n", 13);
    }
    free(text);
}

void v3_error(v3_call *vc, int status, const char *code, const char *message)
{
    journal_entry *je = &vc->c.je;
    if (je->result_code[0] == '\0') { /* refused before any flow ran */
        api_copy(je->return_code, sizeof(je->return_code), "FAIL");
        api_copy(je->return_msg, sizeof(je->return_msg), message);
    }
    api_copy(je->err_code, sizeof(je->err_code), code);
    v3_reply(vc, status, json_pack("{s:s, s:s}", "code", code, "message", message));
}

/* ---- the merchant's signature ------------------------------------------------- */

/* Two certificate serials name the same number: hex, any case, leading
 * zeros aside (openssl prints 05AB..., Python's format() 5AB...). */
static bool v3_same_serial(const char *a, const char *b)
{
    while (*a == '0')
        a++;
    while (*b == '0')
        b++;
    return strcasecmp(a, b) == 0;
}

/* true when the request carries a valid merchant signature; else 401. */
static bool v3_authorized(v3_call *vc)
{
    mock_app *app = vc->c.app;
    const http_request *req = vc->req;
    const char *uri = fcgi_adapter_param("REQUEST_URI");
    char why[192], urlbuf[2300];
    wx3_auth a;

    if (wx3_auth_parse(fcgi_adapter_param("HTTP_AUTHORIZATION"), &a, why, sizeof(why)) != 0)
        goto refused;
    if (strcmp(a.mchid, app->creds.mch_id) != 0 ||
        !v3_same_serial(a.serial_no, app->v3->merchant.serial)) {
        snprintf(why, sizeof(why), "mchid or serial_no is not the merchant's certificate's");
        goto refused;
    }
    char *end = NULL;
    long long ts = strtoll(a.timestamp, &end, 10), now = (long long)time(NULL);
    if (end == a.timestamp || *end != '\0' || ts < now - V3_CLOCK_SKEW_S ||
        ts > now + V3_CLOCK_SKEW_S) {
        snprintf(why, sizeof(why), "timestamp %s is more than %d s from now", a.timestamp,
                 V3_CLOCK_SKEW_S);
        goto refused;
    }
    if (uri == NULL) { /* no REQUEST_URI: the path and query as parsed */
        snprintf(urlbuf, sizeof(urlbuf), "%s%s%s", req->path, req->query[0] ? "?" : "", req->query);
        uri = urlbuf;
    }
    char *msg = wx3_request_message(req->method, uri, a.timestamp, a.nonce_str, req->body,
                                    req->body_len);
    int ok = msg != NULL && wx3_verify(app->v3->merchant.pub, msg, strlen(msg), a.signature) == 0;
    free(msg);
    if (ok)
        return true;
    snprintf(why, sizeof(why), "the signature does not verify with the merchant's certificate");
refused:
    log_msg(LOG_INFO, "%s: 401 SIGN_ERROR: %s", req->path, why);
    v3_error(vc, 401, "SIGN_ERROR", MSG_SIGN_ERROR);
    return false;
}

/* ---- /v3/certificates ---------------------------------------------------------- */

static json_t *v3_cert_entry(const v3_keys *k, int i)
{
    char nonce[13], from[V3_TIME_BUF], to[V3_TIME_BUF];
    char *ct = NULL;
    const wx3_cert *c = &k->platform.cert[i];

    if (wx3_nonce(nonce, sizeof(nonce), 12) != 0 ||
        wx3_aead_encrypt(k->platform.apiv3_key, nonce, "certificate", c->pem, strlen(c->pem),
                         &ct) != 0)
        return NULL;
    v3_time(c->not_before, from);
    v3_time(c->not_after, to);
    json_t *o = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "serial_no", c->serial,
                          "effective_time", from, "expire_time", to, "encrypt_certificate",
                          "algorithm", "AEAD_AES_256_GCM", "nonce", nonce, "associated_data",
                          "certificate", "ciphertext", ct);
    free(ct);
    return o;
}

static void v3_certificates(v3_call *vc)
{
    faults_config cfg;
    json_t *data = json_array();

    faults_get(&vc->c.app->faults, &cfg);
    int n = v3_keys_served(vc->c.app->v3, cfg.v3_platform_rotation);
    for (int i = 0; data != NULL && i < n; i++) {
        json_t *e = v3_cert_entry(vc->c.app->v3, i);
        if (e == NULL || json_array_append_new(data, e) != 0) {
            json_decref(data);
            data = NULL;
        }
    }
    if (data == NULL) {
        v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
        return;
    }
    api_copy(vc->c.je.return_code, sizeof(vc->c.je.return_code), "SUCCESS");
    v3_reply(vc, 200, json_pack("{s:o}", "data", data));
}

/* ---- one call ------------------------------------------------------------------ */

/* The faults of a valid call of a non-charging endpoint: true when one was
 * applied (nothing done; the reply is set). */
static bool v3_endpoint_fault(v3_call *vc, api_endpoint ep)
{
    if (ep == API_UNIFIEDORDER) /* the flow applies its own */
        return false;
    if (vc->c.fd.kind == FAULT_RESET) {
        log_msg(LOG_INFO, "%s: fault reset (nothing done)", vc->req->path);
        api_cut(&vc->c);
        vc->answered = true;
        return true;
    }
    if (vc->c.fd.kind == FAULT_ERROR) {
        log_msg(LOG_INFO, "%s: fault SYSTEM_ERROR (nothing done)", vc->req->path);
        v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
        return true;
    }
    return false;
}

/* Parses the JSON body of a POST (400 PARAM_ERROR when it is not one
 * object); true when the call may go on. */
static bool v3_parse_body(v3_call *vc)
{
    if (strcmp(vc->req->method, "POST") != 0)
        return true;
    if (!vc->req->body_too_large)
        vc->body = http_json_parse_object(vc->req->body, vc->req->body_len);
    if (vc->body != NULL)
        return true;
    v3_error(vc, 400, "PARAM_ERROR", "请求体不是一个JSON对象 (the body is not one JSON object)");
    return false;
}

/* The call after routing: faults drawn, latency, signature, fields, the
 * endpoint's faults, the flow, the reply. */
static void v3_serve(v3_call *vc, api_endpoint ep)
{
    bool parsed = v3_parse_body(vc);
    const char *otn = parsed ? v3_map_peek_otn(vc) : "";
    api_copy(vc->c.je.out_trade_no, sizeof(vc->c.je.out_trade_no), otn); /* for the journal */
    if (ep != API_NONE) {
        api_draw_otn(&vc->c, ep, otn);
        clocks_sleep_ms(vc->c.fd.delay_ms);
    }
    if (!parsed || !v3_authorized(vc))
        return;
    if (vc->route == V3_CERTIFICATES) {
        v3_certificates(vc);
        return;
    }
    if (!v3_map_request(vc) || v3_endpoint_fault(vc, ep))
        return;
    api_run(&vc->c, ep);
    if (strcmp(vc->c.je.reply, "reset") == 0 || strcmp(vc->c.je.reply, "withheld") == 0) {
        vc->answered = true; /* the same cut reply as v2's */
        return;
    }
    v3_map_reply(vc);
}

void v3_api_handle(mock_app *app, ledger *l, const http_request *req, http_response *resp)
{
    v3_call vc;
    int r;

    memset(&vc, 0, sizeof(vc));
    wx_msg_init(&vc.c.m);
    wx_msg_init(&vc.c.out.extra);
    vc.c.app = app;
    vc.c.l = l;
    vc.c.resp = resp;
    vc.c.v3 = true;
    vc.c.v.sign_type = WX_SIGN_MD5;
    vc.req = req;
    if (app->v3 == NULL) {
        http_response_error(
            resp, 404, "NOT_FOUND",
            "APIv3 is not configured on this mock "
            "(IDEMPAY_WX_V3_CERT, IDEMPAY_MOCK_V3_PLATFORM_CERT, IDEMPAY_WX_APIV3_KEY)");
        return;
    }
    r = v3_route_of(req->method, req->path, vc.key, sizeof(vc.key));
    journal_entry_begin(&vc.c.je, false);
    api_copy(vc.c.je.fault, sizeof(vc.c.je.fault), "none");
    api_copy(vc.c.je.endpoint, sizeof(vc.c.je.endpoint), r >= 0 ? v3_routes[r].name : "v3_unknown");
    if (r < 0) {
        v3_error(&vc, 404, "NOT_FOUND", "no such APIv3 endpoint on the mock gateway");
    } else {
        vc.route = v3_routes[r].route;
        v3_serve(&vc, v3_routes[r].ep);
        if (!vc.answered)
            v3_error(&vc, 500, "SYSTEM_ERROR", "系统错误");
    }
    if (!vc.c.journaled) {
        vc.c.je.latency_ms = journal_elapsed_ms(&vc.c.je);
        journal_append(app->journal, &vc.c.je, true);
    }
    json_decref(vc.body);
    free(vc.c.out.statement);
    wx_msg_free(&vc.c.m);
    wx_msg_free(&vc.c.out.extra);
}
