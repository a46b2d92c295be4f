#!/usr/bin/env python3
"""test_refunds - the service's refunds that complete (issue 22) against the
mock's asynchronous refunds: a merchant refund (POST
/api/pay/orders/{order_no}/refunds) is PROCESSING while the gateway works on
it and SUCCESS only after refund_delay_ms, by refundquery or by the refund
notification alone; REFUNDCLOSE, CHANGE and a hopeless refusal stop it,
are counted and listed by `idempay-fcgi --list-stuck-refunds`; NOTENOUGH is
retried; /secapi/ without the client certificate is refused by the mock;
concurrent requests never exceed the charge; one Idempotency-Key refunds
once; 1.00 of 3.00, then 2.00, then 0.01 refused.

Needs a running stack (./stack up): the service's /secapi/ calls go to the
mock's HTTPS port with the merchant certificate of $STATE/tls."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import SERVICE, STATE, bin_dir, check, db_query, http, metric, mock_config, \
    mock_ledger, parallel, pay, run_tests_restoring_mock, test, unique, wait_until  # noqa: E402

USER = 4242
MOCK_PORT = int(os.environ.get("IDEMPAY_MOCK_PORT", "18081"))
TLS_PORT = int(os.environ.get("IDEMPAY_MOCK_TLS_PORT", str(MOCK_PORT + 7)))
TLS = os.path.join(STATE, "tls")
DEFAULTS = {"refund_delay_ms": 500, "refund_close_rate": 0.0, "refund_change_rate": 0.0,
            "refund_notenough_rate": 0.0, "refund_abnormal_rate": 0.0, "rules": []}


ORDERS = []   # every order this file refunds, for every_refund_ends


def paid_order(amount="3.00"):
    no = unique("RFD")
    ORDERS.append(no)
    r = pay(no, USER, amount)
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay {no}: {r}")
    return no


def refund(no, amount, key, reason="test refund"):
    body = {"amount": amount}
    if reason is not None:
        body["reason"] = reason
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return http("POST", f"{SERVICE}/api/pay/orders/{no}/refunds", body, headers)


def refunds_of(no):
    r = http("GET", f"{SERVICE}/api/pay/orders/{no}/refunds")
    check(r.status == 200, f"GET refunds of {no}: {r}")
    return r.json()


def status_of(no, refund_no):
    return [x for x in refunds_of(no)["refunds"] if x["refund_no"] == refund_no][0]["status"]


def row_state(refund_no):
    return int(db_query(f"SELECT state FROM payment_refund WHERE out_refund_no = '{refund_no}'")[0][0])


def wait_status(no, refund_no, want, timeout=20.0):
    wait_until(lambda: status_of(no, refund_no) == want, timeout, 0.2,
               f"refund {refund_no} of {no} to be {want}")


def list_stuck():
    p = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--list-stuck-refunds"],
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


@test
def completes_only_after_the_delay():
    mock_config(refund_delay_ms=3000)
    no = paid_order()
    t0 = time.monotonic()
    r = refund(no, "1.00", "k1")
    check(r.status == 202 and r.json()["status"] == "PROCESSING", f"refund: {r}")
    rno = r.json()["refund_no"]
    # Accepted by the gateway (state 2) well before the delay: still PROCESSING.
    wait_until(lambda: row_state(rno) == 2, 10, 0.1, "the gateway to accept the refund")
    check(status_of(no, rno) == "PROCESSING", "an accepted refund is not done")
    wait_status(no, rno, "SUCCESS", 20)
    took = time.monotonic() - t0
    check(took >= 2.5, f"SUCCESS after {took:.1f}s, before the mock's 3 s delay")
    charge = [c for c in mock_ledger()["charges"] if c["out_trade_no"] == no][0]
    check(charge.get("refunded_fee") == 100, f"the mock's ledger: {charge}")


@test
def the_notification_alone_completes_it():
    # Every refundquery fails: only the refund notification can end it.
    mock_config(refund_delay_ms=1000, rules=[{"endpoint": "refundquery", "fault": {"kind": "error"}}])
    applied0 = metric('idempay_refund_notifications_total{outcome="applied"}')
    no = paid_order()
    r = refund(no, "0.50", "n1")
    check(r.status == 202, f"refund: {r}")
    rno = r.json()["refund_no"]
    wait_status(no, rno, "SUCCESS", 20)
    check(metric('idempay_refund_notifications_total{outcome="applied"}') >= applied0 + 1,
          "the notification was not what completed it")


def stuck_case(knob, want):
    mock_config(**{knob: 1.0})
    before = metric(f'idempay_refunds_stuck_total{{outcome="{want.lower()}"}}')
    no = paid_order()
    r = refund(no, "1.00", "s1")
    check(r.status == 202, f"refund: {r}")
    rno = r.json()["refund_no"]
    wait_status(no, rno, want, 20)
    check(metric(f'idempay_refunds_stuck_total{{outcome="{want.lower()}"}}') >= before + 1,
          f"{want} not counted")
    rc, out, err = list_stuck()
    check(rc == 1 and rno in out and want in out, f"--list-stuck-refunds: {rc} {out[-500:]} {err}")
    # It stays: no retry moves it.
    time.sleep(1.5)
    check(status_of(no, rno) == want, f"{want} left its final state")
    return no, rno


@test
def refundclose_is_reported_listed_and_frees_the_amount():
    no, _ = stuck_case("refund_close_rate", "REFUNDCLOSE")
    mock_config(refund_close_rate=0.0)
    # A closed refund took nothing: the whole charge is refundable again.
    check(refunds_of(no)["refundable"] == "3.00", f"after REFUNDCLOSE: {refunds_of(no)}")
    r = refund(no, "3.00", "s2")
    check(r.status == 202, f"the whole charge after a REFUNDCLOSE: {r}")
    wait_status(no, r.json()["refund_no"], "SUCCESS", 20)


@test
def change_is_reported_and_listed():
    no, _ = stuck_case("refund_change_rate", "CHANGE")
    check(refunds_of(no)["refundable"] == "2.00", "a CHANGE refund still takes its amount")


@test
def a_hopeless_refusal_is_reported_and_listed():
    stuck_case("refund_abnormal_rate", "ABNORMAL")


@test
def notenough_is_retried():
    mock_config(refund_notenough_rate=1.0)
    retry0 = metric('idempay_refunds_total{outcome="retry"}')
    no = paid_order()
    r = refund(no, "1.00", "ne")
    rno = r.json()["refund_no"]
    wait_until(lambda: metric('idempay_refunds_total{outcome="retry"}') >= retry0 + 2, 15, 0.2,
               "NOTENOUGH to be retried")
    check(status_of(no, rno) == "PROCESSING" and row_state(rno) == 0, "NOTENOUGH is not final")
    mock_config(refund_notenough_rate=0.0)   # the merchant's balance is topped up
    wait_status(no, rno, "SUCCESS", 90)


@test
def secapi_without_the_client_certificate_is_refused():
    body = "<xml><appid>x</appid></xml>"
    base = ["curl", "-s", "--cacert", os.path.join(TLS, "ca.pem"), "-d", body,
            f"https://127.0.0.1:{TLS_PORT}/secapi/pay/refund"]
    out = subprocess.run(base, capture_output=True, text=True, timeout=30).stdout
    check("FAIL" in out and "证书" in out, f"without a certificate: {out}")
    out = subprocess.run(base[:3] + ["--cert", os.path.join(TLS, "apiclient_cert.pem"), "--key",
                                     os.path.join(TLS, "apiclient_key.pem")] + base[3:],
                         capture_output=True, text=True, timeout=30).stdout
    check("证书" not in out, f"with the certificate the mock judges the request itself: {out}")


@test
def concurrent_requests_never_exceed_the_charge():
    no = paid_order("3.00")
    results = parallel(lambda k: refund(no, "1.00", k), [(f"c{i}",) for i in range(8)])
    ok = [r for r in results if r.status == 202]
    refused = [r for r in results if r.status == 422 and r.json()["error"] == "refund_exceeds_charge"]
    check(len(ok) == 3 and len(refused) == 5, f"8 x 1.00 of 3.00: {[str(r) for r in results]}")
    total = int(db_query("SELECT SUM(refund_fee) FROM payment_refund "
                         f"WHERE order_no = '{no}' AND kind = 1")[0][0])
    check(total == 300, f"refunds queued: {total} fen")
    no2 = paid_order("3.00")
    results = parallel(lambda k: refund(no2, "2.00", k), [("a",), ("b",)])
    check(sorted(r.status for r in results) == [202, 422], f"2 x 2.00 of 3.00: {results}")


@test
def one_idempotency_key_refunds_once():
    no = paid_order("3.00")
    results = parallel(lambda: refund(no, "1.00", "same-key"), [()] * 6)
    check(all(r.status == 202 for r in results), f"repeats: {[str(r) for r in results]}")
    check(len({r.json()["refund_no"] for r in results}) == 1, "one refund_no for one key")
    check(any(r.headers.get("idempotent-replayed") == "true" for r in results), "replays are marked")
    rows = db_query(f"SELECT COUNT(*) FROM payment_refund WHERE order_no = '{no}'")
    check(int(rows[0][0]) == 1, f"rows: {rows}")
    rno = results[0].json()["refund_no"]
    wait_status(no, rno, "SUCCESS", 20)
    r = refund(no, "1.00", "same-key")
    check(r.status == 202 and r.json()["status"] == "SUCCESS", f"a repeat after the end: {r}")
    r = refund(no, "2.00", "same-key")
    check(r.status == 422 and r.json()["error"] == "idempotency_key_mismatch", f"other amount: {r}")
    charge = [c for c in mock_ledger()["charges"] if c["out_trade_no"] == no][0]
    check(charge.get("refund_count") == 1 and charge.get("refunded_fee") == 100, f"{charge}")


@test
def one_then_two_then_a_cent_refused():
    no = paid_order("3.00")
    check(refund(no, "1.00", "x1").status == 202, "1.00")
    check(refund(no, "2.00", "x2").status == 202, "2.00")
    r = refund(no, "0.01", "x3")
    check(r.status == 422 and r.json()["error"] == "refund_exceeds_charge", f"0.01: {r}")
    listed = refunds_of(no)
    check(listed["refundable"] == "0.00" and len(listed["refunds"]) == 2, f"{listed}")


@test
def bad_requests():
    no = paid_order("1.00")
    check(refund(no, "1.00", None).status == 400, "no Idempotency-Key")
    for amount in ("0", "0.00", "-1", "1.001", "abc"):
        r = refund(no, amount, "b" + amount)
        check(r.status == 400, f"amount {amount}: {r}")
    check(refund(no, "0.10", "r", reason="x" * 81).status == 400, "reason too long")
    check(refund(unique("NOPE"), "1.00", "k").status == 404, "unknown order")
    check(http("GET", f"{SERVICE}/api/pay/orders/{unique('NOPE')}/refunds").status == 404,
          "GET of an unknown order")
    check(http("DELETE", f"{SERVICE}/api/pay/orders/{no}/refunds").status == 405, "DELETE")


@test
def every_refund_ends():
    # Nothing this file asked for is left PROCESSING (and the mock's reset at
    # the end finds no refund in flight): each ended SUCCESS or stuck.
    mock_config(**DEFAULTS)
    names = ",".join(f"'{no}'" for no in ORDERS)

    def open_rows():
        return int(db_query("SELECT COUNT(*) FROM payment_refund "
                            f"WHERE order_no IN ({names}) AND state IN (0, 2)")[0][0])
    wait_until(lambda: open_rows() == 0, 60, 0.3, "every refund of this file to end")


run_tests_restoring_mock(DEFAULTS)
