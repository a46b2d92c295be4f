#!/usr/bin/env python3
"""test_pay - POST /api/pay and GET /api/pay/orders against the running
stack: one charge however many clicks, order_mismatch, timeouts that never
become declines, declines that can be retried, MariaDB down, and a worker
killed between the charge and its commit. The mock's ledger is the truth of
what was charged."""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

MOCK_DEFAULTS = dict(latency_ms=0, jitter_ms=0, error_rate=0.0, decline_rate=0.0,
                     timeout_after_charge_rate=0.0, reset_rate=0.0, dedupe=True,
                     notify_enabled=True, hold_max_ms=30000, closeorder_enabled=True)


def uid():
    return random.randint(1, 2**62)


def order_state(order_no):
    r = get_order(order_no)
    return r.json()["status"] if r.status == 200 else None


def settled_paid(order_no):
    return order_state(order_no) == "PAID"


def assert_one_charge(order_no, fen):
    charges = charges_for(order_no)
    check(len(charges) == 1, f"{order_no}: expected exactly one charge, ledger has {charges}")
    check(charges[0]["total_fee"] == fen, f"{order_no}: charged {charges[0]} instead of {fen} fen")
    return charges[0]


@test
def sixty_four_identical_clicks_charge_once():
    no, user = unique("P64"), uid()
    answers = retry_busy(parallel(pay, [(no, user, "12.30")] * 64), lambda: pay(no, user, "12.30"))
    statuses = [a.status for a in answers]
    check(all(s in (200, 202) for s in statuses), f"answers other than 200/202: {answers}")
    check(200 in statuses, f"nobody saw PAID: {statuses}")
    for a in answers:
        if a.status == 202:
            check(a.header("Retry-After"), f"202 without Retry-After: {a.headers}")
            check(a.json() == {"order_no": no, "status": "PROCESSING"}, f"202 body: {a.text}")
    wait_until(lambda: settled_paid(no), 20, what=f"{no} PAID")
    charge = assert_one_charge(no, 1230)
    for a in answers:
        if a.status == 200:
            check(a.json() == {"order_no": no, "status": "PAID",
                               "transaction_id": charge["transaction_id"], "amount": "12.30"},
                  f"200 body differs from the ledger's charge: {a.text}")
    fresh = [a for a in answers if a.status == 200 and a.header("Idempotent-Replayed") != "true"]
    check(len(fresh) <= 1, f"more than one request claims the first charge: {len(fresh)}")
    # a later repeat is answered from the database, replayed, no new charge
    again = pay(no, user, "12.3")
    check(again.status == 200 and again.header("Idempotent-Replayed") == "true",
          f"repeat of a paid order: {again} {again.headers}")
    o = get_order(no).json()
    check(o["user_id"] == user and o["amount"] == "12.30" and
          o["transaction_id"] == charge["transaction_id"], f"order view: {o}")
    check(o["created_at"].endswith("Z") and "T" in o["updated_at"], f"timestamps: {o}")
    assert_one_charge(no, 1230)


@test
def same_order_other_amount_or_user_is_422():
    no, user = unique("PMM"), uid()
    first = pay(no, user, "5.00")
    check(first.status == 200, f"first payment: {first}")
    for other in (pay(no, user, "5.01"), pay(no, user + 1, "5.00"), pay(no, user + 1, "6")):
        check(other.status == 422, f"mismatch should be 422: {other}")
        check(other.json() == {"error": "order_mismatch", "message": other.json()["message"]},
              f"422 body: {other.text}")
    # the same amount written differently is the same order
    same = pay(no, user, "5")
    check(same.status == 200, f"'5' is '5.00': {same}")
    assert_one_charge(no, 500)
    check(get_order(no).json()["user_id"] == user, "the order changed owner")


