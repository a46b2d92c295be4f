"""test_mock_v3 - the mock's APIv3 rules that the SDK drivers
(test_sdk_v3.py) do not reach, with Python's `cryptography` as an
independent merchant: the Authorization checks (unsigned, another serial, a
stale timestamp, a changed body: 401 SIGN_ERROR, nothing done), reply
signatures verified against the served platform certificate, field errors
(400), the v2 flows' rules in v3's words (the same parameters give the same
prepay, others OUT_TRADE_NO_USED; a refund above the charge refused), the
same ledger as v2 (a v3 order paid by the payer is SUCCESS in v2's signed
orderquery), targeted fault rules on v3 calls (journaled as v3_*), bill
readiness, and a v3 notification retried on v2's schedule until the merchant
answers 204.

Runs against the stack (./stack up); the APIv3 material from $STATE/tls."""
import base64
import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, MCHID, MOCK, STATE, check, http, mock_config, mock_ledger, \
    mock_requests, mock_reset, run_tests, test, unique, wait_until, wx_parse, wx_sign, \
    wx_xml  # noqa: E402

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402

TLS = os.path.join(STATE, "tls")
with open(os.path.join(TLS, "apiclient_key.pem"), "rb") as fh:
    MCH_KEY = serialization.load_pem_private_key(fh.read(), None)
with open(os.path.join(TLS, "apiclient_cert.pem"), "rb") as fh:
    MCH_SERIAL = format(x509.load_pem_x509_certificate(fh.read()).serial_number, "X")
with open(os.path.join(TLS, "apiv3.key"), encoding="ascii") as fh:
    APIV3 = fh.read().strip().encode()
FEE = 404


def authorization(method, uri, body, key=MCH_KEY, serial=None, ts=None):
    ts = str(ts if ts is not None else int(time.time()))
    nonce = secrets.token_hex(16)
    msg = f"{method}\n{uri}\n{ts}\n{nonce}\n{body}\n".encode()
    sig = base64.b64encode(key.sign(msg, padding.PKCS1v15(), hashes.SHA256())).decode()
    return (f'WECHATPAY2-SHA256-RSA2048 mchid="{MCHID}",nonce_str="{nonce}",signature="{sig}",'
            f'timestamp="{ts}",serial_no="{serial or MCH_SERIAL}"')


def v3(method, uri, body=None, **auth):
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False) if body is not None else ""
    hdrs = {"Accept": "application/json", "Authorization": authorization(method, uri, text, **auth)}
    if body is not None:
        hdrs["Content-Type"] = "application/json"
    return http(method, MOCK + uri, text if body is not None else None, hdrs)


_platform = {}


def platform_certs():
    """{serial: public key} from /v3/certificates, decrypted with the APIv3 key."""
    r = v3("GET", "/v3/certificates")
    check(r.status == 200, f"/v3/certificates: {r}")
    out = {}
    for c in r.json()["data"]:
        e = c["encrypt_certificate"]
        pem = AESGCM(APIV3).decrypt(e["nonce"].encode(), base64.b64decode(e["ciphertext"]),
                                    e["associated_data"].encode())
        out[c["serial_no"]] = x509.load_pem_x509_certificate(pem).public_key()
    return out


def signed_by_platform(r):
    """True when r carries a valid platform signature over its body."""
    if not _platform or r.header("wechatpay-serial") not in _platform:
        _platform.update(platform_certs())
    pub = _platform.get(r.header("wechatpay-serial"))
    msg = f"{r.header('wechatpay-timestamp')}\n{r.header('wechatpay-nonce')}\n".encode() + r.body + b"\n"
    try:
        pub.verify(base64.b64decode(r.header("wechatpay-signature")), msg, padding.PKCS1v15(),
                   hashes.SHA256())
        return True
    except Exception:  # noqa: BLE001 - any failure is "not signed"
        return False


def native(otn, total=FEE, notify_url="http://127.0.0.1:9/unused", **extra):
    body = {"appid": APPID, "mchid": MCHID, "description": "v3 mock test", "out_trade_no": otn,
            "notify_url": notify_url, "amount": {"total": total, "currency": "CNY"}}
    body.update(extra)
    return v3("POST", "/v3/pay/transactions/native", body)


def query(otn):
    return v3("GET", f"/v3/pay/transactions/out-trade-no/{otn}?mchid={MCHID}")


