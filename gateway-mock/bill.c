/* bill.c - the statement's text: request rules, one line per record, the
 * summary, in one buffer that grows by doubling up to its hard limit. */
#include "bill.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#define BILL_CST_OFFSET (8 * 3600)
#define BILL_LINE_MAX 1024 /* every field is bounded: a line is far shorter */
#define BILL_FEE_RATE "0.60%"
#define BILL_SUMMARY_ROOM 512 /* kept free by bill_add for the summary */

struct bill {
    char appid[64];
    char mch_id[64];
    char *buf;
    size_t len, cap, max;
    size_t header_len;
    size_t lines;
    long long settle_fen;       /* 应结订单金额 */
    long long refund_fen;       /* 退款金额 */
    long long fee_fen;          /* 手续费 */
    long long order_fen;        /* 订单金额 of charge lines */
    long long refund_asked_fen; /* 申请退款金额 */
};

/* ---- the request ----------------------------------------------------------- */

static int bill_digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int bill_parse_cst(const char *s, size_t len, time_t *out)
{
    int y, mo, d, h = 0, mi = 0, sec = 0;
    struct tm tm;

    if (s == NULL || (len != 8 && len != 14) || strlen(s) != len)
        return -1;
    if (bill_digits(s, 4, &y) != 0 || bill_digits(s + 4, 2, &mo) != 0 ||
        bill_digits(s + 6, 2, &d) != 0)
        return -1;
    if (len == 14 && (bill_digits(s + 8, 2, &h) != 0 || bill_digits(s + 10, 2, &mi) != 0 ||
                      bill_digits(s + 12, 2, &sec) != 0))
        return -1;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    /* timegm normalises 31 April into 1 May: a real date comes back unchanged. */
    if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
        return -1;
    *out = t - BILL_CST_OFFSET;
    return 0;
}

static bool bill_given(const char *s)
{
    return s != NULL && s[0] != '\0';
}

int bill_parse_query(const char *bill_date, const char *bill_type, const char *begin_time,
                     const char *end_time, bill_query *q, const char **err_code, char *why,
                     size_t whylen)
{
    time_t day = 0;

    *err_code = "PARAM_ERROR";
    if (!bill_given(bill_type) || strcmp(bill_type, "ALL") == 0) {
        q->type = BILL_ALL;
    } else if (strcmp(bill_type, "SUCCESS") == 0) {
        q->type = BILL_SUCCESS;
    } else if (strcmp(bill_type, "REFUND") == 0) {
        q->type = BILL_REFUND;
    } else {
        snprintf(why, whylen, "bill_type 参数错误: %s", "one of ALL, SUCCESS, REFUND");
        return -1;
    }
    if (bill_given(bill_date) && bill_parse_cst(bill_date, strlen(bill_date), &day) != 0) {
        snprintf(why, whylen, "bill_date 格式错误: %s", "yyyyMMdd, a real date");
        return -1;
    }
    q->has_day = bill_given(bill_date);
    q->day = day;
    q->ranged = false;
    q->gzip = false;
    if (bill_given(begin_time) != bill_given(end_time)) {
        snprintf(why, whylen, "begin_time 和 end_time 须同时提供");
        return -1;
    }
    if (bill_given(begin_time)) {
        if (bill_parse_cst(begin_time, strlen(begin_time), &q->from) != 0 ||
            bill_parse_cst(end_time, strlen(end_time), &q->to) != 0) {
            snprintf(why, whylen, "begin_time/end_time 格式错误: %s",
                     "yyyyMMddHHmmss, China Standard Time");
            return -1;
        }
        if (q->from >= q->to) {
            snprintf(why, whylen, "begin_time 须早于 end_time");
            return -1;
        }
        q->ranged = true;
        return 0;
    }
    if (!bill_given(bill_date)) {
        *err_code = "LACK_PARAMS";
        snprintf(why, whylen, "缺少参数 %s", "bill_date");
        return -1;
    }
    q->from = day;
    q->to = day + 24 * 3600;
    return 0;
}

