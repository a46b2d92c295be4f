"""test_mock - the mock WeChat Pay v2 gateway from outside (docs/MOCK.md):
dedupe under concurrency (also across two mock processes), every fault knob
as a client sees it, notifications and their retry schedule, refunds, the
admin API, and a ledger that survives a restart of the mock.

Runs against the stack (./stack up); IDEMPAY_MOCK_PORT points it at another
mock, and IDEMPAY_MOCK_RESTART_CMD replaces './stack restart lighttpd'."""
import http.server as httpserver
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, KEY, MCHID, MOCK, Variant, bin_dir, check, http, mock_config, \
    mock_ledger, mock_reset, parallel, random_token, run_tests, stack, test, unique, \
    wait_until, wx_parse, wx_sign, wx_xml  # noqa: E402

DEAD_URL = "http://127.0.0.1:9/notify"   # nothing listens: deliveries fail fast


# --- WeChat calls ------------------------------------------------------------

def signed(fields, key=KEY, sign_type="MD5"):
    f = dict(fields)
    if sign_type != "MD5":
        f["sign_type"] = sign_type
    f["sign"] = wx_sign(f, key, sign_type)
    return wx_xml(f)


def order_fields(otn, fee=100, notify=DEAD_URL, **over):
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24), "body": "idempay test",
         "out_trade_no": otn, "total_fee": str(fee), "spbill_create_ip": "127.0.0.1",
         "notify_url": notify, "trade_type": "NATIVE"}
    for k, v in over.items():
        if v is None:
            f.pop(k, None)
        else:
            f[k] = v
    return f


def wx_call(path, body, timeout=10.0, base=None):
    """POSTs XML; returns (Resp, parsed fields or None)."""
    r = http("POST", (base or MOCK) + path, body, {"Content-Type": "text/xml"}, timeout)
    fields = None
    if r.status == 200:
        try:
            fields = wx_parse(r.text)
        except Exception:  # noqa: BLE001 - a broken reply is reported by the caller
            fields = None
    return r, fields


def unifiedorder(otn, fee=100, notify=DEAD_URL, timeout=10.0, base=None, sign_type="MD5", **over):
    return wx_call("/pay/unifiedorder", signed(order_fields(otn, fee, notify, **over), sign_type=sign_type),
                   timeout, base)


def orderquery(otn=None, txid=None):
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24)}
    if otn:
        f["out_trade_no"] = otn
    if txid:
        f["transaction_id"] = txid
    return wx_call("/pay/orderquery", signed(f))[1]


def refund(out_refund_no, total_fee, refund_fee, txid=None, otn=None):
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24), "out_refund_no": out_refund_no,
         "total_fee": str(total_fee), "refund_fee": str(refund_fee)}
    if txid:
        f["transaction_id"] = txid
    if otn:
        f["out_trade_no"] = otn
    return wx_call("/secapi/pay/refund", signed(f))[1]


def check_signed(fields, what):
    check(fields is not None, f"{what}: no parsable XML reply")
    st = fields.get("sign_type", "MD5")
    check(fields.get("sign") == wx_sign(fields, KEY, st), f"{what}: reply signature invalid: {fields}")
    check(fields.get("appid") == APPID and fields.get("mch_id") == MCHID, f"{what}: appid/mch_id: {fields}")


def outcome(fields):
    """SUCCESS, an err_code, or 'FAIL:<return_msg>'."""
    if fields is None:
        return None
    if fields.get("return_code") != "SUCCESS":
        return "FAIL:" + fields.get("return_msg", "")
    if fields.get("result_code") == "SUCCESS":
        return "SUCCESS"
    return fields.get("err_code")


def ledger_for(otn):
    r = http("GET", f"{MOCK}/mock/ledger?out_trade_no={otn}")
    check(r.status == 200, f"ledger filter failed: {r}")
    return r.json()["charges"]


# --- a merchant's notify_url -------------------------------------------------

