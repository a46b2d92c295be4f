"""test_mock_flows - the mock's payment flows as WeChat Pay v2 runs them
(docs/MOCK.md "Payment flows", docs/FLOWS.md), each rule driven over HTTP
with the clock knob (clock_offset_ms) instead of waiting: unifiedorder
creating a prepay order (no charge; the same prepay again; WeChat's
duplicate-order error; ORDERPAID, ORDERCLOSED; time_expire's minimum; JSAPI's
openid), the payer (pay, pay twice, pay slowly, pay expired or closed, the
payment confirmed at the instant of a close), micropay (SUCCESS, USERPAYING
resolved to paid or not, unknown errors, definitive errors, the fault
knobs), reverse (refund, close, cancel a USERPAYING, recall=Y within the
wait) and closeorder's minimum age.

Runs against the stack (./stack up); every test starts from POST
/mock/reset and sets the knobs it needs, ./stack's scaled defaults apart."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import MOCK, check, http, mock_auth_code, mock_clock_forward, mock_closeorder, \
    mock_config, mock_ledger, mock_micropay, mock_orderquery, mock_payer_pay, mock_prepay, \
    mock_requests, mock_reset, mock_reverse, run_tests, test, unique  # noqa: E402

MIN = 60000
# WeChat's values, set explicitly so the tests do not depend on ./stack's scale.
WECHAT = dict(instant_charge=False, clock_offset_ms=0, prepay_ttl_ms=7200000,
              time_expire_min_ms=300000, closeorder_min_age_ms=300000, userpaying_ms=30000,
              userpaying_pay_rate=1.0, userpaying_rate=0.0, reverse_min_wait_ms=15000,
              close_race_rate=0.0,
              # reverse over plain HTTP here; the certificate is test_mock_refunds.py's
              require_client_cert=False)


def wechat(**over):
    mock_reset()
    knobs = dict(WECHAT)
    knobs.update(over)
    mock_config(**knobs)


def charges(otn):
    return [c for c in mock_ledger()["charges"] if c["out_trade_no"] == otn]


def cst(ms_from_now):
    """yyyyMMddHHmmss in China time, ms_from_now after the mock's now."""
    off = http("GET", MOCK + "/mock/config").json()["clock_offset_ms"]
    t = time.time() + (off + ms_from_now) / 1000.0
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(t + 8 * 3600))


def ok(reply):
    return reply is not None and reply.get("return_code") == "SUCCESS" and \
        reply.get("result_code") == "SUCCESS"


def err(reply):
    return None if reply is None else reply.get("err_code")


# --- the clock ---------------------------------------------------------------

@test
def clock_offset_moves_the_charge_time():
    wechat(clock_offset_ms=86400000)
    otn = unique("CLK")
    r = mock_micropay(otn, mock_auth_code("0001"))
    check(ok(r), f"micropay: {r}")
    tomorrow = time.strftime("%Y%m%d", time.gmtime(time.time() + 86400 + 8 * 3600))
    check(r["time_end"].startswith(tomorrow), f"time_end {r['time_end']} is not tomorrow {tomorrow}")


# --- unifiedorder: the prepay order ------------------------------------------------

@test
def unifiedorder_creates_a_prepay_without_charge():
    wechat()
    otn = unique("PRE")
    r = mock_prepay(otn)
    check(ok(r), f"unifiedorder: {r}")
    check(r["prepay_id"].startswith("wx") and "transaction_id" not in r, f"reply: {r}")
    check(r["code_url"].startswith("weixin://wxpay/bizpayurl?pr="), f"code_url: {r}")
    check(r["trade_type"] == "NATIVE", f"trade_type: {r}")
    check(charges(otn) == [], "a prepay charged")
    q = mock_orderquery(otn)
    check(ok(q) and q["trade_state"] == "NOTPAY", f"orderquery: {q}")


@test
def same_parameters_give_the_same_prepay_others_the_duplicate_error():
    wechat()
    otn = unique("DUP")
    te = cst(10 * MIN)
    a = mock_prepay(otn, time_expire=te)
    b = mock_prepay(otn, time_expire=te)
    check(ok(a) and ok(b), f"replies: {a} {b}")
    check(a["prepay_id"] == b["prepay_id"] and a["code_url"] == b["code_url"], f"{a} {b}")
    c = mock_prepay(otn, total_fee=101, time_expire=te)
    check(err(c) == "INVALID_REQUEST" and "201" in c["err_code_des"], f"other fee: {c}")
    d = mock_prepay(otn, time_expire=cst(20 * MIN))
    check(err(d) == "INVALID_REQUEST", f"other time_expire: {d}")