int bill_parse_tar_type(const char *tar_type, bill_query *q, char *why, size_t whylen)
{
    if (!bill_given(tar_type))
        return 0;
    if (strcmp(tar_type, "GZIP") != 0) {
        snprintf(why, whylen, "tar_type 参数错误: %s", "GZIP or absent");
        return -1;
    }
    q->gzip = true;
    return 0;
}

time_t bill_ready_at(time_t day, int ready_hour)
{
    return day + 24 * 3600 + (time_t)ready_hour * 3600;
}

bill_readiness bill_select(bill_query *q, time_t now, int ready_hour, bool range_enabled)
{
    if (q->ranged && range_enabled)
        return BILL_SERVE;
    if (!q->has_day)
        return BILL_NO_DATE;
    q->ranged = false;
    q->from = q->day;
    q->to = q->day + 24 * 3600;
    return now >= bill_ready_at(q->day, ready_hour) ? BILL_SERVE : BILL_NOT_READY;
}

void bill_forged_txid(const char *txid, char *out, size_t cap)
{
    snprintf(out, cap, "F%s", txid[0] != '\0' ? txid + 1 : "");
}

int bill_gzip(const char *text, size_t len, char **out, size_t *out_len)
{
    z_stream z;
    int rc = -1;

    *out = NULL;
    memset(&z, 0, sizeof(z));
    /* windowBits 15 + 16: a gzip header and trailer, not a zlib one. */
    if (len > (size_t)UINT32_MAX ||
        deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong cap = deflateBound(&z, (uLong)len);
    char *buf = malloc(cap);
    if (buf != NULL) {
        z.next_in = (Bytef *)(uintptr_t)text;
        z.avail_in = (uInt)len;
        z.next_out = (Bytef *)buf;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
            *out = buf;
            *out_len = (size_t)z.total_out;
            buf = NULL;
            rc = 0;
        }
    }
    free(buf);
    deflateEnd(&z);
    return rc;
}

/* ---- lines ------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t left;
    bool overflow;
} bill_out;

/* Appends "`" (after a comma unless first) and s without the characters
 * that would break the format (comma, backtick, CR, LF). */
static void bill_field(bill_out *o, const char *s, bool first)
{
    const char *lead = first ? "`" : ",`";
    for (const char *c = lead; *c != '\0'; c++) {
        if (o->left <= 1) {
            o->overflow = true;
            return;
        }
        *o->p++ = *c;
        o->left--;
    }
    for (; *s != '\0'; s++) {
        if (*s == ',' || *s == '`' || *s == '\r' || *s == '\n')
            continue;
        if (o->left <= 1) {
            o->overflow = true;
            return;
        }
        *o->p++ = *s;
        o->left--;
    }
}

/* fen as yuan with two decimals; fen >= 0. */
static const char *bill_yuan(long long fen, char out[32])
{
    snprintf(out, 32, "%lld.%02lld", fen / 100, fen % 100);
    return out;
}

/* The service charge of a charge of fen: 0.6 %, rounded half up to the fen. */
static long long bill_fee(long long fen)
{
    return (fen * 6 + 500) / 1000;
}

int bill_format_line(const char *appid, const char *mch_id, const ledger_bill_record *r, char *out,
                     size_t cap, long long *fee_fen)
{
    char total[32], refund[32], fee[32];
    long long f = r->refund ? 0 : bill_fee(r->total_fee);

    bill_yuan(r->total_fee, total);
    const char *settle = r->refund ? "0.00" : total;
    bill_yuan(r->refund ? r->refund_fee : 0, refund);
    bill_yuan(f, fee);
    const char *fields[27] = {
        r->time,
        appid,
        mch_id,
        "0",
        "",
        r->transaction_id,
        r->out_trade_no,
        r->openid[0] != '\0' ? r->openid : BILL_DEFAULT_OPENID,
        r->trade_type,
        r->refund ? "REFUND" : "SUCCESS",
        "OTHERS",
        "CNY",
        settle,
        "0.00",
        r->refund ? r->refund_id : "0",
        r->refund ? r->out_refund_no : "0",
        refund,
        "0.00",
        r->refund ? "ORIGINAL" : "",
        r->refund ? "SUCCESS" : "",
        "idempay",
        "",
        fee,
        BILL_FEE_RATE,
        total,
        refund,
        "",
    };
    bill_out o = { out, cap, false };
    if (cap == 0)
        return -1;
    for (int i = 0; i < 27; i++)
        bill_field(&o, fields[i], i == 0);
    *o.p = '\0';
    if (o.overflow)
        return -1;
    *fee_fen = f;
    return (int)(o.p - out);
}