class Merchant:
    """A local notify_url. answer(n) gives the reply to the n-th arrival
    (0-based): True for SUCCESS."""

    def __init__(self, answer):
        self.arrivals = []
        self.lock = threading.Lock()
        outer = self

        class H(httpserver.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.lock:
                    n = len(outer.arrivals)
                    outer.arrivals.append((time.monotonic(), body.decode("utf-8", "replace")))
                ok = answer(n)
                reply = ("<xml><return_code><![CDATA[%s]]></return_code><return_msg><![CDATA[%s]]>"
                         "</return_msg></xml>") % (("SUCCESS", "OK") if ok else ("FAIL", "busy"))
                data = reply.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.server = httpserver.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/notify"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self):
        with self.lock:
            return len(self.arrivals)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- tests -------------------------------------------------------------------

@test
def charge_reply_query_and_ledger():
    mock_reset()
    otn = unique("MOCK")
    r, f = unifiedorder(otn, 1230)
    check(r.status == 200 and outcome(f) == "SUCCESS", f"unifiedorder: {r}")
    check_signed(f, "unifiedorder")
    txid = f["transaction_id"]
    check(len(txid) == 28 and txid.isdigit() and txid.startswith("4200"), f"transaction_id {txid}")
    check(f["total_fee"] == "1230" and f["out_trade_no"] == otn and f["trade_type"] == "NATIVE"
          and f.get("prepay_id", "").startswith("wx"), f"reply fields: {f}")
    charges = ledger_for(otn)
    check(len(charges) == 1, f"ledger: {charges}")
    c = charges[0]
    check(c["transaction_id"] == txid and c["total_fee"] == 1230 and c["refunded"] is False
          and c["refund_count"] == 0 and c["charged_at"], f"ledger entry: {c}")
    q = orderquery(otn)
    check_signed(q, "orderquery")
    check(q["trade_state"] == "SUCCESS" and q["transaction_id"] == txid and q["total_fee"] == "1230"
          and len(q["time_end"]) == 14, f"orderquery: {q}")
    check(orderquery(txid=txid)["out_trade_no"] == otn, "orderquery by transaction_id")
    q = orderquery(unique("NEVER"))
    check(outcome(q) == "ORDERNOTEXIST", f"unknown order: {q}")


@test
def dedupe_on_64_concurrent_one_charge():
    mock_reset()
    otn = unique("DUP")
    res = parallel(lambda: unifiedorder(otn, 500), [()] * 64)
    outcomes = [outcome(f) for _, f in res]
    check(outcomes.count("SUCCESS") == 1, f"one SUCCESS expected: {sorted(set(outcomes))}")
    check(outcomes.count("ORDERPAID") == 63, f"63 ORDERPAID expected: {outcomes}")
    check(len(ledger_for(otn)) == 1, f"ledger: {ledger_for(otn)}")
    # The same out_trade_no with another amount: INVALID_REQUEST, no charge.
    r, f = unifiedorder(otn, 501)
    check(outcome(f) == "INVALID_REQUEST", f"other total_fee: {f}")
    check(len(ledger_for(otn)) == 1, "a mismatched repeat must not charge")


@test
def dedupe_off_64_concurrent_64_charges():
    mock_reset()
    mock_config(dedupe=False)
    otn = unique("NODUP")
    res = parallel(lambda: unifiedorder(otn, 500), [()] * 64)
    outcomes = [outcome(f) for _, f in res]
    check(outcomes.count("SUCCESS") == 64, f"64 SUCCESS expected: {outcomes}")
    charges = ledger_for(otn)
    check(len(charges) == 64, f"64 charges expected, got {len(charges)}")
    check(len({c["transaction_id"] for c in charges}) == 64, "transaction_ids must be distinct")


@test
def dedupe_across_two_mock_processes():
    """A second mock process on the same ledger: still one charge."""
    mock_reset()
    program = os.path.join(bin_dir(), "gateway-mock", "idempay-gateway-mock")
    if os.environ.get("IDEMPAY_MOCK_BIN"):
        program = os.environ["IDEMPAY_MOCK_BIN"]
    otn = unique("TWO")
    with Variant("mock2", 18097, program=program) as other:
        res = parallel(lambda i: unifiedorder(otn, 700, base=(MOCK if i % 2 else other)),
                       [(i,) for i in range(64)])
    outcomes = [outcome(f) for _, f in res]
    check(outcomes.count("SUCCESS") == 1 and outcomes.count("ORDERPAID") == 63, f"outcomes: {outcomes}")
    check(len(ledger_for(otn)) == 1, "one charge across two processes")


@test
def refused_requests_charge_nothing():
    mock_reset()
    otn = unique("BAD")
    # Signed with another key: return_code FAIL, 签名错误.
    body = signed(order_fields(otn), key="0123456789abcdef0123456789abcdef")
    r, f = wx_call("/pay/unifiedorder", body)
    check(r.status == 200 and outcome(f) == "FAIL:签名错误", f"bad signature: {r}")
    # Tampered after signing.
    fields = order_fields(otn)
    fields["sign"] = wx_sign(fields)
    fields["total_fee"] = "1"
    r, f = wx_call("/pay/unifiedorder", wx_xml(fields))
    check(outcome(f) == "FAIL:签名错误", f"tampered: {r}")
    r, f = wx_call("/pay/unifiedorder", "<xml><appid>x</appid>")
    check(outcome(f) is not None and outcome(f).startswith("FAIL:"), f"malformed XML: {r}")
    cases = [({"notify_url": None}, "LACK_PARAMS"), ({"total_fee": "1.5"}, "PARAM_ERROR"),
             ({"total_fee": "0"}, "PARAM_ERROR"), ({"out_trade_no": "x y"}, "PARAM_ERROR"),
             ({"appid": "wx1111111111111111"}, "APPID_MCHID_NOT_MATCH"),
             ({"trade_type": "CASH"}, "PARAM_ERROR")]
    for over, code in cases:
        r, f = wx_call("/pay/unifiedorder", signed(order_fields(otn, **over)))
        check(outcome(f) == code, f"{over}: expected {code}, got {r}")
        check_signed(f, f"refusal {code}")
    r = http("GET", MOCK + "/pay/unifiedorder")
    check(r.status == 200 and wx_parse(r.text)["return_code"] == "FAIL", f"GET: {r}")
    check(ledger_for(otn) == [], "refused requests must not charge")
    # HMAC-SHA256 works and the reply is signed the same way.
    r, f = unifiedorder(otn, sign_type="HMAC-SHA256")
    check(outcome(f) == "SUCCESS" and f.get("sign_type") == "HMAC-SHA256", f"HMAC: {r}")
    check_signed(f, "HMAC reply")


@test
def fault_error_is_systemerror_without_charge():
    mock_reset()
    mock_config(error_rate=1.0)
    otn = unique("ERR")
    r, f = unifiedorder(otn)
    check(outcome(f) == "SYSTEMERROR" and f["return_code"] == "SUCCESS", f"error fault: {r}")
    check(ledger_for(otn) == [], "SYSTEMERROR must not charge")
    check(orderquery(otn)["trade_state"] == "NOTPAY", "after SYSTEMERROR the order is NOTPAY")
    mock_config(error_rate=0.0)
    check(outcome(unifiedorder(otn)[1]) == "SUCCESS", "a retry after SYSTEMERROR charges")


@test
def fault_decline_fails_without_charge():
    mock_reset()
    mock_config(decline_rate=1.0)
    otn = unique("DECL")
    r, f = unifiedorder(otn)
    check(f["result_code"] == "FAIL" and outcome(f) == "NOTENOUGH", f"decline: {r}")
    check(ledger_for(otn) == [], "a decline must not charge")
    check(orderquery(otn)["trade_state"] == "PAYERROR", "a declined order is PAYERROR")
    mock_config(decline_rate=0.0)
    check(outcome(unifiedorder(otn)[1]) == "SUCCESS", "a retry after a decline may charge")
    check(len(ledger_for(otn)) == 1, "one charge")


@test
def fault_timeout_after_charge():
    mock_reset()
    mock_config(timeout_after_charge_rate=1.0, hold_max_ms=3000)
    otn = unique("TMO")
    r, _ = unifiedorder(otn, 900, timeout=1.5)
    check(r.status is None and r.error == "timeout", f"the client must time out: {r}")
    charges = ledger_for(otn)
    check(len(charges) == 1 and charges[0]["total_fee"] == 900, f"the charge is in the ledger: {charges}")
    check(orderquery(otn)["trade_state"] == "SUCCESS", "orderquery sees the charge")
    # A patient client gets no reply either once hold_max_ms passes.
    mock_config(hold_max_ms=500)
    r, _ = unifiedorder(unique("TMO"), 900, timeout=10)
    check(r.status is None and r.error.startswith("reset"), f"after hold_max_ms: {r}")


@test
def fault_reset_cuts_the_connection():
    mock_reset()
    mock_config(reset_rate=1.0)
    otn = unique("RST")
    r, _ = unifiedorder(otn)
    check(r.status is None and r.error.startswith("reset"), f"expected a transport error: {r}")
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-X", "POST", "--data-binary",
                          signed(order_fields(otn)), MOCK + "/pay/unifiedorder"])
    check(out.returncode != 0, f"curl must fail too, rc={out.returncode}")
    check(ledger_for(otn) == [], "reset must not charge")


