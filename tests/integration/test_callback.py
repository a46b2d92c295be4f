#!/usr/bin/env python3
"""test_callback - POST /api/pay/callback/wechat against the running stack.

What a merchant would check: every copy of a notification is answered
SUCCESS but applied once; forged or broken notifications are answered FAIL
and change nothing; a second charge of a paid order is detected, counted and
refunded exactly once in the gateway's ledger. Ground truth is the mock's
ledger, the service's order API and the service's tables (read-only).
"""
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import (MOCK, PUBLIC, SERVICE, KEY, Variant, check, charges_for, free_port,  # noqa: E402
                 db_query, get_order, http, metric, mock_config, mock_ledger, mock_reset,
                 mock_micropay, mock_payer_pay, mock_requests,
                 notification, pay, parallel, run_tests, send_notification, service_pids,
                 stack, test, unique, wait_healthy, wait_until, wx_parse, wx_sign, wx_xml)

CALLBACK = PUBLIC + "/api/pay/callback/wechat"
AMOUNT, FEE = "12.30", 1230
USER = 7001
# The service's gateway timeout: a withheld reply is given up after it.
GATEWAY_TIMEOUT_S = float(os.environ.get("IDEMPAY_GATEWAY_TIMEOUT_MS", "3000")) / 1000.0


def reply_of(r):
    """(return_code, return_msg) of a callback reply; checks it is WeChat's
    XML reply with HTTP 200."""
    check(r.status == 200, f"callback answered {r} (must be 200 even for FAIL)")
    ctype = r.header("Content-Type") or ""
    check("xml" in ctype, f"callback Content-Type {ctype!r} is not XML")
    f = wx_parse(r.text)
    check(set(f) == {"return_code", "return_msg"}, f"unexpected reply fields: {r.text!r}")
    return f["return_code"], f["return_msg"]


def records_for(txn):
    return db_query("SELECT order_no, outcome, total_fee FROM payment_callback_record "
                    f"WHERE third_party_no = '{txn}'")


def records_of_order(order_no):
    return db_query("SELECT third_party_no, outcome FROM payment_callback_record "
                    f"WHERE order_no = '{order_no}'")


def refunds_for(txn):
    return db_query("SELECT order_no, out_refund_no, total_fee, state FROM payment_refund "
                    f"WHERE transaction_id = '{txn}'")


def order_of(order_no):
    r = get_order(order_no)
    check(r.status == 200, f"GET order {order_no}: {r}")
    return r.json()


def processing_orders(n):
    """n orders the gateway charged but the service could not record: the
    mock charges, withholds its reply past the service's gateway timeout and
    sends no notification, so POST /api/pay answers 202 and the order stays
    PROCESSING (until its lease runs out and the reconciler asks). Returns
    [(order_no, transaction_id)]."""
    mock_config(notify_enabled=False, timeout_after_charge_rate=1.0,
                hold_max_ms=int(GATEWAY_TIMEOUT_S * 1000) + 1500)
    orders = [unique("CBP") for _ in range(n)]
    replies = parallel(pay, [(o, USER, AMOUNT) for o in orders])
    mock_config(timeout_after_charge_rate=0.0)
    out = []
    for o, r in zip(orders, replies):
        check(r.status == 202, f"pay {o} with the reply withheld: expected 202, got {r}")
        body = order_of(o)
        check(body["status"] == "PROCESSING", f"{o} should be PROCESSING: {body}")
        charges = charges_for(o)
        check(len(charges) == 1, f"{o}: expected one charge in the ledger, got {charges}")
        out.append((o, charges[0]["transaction_id"]))
    return out


def resigned(fields, **changes):
    """fields with changes applied (None removes a field), signed again with the merchant key (a
    notification the gateway could have signed, carrying other values)."""
    f = dict(fields, **changes)
    f = {k: v for k, v in f.items() if v is not None}
    f["sign"] = wx_sign(f, KEY, f.get("sign_type", "MD5"))
    return f


