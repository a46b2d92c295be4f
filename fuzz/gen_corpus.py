#!/usr/bin/env python3
"""gen_corpus - writes the seed corpora fuzz/corpus/<harness>/ (deterministic:
fixed nonces, times and ids; signatures with the documented development key).
Run it again after changing the seeds below; libFuzzer's own finds stay in the
build tree's fuzz/work/ and are never written here.

usage: python3 fuzz/gen_corpus.py"""
import hashlib
import hmac
import json
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
# The development merchant's one definition (fuzz/harness.h uses it too).
with open(os.path.join(HERE, "..", "common", "dev_merchant.h")) as _f:
    _DEV = dict(re.findall(r'#define IDEMPAY_DEV_(\w+) "([^"]*)"', _f.read()))
KEY = _DEV["KEY"]
APPID, MCHID = _DEV["APPID"], _DEV["MCHID"]


def sign(fields, key=KEY, sign_type="MD5"):
    items = sorted((k, v) for k, v in fields.items() if k != "sign" and v != "")
    s = "&".join(f"{k}={v}" for k, v in items) + "&key=" + key
    if sign_type == "HMAC-SHA256":
        return hmac.new(key.encode(), s.encode(), hashlib.sha256).hexdigest().upper()
    return hashlib.md5(s.encode()).hexdigest().upper()


def xml(fields, plain=("total_fee", "cash_fee")):
    """WeChat's form: CDATA for text, bare digits for the amounts."""
    out = ["<xml>"]
    for k, v in fields.items():
        out.append(f"<{k}>{v}</{k}>" if k in plain else f"<{k}><![CDATA[{v}]]></{k}>")
    out.append("</xml>")
    return "".join(out)


def signed(fields, key=KEY, sign_type="MD5"):
    f = dict(fields)
    if sign_type != "MD5":
        f["sign_type"] = sign_type
    f["sign"] = sign(f, key, sign_type)
    return f


