/* bill - the mock's statement (POST /pay/downloadbill) in WeChat Pay v2's
 * text format, and the rules of the request that selects it.
 *
 * The text is WeChat's ALL bill: the 27-column header line, one line per
 * charge (交易状态 SUCCESS) and per refund (REFUND) with every field
 * prefixed by a backtick and the fields joined by commas, then the summary
 * header and one backtick-prefixed line of totals; every line ends "\r\n".
 * Amounts are yuan with two decimals. The service charge is 0.6 % of each
 * charge rounded half up to the fen (refund lines carry 0.00: the mock keeps
 * its fee). The summary counts the lines listed; its sums are those of the
 * lines' columns, except 订单总金额 which sums the charge lines only (a
 * refund line repeats its charge's 订单金额 for reference).
 *
 * Days and readiness (WeChat's downloadbill page: 微信在次日9点启动生成前一天的
 * 对账单, 建议商户10点后再获取): bill_date names one whole China day (UTC+8);
 * day D's bill exists from D+1 at the ready hour (China time) by the mock's
 * clock; before that the answer is return_msg "Bill Creating". A ready day
 * without a record is "No Bill Exist". begin_time / end_time (a range) are
 * the mock's own extension, honoured only when the bill_range_enabled knob
 * is on (a real gateway ignores them and answers the whole day).
 *
 * A bill owns one growing buffer with a hard limit fixed when it is created;
 * a line that would pass the limit is refused and nothing is appended. Not
 * thread-safe: one bill per request. */
#ifndef IDEMPAY_MOCK_BILL_H
#define IDEMPAY_MOCK_BILL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ledger.h"

/* The largest statement served (bytes): about 290,000 lines. */
#define BILL_MAX_BYTES (64u * 1024 * 1024)

#define BILL_HEADER                                                                                                                           \
    "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态," \
    "付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,"  \
    "退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
#define BILL_SUMMARY_HEADER                                                                        \
    "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"
/* The payer named on lines of charges made without an openid. */
#define BILL_DEFAULT_OPENID "oIdemPayMockPayer0000000000"

typedef enum { BILL_ALL = 0, BILL_SUCCESS, BILL_REFUND } bill_filter;

/* What a downloadbill request asks for: records with from <= time < to
 * (UTC seconds) of the given type. */
typedef struct {
    time_t from, to;
    bill_filter type;
    bool has_day; /* bill_date given: day is its China midnight (UTC seconds) */
    time_t day;
    bool ranged; /* begin_time/end_time given: from/to are the range */
    bool gzip;   /* tar_type GZIP: the text is sent gzip-compressed */
} bill_query;

/* WeChat's documented hour (China time) from which day D's bill can be
 * fetched on D+1: generated from 9:00, fetch after 10:00. */
#define BILL_READY_HOUR_DEFAULT 10

/* China Standard Time text (UTC+8, no daylight saving) to UTC seconds:
 * "yyyyMMdd" (midnight) when len is 8, "yyyyMMddHHmmss" when len is 14.
 * Digits only, a real calendar date and time, years 1970-9999. Returns 0,
 * or -1 with *out untouched. */
int bill_parse_cst(const char *s, size_t len, time_t *out);

/* Checks the request's bill_date, bill_type, begin_time and end_time (each
 * NULL or "" when absent) and fills *q. bill_date selects one China day;
 * begin_time and end_time, given together, replace it (bill_date may then
 * be absent, and is ignored when present but still checked). Returns 0, or
 * -1 with *err_code WeChat's LACK_PARAMS / PARAM_ERROR and an
 * err_code_des in why. */
int bill_parse_query(const char *bill_date, const char *bill_type, const char *begin_time,
                     const char *end_time, bill_query *q, const char **err_code, char *why,
                     size_t whylen);

/* tar_type: absent/"" (plain text) or "GZIP" (sets q->gzip). 0, or -1 with
 * WeChat's PARAM_ERROR reason in why. */
int bill_parse_tar_type(const char *tar_type, bill_query *q, char *why, size_t whylen);

/* When the bill of the China day starting at day (UTC seconds, as
 * bill_parse_cst gives "yyyyMMdd") can be fetched: the next day at
 * ready_hour China time, in UTC seconds. */
time_t bill_ready_at(time_t day, int ready_hour);

/* Narrows q to what the mock serves under its knobs: a range when
 * range_enabled, else bill_date's whole day (a range given with a bill_date
 * is ignored, as WeChat ignores unknown fields). Returns BILL_SERVE (q's
 * from/to say what), BILL_NOT_READY (the day's bill does not exist yet at
 * now: "Bill Creating") or BILL_NO_DATE (a range alone, without the
 * extension: LACK_PARAMS bill_date). */
typedef enum { BILL_SERVE = 0, BILL_NOT_READY, BILL_NO_DATE } bill_readiness;
bill_readiness bill_select(bill_query *q, time_t now, int ready_hour, bool range_enabled);

/* The transaction_id of a forged copy of a charge line (the bill_forge
 * knob): the charge's with its first character replaced by 'F', which no
 * charge of the ledger has ("4200..."). */
void bill_forged_txid(const char *txid, char *out, size_t cap);

/* The out_trade_no of an unreadable copy of a charge line (the
 * bill_bad_line knob): a space is outside every out_trade_no's alphabet. */
#define BILL_BAD_OUT_TRADE_NO "UNREADABLE LINE"

/* text[0..len) gzip-compressed (RFC 1952), malloc'd into *out (caller
 * frees), *out_len bytes. 0, or -1 (zlib or OOM; nothing to free). */
int bill_gzip(const char *text, size_t len, char **out, size_t *out_len);

typedef struct bill bill;

/* A new statement for the merchant appid / mch_id (copied), at most
 * max_bytes long with its summary. NULL on OOM. */
bill *bill_new(const char *appid, const char *mch_id, size_t max_bytes);
/* NULL accepted. */
void bill_free(bill *b);
/* Forgets every line and total (the header stays). */
void bill_restart(bill *b);
/* Appends the line of one record. Returns 0, or -1 (the limit would be
 * passed, or OOM) with nothing appended. */
int bill_add(bill *b, const ledger_bill_record *r);
/* Lines appended so far. */
size_t bill_lines(const bill *b);
/* Appends the summary and hands the text over: a malloc'd NUL-terminated
 * string (caller frees) of *len bytes. b is then empty and must only be
 * freed. NULL when the summary does not fit or on OOM (b unchanged). */
char *bill_finish(bill *b, size_t *len);

/* One record's line (without "\r\n") into out; the fee it carries in
 * *fee_fen. Returns the length, or -1 when it does not fit in cap. */
int bill_format_line(const char *appid, const char *mch_id, const ledger_bill_record *r, char *out,
                     size_t cap, long long *fee_fen);

#endif