@test
def twenty_concurrent_copies_apply_once():
    [(order_no, txn)] = processing_orders(1)
    applied0 = metric('idempay_callbacks_total{outcome="applied"}')
    already0 = metric('idempay_callbacks_total{outcome="already_applied"}')

    xml = wx_xml(notification(order_no, FEE, txn))
    replies = parallel(send_notification, [(xml,)] * 20)
    codes = [reply_of(r) for r in replies]
    check(codes == [("SUCCESS", "OK")] * 20, f"20 copies: expected 20 SUCCESS, got {codes}")

    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn,
          f"after the notification {order_no} should be PAID with {txn}: {body}")
    check(body["amount"] == AMOUNT, f"amount changed: {body}")
    recs = records_for(txn)
    check(recs == [[order_no, "0", str(FEE)]], f"expected exactly one applied record: {recs}")
    check(refunds_for(txn) == [], "a first charge must not be refunded")
    check(len(charges_for(order_no)) == 1, "the callback must not charge")
    applied = metric('idempay_callbacks_total{outcome="applied"}') - applied0
    already = metric('idempay_callbacks_total{outcome="already_applied"}') - already0
    check(applied == 1, f"callbacks applied +{applied}, expected +1")
    check(already >= 19, f"callbacks already_applied +{already}, expected +19")

    # A later copy (as WeChat's retry schedule sends) changes nothing either.
    check(reply_of(send_notification(xml)) == ("SUCCESS", "OK"), "a late copy must be SUCCESS")
    check(records_for(txn) == recs, "a late copy added a record")