def pay(code_url):
    r = http("POST", MOCK + "/mock/payer/pay", {"code_url": code_url})
    check(r.status == 200 and r.json()["result"] == "SUCCESS", f"payer: {r}")
    return r.json()["transaction_id"]


def setup():
    mock_reset()
    mock_config(instant_charge=False)


@test
def merchant_signature_is_checked_and_refusals_do_nothing():
    setup()
    otn = unique("V3S")
    body = {"appid": APPID, "mchid": MCHID, "description": "x", "out_trade_no": otn,
            "notify_url": "http://127.0.0.1:9/n", "amount": {"total": FEE}}
    text = json.dumps(body)
    cases = {
        "unsigned": {"Content-Type": "application/json"},
        "another serial": {"Authorization": authorization("POST", "/v3/pay/transactions/native", text,
                                                          serial="1234ABCD")},
        "stale timestamp": {"Authorization": authorization("POST", "/v3/pay/transactions/native", text,
                                                           ts=int(time.time()) - 600)},
        "changed body": {"Authorization": authorization("POST", "/v3/pay/transactions/native",
                                                        text.replace(str(FEE), "1"))},
        "another path": {"Authorization": authorization("POST", "/v3/pay/transactions/jsapi", text)},
    }
    for what, hdrs in cases.items():
        hdrs.setdefault("Content-Type", "application/json")
        r = http("POST", MOCK + "/v3/pay/transactions/native", text, hdrs)
        check(r.status == 401 and r.json()["code"] == "SIGN_ERROR", f"{what}: {r}")
        check(signed_by_platform(r), f"{what}: the 401 is not signed by the platform")
    check(query(otn).status == 404, "a refused order was created")
    calls = mock_requests(otn)["requests"]
    check(len(calls) == len(cases) + 1 and
          all(c["err_code"] in ("SIGN_ERROR", "ORDER_NOT_EXIST") for c in calls), f"journal: {calls}")


@test
def same_parameters_same_prepay_others_out_trade_no_used_and_field_errors():
    setup()
    otn = unique("V3P")
    a, b = native(otn), native(otn)
    check(a.status == 200 and signed_by_platform(a), f"native: {a}")
    check(b.status == 200 and b.json()["code_url"] == a.json()["code_url"], f"repeat: {b}")
    c = native(otn, total=FEE + 1)
    check(c.status == 403 and c.json()["code"] == "OUT_TRADE_NO_USED", f"other parameters: {c}")
    for bad in ({"amount": {"total": 0}}, {"amount": {"total": "1"}}, {"out_trade_no": "a b"},
                {"notify_url": "ftp://x"}, {"amount": {"total": 1, "currency": "USD"}}):
        r = native(unique("V3B"), **bad)
        check(r.status == 400 and r.json()["code"] == "PARAM_ERROR", f"{bad}: {r}")
    r = native(unique("V3B"), appid="wx1111111111111111")
    check(r.status == 400 and r.json()["code"] == "APPID_MCHID_NOT_MATCH", f"appid: {r}")
    r = v3("POST", "/v3/pay/transactions/jsapi", {"appid": APPID, "mchid": MCHID, "description": "x",
           "out_trade_no": unique("V3J"), "notify_url": "http://127.0.0.1:9/n", "amount": {"total": 1}})
    check(r.status == 400 and "openid" in r.json()["message"], f"jsapi without payer: {r}")
    raw = http("POST", MOCK + "/v3/refund/domestic/refunds", "{not json",
               {"Authorization": authorization("POST", "/v3/refund/domestic/refunds", "{not json"),
                "Content-Type": "application/json"})
    check(raw.status == 400 and raw.json()["code"] == "PARAM_ERROR", f"bad JSON: {raw}")
    check(v3("GET", "/v3/nothing/here").status == 404, "an unknown path is not 404")


