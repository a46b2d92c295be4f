"""lib_mock - the mock WeChat Pay gateway as the integration tests drive it
(docs/MOCK.md): its admin API (reset, knobs, ledger, journal, clock), signed
WeChat Pay v2 calls to it (unifiedorder, closeorder, downloadbill and the
payment flows: prepay, micropay, reverse, orderquery, the payer) and the
statement it serves (parse_bill); and, for the mock's own tests, the raw
WeChat calls they make (unifiedorder, orderquery, refund, close: signed,
the reply parsed and nothing more) and a merchant's notify_url (Merchant).

Part of lib: lib.py re-exports every name in __all__ (`from lib import *`,
`from lib import mock_reset` work as before), so a test imports lib, never
this module first (lib imports it at its end; it takes lib's HTTP client,
signing and merchant from lib)."""
import http.server as httpserver
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

from lib import APPID, KEY, MCHID, MOCK, PUBLIC, check, db_query, http, random_token, \
    wait_until, wx_parse, wx_sign, wx_xml

__all__ = [
    "mock_reset", "mock_config", "mock_ledger", "mock_refunds_ended", "charges_for",
    "mock_unifiedorder", "mock_closeorder", "mock_downloadbill", "parse_bill", "china_now",
    "mock_clock_at", "mock_clock_next_day", "statement_due_now", "mock_requests", "mock_wx",
    "mock_prepay", "mock_micropay", "mock_reverse", "mock_orderquery", "mock_payer_pay",
    "mock_clock_forward", "mock_auth_code",
]


# --- the admin API ------------------------------------------------------------

def mock_reset():
    r = http("POST", MOCK + "/mock/reset")
    check(r.status == 200, f"mock reset failed: {r}")


def mock_config(**knobs):
    r = http("PUT", MOCK + "/mock/config", knobs)
    check(r.status == 200, f"mock config {knobs} failed: {r}")
    return r.json()


def mock_ledger():
    r = http("GET", MOCK + "/mock/ledger", timeout=30)
    check(r.status == 200, f"mock ledger failed: {r}")
    return r.json()


def mock_refunds_ended(order_no=None, timeout=15.0):
    """Waits until no refund (of order_no, or at all) is PROCESSING at the
    mock (refunds end refund_delay_ms after acceptance); returns them."""
    q = f"?out_trade_no={order_no}" if order_no else ""
    refunds = []

    def ended():
        refunds[:] = http("GET", MOCK + "/mock/ledger" + q, timeout=30).json()["refunds"]
        return all(r["status"] != "PROCESSING" for r in refunds)
    wait_until(ended, timeout, 0.1, "the mock's refunds to end")
    return refunds


def charges_for(order_no):
    """The ledger's charges of one out_trade_no."""
    return [c for c in mock_ledger()["charges"] if c["out_trade_no"] == order_no]


# --- WeChat Pay v2 calls, the statement, the clock and the journal ------------

def mock_unifiedorder(order_no, total_fee, notify_url=None):
    """Calls the mock's unifiedorder directly, as a payer paying late (or a
    second time) would cause; its notification, when the mock sends one,
    goes to notify_url (default: the service's callback). Returns the
    reply's fields."""
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(16), "body": "direct charge",
         "out_trade_no": order_no, "total_fee": str(total_fee), "spbill_create_ip": "127.0.0.1",
         "notify_url": notify_url or PUBLIC + "/api/pay/callback/wechat", "trade_type": "NATIVE"}
    f["sign"] = wx_sign(f)
    r = http("POST", MOCK + "/pay/unifiedorder", wx_xml(f), {"Content-Type": "text/xml"})
    check(r.status == 200, f"mock unifiedorder: {r}")
    return wx_parse(r.text)


def mock_closeorder(order_no, base=None):
    """Calls the mock's /pay/closeorder. Returns (Resp, the reply's fields or
    None): result_code SUCCESS, or err_code ORDERCLOSED / ORDERPAID; an HTTP
    404 when the mock runs with closeorder_enabled false."""
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(16), "out_trade_no": order_no}
    f["sign"] = wx_sign(f)
    r = http("POST", (base or MOCK) + "/pay/closeorder", wx_xml(f), {"Content-Type": "text/xml"})
    try:
        return r, wx_parse(r.text) if r.status == 200 else None
    except ET.ParseError:
        return r, None