@test
def prepay_expired_repeat_is_the_duplicate_error():
    wechat(prepay_ttl_ms=10 * MIN)
    otn = unique("EXP")
    check(ok(mock_prepay(otn)), "unifiedorder")
    mock_clock_forward(11 * MIN)
    r = mock_prepay(otn)
    check(err(r) == "INVALID_REQUEST", f"after the prepay's life: {r}")


@test
def time_expire_minimum_and_format():
    wechat()
    r = mock_prepay(unique("TE"), time_expire=cst(4 * MIN))
    check(err(r) == "PARAM_ERROR" and "time_expire" in r["err_code_des"], f"4 min: {r}")
    r = mock_prepay(unique("TE"), time_expire="20240231120000")
    check(err(r) == "PARAM_ERROR", f"bad date: {r}")
    check(ok(mock_prepay(unique("TE"), time_expire=cst(6 * MIN))), "6 min refused")
    mock_config(time_expire_min_ms=1000)
    check(ok(mock_prepay(unique("TE"), time_expire=cst(2 * 1000 + 999))), "knob not honoured")


@test
def jsapi_requires_openid():
    wechat()
    r = mock_prepay(unique("JS"), trade_type="JSAPI")
    check(err(r) == "PARAM_ERROR" and "openid" in r["err_code_des"], f"no openid: {r}")
    r = mock_prepay(unique("JS"), trade_type="JSAPI", openid="oPayer1")
    check(ok(r) and "code_url" not in r and r["prepay_id"], f"with openid: {r}")


@test
def paid_and_closed_prepays_are_refused():
    wechat(closeorder_min_age_ms=0)
    otn = unique("PC")
    r = mock_prepay(otn)
    p = mock_payer_pay(code_url=r["code_url"]).json()
    check(p["result"] == "SUCCESS", f"payer: {p}")
    check(err(mock_prepay(otn)) == "ORDERPAID", "paid: not ORDERPAID")
    otn2 = unique("PC")
    mock_prepay(otn2)
    _, c = mock_closeorder(otn2)
    check(ok(c), f"close: {c}")
    check(err(mock_prepay(otn2)) == "ORDERCLOSED", "closed: not ORDERCLOSED")


@test
def instant_charge_restores_the_old_mock():
    wechat(instant_charge=True)
    otn = unique("IC")
    r = mock_prepay(otn)
    check(ok(r) and r.get("transaction_id"), f"instant charge: {r}")
    check(len(charges(otn)) == 1, "not charged")


# --- the payer -------------------------------------------------------------------

@test
def payer_pays_once_second_refused_notification_journaled():
    wechat()
    otn = unique("PAY")
    r = mock_prepay(otn, trade_type="JSAPI", openid="oPayer2")
    p = mock_payer_pay(prepay_id=r["prepay_id"], openid="oPayer2")
    check(p.status == 200 and p.json()["result"] == "SUCCESS", f"payer: {p}")
    txid = p.json()["transaction_id"]
    check([c["transaction_id"] for c in charges(otn)] == [txid], "ledger")
    q = mock_orderquery(otn)
    check(q["trade_state"] == "SUCCESS" and q["transaction_id"] == txid, f"orderquery: {q}")
    again = mock_payer_pay(prepay_id=r["prepay_id"], openid="oPayer2").json()
    check(again["result"] == "FAIL" and again["err_code"] == "ORDERPAID", f"twice: {again}")
    other = mock_payer_pay(prepay_id=r["prepay_id"], openid="oSomeoneElse").json()
    check(other["err_code"] == "OPENID_MISMATCH", f"other openid: {other}")
    j = mock_requests(otn)
    payer = [e for e in j["requests"] if e["endpoint"] == "payer"]
    check(len(payer) == 3 and payer[0]["transaction_id"] == txid, f"journal: {payer}")
    check(len(charges(otn)) == 1, "charged twice")


