#!/usr/bin/env python3
"""test_bad_input - the bad-input matrix: malformed requests to every endpoint
of the payment service, one table row each with the answer the contract
gives it (a 4xx with the contract's error code in a JSON body, or for the
WeChat callback HTTP 200 with WeChat's FAIL reply). Never a 5xx, no service
process restarts, nothing is charged, no order row and no callback record is
written, and a canary order that a wrongly accepted notification would turn
PAID stays FAILED.

Every failing row is listed with the answer seen, so one run tells the
owners everything that differs from the contract."""
import json
import os
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import (MOCK, PUBLIC, SERVICE, STATE, check, db_query, get_order, http, mock_ledger,  # noqa: E402
                 notification, random_token, run_tests, service_pids, test, wx_xml)

RUN = "BI" + random_token(8)            # marks everything this run sends
USER = 4242
PAY = SERVICE + "/api/pay"
TOKEN = SERVICE + "/api/pay/token"
ORDERS = SERVICE + "/api/pay/orders/"
CALLBACK = PUBLIC + "/api/pay/callback/wechat"
JSON_CT = {"Content-Type": "application/json"}
XML_CT = {"Content-Type": "text/xml"}
CANARY_AMOUNT, CANARY_FEE = "12.30", 1230

_row_no = [0]


def order_no():
    """A fresh, valid order number of this run."""
    _row_no[0] += 1
    return f"{RUN}N{_row_no[0]:03d}"


def body(order=None, user=USER, amount="12.30", drop=(), **extra):
    """A JSON body (text) with one thing changed; drop removes fields."""
    f = {"order_no": order_no() if order is None else order, "user_id": user, "amount": amount,
         "trade_type": "MICROPAY", "auth_code": "134567890123456789"}  # a payment code
    f.update(extra)
    for k in drop:
        f.pop(k, None)
    return json.dumps(f, ensure_ascii=False)


def raw(template):
    """A JSON text with {no} replaced by a fresh order number (for bodies
    json.dumps cannot write: duplicate keys, big integers, broken JSON)."""
    return template.replace("{no}", order_no())


# --- the matrix -------------------------------------------------------------
# (name, method, url, body, headers, expected status, expected error code or
#  "FAIL" for WeChat's FAIL reply)

