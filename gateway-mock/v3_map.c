/* v3_map.c - APIv3's JSON to the fields the v2 flows read, and the flows'
 * outcome to APIv3's replies. The flows themselves are v2's (api_run). */
#include "v3_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bill.h"
#include "fcgi_adapter.h"
#include "log.h"
#include "order_no.h"
#include "refund_flow.h"
#include "v3_notify.h"

#include <openssl/evp.h>

#define MAX_FEE 9999999999LL

/* ---- requests ------------------------------------------------------------------ */

static bool map_bad(v3_call *vc, const char *why)
{
    v3_error(vc, 400, "PARAM_ERROR", why);
    return false;
}

/* The string member key of o (NULL when absent or not a string). */
static const char *map_str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static bool map_set(v3_call *vc, const char *name, const char *value)
{
    if (value == NULL || wx_msg_set(&vc->c.m, name, value) == 0)
        return true;
    v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
    return false;
}

/* The merchant's appid / mchid, as every flow's request carries them. */
static bool map_merchant(v3_call *vc)
{
    return map_set(vc, "appid", vc->c.app->creds.appid) &&
           map_set(vc, "mch_id", vc->c.app->creds.mch_id) && map_set(vc, "nonce_str", "v3");
}

/* RFC 3339 (yyyy-MM-ddTHH:mm:ss+hh:mm or Z) to v2's China time
 * yyyyMMddHHmmss; -1 when malformed. */
static int map_rfc3339(const char *s, char out[15])
{
    int y, mo, d, h, mi, se, oh = 0, om = 0, n = 0;
    char sign = 'Z';
    struct tm tm;

    if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6)
        return -1;
    if (strcmp(s + n, "Z") != 0 && (sscanf(s + n, "%c%2d:%2d", &sign, &oh, &om) != 3 ||
                                    (sign != '+' && sign != '-') || strlen(s + n) != 6))
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
    tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = se;
    time_t t = timegm(&tm) - (sign == '-' ? -1 : sign == '+' ? 1 : 0) * (oh * 3600 + om * 60);
    time_t cst = t + 8 * 3600;
    gmtime_r(&cst, &tm);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    return strftime(out, 15, "%Y%m%d%H%M%S", &tm) == 14 ? 0 : -1;
}

/* amount.<key>: a positive integer of fen, at most MAX_FEE; -1 otherwise. */
static long long map_fee(json_t *amount, const char *key)
{
    json_t *v = json_object_get(amount, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > MAX_FEE)
        return -1;
    return (long long)json_integer_value(v);
}

/* notify_url: http(s), at most 256 characters (WeChat wants https; the
 * mock also accepts http for local listeners). */
static bool map_url_ok(const char *u)
{
    return u != NULL && strlen(u) <= 256 &&
           (strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0) &&
           strpbrk(u, " \r\n") == NULL;
}

/* POST /v3/pay/transactions/native | jsapi. */
static bool map_order(v3_call *vc, const char *trade_type)
{
    json_t *b = vc->body, *amount = json_object_get(b, "amount");
    const char *otn = map_str(b, "out_trade_no"), *desc = map_str(b, "description");
    const char *url = map_str(b, "notify_url"), *cur = map_str(amount, "currency");
    const char *openid = map_str(json_object_get(b, "payer"), "openid");
    const char *te = map_str(b, "time_expire");
    char expire[15] = "";
    long long total = map_fee(amount, "total");

    if (map_str(b, "appid") == NULL || map_str(b, "mchid") == NULL)
        return map_bad(vc, "appid 和 mchid 为必填参数");
    if (strcmp(map_str(b, "appid"), vc->c.app->creds.appid) != 0 ||
        strcmp(map_str(b, "mchid"), vc->c.app->creds.mch_id) != 0) {
        v3_error(vc, 400, "APPID_MCHID_NOT_MATCH", "appid和mch_id不匹配");
        return false;
    }
    if (desc == NULL || desc[0] == '\0' || strlen(desc) > 127)
        return map_bad(vc, "description 为1到127字节的字符串");
    if (otn == NULL || !order_no_valid(otn))
        return map_bad(vc, "out_trade_no 为6到32位的数字、大小写字母_-|*");
    if (!map_url_ok(url))
        return map_bad(vc, "notify_url 为http(s)地址，最长256字节");
    if (total < 0 || (cur != NULL && strcmp(cur, "CNY") != 0))
        return map_bad(vc, "amount.total 为正整数(分), amount.currency 为CNY");
    if (strcmp(trade_type, "JSAPI") == 0 && (openid == NULL || openid[0] == '\0'))
        return map_bad(vc, "JSAPI下单 payer.openid 为必填参数");
    if (te != NULL && map_rfc3339(te, expire) != 0)
        return map_bad(vc, "time_expire 格式为 yyyy-MM-DDTHH:mm:ss+TIMEZONE");
    vc->c.v.total_fee = total;
    return map_merchant(vc) && map_set(vc, "body", desc) && map_set(vc, "out_trade_no", otn) &&
           map_set(vc, "notify_url", url) && map_set(vc, "trade_type", trade_type) &&
           map_set(vc, "spbill_create_ip", "127.0.0.1") && map_set(vc, "openid", openid) &&
           map_set(vc, "time_expire", expire[0] != '\0' ? expire : NULL) &&
           wx_msg_set_int(&vc->c.m, "total_fee", total) == 0;
}

