#!/usr/bin/env python3
"""test_mock_refunds - the mock gateway's refunds as WeChat Pay v2 runs them
(docs/MOCK.md, "Refunds that complete"): /secapi/pay/refund accepts (refund_id,
PROCESSING), the refund ends refund_delay_ms later as SUCCESS, REFUNDCLOSE or
CHANGE; only SUCCESS counts as refunded in the ledger; NOTENOUGH and
USER_ACCOUNT_ABNORMAL refuse a new refund; never more than what is left;
/pay/refundquery by each of its keys; the refund result notification, its
req_info decrypted here with the openssl command line; /secapi/ over HTTPS
with and without the merchant's client certificate (curl --cert).

Needs a running stack (./stack up): the mock on IDEMPAY_MOCK_PORT, its HTTPS
port IDEMPAY_MOCK_TLS_PORT (nginx front) and the test PKI in $STATE/tls."""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, KEY, MCHID, MOCK, STATE, check, http, mock_config, mock_ledger, \
    mock_reset, mock_unifiedorder, random_token, run_tests, test, unique, wait_until, \
    wx_parse, wx_sign, wx_xml  # noqa: E402
from lib_mock import Merchant  # noqa: E402

_lib_mock_reset = mock_reset


def mock_reset():  # noqa: F811 - the lib's, then plain HTTP refunds allowed
    """The mock's defaults, except require_client_cert: ./stack's mock asks
    for the client certificate (the service sends it), and these tests call
    /secapi/ over plain HTTP; secapi_wants_the_merchant_certificate turns it
    on again."""
    _lib_mock_reset()
    # instant_charge: these tests drive the charge-with-reply machinery
    # (faults, dedupe, refunds of a charge) through unifiedorder as the old
    # mock charged; the real prepay is test_mock_flows.py's
    mock_config(require_client_cert=False, instant_charge=True)


MOCK_PORT = int(os.environ.get("IDEMPAY_MOCK_PORT", "18081"))
TLS_PORT = int(os.environ.get("IDEMPAY_MOCK_TLS_PORT", str(MOCK_PORT + 7)))
TLS = os.path.join(STATE, "tls")
DEAD_URL = "http://127.0.0.1:9/notify"


# --- WeChat calls ------------------------------------------------------------

def signed(fields):
    f = dict(fields)
    f["sign"] = wx_sign(f, KEY)
    return wx_xml(f)


def call(path, fields):
    r = http("POST", MOCK + path, signed(fields), {"Content-Type": "text/xml"})
    check(r.status == 200, f"{path}: HTTP {r.status}")
    f = wx_parse(r.text)
    if f.get("return_code") == "SUCCESS" and "sign" in f:
        check(f["sign"] == wx_sign(f, KEY), f"{path}: reply signature: {f}")
    return f


def outcome(f):
    if f.get("return_code") != "SUCCESS":
        return "FAIL:" + f.get("return_msg", "")
    return "SUCCESS" if f.get("result_code") == "SUCCESS" else f.get("err_code")


def base_fields():
    return {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24)}


def refund_fields(orn, total, fee, txid=None, otn=None, notify_url=None):
    f = base_fields()
    f.update({"out_refund_no": orn, "total_fee": str(total), "refund_fee": str(fee)})
    for k, v in (("transaction_id", txid), ("out_trade_no", otn), ("notify_url", notify_url)):
        if v:
            f[k] = v
    return f


def refund(orn, total, fee, txid=None, otn=None, notify_url=None):
    return call("/secapi/pay/refund", refund_fields(orn, total, fee, txid, otn, notify_url))


def refundquery(**keys):
    f = base_fields()
    f.update(keys)
    return call("/pay/refundquery", f)


def charge(fee):
    """A charge at the mock: (out_trade_no, transaction_id)."""
    otn = unique("MRF")
    f = mock_unifiedorder(otn, fee, DEAD_URL)
    check(f.get("transaction_id"), f"charge: {f}")
    return otn, f["transaction_id"]


def ledger_of(otn):
    r = http("GET", f"{MOCK}/mock/ledger?out_trade_no={otn}")
    check(r.status == 200, f"ledger: {r}")
    j = r.json()
    return j["charges"][0], j["refunds"]


def wait_status(otn, orn, status, timeout=15.0):
    def ended():
        return any(x["out_refund_no"] == orn and x["status"] == status for x in ledger_of(otn)[1])
    wait_until(ended, timeout, 0.1, f"refund {orn} {status}")


