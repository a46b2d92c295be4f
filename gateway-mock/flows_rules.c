/* flows_rules.c - payment codes, test codes, time_expire, fingerprints. */
#include "flows_rules.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wx_sign.h"

bool flows_auth_code_valid(const char *s)
{
    if (s == NULL || strlen(s) != 18 || s[0] != '1' || s[1] < '0' || s[1] > '5')
        return false;
    for (int i = 0; i < 18; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* WeChat's words (付款码支付, error codes). */
static const mp_test_code flows_codes[] = {
    { "0001", MP_SUCCESS, NULL, NULL },
    { "0002", MP_USERPAYING_PAY, NULL, NULL },
    { "0003", MP_USERPAYING_FAIL, NULL, NULL },
    { "0004", MP_UNKNOWN_NONE, "SYSTEMERROR", "系统超时" },
    { "0005", MP_UNKNOWN_CHARGED, "SYSTEMERROR", "系统超时" },
    { "0006", MP_UNKNOWN_NONE, "BANKERROR", "银行系统异常" },
    { "0007", MP_UNKNOWN_CHARGED, "BANKERROR", "银行系统异常" },
    { "0008", MP_DECLINED, "AUTHCODEEXPIRE", "二维码已过期，请用户在微信上刷新后再试" },
    { "0009", MP_DECLINED, "AUTH_CODE_INVALID", "101 付款码已过期,请退出重试" },
    { "0010", MP_DECLINED, "NOTENOUGH", "余额不足" },
    { "0011", MP_DECLINED, "NOTSUPORTCARD", "不支持卡类型" },
    { "0012", MP_DECLINED, "AUTH_CODE_ERROR", "授权码参数错误" },
    { "0013", MP_DECLINED, "BUYER_MISMATCH", "支付帐号错误" },
    { "0014", MP_DECLINED, "TRADE_ERROR", "用户没有输入支付密码" },
};
#define FLOWS_NCODES ((int)(sizeof(flows_codes) / sizeof(flows_codes[0])))

const mp_test_code *flows_test_codes(int *n)
{
    *n = FLOWS_NCODES;
    return flows_codes;
}

const mp_test_code *flows_test_code(const char *auth_code)
{
    /* Test codes are 1x 999999999999 nnnn: twelve 9s after the prefix mark
     * one, so a real-looking code is never taken for one. */
    if (!flows_auth_code_valid(auth_code) || strncmp(auth_code + 2, "999999999999", 12) != 0)
        return NULL;
    for (int i = 0; i < FLOWS_NCODES; i++)
        if (strcmp(auth_code + 14, flows_codes[i].suffix) == 0)
            return &flows_codes[i];
    return NULL;
}

static int flows_num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int flows_parse_cst(const char *s, long long *ms)
{
    if (s == NULL || strlen(s) != 14)
        return -1;
    int y = flows_num(s, 4), mo = flows_num(s + 4, 2), d = flows_num(s + 6, 2);
    int h = flows_num(s + 8, 2), mi = flows_num(s + 10, 2), se = flows_num(s + 12, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        se < 0 || se > 59)
        return -1;
    struct tm tm = { .tm_year = y - 1900,
                     .tm_mon = mo - 1,
                     .tm_mday = d,
                     .tm_hour = h,
                     .tm_min = mi,
                     .tm_sec = se };
    time_t t = timegm(&tm);
    struct tm back;
    if (t == (time_t)-1 || gmtime_r(&t, &back) == NULL || back.tm_mday != d ||
        back.tm_mon != mo - 1)
        return -1; /* 31 February and the like */
    *ms = ((long long)t - 8 * 3600) * 1000LL;
    return 0;
}

int flows_fingerprint(const wx_msg *m, char out[33])
{
    wx_msg copy;
    char hex[WX_SIGN_HEX_MAX];
    int rc = -1;

    wx_msg_init(&copy);
    if (wx_msg_merge(&copy, m) == 0) {
        wx_msg_del(&copy, "nonce_str");
        wx_msg_del(&copy, "sign");
        wx_msg_del(&copy, "sign_type");
        if (wx_sign_compute(&copy, "idempay-mock-fingerprint", WX_SIGN_MD5, hex) == 0) {
            snprintf(out, 33, "%.32s", hex);
            rc = 0;
        }
    }
    wx_msg_free(&copy);
    return rc;
}