def mock_downloadbill(bill_date=None, bill_type=None, begin_time=None, end_time=None, base=None,
                      tar_type=None):
    """Calls the mock's /pay/downloadbill (bill_date yyyyMMdd, or begin_time
    and end_time yyyyMMddHHmmss, China time: the mock's extension, knob
    bill_range_enabled). Returns the Resp: text/plain statement (parse_bill;
    gzip with tar_type="GZIP"), or signed XML (No Bill Exist, Bill Creating,
    errors)."""
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(16), "bill_date": bill_date,
         "bill_type": bill_type, "begin_time": begin_time, "end_time": end_time, "tar_type": tar_type}
    f = {k: v for k, v in f.items() if v is not None}
    f["sign"] = wx_sign(f)
    return http("POST", (base or MOCK) + "/pay/downloadbill", wx_xml(f), {"Content-Type": "text/xml"},
                timeout=60)


def parse_bill(text):
    """A WeChat Pay v2 statement -> (records, summary): records are dicts by
    the header's column names, summary a dict by the summary header's names;
    the backticks are stripped. Raises ValueError on a malformed statement."""
    if not text.endswith("\r\n"):
        raise ValueError("the statement must end with CRLF")
    lines = text[:-2].split("\r\n")
    if len(lines) < 3:
        raise ValueError(f"too few lines: {lines!r}")
    head, sum_head, sum_line = lines[0].split(","), lines[-2].split(","), lines[-1].split(",")

    def fields(line, n):
        cols = line.split(",")
        if len(cols) != n or any(not c.startswith("`") for c in cols):
            raise ValueError(f"not {n} backtick-prefixed fields: {line!r}")
        return [c[1:] for c in cols]

    records = [dict(zip(head, fields(line, len(head)))) for line in lines[1:-2]]
    summary = dict(zip(sum_head, fields(lines[-1], len(sum_head))))
    if len(sum_line) != len(sum_head):
        raise ValueError("summary line does not match its header")
    return records, summary


def china_now():
    """Now in China Standard Time (UTC+8), the bills' time."""
    import datetime
    return datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=8)))


def mock_clock_at(when):
    """Moves the mock's clock (knob clock_offset_ms) so that its now is
    `when` (an aware datetime). Returns the offset in ms."""
    import datetime
    offset = int((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds() * 1000)
    mock_config(clock_offset_ms=offset)
    return offset


def mock_clock_next_day(hour, minute=0):
    """The mock's clock to tomorrow (China time) at hour:minute: at 10:00 or
    later today's bill is ready at the mock (bill_ready_hour 10), before it
    is "Bill Creating". Returns today's bill_date (yyyyMMdd)."""
    import datetime
    today = china_now()
    mock_clock_at((today + datetime.timedelta(days=1)).replace(hour=hour, minute=minute, second=0,
                                                                microsecond=0))
    return today.strftime("%Y%m%d")


def statement_due_now():
    """The statement job's next run is due now (its claim's lease ends now:
    what an operator does to have the bills read at once, docs/DEPLOY.md);
    a service process claims it at its next poll (at most 5 s), instead of
    at the end of the interval. Returns the mock journal's last sequence
    number before (a run that starts after it asks for bills
    in entries after it)."""
    seq = max([e["seq"] for e in mock_requests(limit=50)["requests"]] or [0])
    db_query("UPDATE payment_statement_job SET lease_until = NOW(3) WHERE name = 'statement'")
    return seq


def mock_requests(order_no=None, limit=None, base=None, prefix=None):
    """The mock's journal: {"requests": [...], "notifications": [...]}, oldest first
    (one order's, or those of the orders whose number starts with prefix)."""
    q = []
    if order_no is not None:
        q.append("out_trade_no=" + urllib.parse.quote(order_no, safe=""))
    if prefix is not None:
        q.append("prefix=" + urllib.parse.quote(prefix, safe=""))
    if limit is not None:
        q.append(f"limit={limit}")
    r = http("GET", (base or MOCK) + "/mock/requests" + ("?" + "&".join(q) if q else ""), timeout=30)
    check(r.status == 200, f"mock journal failed: {r}")
    return r.json()


# --- the mock's payment flows (docs/MOCK.md "Payment flows") -----------------

def mock_wx(path, fields, base=None):
    """Signs fields (appid, mch_id, nonce_str added when absent), POSTs them
    to the mock's WeChat path and returns the reply's fields (or None when
    the reply is no XML)."""
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(16)}
    f.update({k: v for k, v in fields.items() if v is not None})
    f["sign"] = wx_sign(f)
    r = http("POST", (base or MOCK) + path, wx_xml(f), {"Content-Type": "text/xml"})
    try:
        return wx_parse(r.text) if r.status == 200 else None
    except ET.ParseError:
        return None