@test
def forged_and_broken_notifications_change_nothing():
    [(order_no, txn)] = processing_orders(1)
    # A PAID order of another payment, whose charge a replay may borrow.
    other = unique("CBO")
    r = pay(other, USER, AMOUNT)
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay {other}: {r}")
    other_txn = r.json()["transaction_id"]

    good = wx_xml(notification(order_no, FEE, txn))
    cases = {
        "bad signature": (notification(order_no, FEE, txn, key="x" * 32), "fail_signature"),
        "no signature": (dict(notification(order_no, FEE, txn), sign=""), "fail_signature"),
        "unknown sign_type": (notification(order_no, FEE, txn, sign_type="SHA1"), "fail_signature"),
        "wrong appid": (notification(order_no, FEE, txn, appid="wx1111111111111111"), "fail_merchant"),
        "wrong mch_id": (notification(order_no, FEE, txn, mch_id="1900000110"), "fail_merchant"),
        "wrong total_fee": (notification(order_no, FEE - 1, txn, cash_fee=str(FEE)), "fail_amount"),
        "total_fee not fen": (resigned(notification(order_no, FEE, txn), total_fee="12.30"),
                              "fail_amount"),
        "result_code FAIL": (notification(order_no, FEE, txn, result_code="FAIL", err_code="NOTENOUGH"),
                             "fail_result"),
        "unknown order": (notification(unique("CBU"), FEE, txn), "fail_unknown_order"),
        "no transaction_id": (resigned(notification(order_no, FEE, txn), transaction_id=None),
                              "fail_malformed"),
        "another order's charge": (notification(order_no, FEE, other_txn), "fail_unknown_order"),
        "DOCTYPE": ('<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
                    + good, "fail_malformed"),
        "truncated": (good[:-len("</xml>")], "fail_malformed"),
        "cut in a field": (good[:len(good) // 2], "fail_malformed"),
        "not XML": ('{"return_code": "SUCCESS"}', "fail_malformed"),
        "empty body": ("", "fail_malformed"),
        "70 KiB body": (good[:-len("</xml>")] + "<pad>" + "x" * (70 * 1024) + "</pad></xml>",
                        "fail_malformed"),
    }
    for name, (payload, label) in cases.items():
        before = metric(f'idempay_callbacks_total{{outcome="{label}"}}')
        code, msg = reply_of(send_notification(payload))
        check(code == "FAIL", f"{name}: expected FAIL, got {code} {msg!r}")
        check(msg not in ("", "OK"), f"{name}: FAIL without a reason")
        after = metric(f'idempay_callbacks_total{{outcome="{label}"}}')
        check(after >= before + 1, f"{name}: callbacks_total{{outcome={label}}} not counted")

    body = order_of(order_no)
    check(body["status"] == "PROCESSING" and body["transaction_id"] is None,
          f"forged notifications changed {order_no}: {body}")
    check(records_of_order(order_no) == [], f"forged notifications left records: "
                                             f"{records_of_order(order_no)}")
    o = order_of(other)
    check(o["status"] == "PAID" and o["transaction_id"] == other_txn, f"{other} changed: {o}")
    check([r[0] for r in records_for(other_txn)] in ([], [other]),
          f"the borrowed charge was recorded for another order: {records_for(other_txn)}")

    # The genuine notification (HMAC-SHA256 this time) still applies: the
    # checks above refused for their reasons, not because nothing could pass.
    code, msg = reply_of(send_notification(notification(order_no, FEE, txn, sign_type="HMAC-SHA256")))
    check((code, msg) == ("SUCCESS", "OK"), f"the genuine notification: {code} {msg!r}")
    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn, f"{order_no}: {body}")
    # A copy whose total_fee was altered after the fact is still refused.
    code, _ = reply_of(send_notification(notification(order_no, FEE + 100, txn)))
    check(code == "FAIL", "a paid order's notification with another total_fee must FAIL")


class _LateQueryGateway(BaseHTTPRequestHandler):
    """A proxy in front of the mock gateway that forwards every call and,
    for an orderquery the mock answers with the charge (trade_state
    SUCCESS), withholds that reply until the payment notification has been
    applied (a callback record for the charge exists; at most 2 s, below
    the service's 3 s gateway timeout): the pay call's orderquery is still in
    flight when the notification lands. Records in server.seen, per held
    reply, (transaction_id, records when the mock answered, records when the
    reply was let through)."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        r = http("POST", MOCK + self.path, body, {"Content-Type": "text/xml"}, timeout=10)
        if self.path == "/pay/orderquery" and r.status == 200:
            f = wx_parse(r.text)
            txn = f.get("transaction_id", "") if f.get("trade_state") == "SUCCESS" else ""
            if txn:
                before = records_for(txn)
                t0 = time.monotonic()
                recs = before
                while not recs and time.monotonic() - t0 < 2.0:
                    time.sleep(0.05)
                    recs = records_for(txn)
                self.server.seen.append((txn, before, recs))
        self.send_response(r.status or 502)
        self.send_header("Content-Type", r.header("Content-Type") or "text/xml")
        self.send_header("Content-Length", str(len(r.body)))
        self.end_headers()
        self.wfile.write(r.body)

    def log_message(self, *args):
        pass


def service_env():
    """The running service's IDEMPAY_* settings (the merchant key, the stack's
    scale), for a Variant started outside ./stack test; without its notify
    URL (the Variant sets its own)."""
    pid = service_pids()[0]
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [kv.decode().split("=", 1) for kv in f.read().split(b"\0") if b"=" in kv]
    return {k: v for k, v in pairs
            if k.startswith("IDEMPAY_") and k not in ("IDEMPAY_NOTIFY_URL", "IDEMPAY_DOOR")}


def native(order_no, base=None):
    """POST /api/pay of a NATIVE (prepay) order: nothing is charged until the
    mock's payer pays its code_url."""
    return pay(order_no, USER, AMOUNT, trade_type="NATIVE", base=base)


def unifiedorders(order_no):
    return [q for q in mock_requests(order_no)["requests"] if q.get("endpoint") == "unifiedorder"]