@test
def payer_refused_when_expired_closed_or_unknown():
    wechat(closeorder_min_age_ms=0)
    otn = unique("PX")
    r = mock_prepay(otn, time_expire=cst(6 * MIN))
    mock_clock_forward(7 * MIN)
    p = mock_payer_pay(code_url=r["code_url"]).json()
    check(p["err_code"] == "ORDER_EXPIRED", f"expired: {p}")
    otn2 = unique("PX")
    r2 = mock_prepay(otn2)
    mock_closeorder(otn2)
    check(mock_payer_pay(code_url=r2["code_url"]).json()["err_code"] == "ORDERCLOSED", "closed")
    check(mock_payer_pay(code_url="weixin://wxpay/bizpayurl?pr=nope").json()["err_code"] ==
          "ORDERNOTEXIST", "unknown")
    check(mock_payer_pay().status == 400, "no prepay_id / code_url: not 400")
    check(charges(otn) == [] and charges(otn2) == [], "charged")


@test
def slow_payer_loses_to_a_close():
    wechat(closeorder_min_age_ms=0, close_race_rate=0.0)
    otn = unique("SL")
    r = mock_prepay(otn)
    out = {}
    t = threading.Thread(target=lambda: out.update(p=mock_payer_pay(code_url=r["code_url"],
                                                                     delay_ms=1500).json()))
    t.start()
    time.sleep(0.5)
    _, c = mock_closeorder(otn)
    t.join()
    check(ok(c), f"close: {c}")
    check(out["p"]["err_code"] == "ORDERCLOSED", f"payer: {out}")
    check(charges(otn) == [], "charged after the close")


@test
def close_race_confirms_the_payment_at_the_close():
    wechat(closeorder_min_age_ms=0, close_race_rate=1.0)
    otn = unique("RC")
    r = mock_prepay(otn)
    out = {}
    t = threading.Thread(target=lambda: out.update(p=mock_payer_pay(code_url=r["code_url"],
                                                                     delay_ms=1500).json()))
    t.start()
    time.sleep(0.5)
    _, c = mock_closeorder(otn)
    t.join()
    check(ok(c), f"close answers SUCCESS: {c}")
    cs = charges(otn)
    check(len(cs) == 1 and out["p"]["result"] == "SUCCESS" and
          out["p"]["transaction_id"] == cs[0]["transaction_id"], f"payer {out}, ledger {cs}")
    check(mock_orderquery(otn)["trade_state"] == "SUCCESS", "orderquery")


# --- closeorder ------------------------------------------------------------------

@test
def closeorder_refused_before_the_minimum_age():
    wechat()
    otn = unique("AGE")
    mock_prepay(otn)
    _, c = mock_closeorder(otn)
    check(err(c) == "SYSTEMERROR", f"young close: {c}")
    mock_clock_forward(5 * MIN + 1000)
    _, c = mock_closeorder(otn)
    check(ok(c), f"old close: {c}")
    check(mock_orderquery(otn)["trade_state"] == "CLOSED", "not CLOSED")


# --- micropay --------------------------------------------------------------------

@test
def micropay_charges_at_once():
    wechat()
    otn = unique("MP")
    r = mock_micropay(otn, "134567890123456789")
    check(ok(r) and r["trade_type"] == "MICROPAY" and r["transaction_id"], f"micropay: {r}")
    check([c["transaction_id"] for c in charges(otn)] == [r["transaction_id"]], "ledger")
    check(err(mock_micropay(otn, "134567890123456789")) == "ORDERPAID", "repeat not ORDERPAID")


@test
def micropay_auth_code_rule():
    wechat()
    for code in ("16456789012345678", "094567890123456789", "164567890123456789", "13456789012345678x"):
        r = mock_micropay(unique("AC"), code)
        check(err(r) == "AUTH_CODE_INVALID", f"{code}: {r}")


@test
def micropay_userpaying_resolves_to_paid():
    wechat()
    otn = unique("UP")
    r = mock_micropay(otn, mock_auth_code("0002"))
    check(err(r) == "USERPAYING", f"micropay: {r}")
    check(mock_orderquery(otn)["trade_state"] == "USERPAYING", "orderquery while pending")
    check(err(mock_micropay(otn, mock_auth_code("0002"))) == "USERPAYING", "repeat while pending")
    mock_clock_forward(30 * 1000)
    q = mock_orderquery(otn)
    check(q["trade_state"] == "SUCCESS" and len(charges(otn)) == 1, f"after 30 s: {q}")