/* GET ...?mchid= must name the merchant. */
static bool map_query_mchid(v3_call *vc)
{
    char mchid[65];
    if (http_query_param(vc->req->query, "mchid", mchid, sizeof(mchid)) != 0)
        return map_bad(vc, "mchid 为必填参数");
    if (strcmp(mchid, vc->c.app->creds.mch_id) != 0) {
        v3_error(vc, 400, "APPID_MCHID_NOT_MATCH", "mchid 与商户号不匹配");
        return false;
    }
    return true;
}

/* POST /v3/refund/domestic/refunds. */
static bool map_refund(v3_call *vc)
{
    json_t *b = vc->body, *amount = json_object_get(b, "amount");
    const char *txid = map_str(b, "transaction_id"), *otn = map_str(b, "out_trade_no");
    const char *orn = map_str(b, "out_refund_no"), *url = map_str(b, "notify_url");
    long long total = map_fee(amount, "total"), refund = map_fee(amount, "refund");

    if ((txid == NULL || txid[0] == '\0') && (otn == NULL || !order_no_valid(otn)))
        return map_bad(vc, "transaction_id 或 out_trade_no 必填其一");
    if (orn == NULL || orn[0] == '\0' || strlen(orn) > 64 ||
        strspn(orn, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-|*@") !=
            strlen(orn))
        return map_bad(vc, "out_refund_no 为1到64位的数字、大小写字母_-|*@");
    if (total < 0 || refund < 0 || refund > total)
        return map_bad(vc, "amount.refund 与 amount.total 为正整数(分), refund 不大于 total");
    if (url != NULL && !map_url_ok(url))
        return map_bad(vc, "notify_url 为http(s)地址，最长256字节");
    vc->c.v.total_fee = total;
    vc->c.v.refund_fee = refund;
    return map_merchant(vc) && map_set(vc, "transaction_id", txid) &&
           map_set(vc, "out_trade_no", otn) && map_set(vc, "out_refund_no", orn) &&
           map_set(vc, "notify_url", url) && wx_msg_set_int(&vc->c.m, "total_fee", total) == 0 &&
           wx_msg_set_int(&vc->c.m, "refund_fee", refund) == 0;
}

/* The bill of China day day (yyyyMMdd), type and tar ("" or GZIP) as
 * downloadbill's query. */
static bool map_bill_query(v3_call *vc, const char *day, const char *type, const char *tar)
{
    const char *err = NULL;
    char why[160];
    if (bill_parse_query(day, type, NULL, NULL, &vc->c.v.bill, &err, why, sizeof(why)) != 0 ||
        bill_parse_tar_type(tar, &vc->c.v.bill, why, sizeof(why)) != 0)
        return map_bad(vc, why);
    return map_merchant(vc) && map_set(vc, "bill_date", day);
}

/* GET /v3/bill/tradebill?bill_date=yyyy-MM-dd[&bill_type=][&tar_type=]. */
static bool map_tradebill(v3_call *vc)
{
    char date[16] = "", type[16] = "", tar[16] = "", day[9];
    if (http_query_param(vc->req->query, "bill_date", date, sizeof(date)) != 0 ||
        strlen(date) != 10 || date[4] != '-' || date[7] != '-')
        return map_bad(vc, "bill_date 格式为 yyyy-MM-DD");
    (void)http_query_param(vc->req->query, "bill_type", type, sizeof(type));
    (void)http_query_param(vc->req->query, "tar_type", tar, sizeof(tar));
    snprintf(day, sizeof(day), "%.4s%.2s%.2s", date, date + 5, date + 8);
    return map_bill_query(vc, day, type[0] ? type : "ALL", tar);
}

/* GET /v3/billdownload/file?token=yyyyMMdd.TYPE[.GZIP] (the mock's token). */
static bool map_billfile(v3_call *vc)
{
    char token[40] = "", day[9], type[16], tar[8] = "";
    if (http_query_param(vc->req->query, "token", token, sizeof(token)) != 0 ||
        sscanf(token, "%8[0-9].%15[A-Z].%7[A-Z]", day, type, tar) < 2)
        return map_bad(vc, "token 无效");
    return map_bill_query(vc, day, type, tar);
}

bool v3_map_request(v3_call *vc)
{
    switch (vc->route) {
    case V3_NATIVE:
        return map_order(vc, "NATIVE");
    case V3_JSAPI:
        return map_order(vc, "JSAPI");
    case V3_QUERY_OTN:
    case V3_QUERY_ID:
        if (!map_query_mchid(vc))
            return false;
        if (vc->route == V3_QUERY_OTN && !order_no_valid(vc->key))
            return map_bad(vc, "out_trade_no 无效");
        return map_merchant(vc) &&
               map_set(vc, vc->route == V3_QUERY_OTN ? "out_trade_no" : "transaction_id", vc->key);
    case V3_CLOSE:
        if (map_str(vc->body, "mchid") == NULL ||
            strcmp(map_str(vc->body, "mchid"), vc->c.app->creds.mch_id) != 0)
            return map_bad(vc, "mchid 为必填参数，且为商户号");
        if (!order_no_valid(vc->key))
            return map_bad(vc, "out_trade_no 无效");
        return map_merchant(vc) && map_set(vc, "out_trade_no", vc->key);
    case V3_REFUND:
        return map_refund(vc);
    case V3_REFUND_QUERY:
        return map_merchant(vc) && map_set(vc, "out_refund_no", vc->key);
    case V3_TRADEBILL:
        return map_tradebill(vc);
    case V3_BILLFILE:
        return map_billfile(vc);
    case V3_CERTIFICATES:
    case V3_NONE:
        break;
    }
    return false;
}

const char *v3_map_peek_otn(const v3_call *vc)
{
    const char *otn = NULL;
    if (vc->route == V3_QUERY_OTN || vc->route == V3_CLOSE)
        otn = vc->key;
    else if (vc->body != NULL)
        otn = map_str(vc->body, "out_trade_no");
    return otn != NULL && order_no_valid(otn) ? otn : "";
}

/* ---- replies ------------------------------------------------------------------- */

/* v2's err_code as v3's HTTP status and code. */
static void reply_error(v3_call *vc)
{
    static const struct {
        const char *v2;
        int status;
        const char *v3;
    } map[] = {
        { "SYSTEMERROR", 500, "SYSTEM_ERROR" },
        { "ORDERNOTEXIST", 404, "ORDER_NOT_EXIST" },
        { "REFUNDNOTEXIST", 404, "RESOURCE_NOT_EXISTS" },
        { "ORDERPAID", 400, "ORDER_PAID" },
        { "ORDERCLOSED", 400, "ORDER_CLOSED" },
        { "NOTENOUGH", 403, "NOT_ENOUGH" },
        { "USER_ACCOUNT_ABNORMAL", 403, "USER_ACCOUNT_ABNORMAL" },
        { "APPID_MCHID_NOT_MATCH", 400, "APPID_MCHID_NOT_MATCH" },
        { "LACK_PARAMS", 400, "PARAM_ERROR" },
        { "PARAM_ERROR", 400, "PARAM_ERROR" },
    };
    const char *code = vc->c.out.err_code, *des = vc->c.out.err_des;
    int status = 400;
    const char *v3 = code;

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(code, map[i].v2) == 0)
            status = map[i].status, v3 = map[i].v3;
    if (strcmp(code, "INVALID_REQUEST") == 0 && strstr(des, "商户订单号重复") != NULL)
        status = 403, v3 = "OUT_TRADE_NO_USED"; /* v2's "201 商户订单号重复" */
    if (vc->route == V3_REFUND && strcmp(code, "ORDERNOTEXIST") == 0)
        v3 = "RESOURCE_NOT_EXISTS";
    v3_error(vc, status, v3, des[0] != '\0' ? des : code);
}