@test
def notification_while_pay_call_in_flight():
    """The customer pays a NATIVE order; the client's repeat of POST /api/pay
    asks orderquery, the gateway shows the charge, and its reply comes back
    only after the notification of that charge was applied: the notification
    makes the order PAID first, the late synchronous reply of the same charge
    then finds it PAID and the pay call answers 200 PAID, once.
    (Before the real flows this was unifiedorder's own charge-and-notify; a
    prepay order's pay call learns of the charge by orderquery instead.)"""
    mock_config(notify_delay_ms=1000, notify_enabled=True, notify_copies=1)
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _LateQueryGateway)
    proxy.seen = []
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        env = service_env()
        env["IDEMPAY_GATEWAY_URL"] = f"http://127.0.0.1:{proxy.server_port}"
        with Variant("cbinflight", free_port(), env=env) as base:
            order_no = unique("CBF")
            r = native(order_no, base=base)
            check(r.status == 202 and r.json()["status"] == "AWAITING_PAYMENT", f"prepay: {r}")
            p = mock_payer_pay(code_url=r.json()["code_url"]).json()
            check(p["result"] == "SUCCESS", f"the payer: {p}")
            txn = p["transaction_id"]
            r = native(order_no, base=base)
            check(r.status == 200, f"pay {order_no} via the late-query gateway: {r}")
            b = r.json()
    finally:
        proxy.shutdown()
        proxy.server_close()
    charges = charges_for(order_no)
    check([c["transaction_id"] for c in charges] == [txn], f"{order_no}: one charge: {charges}")
    check(len(proxy.seen) == 1, f"orderquery replies showing the charge: {proxy.seen}")
    check(proxy.seen[0] == (txn, [], [[order_no, "0", str(FEE)]]),
          f"the notification was not applied while the pay call was in flight: {proxy.seen}")
    check(b["status"] == "PAID" and b["transaction_id"] == txn and b["amount"] == AMOUNT,
          f"sync reply {b} vs charge {txn}")
    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn, f"{order_no}: {body}")
    check(records_for(txn) == [[order_no, "0", str(FEE)]], f"records: {records_for(txn)}")
    check(refunds_for(txn) == [], "a single charge must not be refunded")
    check(len(unifiedorders(order_no)) == 1, "the repeat must not create another gateway order")


@test
def notification_races_pay_reply():
    """4 NATIVE orders paid at once by their payers while each client keeps
    repeating POST /api/pay (whose orderquery sees the charge): the mock
    notifies 0.15 s after each payment (2 copies) and answers orderquery
    0.1-0.5 s late, so notifications and the pay calls' orderquery replies of
    the same charges interleave. Each order ends PAID with its one charge,
    one record, nothing refunded."""
    mock_config(notify_delay_ms=150, notify_enabled=True, notify_copies=2,
                endpoints={"orderquery": {"latency_ms": 100, "jitter_ms": 400}})
    orders = [unique("CBR") for _ in range(4)]
    prepays = [native(o) for o in orders]
    for o, r in zip(orders, prepays):
        check(r.status == 202, f"prepay {o}: {r}")

    def client(o):
        end = time.monotonic() + 20
        while time.monotonic() < end:
            r = native(o)
            if r.status != 202:
                return r
            time.sleep(0.05)
        return r

    def payer(code_url):
        return mock_payer_pay(code_url=code_url).json()

    jobs = [(payer, r.json()["code_url"]) for r in prepays] + [(client, o) for o in orders]
    out = parallel(lambda fn, arg: fn(arg), jobs)
    paid, replies = out[:4], out[4:]
    for o, p, r in zip(orders, paid, replies):
        check(p["result"] == "SUCCESS", f"payer of {o}: {p}")
        txn = p["transaction_id"]
        check(r.status == 200, f"pay {o}: expected 200, got {r}")
        b = r.json()
        charges = charges_for(o)
        check([c["transaction_id"] for c in charges] == [txn], f"{o}: one charge: {charges}")
        check(b["status"] == "PAID" and b["transaction_id"] == txn and b["amount"] == AMOUNT,
              f"{o}: sync reply {b} vs charge {txn}")
        recs = wait_until(lambda t=txn: records_for(t), 15, 0.2, f"the notification of {o}")
        check(recs == [[o, "0", str(FEE)]], f"{o}: records {recs}")
        body = order_of(o)
        check(body["status"] == "PAID" and body["transaction_id"] == txn, f"{o}: {body}")
        check(refunds_for(txn) == [], f"{o}: a single charge must not be refunded")
    # both copies of every notification answered (SUCCESS), none applied twice
    wait_until(lambda: all(len([n for n in mock_requests(o)["notifications"]
                                if n.get("acknowledged")]) >= 2 for o in orders),
               15, 0.2, "both copies of each notification to be acknowledged")
    for o in orders:
        check(len(records_of_order(o)) == 1, f"{o}: records {records_of_order(o)}")