# --- tests -------------------------------------------------------------------

@test
def accepted_then_success():
    mock_reset()
    mock_config(refund_delay_ms=1500)
    otn, txid = charge(1000)
    f = refund("R" + otn, 1000, 400, txid=txid)
    check(outcome(f) == "SUCCESS" and f["refund_id"].startswith("50") and f["refund_fee"] == "400"
          and f["out_refund_no"] == "R" + otn and f["transaction_id"] == txid, f"accepted: {f}")
    c, rs = ledger_of(otn)
    check(c["refunded"] is False and c["refunded_fee"] == 0, f"not refunded while PROCESSING: {c}")
    check(len(rs) == 1 and rs[0]["status"] == "PROCESSING" and rs[0]["refund_id"] == f["refund_id"],
          f"ledger refund: {rs}")
    q = refundquery(out_refund_no="R" + otn)
    check(outcome(q) == "SUCCESS" and q["refund_count"] == "1" and q["refund_status_0"] == "PROCESSING"
          and "refund_success_time_0" not in q, f"refundquery while PROCESSING: {q}")
    again = refund("R" + otn, 1000, 400, txid=txid)
    check(outcome(again) == "SUCCESS" and again["refund_id"] == f["refund_id"], f"repeat: {again}")
    wait_status(otn, "R" + otn, "SUCCESS")
    c, rs = ledger_of(otn)
    check(c["refunded"] is True and c["refunded_fee"] == 400 and c["refund_count"] == 1
          and len(rs) == 1 and rs[0]["ended_at"], f"SUCCESS counts once: {c} {rs}")
    q = refundquery(out_refund_no="R" + otn)
    check(q["refund_status_0"] == "SUCCESS" and len(q.get("refund_success_time_0", "")) == 19
          and q["refund_fee_0"] == "400", f"refundquery after SUCCESS: {q}")


@test
def refundclose_gives_the_amount_back_change_keeps_it():
    mock_reset()
    mock_config(refund_delay_ms=0, refund_close_rate=1.0)
    otn, txid = charge(500)
    check(outcome(refund("C" + otn, 500, 500, txid=txid)) == "SUCCESS", "accepted")
    wait_status(otn, "C" + otn, "REFUNDCLOSE")
    c, _ = ledger_of(otn)
    check(c["refunded"] is False and c["refunded_fee"] == 0, f"REFUNDCLOSE refunds nothing: {c}")
    check(refundquery(transaction_id=txid)["refund_status_0"] == "REFUNDCLOSE", "refundquery CLOSE")
    mock_config(refund_close_rate=0.0, refund_change_rate=1.0)
    check(outcome(refund("D" + otn, 500, 500, txid=txid)) == "SUCCESS", "closed: refundable again")
    wait_status(otn, "D" + otn, "CHANGE")
    c, _ = ledger_of(otn)
    check(c["refunded"] is False, f"CHANGE is not refunded: {c}")
    check(outcome(refund("E" + otn, 500, 1, txid=txid)) == "INVALID_REQUEST", "CHANGE keeps the amount")
    q = refundquery(out_trade_no=otn)
    check(q["refund_count"] == "2" and q["refund_status_0"] == "REFUNDCLOSE"
          and q["refund_status_1"] == "CHANGE", f"both listed: {q}")


@test
def never_above_what_is_left():
    mock_reset()
    mock_config(refund_delay_ms=60000)
    otn, txid = charge(1000)
    check(outcome(refund("A" + otn, 1000, 600, otn=otn)) == "SUCCESS", "first part")
    f = refund("B" + otn, 1000, 401, otn=otn)
    check(outcome(f) == "INVALID_REQUEST", f"PROCESSING refunds count against what is left: {f}")
    check(outcome(refund("B" + otn, 1000, 400, otn=otn)) == "SUCCESS", "the rest")
    check(outcome(refund("C" + otn, 999, 1, otn=otn)) == "INVALID_REQUEST", "total_fee must match")
    check(outcome(refund("Z" + otn, 10, 10, otn=unique("NONE"))) == "ORDERNOTEXIST", "no charge")