/* ---- the buffer ------------------------------------------------------------ */

/* Appends n bytes; 0, or -1 (limit or OOM) with nothing appended. */
static int bill_put(bill *b, const char *s, size_t n)
{
    if (n > b->max - b->len)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap;
        while (b->len + n + 1 > cap)
            cap *= 2;
        if (cap > b->max + 1)
            cap = b->max + 1;
        char *p = realloc(b->buf, cap);
        if (p == NULL)
            return -1;
        b->buf = p;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

bill *bill_new(const char *appid, const char *mch_id, size_t max_bytes)
{
    static const char header[] = BILL_HEADER "\r\n";
    bill *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    snprintf(b->appid, sizeof(b->appid), "%s", appid);
    snprintf(b->mch_id, sizeof(b->mch_id), "%s", mch_id);
    b->max = max_bytes;
    b->cap = 64 * 1024;
    b->buf = malloc(b->cap);
    if (b->buf == NULL || bill_put(b, header, sizeof(header) - 1) != 0) {
        bill_free(b);
        return NULL;
    }
    b->header_len = b->len;
    return b;
}

void bill_free(bill *b)
{
    if (b == NULL)
        return;
    free(b->buf);
    free(b);
}

void bill_restart(bill *b)
{
    b->len = b->header_len;
    b->buf[b->len] = '\0';
    b->lines = 0;
    b->settle_fen = b->refund_fen = b->fee_fen = b->order_fen = b->refund_asked_fen = 0;
}

int bill_add(bill *b, const ledger_bill_record *r)
{
    char line[BILL_LINE_MAX];
    long long fee = 0;
    int n = bill_format_line(b->appid, b->mch_id, r, line, sizeof(line) - 2, &fee);
    if (n < 0)
        return -1;
    memcpy(line + n, "\r\n", 2);
    if (b->len + (size_t)n + 2 + BILL_SUMMARY_ROOM > b->max ||
        bill_put(b, line, (size_t)n + 2) != 0)
        return -1;
    b->lines++;
    b->fee_fen += fee;
    if (r->refund) {
        b->refund_fen += r->refund_fee;
        b->refund_asked_fen += r->refund_fee;
    } else {
        b->settle_fen += r->total_fee;
        b->order_fen += r->total_fee;
    }
    return 0;
}

size_t bill_lines(const bill *b)
{
    return b->lines;
}

char *bill_finish(bill *b, size_t *len)
{
    static const char head[] = BILL_SUMMARY_HEADER "\r\n";
    char line[256], a[32], c[32], d[32], e[32], f[32];
    size_t mark = b->len;

    int n = snprintf(line, sizeof(line), "`%zu,`%s,`%s,`0.00,`%s,`%s,`%s\r\n", b->lines,
                     bill_yuan(b->settle_fen, a), bill_yuan(b->refund_fen, c),
                     bill_yuan(b->fee_fen, d), bill_yuan(b->order_fen, e),
                     bill_yuan(b->refund_asked_fen, f));
    if (n < 0 || (size_t)n >= sizeof(line) || bill_put(b, head, sizeof(head) - 1) != 0 ||
        bill_put(b, line, (size_t)n) != 0) {
        b->len = mark;
        b->buf[mark] = '\0';
        return NULL;
    }
    char *text = b->buf;
    *len = b->len;
    b->buf = NULL;
    b->len = b->cap = 0;
    return text;
}