@test
def late_charge_of_failed_order_becomes_paid():
    """A charge that comes after the order was asked and found unpaid: the
    client's poll asks orderquery (NOTPAY: AWAITING_PAYMENT), then a slow
    payer pays; its notification takes the order to PAID with that
    transaction_id, nothing is refunded, and a retry of the order then
    answers the stored result without a gateway order or charge more.

    Why not FAILED -> PAID any more: before the real flows an order went
    FAILED (retryable) on a decline or NOTPAY while a charging unifiedorder
    could still land. In the real flows NOTPAY of a prepay order is not an
    end: the order stays PROCESSING (AWAITING_PAYMENT) with its lease until
    time_expire + the close margin (docs/FENCE.md "Prepay", 2), so the late
    payer here is exactly the late charge, and it must still make the order
    PAID. A FAILED order can no longer be charged at all: a declined
    micropay's out_trade_no is refused by the gateway for good (the mock:
    AUTH_CODE_INVALID / 201), and a closed prepay is FAILED for good, its
    payer refused ORDERCLOSED; a payment confirmed at the instant of the
    close is refunded, not kept (test_pay_flows.py
    native_paid_at_the_instant_of_the_close_is_refunded)."""
    mock_config(notify_enabled=True, notify_delay_ms=0, notify_copies=2)
    order_no = unique("CBL")
    r = native(order_no)
    check(r.status == 202, f"prepay {order_no}: {r}")
    code_url = r.json()["code_url"]
    check(order_of(order_no)["status"] == "AWAITING_PAYMENT", f"{order_no} should await payment")
    check(any(q.get("endpoint") == "orderquery" for q in mock_requests(order_no)["requests"]),
          "the poll did not ask orderquery")
    check(charges_for(order_no) == [], "nothing may be charged before the payer pays")

    out = {}
    t = threading.Thread(target=lambda: out.update(
        p=mock_payer_pay(code_url=code_url, delay_ms=1500).json()))
    t.start()
    time.sleep(0.6)   # the poll's interval (0.5 s on the stack): it asks again, NOTPAY
    check(order_of(order_no)["status"] == "AWAITING_PAYMENT", "paid before the payer paid")
    t.join(30)
    check(out.get("p", {}).get("result") == "SUCCESS", f"the late payer: {out}")
    txn = out["p"]["transaction_id"]
    wait_until(lambda: records_for(txn), 15, 0.2, "the late charge's notification")
    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn and body["amount"] == AMOUNT,
          f"{order_no}: {body}")
    recs = records_for(txn)
    check(recs == [[order_no, "0", str(FEE)]], f"expected one applied record: {recs}")
    check(refunds_for(txn) == [], "the order's only charge must not be refunded")

    again = native(order_no)
    check(again.status == 200 and again.json()["status"] == "PAID"
          and again.json()["transaction_id"] == txn, f"retry after the late charge: {again}")
    check(again.header("Idempotent-Replayed") == "true", f"the retry must be a replay: {again}")
    check(len(charges_for(order_no)) == 1, f"{order_no}: charges {charges_for(order_no)}")
    check(len(unifiedorders(order_no)) == 1, f"{order_no}: the retry made another gateway order")


def twice_charged_order(prefix):
    """An order the gateway charged twice, PAID by the service with one charge:
    WeChat refuses a second payment of one out_trade_no, so the mock makes
    the second charge only with dedupe off, when two micropays of the same
    payment code race past its check (two cashier terminals scanning one
    code; tried again with a new order when they did not race). Then the
    service's POST /api/pay (MICROPAY, the same code) is answered ORDERPAID,
    asks orderquery and makes the order PAID with the charge it shows.
    Returns (order_no, kept transaction_id, the other transaction_id)."""
    for _ in range(10):
        order_no = unique(prefix)
        mock_config(dedupe=False, rules=[{"endpoint": "micropay", "out_trade_no": order_no,
                                          "fault": {"latency_ms": 300}}])
        parallel(mock_micropay, [(order_no, "134567890123456789", FEE)] * 2)
        charges = charges_for(order_no)
        if len(charges) == 2:
            break
    else:
        raise AssertionError("two racing micropays never both charged")
    mock_config(dedupe=True, rules=[])
    r = pay(order_no, USER, AMOUNT)
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay {order_no}: {r}")
    txn1 = r.json()["transaction_id"]
    others = [c["transaction_id"] for c in charges if c["transaction_id"] != txn1]
    check(len(others) == 1, f"{order_no}: kept {txn1} of {charges}")
    return order_no, txn1, others[0]