/* An orderquery's fields as v3's transaction. */
static json_t *reply_transaction(v3_call *vc)
{
    const wx_msg *x = &vc->c.out.extra;
    const char *txid = wx_msg_get(x, "transaction_id");
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "appid", vc->c.app->creds.appid, "mchid",
                          vc->c.app->creds.mch_id, "out_trade_no", wx_msg_get(x, "out_trade_no"),
                          "trade_state", wx_msg_get(x, "trade_state"), "trade_state_desc",
                          wx_msg_get(x, "trade_state_desc"));
    if (o == NULL || txid == NULL || txid[0] == '\0')
        return o; /* not charged: no transaction_id, time or amount paid */
    char when[V3_TIME_BUF];
    long long fee = atoll(wx_msg_get(x, "total_fee") != NULL ? wx_msg_get(x, "total_fee") : "0");
    v3_time_from_compact(wx_msg_get(x, "time_end"), when);
    json_object_set_new(o, "transaction_id", json_string(txid));
    json_object_set_new(o, "trade_type", json_string(wx_msg_get(x, "trade_type")));
    json_object_set_new(o, "bank_type", json_string(wx_msg_get(x, "bank_type")));
    json_object_set_new(o, "attach", json_string(""));
    json_object_set_new(o, "success_time", json_string(when));
    json_object_set_new(o, "amount",
                        json_pack("{s:I, s:I, s:s, s:s}", "total", (json_int_t)fee, "payer_total",
                                  (json_int_t)fee, "currency", "CNY", "payer_currency", "CNY"));
    return o;
}