@test
def bad_input_is_refused_and_writes_nothing():
    no = unique("PBAD")
    cases = [
        ({"order_no": no, "user_id": 1, "amount": 12.3}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": 1, "amount": "0"}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": 1, "amount": "0.001"}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": 1, "amount": "1e3"}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": 0, "amount": "1"}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": "1", "amount": "1"}, {}, 400, "invalid_request"),
        ({"order_no": "short", "user_id": 1, "amount": "1"}, {}, 400, "invalid_request"),
        ({"user_id": 1, "amount": "1"}, {}, 400, "invalid_request"),
        ({"order_no": no, "user_id": 1, "amount": "1", "token": 5}, {}, 400, "invalid_request"),
    ]
    for body, hdrs, status, code in cases:
        r = http("POST", SERVICE + "/api/pay", body, hdrs)
        check(r.status == status and r.json() and r.json().get("error") == code,
              f"{body}: expected {status} {code}, got {r}")
    dup = f'{{"order_no":"{no}","user_id":1,"amount":"1","amount":"2"}}'
    r = http("POST", SERVICE + "/api/pay", dup, {"Content-Type": "application/json"})
    check(r.status == 400, f"duplicate keys: {r}")
    r = http("POST", SERVICE + "/api/pay", f'{{"order_no":"{no}","user_id":1,"amount":"1"}}',
             {"Content-Type": "text/plain"})
    check(r.status == 415 and r.json()["error"] == "unsupported_media_type", f"415: {r}")
    big = '{"order_no":"%s","user_id":1,"amount":"1","pad":"%s"}' % (no, "x" * 70000)
    r = http("POST", SERVICE + "/api/pay", big, {"Content-Type": "application/json"})
    check(r.status == 413 and r.json()["error"] == "payload_too_large", f"413: {r}")
    r = http("PUT", SERVICE + "/api/pay", {"order_no": no, "user_id": 1, "amount": "1"})
    check(r.status == 405 and r.json()["error"] == "method_not_allowed", f"405: {r}")
    r = pay(no, 1, "1", idem_key="has space")
    check(r.status == 400, f"bad Idempotency-Key: {r}")
    check(get_order(no).status == 404, "a refused request wrote an order")
    check(charges_for(no) == [], "a refused request charged")
    r = get_order("bad!order")
    check(r.status == 400 and r.json()["error"] == "invalid_request", f"GET bad order_no: {r}")
    r = get_order(unique("PNONE"))
    check(r.status == 404 and r.json()["error"] == "not_found", f"GET unknown order: {r}")


@test
def decline_is_402_and_a_later_retry_pays_once():
    # A payment code declined (NOTENOUGH) is spent: WeChat refuses the same
    # out_trade_no again (AUTH_CODE_INVALID with the same code, 201
    # duplicate with another), so the retry is declined too and charges
    # nothing; the customer pays with a new order_no (docs/FLOWS.md).
    no, user = unique("PDEC"), uid()
    mock_config(decline_rate=1.0)
    r = pay(no, user, "8.88")
    check(r.status == 402, f"declined payment should be 402: {r}")
    body = r.json()
    check(body["order_no"] == no and body["status"] == "FAILED" and
          body["error"] == "payment_declined" and body["message"], f"402 body: {r.text}")
    check(order_state(no) == "FAILED", "a decline leaves the order FAILED")
    check(charges_for(no) == [], "a decline charged")
    mock_config(decline_rate=0.0)
    r = pay(no, user, "8.88")
    check(r.status == 402 and r.json()["error"] == "payment_declined", f"retry after decline: {r}")
    check(charges_for(no) == [], "a retry of a spent payment code charged")
    no = unique("PDEC")
    r = pay(no, user, "8.88")
    check(r.status == 200 and r.json()["status"] == "PAID", f"a new order_no: {r}")
    assert_one_charge(no, 888)
    r = pay(no, user, "8.88")
    check(r.status == 200 and r.header("Idempotent-Replayed") == "true", f"repeat: {r}")
    assert_one_charge(no, 888)


def systemerror_then_retry(prefix, amount):
    """A payment the gateway answers SYSTEMERROR (outcome unknown: 202,
    nothing charged), then the gateway recovers and the client retries at
    once. Returns (order_no, user, the retry's answer)."""
    no, user = unique(prefix), uid()
    mock_config(error_rate=1.0, notify_enabled=False)
    r = pay(no, user, amount)
    check(r.status == 202 and r.header("Retry-After"), f"SYSTEMERROR must answer 202: {r}")
    check(order_state(no) == "PROCESSING", "SYSTEMERROR must leave the order PROCESSING")
    check(charges_for(no) == [], "SYSTEMERROR charged")
    mock_config(error_rate=0.0)
    # a payment-code charge whose outcome is unknown: orderquery every
    # IDEMPAY_MICROPAY_POLL_MS within IDEMPAY_MICROPAY_WINDOW_MS, then reverse
    window = int(os.environ.get("IDEMPAY_MICROPAY_WINDOW_MS", "6000")) / 1000.0
    t0 = time.monotonic()
    r = wait_until(lambda: (lambda a: a if a.status in (200, 402) else None)(pay(no, user, amount)),
                   window + 10, 0.5, f"{no} resolved after the gateway recovered")
    check(time.monotonic() - t0 < window + 8, "the retry waited past the window and the reverse")
    return no, user, r