@test
def documented_refusals():
    mock_reset()
    mock_config(refund_delay_ms=60000)
    otn, txid = charge(300)
    check(outcome(refund("A" + otn, 300, 100, txid=txid)) == "SUCCESS", "accepted before")
    mock_config(refund_notenough_rate=1.0)
    f = refund("B" + otn, 300, 100, txid=txid)
    check(outcome(f) == "NOTENOUGH" and f["err_code_des"], f"NOTENOUGH: {f}")
    check(outcome(refund("A" + otn, 300, 100, txid=txid)) == "SUCCESS", "a known refund is not refused")
    mock_config(refund_notenough_rate=0.0, refund_abnormal_rate=1.0)
    check(outcome(refund("C" + otn, 300, 100, txid=txid)) == "USER_ACCOUNT_ABNORMAL", "abnormal")
    _, rs = ledger_of(otn)
    check([x["out_refund_no"] for x in rs] == ["A" + otn], f"refused refunds recorded nothing: {rs}")


@test
def refundquery_keys_and_errors():
    mock_reset()
    mock_config(refund_delay_ms=0)
    otn, txid = charge(900)
    rid = [refund(p + otn, 900, 300, txid=txid)["refund_id"] for p in ("A", "B")]
    wait_status(otn, "B" + otn, "SUCCESS")
    by_rid = refundquery(refund_id=rid[1], out_refund_no="A" + otn)   # refund_id wins
    check(by_rid["refund_count"] == "1" and by_rid["out_refund_no_0"] == "B" + otn, f"by refund_id: {by_rid}")
    for keys in ({"transaction_id": txid}, {"out_trade_no": otn}):
        q = refundquery(**keys)
        check(outcome(q) == "SUCCESS" and q["refund_count"] == "2" and q["total_fee"] == "900"
              and q["transaction_id"] == txid and q["out_trade_no"] == otn
              and {q["refund_id_0"], q["refund_id_1"]} == set(rid)
              and q["refund_status_1"] == "SUCCESS", f"by {keys}: {q}")
    check(outcome(refundquery(out_refund_no="nope" + otn)) == "REFUNDNOTEXIST", "unknown refund")
    check(outcome(refundquery()) == "LACK_PARAMS", "no key")
    # Paging: by an order key, 10 refunds from offset and total_refund_count.
    otn, txid = charge(1200)
    for i in range(12):
        check(outcome(refund(f"P{i:02d}" + otn, 1200, 100, txid=txid)) == "SUCCESS", f"refund {i}")
    q = refundquery(out_trade_no=otn)
    check(q["refund_count"] == "10" and q["total_refund_count"] == "12" and "out_refund_no_10" not in q
          and q["out_refund_no_0"] == "P00" + otn, f"first page: {q}")
    q = refundquery(transaction_id=txid, offset="10")
    check(q["refund_count"] == "2" and q["out_refund_no_0"] == "P10" + otn
          and q["out_refund_no_1"] == "P11" + otn, f"second page: {q}")
    check(outcome(refundquery(out_trade_no=otn, offset="12")) == "PARAM_ERROR", "offset past the end")
    q = refundquery(out_refund_no="P11" + otn)
    check(q["refund_count"] == "1" and "total_refund_count" not in q, f"by out_refund_no: {q}")
    # A targeted rule on refundquery (by the out_trade_no it names): once.
    mock_config(rules=[{"endpoint": "refundquery", "out_trade_no": otn, "times": 1,
                        "fault": {"kind": "error"}}])
    check(outcome(refundquery(out_trade_no=otn)) == "SYSTEMERROR", "the rule's SYSTEMERROR")
    check(outcome(refundquery(out_trade_no=otn)) == "SUCCESS", "then as before")


def decrypt_req_info(req_info, key=KEY):
    """WeChat's steps: base64 decode; key* = lower-case hex MD5 of the key;
    AES-256-ECB (PKCS7) under key*, here by the openssl command line."""
    aes_key = hashlib.md5(key.encode()).hexdigest().encode().hex()
    out = subprocess.run(["openssl", "enc", "-d", "-aes-256-ecb", "-K", aes_key],
                         input=base64.b64decode(req_info), capture_output=True, check=True)
    return out.stdout.decode()