/* The refund orn of otn, as the ledger lists it (NULL when not found). */
static json_t *reply_refund_row(v3_call *vc, const char *otn, const char *orn)
{
    json_t *rows = refund_flow_ledger_json(vc->c.app, otn), *row, *found = NULL;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        const char *o = json_string_value(json_object_get(row, "out_refund_no"));
        if (o != NULL && strcmp(o, orn) == 0)
            found = json_incref(row);
    }
    json_decref(rows);
    return found;
}

/* v3's refund (申请退款 / 查询单笔退款) of out_refund_no orn. */
static json_t *reply_refund(v3_call *vc, const char *otn, const char *orn, long long total)
{
    json_t *row = reply_refund_row(vc, otn, orn), *o = NULL;
    if (row == NULL)
        return NULL;
    const char *st = json_string_value(json_object_get(row, "status"));
    const char *status = strcmp(st, "REFUNDCLOSE") == 0 ? "CLOSED"
                         : strcmp(st, "CHANGE") == 0    ? "ABNORMAL"
                                                        : st;
    long long refund = (long long)json_integer_value(json_object_get(row, "refund_fee"));
    char created[V3_TIME_BUF], ended[V3_TIME_BUF];
    v3_time_from_cst(json_string_value(json_object_get(row, "accepted_at")), created);
    v3_time_from_cst(json_string_value(json_object_get(row, "ended_at")), ended);
    o = json_pack("{s:O, s:s, s:O, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I, "
                  "s:I, s:I, s:s}}",
                  "refund_id", json_object_get(row, "refund_id"), "out_refund_no", orn,
                  "transaction_id", json_object_get(row, "transaction_id"), "out_trade_no", otn,
                  "channel", "ORIGINAL", "user_received_account", "支付用户零钱", "create_time",
                  created, "status", status, "funds_account", "UNSETTLED", "amount", "total",
                  (json_int_t)total, "refund", (json_int_t)refund, "payer_total", (json_int_t)total,
                  "payer_refund", (json_int_t)refund, "settlement_total", (json_int_t)total,
                  "settlement_refund", (json_int_t)refund, "discount_refund", (json_int_t)0,
                  "currency", "CNY");
    if (o != NULL && strcmp(status, "SUCCESS") == 0)
        json_object_set_new(o, "success_time", json_string(ended));
    json_decref(row);
    return o;
}