def pay_rows():
    r = []

    def add(name, b, status=400, code="invalid_request", headers=None, method="POST"):
        r.append((name, method, PAY, b, JSON_CT if headers is None else headers, status, code))

    add("user_id as string", body(user="42"))
    add("user_id 0", body(user=0))
    add("user_id -1", body(user=-1))
    add("user_id 2^63", raw('{"order_no":"{no}","user_id":9223372036854775808,"amount":"1"}'))
    add("user_id 1.5", raw('{"order_no":"{no}","user_id":1.5,"amount":"1"}'))
    add("user_id null", body(user=None))
    add("amount as number", body(amount=12.3))
    add("amount 1e3", body(amount="1e3"))
    add("amount 0.001", body(amount="0.001"))
    add("amount 0", body(amount="0"))
    add("amount 0.00", body(amount="0.00"))
    add("amount -1", body(amount="-1"))
    add("amount 100000000.00", body(amount="100000000.00"))
    add("amount 99999999999999999999", body(amount="99999999999999999999"))
    add("amount with a leading space", body(amount=" 1"))
    add("amount fullwidth digit", body(amount="\uff11"))
    add("amount empty", body(amount=""))
    add("amount .5", body(amount=".5"))
    add("amount 5.", body(amount="5."))
    add("amount 1,00", body(amount="1,00"))
    add("order_no 33 characters", body(order=(RUN + "L" * 33)[:33]))
    add("order_no 5 characters", body(order=RUN[:5]))
    add("order_no non-ASCII", body(order=RUN + "\u8ba2\u5355"))
    add("order_no with spaces", body(order=RUN[:5] + " " + RUN[5:] + " 01"))
    add("order_no empty", body(order=""))
    add("order_no as number", body(order=12345678))
    add("order_no with NUL", raw('{"order_no":"{no}\\u0000x","user_id":1,"amount":"1"}'))
    add("order_no other punctuation", body(order=RUN + "!@#"))
    add("missing order_no", body(drop=("order_no",)))
    add("missing user_id", body(drop=("user_id",)))
    add("missing amount", body(drop=("amount",)))
    add("token as number", body(token=5))
    add("token 257 characters", body(token="t" * 257))
    add("token empty", body(token=""))
    add("broken JSON", raw('{"order_no": "{no}", "user_id": 1, "amount": "1"'))
    add("duplicate key", raw('{"order_no":"{no}","user_id":1,"amount":"1","amount":"2"}'))
    add("duplicate order_no", raw('{"order_no":"{no}","order_no":"' + RUN + 'DUP2",'
                                  '"user_id":1,"amount":"1"}'))
    add("JSON array", "[" + body() + "]")
    add("JSON string", '"hello"')
    add("JSON null", "null")
    add("empty body", "")
    add("trailing garbage", body() + "x")
    add("invalid UTF-8", raw('{"order_no":"{no}","user_id":1,"amount":"1","note":"\xff"}')
        .encode("latin-1"))
    add("body over 64 KiB", body(pad="x" * (64 * 1024 + 1)), 413, "payload_too_large")
    add("text/plain", body(), 415, "unsupported_media_type", {"Content-Type": "text/plain"})
    add("no Content-Type", body(), 415, "unsupported_media_type", {})
    add("form encoding", "order_no=" + order_no() + "&user_id=1&amount=1", 415,
        "unsupported_media_type", {"Content-Type": "application/x-www-form-urlencoded"})
    add("PUT", body(), 405, "method_not_allowed", method="PUT")
    add("DELETE", body(), 405, "method_not_allowed", method="DELETE")
    add("GET", None, 405, "method_not_allowed", headers={}, method="GET")
    # Idempotency-Key: the body is valid, so only the header can refuse it.
    # A header with an empty value is not here: lighttpd 1.4.69 drops blank
    # header values while parsing the request (checked with mod_fastcgi and
    # mod_magnet), so the service cannot tell it from no header at all and
    # runs the request without a key (docs/API.md). The empty sf-string ""
    # reaches the service and is refused below.
    for name, key in [("256 characters", "k" * 256),
                      ("control character", "abc\x01def"), ("tab inside", "abc\tdef"),
                      ("DEL character", "abc\x7fdef"), ("space inside", "has space"),
                      ("non-ASCII", "cl\u00e9".encode("utf-8")),
                      ("bad sf-string escape", '"a\\x"'), ("unterminated sf-string", '"abc'),
                      ("empty sf-string", '""')]:
        add(f"Idempotency-Key {name}", body(), headers=dict(JSON_CT, **{"Idempotency-Key": key}))
    return r


def token_rows():
    rows = []
    for name, query in [("missing", ""), ("empty", "user_id="), ("0", "user_id=0"),
                        ("-1", "user_id=-1"), ("abc", "user_id=abc"),
                        ("2^63", "user_id=9223372036854775808"),
                        ("99999999999999999999", "user_id=99999999999999999999"),
                        ("1.5", "user_id=1.5"), ("+1", "user_id=%2B1"), ("1 (space)", "user_id=%201"),
                        ("repeated", "user_id=1&user_id=2"), ("other name", "uid=1")]:
        url = TOKEN + ("?" + query if query else "")
        rows.append((f"token user_id {name}", "GET", url, None, {}, 400, "invalid_request"))
    rows.append(("token POST", "POST", TOKEN + "?user_id=1", "", JSON_CT, 405,
                 "method_not_allowed"))
    return rows