@test
def latency_and_jitter():
    mock_reset()
    mock_config(latency_ms=300, jitter_ms=100)
    t0 = time.monotonic()
    r, f = unifiedorder(unique("LAT"))
    dt = time.monotonic() - t0
    check(outcome(f) == "SUCCESS" and dt >= 0.3, f"latency: {dt:.3f}s {r}")
    t0 = time.monotonic()
    orderquery(unique("LAT"))
    check(time.monotonic() - t0 >= 0.3, "latency applies to every WeChat endpoint")
    mock_config(latency_ms=0, jitter_ms=0)
    t0 = time.monotonic()
    unifiedorder(unique("LAT"))
    check(time.monotonic() - t0 < 0.3, "latency 0")


@test
def same_seed_same_decisions():
    mock_reset()

    def run():
        return [outcome(unifiedorder(unique("SEED"))[1]) for _ in range(24)]

    mock_config(seed=4242, error_rate=0.4, decline_rate=0.3)
    a = run()
    mock_config(seed=4242)
    b = run()
    mock_config(seed=4243)
    c = run()
    check(a == b, f"same seed, different decisions:\n{a}\n{b}")
    check(set(a) == {"SUCCESS", "SYSTEMERROR", "NOTENOUGH"}, f"mix of outcomes: {a}")
    check(a != c, "another seed should differ")


