"""test_pay_flows - the service on the real WeChat flows (docs/FLOWS.md)
against the mock's prepay orders, its payer and micropay/reverse:

- NATIVE: 202 AWAITING_PAYMENT with code_url; repeats get the same prepay
  without a gateway call; the payer pays once -> PAID (notification or the
  poll's orderquery); pays twice -> one charge; never pays -> closed after
  time_expire (402 payment_closed); paid at the instant of the close -> the
  charge is refunded; a stale code_url is refused.
- JSAPI: the signed bridge parameters (paySign verified here with an
  independent implementation); the payer pays with the order's openid.
- MICROPAY: charged at once; USERPAYING polled to PAID; never paid ->
  reversed (402 payment_closed); a repeat naming another flow is 422.

Runs against ./stack up (its scale: a prepay lives IDEMPAY_PREPAY_TTL_MS,
8 s; closeorder's minimum age 3 s)."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, KEY, check, charges_for, get_order, mock_auth_code, mock_config, \
    mock_payer_pay, mock_requests, pay, run_tests_restoring_mock, test, unique, \
    wait_until, wx_sign  # noqa: E402

TTL_S = int(os.environ.get("IDEMPAY_PREPAY_TTL_MS", "8000")) / 1000.0
DEFAULTS = dict(close_race_rate=0.0, clock_offset_ms=0)


def native(no, **kw):
    return pay(no, 7, "1.00", trade_type="NATIVE", **kw)


def unifiedorders(no):
    return [r for r in mock_requests(no)["requests"] if r.get("endpoint") == "unifiedorder"]


def live_charges(no):
    return [c for c in charges_for(no) if not c.get("refunded")]


@test
def native_prepay_repeats_and_pays_once():
    no = unique("PN")
    r = native(no)
    check(r.status == 202 and r.header("Retry-After"), f"first: {r}")
    a = r.json()
    check(a["status"] == "AWAITING_PAYMENT" and a["trade_type"] == "NATIVE" and
          a["code_url"].startswith("weixin://") and a["prepay_id"] and a["expires_at"], a)
    for _ in range(3):
        again = native(no).json()
        check(again["prepay_id"] == a["prepay_id"] and again["code_url"] == a["code_url"], again)
    check(len(unifiedorders(no)) == 1, f"repeats called the gateway: {mock_requests(no)}")
    g = get_order(no).json()
    check(g["status"] == "AWAITING_PAYMENT" and g["code_url"] == a["code_url"], g)
    p = mock_payer_pay(code_url=a["code_url"]).json()
    check(p["result"] == "SUCCESS", p)
    wait_until(lambda: get_order(no).json()["status"] == "PAID", timeout=15, what="PAID")
    check(get_order(no).json()["transaction_id"] == p["transaction_id"], "the payer's charge")
    r = native(no)
    check(r.status == 200 and r.json()["transaction_id"] == p["transaction_id"], f"repeat: {r}")


@test
def native_paid_twice_is_one_charge():
    no = unique("P2")
    a = native(no).json()
    first = mock_payer_pay(prepay_id=a["prepay_id"]).json()
    second = mock_payer_pay(code_url=a["code_url"]).json()
    check(first["result"] == "SUCCESS", first)
    check(second["result"] == "FAIL" and second["err_code"] == "ORDERPAID", second)
    wait_until(lambda: get_order(no).json()["status"] == "PAID", timeout=15, what="PAID")
    check(len(charges_for(no)) == 1, f"ledger: {charges_for(no)}")


@test
def native_never_paid_is_closed_after_expiry():
    no = unique("PX")
    a = native(no).json()
    time.sleep(TTL_S)
    # the lease runs to time_expire + margin: then orderquery NOTPAY, closeorder
    wait_until(lambda: get_order(no).json()["status"] == "FAILED", timeout=30, what="closed")
    r = native(no)
    check(r.status == 402 and r.json()["error"] == "payment_closed", f"after the close: {r}")
    # the stale code_url cannot be paid any more
    p = mock_payer_pay(code_url=a["code_url"]).json()
    check(p["result"] == "FAIL" and p["err_code"] in ("ORDERCLOSED", "ORDER_EXPIRED"), p)
    check(charges_for(no) == [], "charged")


@test
def native_paid_at_the_instant_of_the_close_is_refunded():
    mock_config(close_race_rate=1.0)
    no = unique("PR")
    a = native(no).json()
    out = {}
    t = threading.Thread(target=lambda: out.update(p=mock_payer_pay(
        code_url=a["code_url"], delay_ms=int(TTL_S * 1000) + 12000, timeout=90).json()))
    t.start()
    wait_until(lambda: get_order(no).json()["status"] in ("PAID", "FAILED"), timeout=40,
               what="closed (or paid by the payment the close let through)")
    t.join(60)
    check(out.get("p", {}).get("result") == "SUCCESS", f"payer: {out}")
    check(len(charges_for(no)) == 1, f"ledger: {charges_for(no)}")
    o = get_order(no).json()
    r = native(no)
    if o["status"] == "PAID":
        # its notification reached the service before the close was recorded:
        # the order keeps that one charge (the client is told PAID)
        check(live_charges(no)[0]["transaction_id"] == o["transaction_id"], f"{o}")
        check(r.status == 200, f"{r}")
    else:
        wait_until(lambda: live_charges(no) == [], timeout=60, what="the charge refunded")
        check(r.status == 402 and r.json()["error"] == "payment_closed", f"{r}")


@test
def jsapi_bridge_parameters_are_signed():
    no = unique("PJ")
    r = pay(no, 7, "1.00", trade_type="JSAPI", openid="oPayer_1")
    check(r.status == 202, f"{r}")
    a = r.json()
    js = a["jsapi"]
    check(js["appId"] == APPID and js["package"] == "prepay_id=" + a["prepay_id"] and
          js["signType"] == "MD5" and "code_url" not in a, a)
    fields = {k: js[k] for k in ("appId", "timeStamp", "nonceStr", "package", "signType")}
    check(js["paySign"] == wx_sign(fields, KEY), f"paySign: {js}")
    r = pay(no, 7, "1.00", trade_type="NATIVE")
    check(r.status == 422 and r.json()["error"] == "order_mismatch", f"other flow: {r}")
    p = mock_payer_pay(prepay_id=a["prepay_id"], openid="oPayer_1").json()
    check(p["result"] == "SUCCESS", p)
    wait_until(lambda: get_order(no).json()["status"] == "PAID", timeout=15, what="PAID")


@test
def micropay_charges_at_once():
    no = unique("PM")
    r = pay(no, 7, "1.00")
    check(r.status == 200 and r.json()["status"] == "PAID", f"{r}")
    check(len(charges_for(no)) == 1, "one charge")


@test
def micropay_userpaying_is_polled_to_paid():
    no = unique("PU")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0002"))
    check(r.status == 202 and r.json()["status"] == "PROCESSING", f"{r}")
    wait_until(lambda: get_order(no).json()["status"] == "PAID", timeout=20, what="PAID")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0002"))
    check(r.status == 200, f"{r}")


@test
def micropay_never_paid_is_reversed():
    no = unique("PV")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0003"))
    check(r.status == 202, f"{r}")
    wait_until(lambda: get_order(no).json()["status"] == "FAILED", timeout=30, what="reversed")
    check(any(q.get("endpoint") == "reverse" for q in mock_requests(no)["requests"]), "no reverse sent")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0003"))
    check(r.status == 402 and r.json()["error"] == "payment_closed", f"{r}")
    check(live_charges(no) == [], "charged")


@test
def micropay_charged_behind_an_error_is_found():
    no = unique("PE")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0005"))  # SYSTEMERROR, charged
    check(r.status == 202, f"{r}")
    wait_until(lambda: get_order(no).json()["status"] == "PAID", timeout=20, what="PAID")
    check(len(live_charges(no)) == 1, "one charge kept")


@test
def micropay_decline_is_402():
    no = unique("PD")
    r = pay(no, 7, "1.00", auth_code=mock_auth_code("0010"))  # NOTENOUGH
    check(r.status == 402 and r.json()["error"] == "payment_declined", f"{r}")


@test
def flow_fields_are_validated():
    r = pay(unique("PB"), 7, "1.00", trade_type="JSAPI")
    check(r.status == 400, f"JSAPI without openid: {r}")
    r = pay(unique("PB"), 7, "1.00", auth_code="123")
    check(r.status == 400, f"bad auth_code: {r}")
    r = pay(unique("PB"), 7, "1.00", trade_type="APP")
    check(r.status == 400, f"unknown flow: {r}")


if __name__ == "__main__":
    run_tests_restoring_mock(DEFAULTS)
