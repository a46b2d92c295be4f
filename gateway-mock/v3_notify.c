/* v3_notify.c - building APIv3 notifications: the resource as JSON,
 * encrypted by wx3_aead, wrapped in the envelope. */
#include "v3_notify.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bill.h"
#include "clock.h"
#include "wx3_aead.h"
#include "wx3_sign.h"

void v3_time(time_t t, char out[V3_TIME_BUF])
{
    struct tm tm;
    time_t cst = t + 8 * 3600;
    out[0] = '\0';
    if (gmtime_r(&cst, &tm) == NULL ||
        strftime(out, V3_TIME_BUF, "%Y-%m-%dT%H:%M:%S+08:00", &tm) == 0)
        out[0] = '\0';
}

void v3_time_from_compact(const char *s, char out[V3_TIME_BUF])
{
    out[0] = '\0';
    if (s == NULL || strlen(s) != 14 || strspn(s, "0123456789") != 14)
        return;
    snprintf(out, V3_TIME_BUF, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s+08:00", s, s + 4, s + 6, s + 8,
             s + 10, s + 12);
}

void v3_time_from_cst(const char *s, char out[V3_TIME_BUF])
{
    out[0] = '\0';
    if (s == NULL || strlen(s) != 19 || s[10] != ' ')
        return;
    snprintf(out, V3_TIME_BUF, "%.10sT%.8s+08:00", s, s + 11);
}

json_t *v3_notify_transaction(const notifier_charge *c, const mock_creds *creds)
{
    char when[V3_TIME_BUF];
    v3_time_from_compact(c->time_end, when);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s}, "
                     "s:{s:I, s:I, s:s, s:s}}",
                     "appid", creds->appid, "mchid", creds->mch_id, "out_trade_no", c->out_trade_no,
                     "transaction_id", c->transaction_id, "trade_type", c->trade_type,
                     "trade_state", "SUCCESS", "trade_state_desc", "支付成功", "bank_type",
                     "OTHERS", "attach", "", "success_time", when, "payer", "openid",
                     c->openid[0] != '\0' ? c->openid : BILL_DEFAULT_OPENID, "amount", "total",
                     (json_int_t)c->total_fee, "payer_total", (json_int_t)c->total_fee, "currency",
                     "CNY", "payer_currency", "CNY");
}

/* The refund's resource, as the refund query answers it too. */
static json_t *notify_refund_resource(const refund_record *r, const mock_creds *creds)
{
    char when[V3_TIME_BUF];
    bool success = strcmp(r->status, "SUCCESS") == 0;
    const char *status = strcmp(r->status, "REFUNDCLOSE") == 0 ? "CLOSED"
                         : strcmp(r->status, "CHANGE") == 0    ? "ABNORMAL"
                                                               : r->status;
    v3_time_from_cst(r->ended_at, when);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I, s:I}}", "mchid",
                          creds->mch_id, "out_trade_no", r->out_trade_no, "transaction_id",
                          r->transaction_id, "out_refund_no", r->out_refund_no, "refund_id",
                          r->refund_id, "refund_status", status, "user_received_account",
                          "支付用户零钱", "amount", "total", (json_int_t)r->total_fee, "refund",
                          (json_int_t)r->refund_fee, "payer_total", (json_int_t)r->total_fee,
                          "payer_refund", (json_int_t)(success ? r->refund_fee : 0));
    if (o != NULL && success && when[0] != '\0')
        json_object_set_new(o, "success_time", json_string(when));
    return o;
}

/* The envelope around resource (stolen), encrypted under key. */
static char *notify_envelope(json_t *resource, const char *event, const char *summary,
                             const char *original_type, const char *key)
{
    char nonce[13], id[37], now[V3_TIME_BUF];
    char *plain = resource != NULL ? json_dumps(resource, JSON_COMPACT) : NULL;
    char *ct = NULL, *out = NULL;
    json_t *env = NULL;

    json_decref(resource);
    if (plain == NULL || wx3_nonce(nonce, sizeof(nonce), 12) != 0 ||
        wx3_nonce(id, sizeof(id), 36) != 0 ||
        wx3_aead_encrypt(key, nonce, original_type, plain, strlen(plain), &ct) != 0)
        goto done;
    v3_time(mock_clock_now(), now);
    env = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "id", id,
                    "create_time", now, "resource_type", "encrypt-resource", "event_type", event,
                    "summary", summary, "resource", "original_type", original_type, "algorithm",
                    "AEAD_AES_256_GCM", "ciphertext", ct, "associated_data", original_type, "nonce",
                    nonce);
    out = env != NULL ? json_dumps(env, JSON_COMPACT) : NULL;
done:
    if (plain != NULL)
        memset(plain, 0, strlen(plain));
    free(plain);
    free(ct);
    json_decref(env);
    return out;
}

char *v3_notify_charge_json(const notifier_charge *c, const mock_creds *creds,
                            const char *apiv3_key)
{
    return notify_envelope(v3_notify_transaction(c, creds), "TRANSACTION.SUCCESS", "支付成功",
                           "transaction", apiv3_key);
}

char *v3_notify_refund_json(const refund_record *r, const mock_creds *creds, const char *apiv3_key)
{
    const char *event = strcmp(r->status, "SUCCESS") == 0       ? "REFUND.SUCCESS"
                        : strcmp(r->status, "REFUNDCLOSE") == 0 ? "REFUND.CLOSED"
                                                                : "REFUND.ABNORMAL";
    const char *summary = strcmp(r->status, "SUCCESS") == 0       ? "退款成功"
                          : strcmp(r->status, "REFUNDCLOSE") == 0 ? "退款关闭"
                                                                  : "退款异常";
    return notify_envelope(notify_refund_resource(r, creds), event, summary, "refund", apiv3_key);
}