@test
def refund_notification_with_encrypted_req_info():
    mock_reset()
    mock_config(refund_delay_ms=200)
    m = Merchant(lambda n: True)  # a local notify_url answering SUCCESS
    try:
        otn, txid = charge(700)
        f = refund("N" + otn, 700, 700, txid=txid, notify_url=m.url)
        check(outcome(f) == "SUCCESS", f"refund: {f}")
        wait_until(lambda: m.count(), 15, 0.1, "the refund notification")
        outer = wx_parse(m.arrivals[0][1])
        check(outer["return_code"] == "SUCCESS" and outer["appid"] == APPID and outer["mch_id"] == MCHID
              and outer["nonce_str"] and "sign" not in outer and outer["req_info"], f"outer: {outer}")
        inner_xml = decrypt_req_info(outer["req_info"])
        check(inner_xml.startswith("<root>") and inner_xml.endswith("</root>"), f"inner: {inner_xml}")
        inner = wx_parse(inner_xml)
        check(inner["refund_status"] == "SUCCESS" and inner["out_refund_no"] == "N" + otn
              and inner["refund_id"] == f["refund_id"] and inner["transaction_id"] == txid
              and inner["out_trade_no"] == otn and inner["total_fee"] == "700"
              and inner["refund_fee"] == "700" and inner["settlement_refund_fee"] == "700"
              and len(inner["success_time"]) == 19 and inner["refund_recv_accout"]
              and inner["refund_request_source"] == "API", f"inner fields: {inner}")
        check(subprocess.run(["openssl", "enc", "-d", "-aes-256-ecb", "-K",
                              hashlib.md5(b"another key").hexdigest().encode().hex()],
                             input=base64.b64decode(outer["req_info"]),
                             capture_output=True).returncode != 0, "another key cannot read it")
    finally:
        m.close()


# --- client certificates -----------------------------------------------------

def curl_secapi(body, cert=None, key=None, url=None):
    args = ["curl", "-s", "--max-time", "10", "--cacert", os.path.join(TLS, "ca.pem"),
            "-H", "Content-Type: text/xml", "--data-binary", "@-"]
    if cert:
        args += ["--cert", cert, "--key", key]
    args.append(url or f"https://127.0.0.1:{TLS_PORT}/secapi/pay/refund")
    r = subprocess.run(args, input=body.encode(), capture_output=True)
    check(r.returncode == 0, f"curl {args[-1]}: {r.returncode} {r.stderr!r}")
    return wx_parse(r.stdout.decode())


def other_merchant_cert(tmp):
    """A certificate of the test CA for another merchant (CN 1900000999)."""
    k, csr, crt = (os.path.join(tmp, n) for n in ("k.pem", "c.csr", "c.pem"))
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", k, "-out", csr,
                    "-subj", "/CN=1900000999"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(TLS, "ca.pem"),
                    "-CAkey", os.path.join(TLS, "ca.key"), "-CAcreateserial", "-CAserial",
                    os.path.join(tmp, "ca.srl"), "-days", "1", "-out", crt],
                   check=True, capture_output=True)
    return crt, k


@test
def secapi_wants_the_merchant_certificate():
    mock_reset()
    mock_config(require_client_cert=True, refund_delay_ms=60000)
    otn, txid = charge(200)
    cert, key = os.path.join(TLS, "apiclient_cert.pem"), os.path.join(TLS, "apiclient_key.pem")
    body = lambda orn: signed(refund_fields(orn, 200, 100, txid=txid))  # noqa: E731
    f = curl_secapi(body("A" + otn))
    check(f["return_code"] == "FAIL" and f["return_msg"] == "证书错误", f"HTTPS, no certificate: {f}")
    f = call("/secapi/pay/refund", refund_fields("A" + otn, 200, 100, txid=txid))
    check(outcome(f) == "FAIL:证书错误", f"plain HTTP: {f}")
    with tempfile.TemporaryDirectory() as tmp:
        f = curl_secapi(body("A" + otn), *other_merchant_cert(tmp))
        check(outcome(f) == "FAIL:证书错误", f"another merchant's certificate: {f}")
    _, rs = ledger_of(otn)
    check(rs == [], f"nothing refunded without the certificate: {rs}")
    f = curl_secapi(body("A" + otn), cert, key)
    check(outcome(f) == "SUCCESS" and f["refund_id"], f"with the certificate: {f}")
    check(outcome(refundquery(out_refund_no="A" + otn)) == "SUCCESS", "refundquery needs none")
    mock_config(require_client_cert=False)
    check(outcome(call("/secapi/pay/refund", refund_fields("B" + otn, 200, 100, txid=txid)))
          == "SUCCESS", "require_client_cert off: plain HTTP accepted")


if __name__ == "__main__":
    try:
        run_tests(cleanup=mock_reset)
    finally:
        _lib_mock_reset()