@test
def notifications_copies_and_retry_until_success():
    mock_reset()
    m = Merchant(lambda n: n > 0)  # FAIL the first arrival, then SUCCESS
    try:
        mock_config(notify_copies=2, notify_retry_ms=200)
        otn = unique("NTF")
        r, f = unifiedorder(otn, 4321, notify=m.url)
        check(outcome(f) == "SUCCESS", f"unifiedorder: {r}")
        wait_until(lambda: m.count() >= 3, 10, 0.05, "3 notification arrivals")
        time.sleep(1.5)  # a wrong retry would come back within 200 ms .. 600 ms
        check(m.count() == 3, f"expected 2 copies + 1 retry = 3 arrivals, got {m.count()}")
        for _, body in m.arrivals:
            n = wx_parse(body)
            check(sorted(n) == ["appid", "bank_type", "cash_fee", "fee_type", "is_subscribe", "mch_id",
                                "nonce_str", "openid", "out_trade_no", "result_code", "return_code",
                                "sign", "time_end", "total_fee", "trade_type", "transaction_id"],
                  f"notification fields: {sorted(n)}")
            check(n["sign"] == wx_sign(n), "notification signature")
            check(n["transaction_id"] == f["transaction_id"] and n["total_fee"] == "4321"
                  and n["out_trade_no"] == otn, f"notification: {n}")
            check("<total_fee>4321</total_fee>" in body, "total_fee as bare text")
        sent = wait_until(lambda: mock_ledger()["notifications_sent"] == 3, 5, 0.1,
                          "notifications_sent == 3")
        check(sent, "counter")
    finally:
        m.close()


@test
def notifications_delay_and_give_up_after_schedule():
    mock_reset()
    m = Merchant(lambda n: False)  # never acknowledges
    try:
        # notify_retry_ms=1: the whole scaled schedule (15 retries) takes ~5.8 s.
        mock_config(notify_delay_ms=400, notify_retry_ms=1)
        t0 = time.monotonic()
        unifiedorder(unique("GIVEUP"), notify=m.url)
        wait_until(lambda: m.count() >= 1, 5, 0.02, "first arrival")
        first = m.arrivals[0][0] - t0
        check(first >= 0.4, f"notify_delay_ms: first arrival after {first:.3f}s")
        wait_until(lambda: m.count() >= 16, 15, 0.1, "16 attempts")
        gaps = [b[0] - a[0] for a, b in zip(m.arrivals, m.arrivals[1:])]
        time.sleep(1.0)
        check(m.count() == 16, f"1 attempt + 15 retries, then stop; got {m.count()}")
        check(gaps[-1] > gaps[0], f"the schedule grows: {gaps}")
    finally:
        m.close()


@test
def notifications_disabled():
    mock_reset()
    m = Merchant(lambda n: True)
    try:
        mock_config(notify_enabled=False)
        unifiedorder(unique("OFF"), notify=m.url)
        time.sleep(0.8)
        check(m.count() == 0, "notify_enabled false sends nothing")
    finally:
        m.close()