@test
def micropay_userpaying_knobs_resolve_to_not_paid():
    wechat(userpaying_rate=1.0, userpaying_pay_rate=0.0, userpaying_ms=2000)
    otn = unique("UN")
    check(err(mock_micropay(otn, "134567890123456789")) == "USERPAYING", "not USERPAYING")
    mock_clock_forward(2000)
    check(mock_orderquery(otn)["trade_state"] == "PAYERROR", "not PAYERROR")
    check(charges(otn) == [], "charged")


@test
def micropay_unknown_and_definitive_errors():
    wechat()
    cases = [("0004", "SYSTEMERROR", 0, "NOTPAY"), ("0005", "SYSTEMERROR", 1, "SUCCESS"),
             ("0006", "BANKERROR", 0, "NOTPAY"), ("0007", "BANKERROR", 1, "SUCCESS"),
             ("0008", "AUTHCODEEXPIRE", 0, "PAYERROR"), ("0010", "NOTENOUGH", 0, "PAYERROR")]
    for suffix, code, n, state in cases:
        otn = unique("ER")
        r = mock_micropay(otn, mock_auth_code(suffix))
        check(err(r) == code, f"{suffix}: {r}")
        check(len(charges(otn)) == n, f"{suffix}: charges")
        check(mock_orderquery(otn)["trade_state"] == state, f"{suffix}: trade_state")


@test
def micropay_fault_knobs_apply():
    wechat(decline_rate=1.0)
    check(err(mock_micropay(unique("FK"), "134567890123456789")) == "NOTENOUGH", "decline")
    wechat(error_rate=1.0)
    otn = unique("FK")
    check(err(mock_micropay(otn, "134567890123456789")) == "SYSTEMERROR", "error")
    check(charges(otn) == [], "error charged")


@test
def micropay_targeted_rule_withholds_after_charge():
    wechat()
    otn = unique("TR")
    mock_config(rules=[{"endpoint": "micropay", "out_trade_no": otn, "times": 1,
                        "fault": {"kind": "timeout_after_charge", "hold_ms": 500}}])
    r = http("POST", MOCK + "/pay/micropay", "", timeout=5)   # a bad call: not matched by body
    check(r.status == 200, f"bad call: {r}")
    check(mock_micropay(otn, "134567890123456789") is None, "a withheld reply was answered")
    check(len(charges(otn)) == 1, "not charged")
    check(mock_orderquery(otn)["trade_state"] == "SUCCESS", "orderquery")


# --- reverse ---------------------------------------------------------------------

@test
def reverse_waits_then_refunds_a_paid_order():
    wechat()
    otn = unique("RV")
    r = mock_micropay(otn, "134567890123456789")
    v = mock_reverse(otn)
    check(err(v) == "SYSTEMERROR" and v["recall"] == "Y", f"early reverse: {v}")
    mock_clock_forward(15 * 1000)
    v = mock_reverse(otn)
    check(ok(v) and v["recall"] == "N", f"reverse: {v}")
    cs = charges(otn)
    check(len(cs) == 1 and cs[0]["refunded"] and cs[0]["refunded_fee"] == 100, f"ledger: {cs}")
    check(mock_orderquery(otn)["trade_state"] == "REVOKED", "not REVOKED")
    check(ok(mock_reverse(transaction_id=r["transaction_id"])), "repeat by transaction_id")
    check(charges(otn)[0]["refund_count"] == 1, "refunded twice")
    check(err(mock_micropay(otn, "134567890123456789")) == "ORDERREVERSED", "micropay after")


@test
def reverse_closes_unpaid_and_cancels_userpaying():
    wechat()
    otn = unique("RU")
    mock_micropay(otn, mock_auth_code("0004"))            # SYSTEMERROR, nothing charged
    otn2 = unique("RU")
    mock_micropay(otn2, mock_auth_code("0002"))           # USERPAYING, would pay after 30 s
    mock_clock_forward(15 * 1000)
    check(ok(mock_reverse(otn)) and ok(mock_reverse(otn2)), "reverse")
    mock_clock_forward(30 * 1000)
    for o in (otn, otn2):
        check(charges(o) == [] and mock_orderquery(o)["trade_state"] == "REVOKED", o)
    check(err(mock_reverse(unique("RU"))) == "ORDERNOTEXIST", "unknown order")
    p = unique("RU")
    mock_prepay(p)
    check(err(mock_reverse(p)) == "INVALID_REQUEST", "a prepay order reversed")


run_tests(cleanup=mock_reset)