def notification(**over):
    f = {
        "appid": APPID, "bank_type": "CMC", "cash_fee": "1230", "fee_type": "CNY",
        "is_subscribe": "N", "mch_id": MCHID, "nonce_str": "5K8264ILTKCH16CQ2502SI8ZNMTM67VS",
        "openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "out_trade_no": "ORD20260101000001",
        "result_code": "SUCCESS", "return_code": "SUCCESS", "time_end": "20260101120000",
        "total_fee": "1230", "trade_type": "NATIVE",
        "transaction_id": "4200000001202601010000000001",
    }
    return {k: v for k, v in {**f, **over}.items() if v is not None}  # None: field left out


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<xml><return_code>&lol3;</return_code></xml>"""

XXE = """<?xml version="1.0"?>
<!DOCTYPE xml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<xml><return_code>&xxe;</return_code></xml>"""


def notify_seeds():
    ok = signed(notification())
    s = {
        "valid_md5.xml": xml(ok),
        "valid_hmac.xml": xml(signed(notification(), sign_type="HMAC-SHA256")),
        "valid_decl_bom.xml": "\ufeff<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + xml(ok) + "\n",
        "valid_all_cdata.xml": xml(ok, plain=()),
        "valid_plain_text.xml": xml(ok, plain=tuple(ok)),
        "valid_pretty.xml": xml(ok).replace("><", ">\n  <").replace("  </xml>", "</xml>"),
        "valid_attach_amp.xml": xml(signed(notification(attach="a&b<c>"))).replace(
            "<![CDATA[a&b<c>]]>", "a&amp;b&lt;c&gt;"),
        "valid_attach_cjk.xml": xml(signed(notification(attach="\u4e2d\u6587 ]]> x"))).replace(
            "\u4e2d\u6587 ]]> x", "\u4e2d\u6587 ]]]]><![CDATA[> x"),
        "valid_empty_field.xml": xml(signed(notification(attach=""))),
        "bad_sign.xml": xml(dict(ok, sign="0" * 32)),
        "sign_other_key.xml": xml(signed(notification(), key="another-key-0123456789abcdefABCD")),
        "sign_type_bogus.xml": xml(signed(dict(notification(), sign_type="SHA1"))),
        "appid_other.xml": xml(signed(notification(appid="wx1111111111111111"))),
        "return_fail.xml": xml(signed(notification(return_code="FAIL", return_msg="SYSTEMERROR"))),
        "result_fail.xml": xml(signed(notification(result_code="FAIL", err_code="NOTENOUGH"))),
        "fee_zero.xml": xml(signed(notification(total_fee="0"))),
        "fee_negative.xml": xml(signed(notification(total_fee="-1"))),
        "fee_exp.xml": xml(signed(notification(total_fee="1e3"))),
        "fee_decimal.xml": xml(signed(notification(total_fee="12.30"))),
        "fee_leading_zero.xml": xml(signed(notification(total_fee="01230"))),
        "fee_huge.xml": xml(signed(notification(total_fee="99999999999999999999"))),
        "fee_usd.xml": xml(signed(notification(fee_type="USD"))),
        "no_txn.xml": xml(signed(notification(transaction_id=None))),
        "order_no_long.xml": xml(signed(notification(out_trade_no="A" * 33))),
        "doctype_billion_laughs.xml": BILLION_LAUGHS,
        "doctype_xxe.xml": XXE,
        "truncated.xml": xml(ok)[:-6],
        "truncated_mid_cdata.xml": xml(ok)[:120],
        "nested.xml": "<xml><return_code><a><b>SUCCESS</b></a></return_code></xml>",
        "duplicate_field.xml": xml(ok).replace("</xml>", "<total_fee>1</total_fee></xml>"),
        "comment.xml": "<xml><!-- c --><return_code>SUCCESS</return_code></xml>",
        "pi.xml": "<xml><?php x ?><return_code>SUCCESS</return_code></xml>",
        "attribute.xml": "<xml a=\"1\"><return_code x='y'>SUCCESS</return_code></xml>",
        "two_roots.xml": "<xml></xml><xml></xml>",
        "self_closing.xml": "<xml/>",
        "empty_root.xml": "<xml></xml>",
        "other_root.xml": "<root><return_code>SUCCESS</return_code></root>",
        "charref.xml": "<xml><attach>&#x4e2d;&#20013;&#xD800;</attach></xml>",
        "bad_utf8.xml": b"<xml><attach><![CDATA[\xc3\x28\xed\xa0\x80]]></attach></xml>",
        "nul.xml": b"<xml><attach>a\x00b</attach></xml>",
        "not_xml.json": '{"return_code": "SUCCESS"}',
        "text_after_root.xml": "<xml></xml>trailing",
        "unclosed_cdata.xml": "<xml><a><![CDATA[abc</a></xml>",
    }
    return s


def reply(**f):
    return {"return_code": "SUCCESS", "return_msg": "OK", "appid": APPID, "mch_id": MCHID,
            "nonce_str": "IITRi8Iabbblz1Jc", **f}


def gateway_seeds():
    charged = reply(result_code="SUCCESS", prepay_id="wx201411101639507cbf6ffd8b0779950874",
                    trade_type="NATIVE", code_url="weixin://wxpay/bizpayurl/up?pr=NwY5Mz9",
                    transaction_id="4200000001202601010000000002", total_fee="1230")
    return {
        "unifiedorder_charged.xml": xml(signed(charged)),
        "unifiedorder_charged_hmac.xml": xml(signed(charged, sign_type="HMAC-SHA256")),
        "unifiedorder_orderpaid.xml": xml(signed(reply(result_code="FAIL", err_code="ORDERPAID",
                                                       err_code_des="order paid"))),
        "unifiedorder_systemerror.xml": xml(signed(reply(result_code="FAIL",
                                                         err_code="SYSTEMERROR"))),
        "unifiedorder_declined.xml": xml(signed(reply(result_code="FAIL", err_code="NOTENOUGH",
                                                      err_code_des="\u4f59\u989d\u4e0d\u8db3"))),
        "return_fail.xml": xml({"return_code": "FAIL", "return_msg": "\u7b7e\u540d\u9519\u8bef"}),
        "orderquery_success.xml": xml(signed(reply(
            result_code="SUCCESS", out_trade_no="ORD20260101000001", trade_state="SUCCESS",
            transaction_id="4200000001202601010000000002", total_fee="1230", cash_fee="1230"))),
        "orderquery_notpay.xml": xml(signed(reply(result_code="SUCCESS",
                                                  out_trade_no="ORD20260101000001",
                                                  trade_state="NOTPAY"))),
        "orderquery_refund.xml": xml(signed(reply(
            result_code="SUCCESS", out_trade_no="ORD20260101000001", trade_state="REFUND",
            transaction_id="4200000001202601010000000002", total_fee="1230"))),
        "orderquery_notexist.xml": xml(signed(reply(result_code="FAIL",
                                                    err_code="ORDERNOTEXIST"))),
        "refund_success.xml": xml(signed(reply(
            result_code="SUCCESS", transaction_id="4200000001202601010000000002",
            out_refund_no="RF4200000001202601010000000002", refund_id="50000000001",
            refund_fee="1230", total_fee="1230"))),
        "unsigned.xml": xml(charged),
        "mch_other.xml": xml(signed(dict(charged, mch_id="1900000999"))),
        "fee_bad.xml": xml(signed(dict(charged, total_fee="12.30"))),
        "txid_long.xml": xml(signed(dict(charged, transaction_id="4" * 40))),
        "doctype.xml": BILLION_LAUGHS,
        "truncated.xml": xml(signed(charged))[:-7],
        "html_error.html": "<html><body>502 Bad Gateway</body></html>",
    }


def pay_seed(body, flags=0, key=None):
    if isinstance(body, (dict, list)):
        body = json.dumps(body, ensure_ascii=False)
    if isinstance(body, str):
        body = body.encode()
    head = bytes([flags | (1 if key is not None else 0)])
    if key is not None:
        head += key.encode() + b"\n"
    return head + body


def pay_request_seeds():
    ok = {"order_no": "ORD20260101000001", "user_id": 42, "amount": "12.30"}
    return {
        "valid": pay_seed(ok),
        "valid_key": pay_seed(ok, key="9b8f1d2c-key-0001"),
        "valid_quoted_key": pay_seed(ok, key='"a key with \\"quotes\\" and \\\\"'),
        "valid_token": pay_seed(dict(ok, token="Ab3_-0123456789abcdefghijklmnopq")),
        "valid_token_null": pay_seed(dict(ok, token=None)),
        "valid_unknown_field": pay_seed(dict(ok, note={"x": [1, 2, 3]})),
        "valid_charset": pay_seed(ok, flags=2),
        "valid_amounts_7": pay_seed(dict(ok, amount="7")),
        "valid_amounts_0.5": pay_seed(dict(ok, amount="0.5")),
        "valid_max": pay_seed({"order_no": "a_b|c*d-" + "9" * 24, "user_id": 9223372036854775807,
                               "amount": "99999999.99"}),
        "text_plain": pay_seed(ok, flags=4),
        "no_content_type": pay_seed(ok, flags=6),
        "put": pay_seed(ok, flags=8),
        "too_large": pay_seed(ok, flags=16),
        "amount_number": pay_seed(dict(ok, amount=12.3)),
        "amount_exp": pay_seed(dict(ok, amount="1e3")),
        "amount_3dp": pay_seed(dict(ok, amount="0.001")),
        "amount_zero": pay_seed(dict(ok, amount="0")),
        "amount_negative": pay_seed(dict(ok, amount="-1")),
        "amount_too_big": pay_seed(dict(ok, amount="100000000.00")),
        "amount_space": pay_seed(dict(ok, amount=" 1")),
        "amount_fullwidth": pay_seed(dict(ok, amount="\uff11")),
        "user_string": pay_seed(dict(ok, user_id="42")),
        "user_zero": pay_seed(dict(ok, user_id=0)),
        "user_2p63": pay_seed('{"order_no":"ORD20260101000001","user_id":9223372036854775808,'
                              '"amount":"1"}'),
        "user_float": pay_seed('{"order_no":"ORD20260101000001","user_id":42.0,"amount":"1"}'),
        "order_33": pay_seed(dict(ok, order_no="A" * 33)),
        "order_5": pay_seed(dict(ok, order_no="ABCDE")),
        "order_cjk": pay_seed(dict(ok, order_no="\u8ba2\u5355\u53f7123456")),
        "order_nul": pay_seed('{"order_no":"ORD2026\\u0000001","user_id":1,"amount":"1"}'),
        "missing_amount": pay_seed({"order_no": "ORD20260101000001", "user_id": 42}),
        "duplicate_key": pay_seed('{"order_no":"ORD20260101000001","user_id":1,"user_id":2,'
                                  '"amount":"1"}'),
        "array": pay_seed([ok]),
        "broken": pay_seed('{"order_no": "ORD2026010100'),
        "empty": pay_seed(""),
        "key_control": pay_seed(ok, key="abc\x01def"),
        "key_long": pay_seed(ok, key="k" * 256),
        "key_empty": pay_seed(ok, key=""),
        "token_long": pay_seed(dict(ok, token="t" * 257)),
        "token_number": pay_seed(dict(ok, token=5)),
    }


def amount_seeds():
    vals = ["12.30", "12.3", "7", "0.5", "0.01", "99999999.99", "100000000.00", "0", "0.00",
            "1e3", "0.001", "-1", "+1", " 1", "1 ", "\uff11", ".5", "5.", "1.2.3", "00.10",
            "01", "99999999999999999999", "9999999999", "1230", "0x10", "", "1,00", "\u0661"]
    return {f"a{i:02d}": v for i, v in enumerate(vals)}


# ---- FastCGI record streams (fuzz_fcgi): what a peer sends to the socket ----
FCGI_BEGIN, FCGI_ABORT, FCGI_PARAMS, FCGI_STDIN, FCGI_GET_VALUES = 1, 2, 4, 5, 9


def fcgi_record(rtype, content=b"", req_id=1, padding=0):
    head = bytes([1, rtype, req_id >> 8, req_id & 255, len(content) >> 8, len(content) & 255,
                  padding, 0])
    return head + content + b"\0" * padding


def fcgi_len(n):
    return bytes([n]) if n < 128 else (n | 0x80000000).to_bytes(4, "big")


def fcgi_nv(params):
    out = b""
    for k, v in params.items():
        k, v = k.encode(), v.encode() if isinstance(v, str) else v
        out += fcgi_len(len(k)) + fcgi_len(len(v)) + k + v
    return out


def fcgi_request(params, body=b"", keep=False, req_id=1, role=1, chunk=65535):
    """BEGIN_REQUEST, PARAMS (split at chunk bytes), an empty PARAMS, STDIN, empty STDIN."""
    out = fcgi_record(FCGI_BEGIN, bytes([0, role, 1 if keep else 0]) + b"\0" * 5, req_id)
    nv = params if isinstance(params, bytes) else fcgi_nv(params)
    for i in range(0, len(nv), chunk):
        out += fcgi_record(FCGI_PARAMS, nv[i:i + chunk], req_id)
    out += fcgi_record(FCGI_PARAMS, b"", req_id)
    for i in range(0, len(body), 65535):
        out += fcgi_record(FCGI_STDIN, body[i:i + 65535], req_id)
    return out + fcgi_record(FCGI_STDIN, b"", req_id)


def fcgi_params(method, uri, body=b"", ctype="", key=None, length=None):
    path, _, query = uri.partition("?")
    p = {"REQUEST_METHOD": method, "REQUEST_URI": uri, "SCRIPT_NAME": path,
         "QUERY_STRING": query, "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
         "CONTENT_LENGTH": str(len(body)) if length is None else length}
    if ctype:
        p["CONTENT_TYPE"] = ctype
    if key is not None:
        p["HTTP_IDEMPOTENCY_KEY"] = key
    return p


def fcgi_seeds():
    pay = json.dumps({"order_no": "ORD20260101000001", "user_id": 42, "amount": "12.30"}).encode()
    note = xml(signed(notification())).encode()
    ping = fcgi_request(fcgi_params("GET", "/api/ping"))
    post = fcgi_request(fcgi_params("POST", "/api/pay", pay, "application/json", "key-0001"), pay)
    big_name = fcgi_record(FCGI_PARAMS, fcgi_len(0x7FFFFFFF) + fcgi_len(1) + b"A" * 64)
    big_value = fcgi_record(FCGI_PARAMS, fcgi_len(11) + fcgi_len(0x7FFFFFFF) + b"REQUEST_URI/")
    begin = fcgi_record(FCGI_BEGIN, bytes([0, 1, 0]) + b"\0" * 5)
    return {
        "ping": ping,
        "pay_post": post,
        "pay_post_keepalive_twice": fcgi_request(
            fcgi_params("POST", "/api/pay", pay, "application/json"), pay, keep=True) + post,
        "order_get": fcgi_request(fcgi_params("GET", "/api/pay/orders/ORD%7C0001%2a")),
        "order_bad_escape": fcgi_request(fcgi_params("GET", "/api/pay/orders/ORD%00%zz%")),
        "token_get": fcgi_request(fcgi_params("GET", "/api/pay/token?user_id=42&x=%41+b")),
        "token_twice": fcgi_request(fcgi_params("GET", "/api/pay/token?user_id=1&user_id=2")),
        "callback": fcgi_request(fcgi_params("POST", "/api/pay/callback/wechat", note, "text/xml"),
                                 note),
        "metrics": fcgi_request(fcgi_params("GET", "/metrics")),
        "method_405": fcgi_request(fcgi_params("DELETE", "/api/pay")),
        "unknown_404": fcgi_request(fcgi_params("GET", "/nope/../api/ping?")),
        "uri_long": fcgi_request(fcgi_params("GET", "/api/pay/orders/" + "A" * 3000 + "?q=1")),
        "no_params": fcgi_request({}),
        "params_split": fcgi_request(fcgi_params("GET", "/api/ping"), chunk=7),
        "padding": fcgi_record(FCGI_BEGIN, bytes([0, 1, 0]) + b"\0" * 5, padding=3)
        + fcgi_record(FCGI_PARAMS, fcgi_nv(fcgi_params("GET", "/healthz")), padding=7)
        + fcgi_record(FCGI_PARAMS) + fcgi_record(FCGI_STDIN),
        "cl_negative": fcgi_request(fcgi_params("POST", "/api/pay", length="-2147483649"),
                                    b"x" * 4000),
        "cl_too_large": fcgi_request(fcgi_params("POST", "/api/pay", length="65537"), pay),
        "cl_space": fcgi_request(fcgi_params("POST", "/api/pay", pay, "application/json",
                                             length=" 64"), pay),
        "cl_20_digits": fcgi_request(fcgi_params("POST", "/api/pay", length="9" * 20), pay),
        "cl_more_than_sent": fcgi_request(fcgi_params("POST", "/api/pay", pay, "application/json",
                                                      length="65536"), pay),
        "cl_less_than_sent": fcgi_request(fcgi_params("POST", "/api/pay", pay, "application/json",
                                                      length="5"), pay),
        "huge_name_length": begin + big_name,
        "huge_value_length": begin + big_value,
        "name_length_past_record": begin + fcgi_record(FCGI_PARAMS, fcgi_len(200) + fcgi_len(2)
                                                       + b"AB") + fcgi_record(FCGI_PARAMS),
        "truncated_header": ping[:5],
        "truncated_begin": ping[:12],
        "truncated_params": ping[:40],
        "truncated_stdin": post[:-12],
        "abort": fcgi_record(FCGI_BEGIN, bytes([0, 1, 0]) + b"\0" * 5)
        + fcgi_record(FCGI_ABORT),
        "role_authorizer": fcgi_request(fcgi_params("GET", "/api/ping"), role=2),
        "get_values": fcgi_record(FCGI_GET_VALUES, fcgi_nv({"FCGI_MAX_CONNS": "",
                                                             "FCGI_MPXS_CONNS": ""}), req_id=0)
        + ping,
        "other_request_id": fcgi_request(fcgi_params("GET", "/api/ping"), req_id=2)[:24] + ping,
        "unknown_type": fcgi_record(11, b"zz") + ping,
        "version_2": bytes([2]) + ping[1:],
        "stdin_before_params": begin + fcgi_record(FCGI_STDIN, b"abc") + ping[16:],
    }


def v3_seeds():
    """fuzz_v3: the mode byte, then its input (fuzz/fuzz_v3.c)."""
    pay = {"appid": APPID, "mchid": MCHID, "out_trade_no": "ORDER0001", "transaction_id": "4200000001",
           "trade_type": "NATIVE", "trade_state": "SUCCESS", "payer": {"openid": "oFuzz"},
           "amount": {"total": 1230, "payer_total": 1230, "currency": "CNY"}}
    refund = {"mchid": MCHID, "out_trade_no": "ORDER0001", "transaction_id": "4200000001",
              "out_refund_no": "RM0001", "refund_id": "5000001", "refund_status": "SUCCESS",
              "amount": {"total": 1230, "refund": 100, "payer_total": 1230, "payer_refund": 100}}
    txn = {"appid": APPID, "mchid": MCHID, "out_trade_no": "ORDER0001", "trade_state": "SUCCESS",
           "transaction_id": "4200000001", "amount": {"total": 1230, "currency": "CNY"}}
    envelope = {"id": "EV", "create_time": "2026-12-02T12:00:00+08:00",
                "resource_type": "encrypt-resource", "event_type": "TRANSACTION.SUCCESS",
                "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM",
                             "ciphertext": "AAAA", "associated_data": "transaction",
                             "nonce": "fuzznonce123"}}
    j = lambda o: json.dumps(o, separators=(",", ":"))  # noqa: E731
    return {
        "envelope": b"\x00" + j(envelope).encode(),
        "resource_payment": b"\x01\x00" + j(pay).encode(),
        "resource_refund": b"\x01\x01" + j(refund).encode(),
        "resource_refund_closed": b"\x01\x02" + j(dict(refund, refund_status="CLOSED")).encode(),
        "reply_native": b"\x02\x00\x00" + b'{"code_url":"weixin://wxpay/bizpayurl?pr=Ab12"}',
        "reply_query": b"\x02\x02\x00" + j(txn).encode(),
        "reply_close_204": b"\x02\x03\x01",
        "reply_error": b"\x02\x04\x04" + b'{"code":"NOT_ENOUGH","message":"x"}',
        "reply_5xx": b"\x02\x00\x07" + b'{"code":"SYSTEM_ERROR","message":"x"}',
        "raw_headers": b"\x03" + b"5157F09EFDC096DE\nc2ln\n1700000000\nnonce\n" + j(envelope).encode(),
    }


def write(name, seeds):
    d = os.path.join(HERE, "corpus", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for fname, content in seeds.items():
        if isinstance(content, str):
            content = content.encode("utf-8")
        with open(os.path.join(d, fname), "wb") as f:
            f.write(content)
    print(f"{d}: {len(seeds)} seeds")


if __name__ == "__main__":
    write("fuzz_notify", notify_seeds())
    write("fuzz_gateway_reply", gateway_seeds())
    write("fuzz_pay_request", pay_request_seeds())
    write("fuzz_amount", amount_seeds())
    write("fuzz_fcgi", fcgi_seeds())
    write("fuzz_v3", v3_seeds())