@test
def refunds_once_per_out_refund_no():
    mock_reset()
    otn = unique("RFD")
    txid = unifiedorder(otn, 1000)[1]["transaction_id"]
    f = refund("R" + otn, 1000, 1000, txid=txid)
    check_signed(f, "refund")
    check(outcome(f) == "SUCCESS" and f["refund_fee"] == "1000" and f["transaction_id"] == txid
          and f.get("refund_id"), f"refund: {f}")
    again = refund("R" + otn, 1000, 1000, txid=txid)
    check(outcome(again) == "SUCCESS" and again["refund_id"] == f["refund_id"], f"repeat: {again}")
    c = ledger_for(otn)[0]
    check(c["refunded"] is True and c["refund_count"] == 1 and c["refunded_fee"] == 1000,
          f"refunded once: {c}")
    check(orderquery(otn)["trade_state"] == "REFUND", "orderquery after refund")
    check(outcome(refund("R2" + otn, 1000, 1, txid=txid)) == "INVALID_REQUEST", "nothing left to refund")
    check(outcome(refund("R3" + otn, 999, 1, txid=txid)) == "INVALID_REQUEST", "wrong total_fee")
    check(outcome(refund("R4" + otn, 10, 10, txid="4200" + "0" * 24)) == "ORDERNOTEXIST", "unknown charge")
    # By out_trade_no, partial, concurrent repeats of one out_refund_no: one refund.
    otn2 = unique("RFD")
    unifiedorder(otn2, 1000)
    res = parallel(lambda: refund("P" + otn2, 1000, 300, otn=otn2), [()] * 16)
    check(all(outcome(x) == "SUCCESS" for x in res), f"partial: {res[:2]}")
    c = ledger_for(otn2)[0]
    check(c["refund_count"] == 1 and c["refunded_fee"] == 300, f"refunded once: {c}")


@test
def admin_api():
    mock_reset()
    r = http("PUT", MOCK + "/mock/config", {"no_such_knob": 1})
    check(r.status == 400 and r.json()["error"] == "invalid_config", f"unknown knob: {r}")
    r = http("PUT", MOCK + "/mock/config", {"dedupe": "yes"})
    check(r.status == 400 and "dedupe" in r.json()["message"], f"wrong type: {r}")
    r = http("PUT", MOCK + "/mock/config", {"error_rate": 2})
    check(r.status == 400, f"out of range: {r}")
    r = http("PUT", MOCK + "/mock/config", "{not json", {"Content-Type": "application/json"})
    check(r.status == 400, f"bad JSON: {r}")
    cfg = mock_config(latency_ms=7)
    check(cfg["latency_ms"] == 7 and cfg["dedupe"] is True and cfg["notify_copies"] == 1, f"merge: {cfg}")
    check(http("GET", MOCK + "/mock/config").json()["latency_ms"] == 7, "GET /mock/config")
    r = http("GET", MOCK + "/nope")
    check(r.status == 404 and r.json()["error"] == "not_found", f"404: {r}")
    r = http("DELETE", MOCK + "/mock/ledger")
    check(r.status == 405, f"405: {r}")
    check(http("GET", MOCK + "/mock/ledger?out_trade_no=a%20b").status == 400, "bad filter")
    mock_reset()
    cfg = http("GET", MOCK + "/mock/config").json()
    check(cfg["latency_ms"] == 0 and cfg["notify_retry_ms"] == 1000 and cfg["hold_max_ms"] == 30000,
          f"defaults after reset: {cfg}")
    led = mock_ledger()
    check(led == {"charges": [], "notifications_sent": 0, "closed": []}, f"empty after reset: {led}")


def restart_mock():
    cmd = os.environ.get("IDEMPAY_MOCK_RESTART_CMD")
    if cmd:
        subprocess.run(cmd, shell=True, check=True, timeout=120)
    else:
        stack("restart", "lighttpd")
    wait_until(lambda: http("GET", MOCK + "/mock/config", timeout=2).status == 200, 60, 0.2, "mock up")


@test
def ledger_and_config_survive_restart():
    mock_reset()
    otns = [unique("RST") for _ in range(5)]
    for o in otns:
        unifiedorder(o, 111)
    mock_config(notify_copies=3, decline_rate=0.0, seed=99)
    before = mock_ledger()["charges"]
    restart_mock()
    after = mock_ledger()["charges"]
    check(after == before, f"ledger changed across a restart:\n{before}\n{after}")
    cfg = http("GET", MOCK + "/mock/config").json()
    check(cfg["notify_copies"] == 3 and cfg["seed"] == 99, f"config kept: {cfg}")
    check(outcome(unifiedorder(otns[0], 111)[1]) == "ORDERPAID", "dedupe remembers across a restart")


run_tests(cleanup=mock_reset)