def order_rows():
    rows = []
    for name, no in [("33 characters", (RUN + "L" * 33)[:33]), ("5 characters", RUN[:5]),
                     ("non-ASCII", RUN + "\u8ba2\u5355"), ("space", RUN[:5] + " " + RUN[5:]),
                     ("punctuation", RUN + "!x"), ("dot", RUN + ".json")]:
        url = ORDERS + urllib.parse.quote(no, safe="")
        rows.append((f"order {name}", "GET", url, None, {}, 400, "invalid_request"))
    rows.append(("order DELETE", "DELETE", ORDERS + RUN + "X1", None, {}, 405,
                 "method_not_allowed"))
    return rows


def callback_rows(canary):
    """Notifications about the canary order, validly signed unless the row
    is about the signature, each broken in one way."""
    n = [0]

    def fields(**over):
        n[0] += 1
        return notification(canary, CANARY_FEE, f"4200{RUN}T{n[0]:02d}", **over)

    def good():
        return wx_xml(fields())

    lol = "".join(f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * 10}">' for i in range(1, 10))
    bomb = ('<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY lol0 "lol">' + lol + ']>'
            + good().replace("</xml>", "<attach>&lol9;</attach></xml>"))
    xxe = ('<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
           + good().replace("</xml>", "<attach>&xxe;</attach></xml>"))
    big = wx_xml(fields(attach="x" * (70 * 1024)))
    dup = good().replace("</xml>", f"<total_fee>{CANARY_FEE}</total_fee></xml>")
    nested = wx_xml(fields(attach="PLACEHOLDER")).replace(
        "<![CDATA[PLACEHOLDER]]>", "<a><b>x</b></a>")
    bad_utf8 = wx_xml(fields(attach="PLACEHOLDER")).encode().replace(b"PLACEHOLDER", b"\xc3\x28\xff")
    rows = [
        ("callback DOCTYPE", '<?xml version="1.0"?><!DOCTYPE xml>' + good()),
        ("callback entity bomb", bomb),
        ("callback external entity", xxe),
        ("callback truncated", good()[:-len("</xml>")]),
        ("callback cut in a field", good()[:200]),
        ("callback not XML", "hello, this is not XML"),
        ("callback JSON", json.dumps(fields())),
        ("callback empty body", ""),
        ("callback 70 KiB body", big),
        ("callback nested elements", nested),
        ("callback duplicate field", dup),
        ("callback invalid UTF-8", bad_utf8),
        ("callback NUL byte", good().replace("</xml>", "<attach>a\x00b</attach></xml>")),
        ("callback two roots", good() + "<xml></xml>"),
        ("callback comment", good().replace("<xml>", "<xml><!-- x -->")),
        ("callback attribute", good().replace("<xml>", '<xml a="1">')),
        ("callback bad signature", wx_xml(dict(fields(), sign="0" * 32))),
    ]
    out = [(name, "POST", CALLBACK, payload, XML_CT, 200, "FAIL") for name, payload in rows]
    out.append(("callback GET", "GET", CALLBACK, None, {}, 405, "method_not_allowed"))
    return out


# --- what the service must not do ------------------------------------------

def answer_problem(r, status, code):
    """None when r is the expected answer, else what is wrong with it."""
    if r.status is None:
        return f"no answer ({r.error})"
    if r.status >= 500:
        return f"5xx: {r.status} {r.text[:200]!r}"
    if r.status != status:
        return f"status {r.status}, expected {status}: {r.text[:200]!r}"
    if code == "FAIL":
        try:
            reply = {c.tag: (c.text or "") for c in ET.fromstring(r.body)}
        except ET.ParseError:
            return f"not WeChat's XML reply: {r.text[:200]!r}"
        if reply.get("return_code") != "FAIL" or not reply.get("return_msg"):
            return f"expected return_code FAIL with a reason: {reply}"
        return None
    ctype = (r.header("Content-Type") or "").split(";")[0].strip()
    if ctype != "application/json":
        return f"Content-Type {ctype!r}, expected application/json: {r.text[:200]!r}"
    j = r.json()
    if not isinstance(j, dict) or j.get("error") != code or not isinstance(j.get("message"), str):
        return f"body {r.text[:200]!r}, expected error {code!r} with a message"
    return None