@test
def gateway_systemerror_is_202_and_the_retry_closes_the_attempt():
    # SYSTEMERROR is an uncertain attempt: it ends only by orderquery, then
    # (payment code) reverse (docs/FENCE.md). The reverse makes the order final.
    no, user, r = systemerror_then_retry("PERR", "2.22")
    check(r.status == 402 and r.json()["error"] == "payment_closed"
          and r.json()["status"] == "FAILED", f"the retry after the close: {r}")
    check(charges_for(no) == [], f"{no}: charged after the close")
    check(order_state(no) == "FAILED", f"{no} must be FAILED once closed")
    again = pay(no, user, "2.22")
    check(again.status == 402 and again.json()["error"] == "payment_closed"
          and again.header("Idempotent-Replayed") == "true", f"a closed order is final: {again}")
    check(charges_for(no) == [], f"{no}: charged after the close")


@test
def without_closeorder_a_systemerror_is_still_fenced_by_reverse():
    # The payment-code flow's fence is reverse, not closeorder: a gateway
    # without closeorder still ends the uncertain charge for good.
    mock_config(closeorder_enabled=False)
    no, user, r = systemerror_then_retry("PERRN", "2.23")
    check(r.status == 402 and r.json()["error"] == "payment_closed", f"{r}")
    check(charges_for(no) == [], f"{no}: charged after the reverse")


@test
def gateway_timeout_is_202_never_402_then_settles_once():
    no, user = unique("PTMO"), uid()
    # charge, then withhold the reply longer than the service's 3 s timeout;
    # no notification, so only the service itself can find out
    mock_config(timeout_after_charge_rate=1.0, hold_max_ms=8000, notify_enabled=False)
    r = pay(no, user, "3.21", timeout=15)
    check(r.status == 202, f"a gateway timeout must answer 202: {r}")
    check(r.header("Retry-After"), f"202 without Retry-After: {r.headers}")
    check(r.json() == {"order_no": no, "status": "PROCESSING"}, f"202 body: {r.text}")
    check(order_state(no) == "PROCESSING", "a timeout must leave the order PROCESSING")
    check(len(charges_for(no)) == 1, "the mock should have charged once")
    mock_config(timeout_after_charge_rate=0.0)
    # retries while the lease lives are 202; afterwards a retry or the
    # reconciler asks orderquery and settles PAID, never charging again
    seen = []

    def retry_paid():
        a = pay(no, user, "3.21")
        seen.append(a.status)
        return a.status == 200 and settled_paid(no)
    wait_until(retry_paid, 30, 0.5, f"{no} PAID after the gateway recovered")
    check(all(s in (200, 202) for s in seen), f"retries answered {seen}")
    check(402 not in seen, "a timeout became a decline")
    assert_one_charge(no, 321)


@test
def mariadb_down_is_503_and_charges_nothing():
    no, user = unique("PDB"), uid()
    stack("stop", "mariadb")
    try:
        r = pay(no, user, "4.56")
        check(r.status == 503, f"MariaDB down must answer 503: {r}")
        check(r.json()["error"] == "unavailable" and r.header("Retry-After"), f"503: {r} {r.headers}")
        check(get_order(no).status == 503, "the order query must say unavailable too")
    finally:
        stack("start", "mariadb")
    wait_healthy()
    # (the mock's ledger lives in MariaDB too: read it once it is back)
    check(charges_for(no) == [], "charged while MariaDB was down")
    check(get_order(no).status == 404, "an order was written while MariaDB was down")
    # every worker's connection died with the server: the first statement on
    # each is run again on a new connection, so no request sees a 503 now
    r = pay(no, user, "4.56", idem_key=f"after-restart-{no}")
    check(r.status == 200 and r.json()["status"] == "PAID", f"first payment after restart: {r}")
    more = parallel(pay, [(unique("PDB2"), user, "0.10", None, f"k{i}-{no}") for i in range(16)])
    check(all(a.status == 200 for a in more), f"payments after restart: {more}")
    assert_one_charge(no, 456)


