/* payer.c - the customer's payment code and the mock's payer API (payer.h). */
#include "payer.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const payer_flow_names[FLOW_COUNT] = { "MICROPAY", "NATIVE", "JSAPI" };

static const char *const payer_behaviour_names[PB_COUNT] = {
    "-",     "once",    "twice",      "late",         "after-close",
    "stale", "abandon", "into-close", "across-close", "reload"
};

const char *payer_behaviour_name(int b)
{
    return b > 0 && b < PB_COUNT ? payer_behaviour_names[b] : "-";
}

const char *payer_flow_name(int flow)
{
    return flow >= 0 && flow < FLOW_COUNT ? payer_flow_names[flow] : "?";
}

char *payer_auth_code(const char *order_no, char *out)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 */
    for (const unsigned char *p = (const unsigned char *)order_no; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    /* "1" + a digit 0-5 (prefix 10-15), then 16 digits. */
    snprintf(out, PAYER_AUTH_CODE_LEN + 1, "1%u%016" PRIu64, (unsigned)(h % 6u),
             (uint64_t)((h / 6u) % 10000000000000000ull));
    return out;
}

char *payer_openid(int64_t user_id, char *out, size_t len)
{
    snprintf(out, len, "osim%" PRId64, user_id);
    return out;
}

int payer_request_json(const payer_request *req, char *out, size_t len)
{
    int has_prepay = req->prepay_id != NULL && req->prepay_id[0];
    int has_url = req->code_url != NULL && req->code_url[0];
    int rc = -1;
    if (has_prepay == has_url || len == 0)
        return -1;
    json_t *o = json_object();
    if (o == NULL)
        return -1;
    if (json_object_set_new(o, has_prepay ? "prepay_id" : "code_url",
                            json_string(has_prepay ? req->prepay_id : req->code_url)) < 0 ||
        (req->openid != NULL && req->openid[0] &&
         json_object_set_new(o, "openid", json_string(req->openid)) < 0) ||
        (req->delay_ms > 0 &&
         json_object_set_new(o, "delay_ms", json_integer((json_int_t)req->delay_ms)) < 0))
        goto done;
    size_t n = json_dumpb(o, out, len - 1, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (n > 0 && n < len) {
        out[n] = '\0';
        rc = (int)n;
    }
done:
    json_decref(o);
    return rc;
}

/* Copies the string member key of o into out ("" when absent or too long). */
static void payer_str(json_t *o, const char *key, char *out, size_t len)
{
    const char *v = json_string_value(json_object_get(o, key));
    out[0] = '\0';
    if (v != NULL && strlen(v) < len)
        memcpy(out, v, strlen(v) + 1);
}

void payer_reply_read(long http_code, const char *body, size_t len, payer_reply *out)
{
    memset(out, 0, sizeof(*out));
    out->result = PAYER_UNKNOWN;
    if (http_code == 404) {
        out->result = PAYER_NO_API;
        snprintf(out->err_code, sizeof(out->err_code), "no payer API");
        return;
    }
    json_t *j = http_code == 200 && body != NULL ? json_loadb(body, len, 0, NULL) : NULL;
    const char *result = json_string_value(json_object_get(j, "result"));
    payer_str(j, "transaction_id", out->transaction_id, sizeof(out->transaction_id));
    payer_str(j, "out_trade_no", out->out_trade_no, sizeof(out->out_trade_no));
    payer_str(j, "err_code", out->err_code, sizeof(out->err_code));
    if (result != NULL && strcmp(result, "SUCCESS") == 0 && out->transaction_id[0]) {
        out->result = PAYER_PAID;
    } else if (result != NULL && strcmp(result, "FAIL") == 0) {
        out->result = PAYER_REFUSED;
        if (out->err_code[0] == '\0')
            snprintf(out->err_code, sizeof(out->err_code), "FAIL");
    } else {
        out->transaction_id[0] = '\0';
        snprintf(out->err_code, sizeof(out->err_code),
                 http_code == 200 ? "unparseable reply" : "HTTP %ld", http_code);
    }
    json_decref(j);
}

http_status payer_pay(http_client *h, const char *gateway, const payer_request *req,
                      long timeout_ms, http_reply *rep, payer_reply *out)
{
    char url[512], body[PAYER_FIELD_MAX * 2 + 128];
    memset(rep, 0, sizeof(*rep));
    int n = payer_request_json(req, body, sizeof(body));
    int u = snprintf(url, sizeof(url), "%s/mock/payer/pay", gateway);
    if (n < 0 || u < 0 || (size_t)u >= sizeof(url)) {
        payer_reply_read(0, NULL, 0, out);
        snprintf(out->err_code, sizeof(out->err_code), "request does not fit");
        return HTTP_ERR_OTHER;
    }
    http_status hs = http_client_request(h, "POST", url, "application/json", body, (size_t)n, NULL,
                                         timeout_ms, rep);
    if (hs == HTTP_OK) {
        payer_reply_read(rep->code, rep->body, rep->body_len, out);
    } else {
        payer_reply_read(0, NULL, 0, out);
        snprintf(out->err_code, sizeof(out->err_code), "%s", http_status_name(hs));
    }
    return hs;
}