/* tradebill: the statement's SHA1 and where to download it. */
static void reply_tradebill(v3_call *vc)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    size_t mdlen = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1], url[512], day[9];
    const char *host = fcgi_adapter_param("HTTP_HOST"), *https = fcgi_adapter_param("HTTPS");

    if (!EVP_Q_digest(NULL, "SHA1", NULL, vc->c.out.statement, vc->c.out.statement_len, md,
                      &mdlen)) {
        v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
        return;
    }
    for (size_t i = 0; i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    snprintf(day, sizeof(day), "%s", wx_msg_get(&vc->c.m, "bill_date"));
    const bill_query *q = &vc->c.v.bill;
    snprintf(url, sizeof(url), "%s://%s/v3/billdownload/file?token=%s.%s%s",
             https != NULL && strcmp(https, "on") == 0 ? "https" : "http",
             host != NULL ? host : "127.0.0.1", day,
             q->type == BILL_SUCCESS  ? "SUCCESS"
             : q->type == BILL_REFUND ? "REFUND"
                                      : "ALL",
             q->gzip ? ".GZIP" : "");
    v3_reply(vc, 200,
             json_pack("{s:s, s:s, s:s}", "hash_type", "SHA1", "hash_value", hex, "download_url",
                       url));
}

/* The bill itself: not signed, as WeChat's download is not. */
static void reply_billfile(v3_call *vc)
{
    http_response *r = vc->c.resp;
    free(r->body);
    r->body = vc->c.out.statement; /* moves: no copy of a large statement */
    r->body_len = vc->c.out.statement_len;
    vc->c.out.statement = NULL;
    r->status = 200;
    api_copy(r->content_type, sizeof(r->content_type),
             vc->c.v.bill.gzip ? "application/x-gzip" : "text/plain; charset=utf-8");
    vc->answered = true;
}

/* A return_code FAIL of the bill: v3's words for it. */
static void reply_bill_fail(v3_call *vc)
{
    const char *m = vc->c.out.fail_msg;
    if (strcmp(m, "No Bill Exist") == 0)
        v3_error(vc, 400, "NO_STATEMENT_EXIST", "账单文件不存在");
    else if (strcmp(m, "Bill Creating") == 0)
        v3_error(vc, 400, "STATEMENT_CREATING", "账单生成中");
    else
        v3_error(vc, 500, "SYSTEM_ERROR", m);
}

/* A successful flow as v3's reply of the route. */
static void reply_success(v3_call *vc)
{
    const wx_msg *x = &vc->c.out.extra;
    long long total = atoll(wx_msg_get(x, "total_fee") != NULL ? wx_msg_get(x, "total_fee") : "0");
    json_t *o = NULL;

    switch (vc->route) {
    case V3_NATIVE:
        o = json_pack("{s:s}", "code_url", wx_msg_get(x, "code_url"));
        break;
    case V3_JSAPI:
        o = json_pack("{s:s}", "prepay_id", wx_msg_get(x, "prepay_id"));
        break;
    case V3_QUERY_OTN:
    case V3_QUERY_ID:
        o = reply_transaction(vc);
        break;
    case V3_CLOSE:
        v3_reply(vc, 204, NULL);
        return;
    case V3_REFUND:
    case V3_REFUND_QUERY:
        o = reply_refund(vc, wx_msg_get(x, "out_trade_no"), wx_msg_get(&vc->c.m, "out_refund_no"),
                         total);
        break;
    default:
        break;
    }
    if (o == NULL)
        v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
    else
        v3_reply(vc, 200, o);
}

void v3_map_reply(v3_call *vc)
{
    if (!vc->c.out.set) {
        v3_error(vc, 500, "SYSTEM_ERROR", "系统错误");
        return;
    }
    if (vc->c.out.statement != NULL) {
        if (vc->route == V3_BILLFILE)
            reply_billfile(vc);
        else
            reply_tradebill(vc);
        return;
    }
    if (vc->c.out.fail_msg != NULL)
        reply_bill_fail(vc);
    else if (vc->c.out.err_code != NULL)
        reply_error(vc);
    else
        reply_success(vc);
}