def mock_prepay(order_no, total_fee=100, trade_type="NATIVE", notify_url=None, **extra):
    """unifiedorder with the mock in prepay mode (instant_charge false):
    the reply's fields (prepay_id, code_url for NATIVE)."""
    f = {"body": "idempay test", "out_trade_no": order_no, "total_fee": str(total_fee),
         "spbill_create_ip": "127.0.0.1", "trade_type": trade_type,
         "notify_url": notify_url or "http://127.0.0.1:9/notify"}
    f.update(extra)
    return mock_wx("/pay/unifiedorder", f)


def mock_micropay(order_no, auth_code, total_fee=100, **extra):
    f = {"body": "idempay test", "out_trade_no": order_no, "total_fee": str(total_fee),
         "spbill_create_ip": "127.0.0.1", "auth_code": auth_code}
    f.update(extra)
    return mock_wx("/pay/micropay", f)


def mock_reverse(order_no=None, transaction_id=None):
    return mock_wx("/secapi/pay/reverse", {"out_trade_no": order_no,
                                           "transaction_id": transaction_id})


def mock_orderquery(order_no):
    return mock_wx("/pay/orderquery", {"out_trade_no": order_no})


def mock_payer_pay(prepay_id=None, code_url=None, openid=None, delay_ms=None, timeout=30.0):
    """The mock's customer pays (POST /mock/payer/pay): the Resp."""
    body = {k: v for k, v in (("prepay_id", prepay_id), ("code_url", code_url),
                              ("openid", openid), ("delay_ms", delay_ms)) if v is not None}
    return http("POST", MOCK + "/mock/payer/pay", body, timeout=timeout)


def mock_clock_forward(ms):
    """Moves the mock's clock ms further (the knob clock_offset_ms)."""
    cur = http("GET", MOCK + "/mock/config").json()["clock_offset_ms"]
    mock_config(clock_offset_ms=cur + ms)


def mock_auth_code(suffix, prefix="13"):
    """The mock's test payment code ending in suffix (docs/MOCK.md)."""
    return prefix + "9" * 12 + suffix

# --- raw WeChat calls, for the mock's own tests ---------------------------------
# test_mock.py and test_mock_faults.py import these by name: they are not in
# __all__, not lib's. Each call is signed here and its reply parsed, nothing
# more, so that a test sees exactly what the mock answered.

DEAD_URL = "http://127.0.0.1:9/notify"   # nothing listens: deliveries fail fast


def mock_reset_for_raw_calls():
    """The mock's defaults, except require_client_cert: ./stack's mock asks
    for the client certificate on /secapi/ (the service sends it); the raw
    calls below call it over plain HTTP (test_mock_refunds checks the
    certificate)."""
    mock_reset()
    # instant_charge: these tests drive the charge-with-reply machinery
    # (faults, dedupe, refunds of a charge) through unifiedorder as the old
    # mock charged; the real prepay is test_mock_flows.py's
    mock_config(require_client_cert=False, instant_charge=True)


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
    return {k: v for k, v in {**f, **over}.items() if v is not None}  # None: field left out


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


def close(otn):
    """(Resp, fields) of /pay/closeorder, the reply's signature checked."""
    r, f = mock_closeorder(otn)
    if r.status == 200:
        check_signed(f, "closeorder")
    return r, f


def closed_in_ledger(otn):
    r = http("GET", f"{MOCK}/mock/ledger?out_trade_no={otn}")
    check(r.status == 200, f"ledger: {r}")
    return [c["out_trade_no"] for c in r.json()["closed"]]


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