def second_notification(order_no, txn2):
    """The second charge's notification: micropay has no notify_url, so it is
    signed here with the merchant key, as a gateway that notified that charge
    would sign it (trade_type MICROPAY)."""
    return notification(order_no, FEE, txn2, trade_type="MICROPAY")


@test
def second_charge_detected_and_refunded_once():
    """A second charge of a PAID order, its notification delivered 5 times at
    once and again much later: detected once, refunded exactly once in the
    gateway's ledger, the order keeps its first charge."""
    order_no, txn1, txn2 = twice_charged_order("CBD")
    detected0 = metric("idempay_double_charge_detected_total")

    xml = wx_xml(second_notification(order_no, txn2))
    codes = [reply_of(r) for r in parallel(send_notification, [(xml,)] * 5)]
    check(codes == [("SUCCESS", "OK")] * 5, f"5 copies of the second charge's notification: {codes}")

    def refunded():
        cs = {c["transaction_id"]: c for c in charges_for(order_no)}
        return cs if cs.get(txn2, {}).get("refunded") else None

    wait_until(refunded, 20, 0.3, f"the refund of {txn2}")
    wait_until(lambda: refunds_for(txn2) and refunds_for(txn2)[0][3] == "1", 20, 0.3,
               "the refund to be marked done")
    time.sleep(1.0)
    charges = {c["transaction_id"]: c for c in charges_for(order_no)}
    check(set(charges) == {txn1, txn2}, f"ledger: {charges}")
    check(charges[txn2]["refunded"] and charges[txn2]["refund_count"] == 1,
          f"the second charge must be refunded exactly once: {charges[txn2]}")
    check(charges[txn2].get("refunded_fee", FEE) == FEE, f"refund amount: {charges[txn2]}")
    check(not charges[txn1]["refunded"] and charges[txn1]["refund_count"] == 0,
          f"the first charge must stay: {charges[txn1]}")

    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn1,
          f"the order must stay PAID with the first charge: {body}")
    detected = metric("idempay_double_charge_detected_total") - detected0
    check(detected == 1, f"idempay_double_charge_detected_total +{detected}, expected +1")
    check(records_for(txn2) == [[order_no, "1", str(FEE)]],
          f"second charge record: {records_for(txn2)}")
    check(refunds_for(txn2) == [[order_no, "RF" + txn2, str(FEE), "1"]],
          f"refund queue: {refunds_for(txn2)}")

    # A much later copy (WeChat retries for hours) does not refund again.
    code, _ = reply_of(send_notification(second_notification(order_no, txn2)))
    check(code == "SUCCESS", "a late copy of the second charge must be SUCCESS")
    time.sleep(1.0)
    c2 = [c for c in charges_for(order_no) if c["transaction_id"] == txn2][0]
    check(c2["refund_count"] == 1, f"refunded again after a late copy: {c2}")
    check(metric("idempay_double_charge_detected_total") - detected0 == 1,
          "a late copy counted the double charge again")