@test
def worker_killed_between_charge_and_commit_is_settled_by_reconciler():
    no, user = unique("PKIL"), uid()
    # the mock charges at once and withholds the reply; no notification
    mock_config(timeout_after_charge_rate=1.0, hold_max_ms=20000, notify_enabled=False)
    before = service_pids()
    check(before, "no service processes found")
    result = []
    t = threading.Thread(target=lambda: result.append(pay(no, user, "6.54", timeout=20)))
    t.start()
    wait_until(lambda: len(charges_for(no)) == 1, 10, 0.1, "the mock to charge")
    check(order_state(no) == "PROCESSING", "the order should be PROCESSING mid-charge")
    for pid in before:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    t.join(25)
    check(result and result[0].status != 200, f"the killed request cannot have answered PAID: {result}")
    mock_config(timeout_after_charge_rate=0.0)
    wait_healthy()
    check(set(service_pids()).isdisjoint(before), "lighttpd did not respawn the workers")
    # no client retries: the reconciler alone must settle it
    wait_until(lambda: settled_paid(no), 40, 0.5, f"the reconciler to settle {no}")
    charge = assert_one_charge(no, 654)
    check(get_order(no).json()["transaction_id"] == charge["transaction_id"],
          "PAID with another transaction_id than the charge")


# --- The fallback: a gateway without closeorder (docs/FENCE.md) ------------
#
# Only the prepay flows (NATIVE, JSAPI) close: a MICROPAY is fenced by the
# reverse (without_closeorder_a_systemerror_is_still_fenced_by_reverse), so
# the fallback is reached by a NATIVE order nobody paid before its
# time_expire: the reconciler takes its lease at time_expire + margin,
# orderquery says NOTPAY, closeorder answers HTTP 404, and the order fails
# retryably with a recheck due after IDEMPAY_FAILED_RECHECK_MS
# (settle_close in app/settle.c; reconciler_recheck in app/reconciler.c).
# After time_expire no payment can start (the payer is refused
# ORDER_EXPIRED), but one started before it may still be confirmed: that is
# the charge the recheck exists for.

TTL_S = int(os.environ.get("IDEMPAY_PREPAY_TTL_MS", "8000")) / 1000.0
MARGIN_S = int(os.environ.get("IDEMPAY_CLOSE_MARGIN_MS", "2000")) / 1000.0


def awaiting_native(prefix, user, amount):
    """A NATIVE order (202 AWAITING_PAYMENT), with closeorder gone from the
    gateway and its notifications lost. Returns (order_no, the 202 body)."""
    no = unique(prefix)
    mock_config(notify_enabled=False, closeorder_enabled=False)
    r = pay(no, user, amount, trade_type="NATIVE")
    check(r.status == 202 and r.json()["status"] == "AWAITING_PAYMENT", f"NATIVE order: {r}")
    return no, r.json()


def failed_without_close(no, timeout):
    """Waits for the reconciler to fail the expired prepay order without a
    close: FAILED retryable with its recheck pending (lease_until set), and
    the gateway was asked to close and answered 404. Its GET reads
    PROCESSING meanwhile (its outcome waits for the recheck). Returns
    attempts."""
    wait_until(lambda: stored_status(no) == "3", timeout, 0.2, f"the reconciler to fail {no}")
    r = get_order(no)
    check(r.status == 200 and r.json()["status"] == "PROCESSING",
          f"{no}: FAILED with its recheck to come must read PROCESSING (not yet known): {r}")
    [[attempts, pending, reason]] = db_query(
        "SELECT attempts, lease_until IS NOT NULL, final_reason FROM payment_order "
        f"WHERE order_no = '{no}'")
    check(pending == "1" and reason == "0",
          f"{no}: FAILED without a close must be retryable and due for a recheck "
          f"(pending {pending}, final_reason {reason})")
    closes = [q for q in mock_requests(no)["requests"] if q.get("endpoint") == "closeorder"]
    check(closes and all(q.get("reply") == "not_found" for q in closes),
          f"{no}: the fallback is for a closeorder answered 404: {closes}")
    return int(attempts)