@test
def one_ledger_for_both_dialects():
    setup()
    otn = unique("V3L")
    r = native(otn)
    txid = pay(r.json()["code_url"])
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": "n1", "out_trade_no": otn}
    f["sign"] = wx_sign(f)
    v2 = wx_parse(http("POST", MOCK + "/pay/orderquery", wx_xml(f), {"Content-Type": "text/xml"}).text)
    check(v2.get("trade_state") == "SUCCESS" and v2.get("transaction_id") == txid, f"v2 orderquery: {v2}")
    charges = [c for c in mock_ledger()["charges"] if c["out_trade_no"] == otn]
    check(len(charges) == 1 and charges[0]["total_fee"] == FEE, f"ledger: {charges}")
    q = query(otn)
    check(q.status == 200 and q.json()["trade_state"] == "SUCCESS" and signed_by_platform(q), f"{q}")
    over = v3("POST", "/v3/refund/domestic/refunds", {"out_trade_no": otn, "out_refund_no": unique("R"),
              "amount": {"refund": FEE + 1, "total": FEE + 1, "currency": "CNY"}})
    check(over.status == 400 and over.json()["code"] == "INVALID_REQUEST", f"refund of another total: {over}")
    gone = v3("POST", "/v3/refund/domestic/refunds", {"out_trade_no": unique("NO"), "out_refund_no": unique("R"),
              "amount": {"refund": 1, "total": 1, "currency": "CNY"}})
    check(gone.status == 404 and gone.json()["code"] == "RESOURCE_NOT_EXISTS", f"no such order: {gone}")


@test
def targeted_rules_and_faults_apply_to_v3_calls():
    setup()
    otn = unique("V3F")
    mock_config(rules=[{"endpoint": "unifiedorder", "out_trade_no": otn, "times": 1,
                        "fault": {"kind": "error"}}])
    r = native(otn)
    check(r.status == 500 and r.json()["code"] == "SYSTEM_ERROR", f"rule error: {r}")
    q = query(otn)
    check(q.status == 404 and q.json()["code"] == "ORDER_NOT_EXIST", f"SYSTEMERROR created nothing: {q}")
    r2 = native(otn)
    check(r2.status == 200, f"the rule was spent: {r2}")
    calls = [c for c in mock_requests(otn)["requests"] if c["endpoint"] == "v3_native"]
    check(len(calls) == 2 and calls[0]["fault"] == "error" and calls[0]["rule"] == 0 and
          calls[0]["reply"] == "json", f"journal: {calls}")
    mock_config(rules=[{"endpoint": "orderquery", "out_trade_no": otn, "times": 1, "fault": {"kind": "reset"}}])
    cut = query(otn)
    check(cut.status is None or cut.status != 200, f"a reset query answered: {cut}")


@test
def tradebill_ready_only_from_the_next_day():
    setup()
    today = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=8))).strftime("%Y-%m-%d")
    r = v3("GET", f"/v3/bill/tradebill?bill_date={today}")
    check(r.status == 400 and r.json()["code"] == "STATEMENT_CREATING", f"today: {r}")
    r = v3("GET", "/v3/bill/tradebill?bill_date=2020-01-01")
    check(r.status == 400 and r.json()["code"] == "NO_STATEMENT_EXIST", f"an empty day: {r}")
    r = v3("GET", "/v3/bill/tradebill?bill_date=20200101")
    check(r.status == 400 and r.json()["code"] == "PARAM_ERROR", f"a v2 date: {r}")


class _Listener(BaseHTTPRequestHandler):
    answers = []
    got = []

    def do_POST(self):  # noqa: N802 - http.server's name
        n = int(self.headers.get("Content-Length") or 0)
        _Listener.got.append((dict(self.headers), self.rfile.read(n)))
        self.send_response(_Listener.answers.pop(0) if _Listener.answers else 204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@test
def v3_notification_is_retried_until_acknowledged():
    setup()
    mock_config(notify_retry_ms=200)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Listener.answers, _Listener.got = [500, 500], []
    try:
        otn = unique("V3N")
        r = native(otn, notify_url=f"http://127.0.0.1:{srv.server_address[1]}/notify")
        pay(r.json()["code_url"])
        wait_until(lambda: any(n["acknowledged"] for n in mock_requests(otn)["notifications"]),
                   timeout=20, what="the third attempt to be acknowledged")
        notes = mock_requests(otn)["notifications"]
        check([n["http_status"] for n in notes] == [500, 500, 204], f"attempts: {notes}")
        headers, raw = _Listener.got[-1]
        env = json.loads(raw)
        res = env["resource"]
        plain = json.loads(AESGCM(APIV3).decrypt(res["nonce"].encode(), base64.b64decode(res["ciphertext"]),
                                                 res["associated_data"].encode()))
        check(env["event_type"] == "TRANSACTION.SUCCESS" and plain["out_trade_no"] == otn, f"{env} {plain}")
        fake = type("R", (), {"header": lambda self, n: {k.lower(): v for k, v in headers.items()}.get(n),
                              "body": raw})()
        check(signed_by_platform(fake), "the notification's signature does not verify")
    finally:
        srv.shutdown()


if __name__ == "__main__":
    try:
        run_tests()
    finally:
        mock_reset()
