/* callback_v3_verify.c - APIv3 notifications verified and decrypted (see
 * callback_v3_verify.h). */
#include "callback_v3_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "gateway_v3_reply.h"
#include "order_no.h"
#include "wx3_aead.h"

#define CB3_MAX_BODY 16384

static int cb3_refuse(cb3_notification *out, callback_verdict v, int status, const char *why)
{
    out->verdict = v;
    out->status = status;
    snprintf(out->reason, sizeof(out->reason), "%s", why);
    return -1;
}

static const char *cb3_str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* 1..max of [0-9A-Za-z_-]. */
static int cb3_id(const char *s, size_t max)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

/* amount.<key> as positive fen (currency CNY when given), or -1. */
static long long cb3_fen(json_t *o, const char *key)
{
    json_t *amount = json_object_get(o, "amount"), *v = json_object_get(amount, key);
    const char *cur = cb3_str(amount, "currency");

    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > 9999999999LL ||
        (cur != NULL && strcmp(cur, "CNY") != 0))
        return -1;
    return (long long)json_integer_value(v);
}

/* TRANSACTION.SUCCESS's transaction. */
static int cb3_payment(const app_config *cfg, json_t *r, cb3_notification *out)
{
    callback_notification *n = &out->pay;
    const char *no = cb3_str(r, "out_trade_no"), *txn = cb3_str(r, "transaction_id");
    const char *appid = cb3_str(r, "appid"), *mchid = cb3_str(r, "mchid");

    out->kind = CB3_PAYMENT;
    if (no != NULL && order_no_valid(no))
        snprintf(n->order_no, sizeof(n->order_no), "%s", no);
    if (appid == NULL || mchid == NULL || strcmp(appid, cfg->appid) != 0 ||
        strcmp(mchid, cfg->mch_id) != 0)
        return cb3_refuse(out, CB_VERDICT_MERCHANT, 400, "appid or mchid is not ours");
    if (n->order_no[0] == '\0')
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "missing or invalid out_trade_no");
    if (!cb3_id(txn, CALLBACK_TXN_MAX))
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "missing or invalid transaction_id");
    if (cb3_str(r, "trade_state") == NULL || strcmp(cb3_str(r, "trade_state"), "SUCCESS") != 0)
        return cb3_refuse(out, CB_VERDICT_RESULT, 400, "trade_state is not SUCCESS");
    if ((n->total_fee = cb3_fen(r, "total")) < 0)
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "missing or invalid amount.total");
    snprintf(n->transaction_id, sizeof(n->transaction_id), "%s", txn);
    return 0;
}

/* REFUND.*'s refund; event is the envelope's event_type. */
static int cb3_refund(const app_config *cfg, json_t *r, const char *event, cb3_notification *out)
{
    refund_notification *n = &out->refund;
    const char *orn = cb3_str(r, "out_refund_no"), *txn = cb3_str(r, "transaction_id");
    const char *status = cb3_str(r, "refund_status"), *id = cb3_str(r, "refund_id");
    const char *v2 = gw3_v2_refund_status(status);

    out->kind = CB3_REFUND;
    if (cb3_str(r, "mchid") == NULL || strcmp(cb3_str(r, "mchid"), cfg->mch_id) != 0)
        return cb3_refuse(out, CB_VERDICT_MERCHANT, 400, "mchid is not ours");
    if (!cb3_id(orn, 64) || !cb3_id(txn, 32) || (id != NULL && !cb3_id(id, 32)))
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400,
                          "invalid out_refund_no, transaction_id "
                          "or refund_id");
    if (v2 == NULL || strcmp(status, "PROCESSING") == 0 || strcmp(event + 7, status) != 0)
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400,
                          "refund_status does not match event_type");
    if ((n->refund_fee = cb3_fen(r, "refund")) < 0)
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "missing or invalid amount.refund");
    snprintf(n->out_refund_no, sizeof(n->out_refund_no), "%s", orn);
    snprintf(n->transaction_id, sizeof(n->transaction_id), "%s", txn);
    snprintf(n->refund_id, sizeof(n->refund_id), "%s", id != NULL ? id : "");
    snprintf(n->refund_status, sizeof(n->refund_status), "%s", v2);
    return 0;
}

/* The envelope's resource decrypted into out->plain. */
static int cb3_decrypt(const app_config *cfg, json_t *env, cb3_notification *out)
{
    json_t *res = json_object_get(env, "resource");
    const char *alg = cb3_str(res, "algorithm"), *ct = cb3_str(res, "ciphertext");
    const char *nonce = cb3_str(res, "nonce"), *aad = cb3_str(res, "associated_data");
    const char *rtype = cb3_str(env, "resource_type");

    if (rtype == NULL || strcmp(rtype, "encrypt-resource") != 0 || alg == NULL ||
        strcmp(alg, "AEAD_AES_256_GCM") != 0 || ct == NULL || nonce == NULL)
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "not an encrypt-resource notification");
    if (wx3_aead_decrypt(cfg->v3.apiv3_key, nonce, aad != NULL ? aad : "", ct, &out->plain,
                         &out->plain_len) != 0)
        return cb3_refuse(out, CB_VERDICT_SIGNATURE, 400,
                          "the resource does not decrypt (tampered or another APIv3 key)");
    return 0;
}

int callback_v3_verify(const app_config *cfg, wx3_trust *t, const wx3_signed_headers *h,
                       const char *body, size_t len, int too_large, time_t now,
                       cb3_notification *out)
{
    json_t *env = NULL, *res = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (too_large || len == 0 || len > CB3_MAX_BODY)
        return cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "empty or too large");
    out->trust = wx3_trust_check(t, h, body, len, now, cfg->v3.window_s);
    if (out->trust != WX3_TRUST_OK)
        return cb3_refuse(out, CB_VERDICT_SIGNATURE, 401, wx3_trust_verdict_name(out->trust));
    env = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    const char *event = cb3_str(env, "event_type");
    if (!json_is_object(env) || event == NULL || cb3_str(env, "id") == NULL)
        cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "not a notification envelope");
    else if (cb3_decrypt(cfg, env, out) != 0)
        ; /* out says why */
    else if ((res = json_loadb(out->plain, out->plain_len, JSON_REJECT_DUPLICATES, NULL)) == NULL ||
             !json_is_object(res))
        cb3_refuse(out, CB_VERDICT_MALFORMED, 400, "the resource is not a JSON object");
    else if (strcmp(event, "TRANSACTION.SUCCESS") == 0)
        rc = cb3_payment(cfg, res, out);
    else if (strncmp(event, "REFUND.", 7) == 0)
        rc = cb3_refund(cfg, res, event, out);
    else
        cb3_refuse(out, CB_VERDICT_NOT_NOTIFICATION, 400, "an event_type we do not handle");
    if (rc != 0 && out->verdict == CB_VERDICT_OK)
        out->verdict = CB_VERDICT_MALFORMED;
    json_decref(res);
    json_decref(env);
    return rc;
}

void callback_v3_free(cb3_notification *out)
{
    if (out == NULL)
        return;
    free(out->plain);
    out->plain = NULL;
}

void callback_v3_reply(http_response *resp, int status, const char *msg)
{
    if (status == 204 || status == 200) {
        http_response_set(resp, 204, "application/json", "", 0);
        return;
    }
    if (http_response_json(resp, status,
                           json_pack("{s:s, s:s}", "code", "FAIL", "message",
                                     msg != NULL ? msg : "")) != 0)
        http_response_set(resp, status, "application/json", "{\"code\":\"FAIL\"}", 15);
}