def stored_status(no):
    """payment_order.status as stored ("3" FAILED), not as GET shows it."""
    rows = db_query(f"SELECT status FROM payment_order WHERE order_no = '{no}'")
    return rows[0][0] if rows else None


def recheck_due_now(no):
    """Makes the order's recheck due now, as if IDEMPAY_FAILED_RECHECK_MS had
    passed (the reconciler asks at its next round)."""
    db_query("UPDATE payment_order SET lease_until = NOW(3) "
             f"WHERE order_no = '{no}' AND status = 3 AND lease_until IS NOT NULL")


@test
def charge_landing_after_failed_is_found_by_the_recheck():
    # The customer starts paying before time_expire and the confirmation is
    # slow (the payer's delay_ms): orderquery at time_expire + margin says
    # NOTPAY, closeorder is 404, the order goes FAILED; then the payment is
    # confirmed and charges. Its notification is lost: the recheck alone
    # must find the money and make the order PAID.
    user = uid()
    no, a = awaiting_native("PLATE", user, "4.56")
    # confirmed well after the reconciler's failure (due at TTL + margin)
    delay_s = TTL_S + MARGIN_S + 10
    out = {}
    payer = threading.Thread(target=lambda: out.update(p=mock_payer_pay(
        code_url=a["code_url"], delay_ms=int(delay_s * 1000), timeout=delay_s + 30)))
    payer.start()
    failed_without_close(no, delay_s)
    check(charges_for(no) == [], f"{no}: the slow payment was confirmed before the order "
          "failed: the race this test needs did not happen (raise delay_s)")
    payer.join(delay_s + 40)
    p = out.get("p")
    check(p is not None and p.status == 200 and p.json()["result"] == "SUCCESS",
          f"the payment started before time_expire must be confirmed: {p}")
    late = p.json()
    check(len(charges_for(no)) == 1, f"{no}: the late charge: {charges_for(no)}")
    check(stored_status(no) == "3" and order_state(no) == "PROCESSING",
          "nothing told the service about the late charge yet: FAILED, read PROCESSING")
    recheck_due_now(no)
    wait_until(lambda: settled_paid(no), 20, 0.2, f"the recheck to find the late charge of {no}")
    charge = assert_one_charge(no, 456)
    check(get_order(no).json()["transaction_id"] == late["transaction_id"] == charge["transaction_id"],
          f"{no} PAID with another transaction_id than the late charge")
    r = pay(no, user, "4.56", trade_type="NATIVE")
    check(r.status == 200 and r.header("Idempotent-Replayed") == "true", f"repeat after the recheck: {r}")
    assert_one_charge(no, 456)


@test
def recheck_without_a_charge_makes_failed_final():
    # Nobody paid before time_expire: FAILED without a close, the recheck
    # finds nothing and makes it final; the stale code_url cannot be paid
    # (ORDER_EXPIRED), which is why one recheck is enough for the prepay
    # flows: only a payment started before time_expire can still land.
    no, a = awaiting_native("PNOCH", uid(), "6.54")
    attempts = failed_without_close(no, TTL_S + MARGIN_S + 20)
    p = mock_payer_pay(code_url=a["code_url"]).json()
    check(p["result"] == "FAIL" and p["err_code"] == "ORDER_EXPIRED",
          f"a payment after time_expire must be refused: {p}")
    recheck_due_now(no)

    def final():
        rows = db_query(f"SELECT status, attempts, lease_until IS NULL FROM payment_order WHERE order_no = '{no}'")
        return rows == [["3", str(attempts), "1"]]
    wait_until(final, 20, 0.2, f"the recheck of {no} (still FAILED, nothing pending)")
    check(charges_for(no) == [], f"{no}: the recheck charged")
    time.sleep(2.5)  # a reconciler round or more: a final FAILED is not asked about again
    check(final(), f"{no} changed after its recheck was final")


if __name__ == "__main__":
    run_tests_restoring_mock(MOCK_DEFAULTS)