@test
def refund_retried_after_lost_replies_is_one_refund():
    """The gateway refunds but its replies come too late (the service gives
    up after its timeout): the worker retries with the same out_refund_no
    until a reply arrives, and the ledger shows one refund. The lost replies
    are a targeted rule: every refund call answers after the timeout, until
    the test lifts it."""
    order_no, txn1, txn2 = twice_charged_order("CBQ")
    retries0 = metric('idempay_refunds_total{outcome="retry"}')
    mock_config(rules=[{"endpoint": "refund",
                        "fault": {"latency_ms": int(GATEWAY_TIMEOUT_S * 1000) + 1000}}])
    code, _ = reply_of(send_notification(second_notification(order_no, txn2)))
    check(code == "SUCCESS", "the second charge's notification")

    def attempts():
        rows = refunds_for(txn2)
        return rows and int(db_query("SELECT attempts FROM payment_refund "
                                     f"WHERE transaction_id = '{txn2}'")[0][0])

    def charge2():
        return [c for c in charges_for(order_no) if c["transaction_id"] == txn2][0]

    # The gateway refunded on the first attempt; the service did not hear it
    # and tried again.
    wait_until(lambda: (attempts() or 0) >= 2 and charge2()["refunded"], 40, 0.3,
               "a refund made by the gateway and retried by the service")
    check(charge2()["refund_count"] == 1, f"after lost replies: {charge2()}")
    # The service never heard the gateway accept it, so it is not marked
    # accepted (2); the mock's refund notification may already have said
    # SUCCESS (1), which ends it without any reply.
    check(refunds_for(txn2)[0][3] in ("0", "1"), "a refund whose reply was lost is not accepted")
    rule = http("GET", MOCK + "/mock/config").json()["rules"][0]
    check(rule["hits"] >= 2, f"the refund calls whose replies were lost: {rule}")
    mock_config(rules=[])
    wait_until(lambda: refunds_for(txn2)[0][3] == "1", 90, 0.3, "the refund to be marked done")
    charges = {c["transaction_id"]: c for c in charges_for(order_no)}
    check(charges[txn2]["refund_count"] == 1 and charges[txn2]["refunded_fee"] == FEE,
          f"retries must not refund again: {charges[txn2]}")
    check(charges[txn1]["refund_count"] == 0, f"the first charge must stay: {charges[txn1]}")
    check(metric('idempay_refunds_total{outcome="retry"}') >= retries0 + 1,
          "refunds_total{outcome=retry} not counted")


@test
def method_and_reply_format():
    r = http("GET", CALLBACK)
    check(r.status == 405, f"GET on the callback: {r}")
    code, msg = reply_of(send_notification("<xml><return_code>SUCCESS</return_code></xml>"))
    check(code == "FAIL", f"an unsigned reply: {code} {msg!r}")


@test
def database_down_answers_fail_unavailable():
    """MariaDB down: FAIL "unavailable" (HTTP 200, WeChat retries), nothing
    half-done; once it is back the same notification applies."""
    [(order_no, txn)] = processing_orders(1)
    xml = wx_xml(notification(order_no, FEE, txn))
    unavailable0 = metric('idempay_callbacks_total{outcome="unavailable"}')
    stack("stop", "mariadb")
    try:
        code, msg = reply_of(send_notification(xml, timeout=30))
        check((code, msg) == ("FAIL", "unavailable"), f"with MariaDB down: {code} {msg!r}")
        check(metric('idempay_callbacks_total{outcome="unavailable"}') >= unavailable0 + 1,
              "callbacks_total{outcome=unavailable} not counted")
    finally:
        stack("start", "mariadb")
        wait_healthy()
        settle_connections()
    code, msg = reply_of(send_notification(xml))
    check((code, msg) == ("SUCCESS", "OK"), f"after MariaDB came back: {code} {msg!r}")
    body = order_of(order_no)
    check(body["status"] == "PAID" and body["transaction_id"] == txn, f"{order_no}: {body}")
    check(records_for(txn) == [[order_no, "0", str(FEE)]], f"records: {records_for(txn)}")


def settle_connections():
    """After a MariaDB restart every worker thread (service and mock) still
    holds a dead connection until its next use; let them all find out, so
    the tests after this one see a healthy stack."""
    def steady():
        for _ in range(100):
            if http("GET", SERVICE + "/healthz", timeout=5).status != 200:
                return False
            if http("GET", MOCK + "/mock/ledger", timeout=10).status != 200:
                return False
            if http("PUT", MOCK + "/mock/config", {}, timeout=10).status != 200:
                return False
        return True
    wait_until(steady, 60, 0.2, "every connection to MariaDB to be renewed")


def restore():
    mock_reset()


if __name__ == "__main__":
    restore()
    run_tests(cleanup=restore)