def sanitizer_reports():
    """ASan/UBSan reports so far in the FastCGI programs' log."""
    try:
        with open(os.path.join(STATE, "log", "fastcgi.log"), errors="replace") as f:
            text = f.read()
    except OSError:
        return 0
    return text.count("ERROR: AddressSanitizer") + text.count("runtime error:") + \
        text.count("ERROR: LeakSanitizer")


def mock_knobs(**knobs):
    r = http("PUT", MOCK + "/mock/config", knobs)
    check(r.status == 200, f"mock config {knobs}: {r}")


def make_canary():
    """A FAILED order (the mock declines it): a notification wrongly
    accepted for it would make it PAID."""
    decline = dict(decline_rate=1.0, latency_ms=0, jitter_ms=0, error_rate=0.0, reset_rate=0.0,
                   timeout_after_charge_rate=0.0)
    cfg = http("GET", MOCK + "/mock/config").json() or {}
    no = f"{RUN}CANARY"
    mock_knobs(**decline)
    try:
        r = http("POST", PAY, body(order=no, amount=CANARY_AMOUNT), JSON_CT)
    finally:
        mock_knobs(**{k: cfg[k] for k in decline if k in cfg})
    check(r.status == 402, f"canary {no}: the declined payment should be 402, got {r}")
    return no


STATE_BEFORE = {}


def before():
    if not STATE_BEFORE:
        STATE_BEFORE["canary"] = make_canary()
        STATE_BEFORE["pids"] = sorted(service_pids())
        STATE_BEFORE["charges"] = {c["transaction_id"] for c in mock_ledger()["charges"]}
        STATE_BEFORE["sanitizer"] = sanitizer_reports()
    return STATE_BEFORE


def run_rows(rows):
    failures = []
    for name, method, url, payload, headers, status, code in rows:
        r = http(method, url, payload, headers, timeout=15)
        problem = answer_problem(r, status, code)
        if problem:
            failures.append(f"  {name}: {method} {url[len(SERVICE):][:80]} -> {problem}")
    check(not failures, f"{len(failures)} of {len(rows)} rows differ from the contract:\n"
          + "\n".join(failures))
    print(f"    {len(rows)} rows as the contract says")


@test
def pay_post_matrix():
    before()
    run_rows(pay_rows())


@test
def token_matrix():
    before()
    run_rows(token_rows())


@test
def order_query_matrix():
    before()
    run_rows(order_rows())


@test
def callback_matrix():
    run_rows(callback_rows(before()["canary"]))


@test
def nothing_changed():
    b = before()
    time.sleep(0.5)   # let any late write land before looking
    problems = []
    pids = sorted(service_pids())
    if not pids or pids != b["pids"]:
        problems.append(f"service processes changed: {b['pids']} -> {pids}")
    if sanitizer_reports() != b["sanitizer"]:
        problems.append("new ASan/UBSan reports in .stack/log/fastcgi.log")
    charges = mock_ledger()["charges"]
    new = [c for c in charges if c["transaction_id"] not in b["charges"]]
    if new:
        problems.append(f"the ledger has {len(new)} new charges: {new[:5]}")
    ours = [c for c in charges if RUN in c["out_trade_no"]]
    if ours:
        problems.append(f"bad requests were charged: {ours}")
    rows = db_query(f"SELECT order_no, status FROM payment_order WHERE order_no LIKE '%{RUN}%'")
    if rows != [[b["canary"], "3"]]:
        problems.append(f"bad requests wrote orders (only the FAILED canary expected): {rows}")
    recs = db_query("SELECT third_party_no, order_no FROM payment_callback_record "
                    f"WHERE third_party_no LIKE '%{RUN}%' OR order_no = '{b['canary']}'")
    if recs:
        problems.append(f"bad notifications left callback records: {recs}")
    o = get_order(b["canary"])
    if not (o.status == 200 and o.json()["status"] == "FAILED" and o.json()["transaction_id"] is None):
        problems.append(f"the canary order changed: {o}")
    check(not problems, "after the bad input:\n  " + "\n  ".join(problems))


run_tests()
