"""test_mock_faults - the mock WeChat Pay v2 gateway's fault injection from
outside (docs/MOCK.md): every fault knob as a client sees it (SYSTEMERROR,
decline, timeout after the charge, connection reset, latency and jitter),
the same seed giving the same decisions, the faults of each endpoint, and
targeted fault rules (also as the payment service sees them). The rest of
the mock: test_mock.py. The raw WeChat calls both make are lib_mock.py's;
mock_reset here is lib_mock's mock_reset_for_raw_calls (the mock's defaults,
plain HTTP refunds allowed, instant charges).

Runs against the stack (./stack up); IDEMPAY_MOCK_PORT points it at another
mock."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import MOCK, check, china_now, http, mock_closeorder, mock_config, mock_downloadbill, \
    mock_ledger, mock_requests, parallel, pay, run_tests, test, unique, wait_until  # noqa: E402
from lib import mock_reset as _lib_mock_reset  # noqa: E402 - reset to its defaults at the end
from lib_mock import close, closed_in_ledger, ledger_for, order_fields, orderquery, outcome, \
    refund, signed, unifiedorder, mock_reset_for_raw_calls as mock_reset  # noqa: E402


# --- the fault knobs ----------------------------------------------------------

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


# --- faults per endpoint ----------------------------------------------------------

@test
def faults_per_endpoint():
    mock_reset()
    otn = unique("EPF")
    unifiedorder(otn, 800)
    cfg = mock_config(endpoints={"orderquery": {"error_rate": 1}, "closeorder": {"reset_rate": 1},
                                 "refund": {"error_rate": 1}, "downloadbill": {"latency_ms": 600}})
    check(cfg["endpoints"]["orderquery"] == {"latency_ms": None, "jitter_ms": None, "error_rate": 1.0,
                                             "reset_rate": 0.0}, f"config: {cfg['endpoints']}")
    check(http("GET", MOCK + "/mock/config").json()["endpoints"] == cfg["endpoints"], "GET shows them")
    q = orderquery(otn)
    check(outcome(q) == "SYSTEMERROR" and q["return_code"] == "SUCCESS", f"orderquery error: {q}")
    check(outcome(refund("R" + otn, 800, 800, otn=otn)) == "SYSTEMERROR", "refund error")
    check(ledger_for(otn)[0]["refunded"] is False, "a refund SYSTEMERROR refunds nothing")
    other = unique("EPC")
    r, _ = mock_closeorder(other)
    check(r.status is None and r.error.startswith("reset"), f"closeorder reset: {r}")
    check(closed_in_ledger(other) == [], "a reset close closes nothing")
    check(outcome(unifiedorder(other)[1]) == "SUCCESS", "unifiedorder keeps the top-level knobs")
    t0 = time.monotonic()
    mock_downloadbill(bill_date=china_now().strftime("%Y%m%d"))
    check(time.monotonic() - t0 >= 0.6, "downloadbill latency")
    t0 = time.monotonic()
    orderquery(otn)
    check(time.monotonic() - t0 < 0.5, "orderquery has no latency of its own")
    journal = mock_requests(otn)["requests"]
    check([(e["endpoint"], e["fault"]) for e in journal][1:] == [("orderquery", "error"), ("refund", "error"),
          ("orderquery", "error")], f"faults in the journal: {journal}")
    # Ranges are checked like the other knobs; a null endpoint goes back to its defaults.
    for bad in ({"endpoints": {"orderquery": {"error_rate": 2}}}, {"endpoints": {"unifiedorder": {}}},
                {"endpoints": {"refund": {"decline_rate": 1}}}, {"endpoints": {"refund": {"latency_ms": -1}}},
                {"endpoints": []}):
        r = http("PUT", MOCK + "/mock/config", bad)
        check(r.status == 400 and r.json()["error"] == "invalid_config", f"{bad}: {r}")
    cfg = mock_config(endpoints={"orderquery": None, "closeorder": {"reset_rate": 0}})
    check(outcome(orderquery(otn)) == "SUCCESS" and outcome(close(unique("EPC"))[1]) == "SUCCESS",
          f"faults off again: {cfg['endpoints']}")
    mock_reset()
    check(all(e == {"latency_ms": None, "jitter_ms": None, "error_rate": 0.0, "reset_rate": 0.0}
              for e in http("GET", MOCK + "/mock/config").json()["endpoints"].values()), "reset clears them")


@test
def endpoint_calls_do_not_shift_unifiedorder_decisions():
    mock_reset()

    def run(interleave):
        mock_config(seed=777, error_rate=0.4, decline_rate=0.3)
        out = []
        for i in range(20):
            if interleave:
                for _ in range(i % 3):
                    orderquery(unique("SEQQ"))
                close(unique("SEQC"))
            out.append(outcome(unifiedorder(unique("SEQ"))[1]))
        return out

    a = run(False)
    mock_config(endpoints={k: {"error_rate": 0.5, "reset_rate": 0.2, "jitter_ms": 3}
                           for k in ("orderquery", "refund", "downloadbill")})
    b = run(True)
    check(a == b, f"unifiedorder decisions moved:\n{a}\n{b}")


# --- targeted fault rules -------------------------------------------------------

def rules_now():
    return http("GET", MOCK + "/mock/config").json()["rules"]


@test
def rule_next_2_unifiedorder_of_a_pattern():
    mock_reset()
    base = unique("RUL")
    mine = [f"{base}-{i}" for i in range(8)]
    others = [unique("RULO") for _ in range(4)]
    cfg = mock_config(rules=[{"endpoint": "unifiedorder", "out_trade_no": base + "*", "times": 2,
                              "fault": {"kind": "error"}}])
    check(cfg["rules"] == [{"endpoint": "unifiedorder", "out_trade_no": base + "*", "times": 2,
                            "fault": {"kind": "error", "latency_ms": None, "hold_ms": None},
                            "remaining": 2, "hits": 0}], f"PUT answers the rules: {cfg['rules']}")
    got = parallel(lambda o: (o, outcome(unifiedorder(o)[1])), [(o,) for o in mine + others])
    mine_out = [r for o, r in got if o in mine]
    check(sorted(mine_out) == ["SUCCESS"] * 6 + ["SYSTEMERROR"] * 2,
          f"exactly 2 of 8 concurrent matching calls get the rule: {mine_out}")
    check(all(r == "SUCCESS" for o, r in got if o in others), f"other orders unaffected: {got}")
    check(rules_now()[0]["remaining"] == 0 and rules_now()[0]["hits"] == 2, f"spent: {rules_now()}")
    entries = [e for o in mine for e in mock_requests(o)["requests"]]
    ruled = [e for e in entries if e["rule"] == 0]
    check(len(ruled) == 2 and all(e["fault"] == "error" and e["err_code"] == "SYSTEMERROR" for e in ruled),
          f"the journal names rule 0 on the 2 calls it decided: {entries}")
    check(all(e["rule"] is None and e["fault"] == "none" for e in entries if e not in ruled), "others: no rule")
    check(all(e["rule"] is None for o in others for e in mock_requests(o)["requests"]), "others not ruled")
    check(sum(1 for c in mock_ledger()["charges"] if c["out_trade_no"] in mine) == 6, "2 not charged")
    # A retry of a ruled order, once the rule is spent, charges.
    retry = next(o for o, r in got if r == "SYSTEMERROR")
    check(outcome(unifiedorder(retry)[1]) == "SUCCESS", "spent rule: the retry charges")


@test
def rules_for_closeorder_and_over_the_random_knobs():
    mock_reset()
    c, lucky, unlucky = unique("RUC"), unique("RUL"), unique("RUU")
    mock_config(error_rate=1.0, rules=[
        {"endpoint": "closeorder", "out_trade_no": c, "times": 1, "fault": {"kind": "error"}},
        {"endpoint": "*", "out_trade_no": lucky, "fault": {"kind": "none", "latency_ms": 400}}])
    check(outcome(close(c)[1]) == "SYSTEMERROR", "closeorder rule: SYSTEMERROR")
    check(closed_in_ledger(c) == [], "a ruled SYSTEMERROR closes nothing")
    check(outcome(close(c)[1]) == "SUCCESS", "the next close is the endpoint's own (closed)")
    check([(e["rule"], e["fault"]) for e in mock_requests(c)["requests"]] == [(0, "error"), (None, "none")],
          f"journal of the close: {mock_requests(c)['requests']}")
    t0 = time.monotonic()
    check(outcome(unifiedorder(lucky)[1]) == "SUCCESS", "a kind none rule wins over error_rate 1")
    check(time.monotonic() - t0 >= 0.4, "the rule's latency_ms")
    check(outcome(unifiedorder(unlucky)[1]) == "SYSTEMERROR", "other orders keep the random knobs")
    check(outcome(orderquery(lucky)) == "SUCCESS", "'*' covers orderquery too")
    check([e["rule"] for e in mock_requests(lucky)["requests"]] == [1, 1], "journal: rule 1 twice")
    check(rules_now()[1]["remaining"] is None and rules_now()[1]["hits"] == 2, f"counted: {rules_now()}")
    # A rule's timeout_after_charge with its own hold: charged, reply cut after hold_ms.
    held = unique("RUH")
    mock_config(error_rate=0.0, rules=[{"endpoint": "unifiedorder", "out_trade_no": held, "times": 1,
                                        "fault": {"kind": "timeout_after_charge", "hold_ms": 300}}])
    t0 = time.monotonic()
    r, f = unifiedorder(held, timeout=10)
    check(f is None and r.status in (None, 200) and time.monotonic() - t0 < 5,
          f"withheld then cut after ~300 ms: {r} in {time.monotonic() - t0:.1f}s")
    check(len(ledger_for(held)) == 1, "the ruled timeout_after_charge charged")
    # Another PUT without "rules" keeps them and their counts; "rules": null clears them.
    mock_config(notify_copies=1)
    check(rules_now()[0]["remaining"] == 0, "rules kept across a knob PUT")
    check(mock_config(rules=None)["rules"] == [], "null clears")
    mock_config(rules=[{"endpoint": "*", "fault": {"kind": "reset"}}])
    mock_reset()
    check(rules_now() == [], "reset clears the rules")


@test
def a_rule_does_not_shift_the_random_decisions():
    """The PRNG still draws for a call a rule decides: the other calls get
    the decisions they get without the rule."""
    mock_reset()

    def run(ruled):
        base = unique("RSQ")
        rules = [{"endpoint": "unifiedorder", "out_trade_no": base + "-*3", "fault": {"kind": "reset"}}]
        mock_config(seed=4242, error_rate=0.4, decline_rate=0.3, rules=rules if ruled else [])
        return [outcome(unifiedorder(f"{base}-{i}")[1]) for i in range(20)]

    plain, ruled = run(False), run(True)
    check([r for i, r in enumerate(ruled) if i % 10 == 3] == [None, None], f"ruled calls cut: {ruled}")
    check([r for i, r in enumerate(plain) if i % 10 != 3] == [r for i, r in enumerate(ruled) if i % 10 != 3],
          f"the other decisions moved:\n{plain}\n{ruled}")


@test
def rules_are_validated_like_the_knobs():
    mock_reset()
    good = [{"endpoint": "refund", "out_trade_no": "R?-*", "fault": {"kind": "reset"}}]
    mock_config(error_rate=0.25, rules=good)
    for bad, field in (
            ({"rules": {}}, "rules"),
            ({"rules": [{"endpoint": "pay", "fault": {"kind": "error"}}]}, "rules[0].endpoint"),
            ({"rules": [{"endpoint": "*", "fault": {"kind": "error"}, "why": 1}]}, "rules[0].why"),
            ({"rules": [good[0], {"endpoint": "*"}]}, "rules[1].fault"),
            ({"rules": [{"endpoint": "*", "fault": {"kind": "SYSTEMERROR"}}]}, "rules[0].fault.kind"),
            ({"rules": [{"endpoint": "orderquery", "fault": {"kind": "decline"}}]}, "rules[0].fault.kind"),
            ({"rules": [{"endpoint": "*", "fault": {"latency_ms": 60001}}]}, "rules[0].fault.latency_ms"),
            ({"rules": [{"endpoint": "*", "times": 0, "fault": {"kind": "error"}}]}, "rules[0].times"),
            ({"rules": [{"endpoint": "*", "times": "2", "fault": {"kind": "error"}}]}, "rules[0].times"),
            ({"rules": [{"endpoint": "*", "out_trade_no": "a b", "fault": {}}]}, "rules[0].out_trade_no"),
            ({"rules": [{"endpoint": "*", "fault": {"kind": "error"}}] * 33}, "at most 32"),
            ({"error_rate": 0.5, "rules": [{"endpoint": "*", "fault": {"kind": "oops"}}]}, "rules[0].fault.kind"),
            ({"error_rate": 2, "rules": []}, "error_rate")):
        r = http("PUT", MOCK + "/mock/config", bad)
        check(r.status == 400 and r.json()["error"] == "invalid_config" and field in r.json()["message"],
              f"{bad}: {r} {r.text}")
    cfg = http("GET", MOCK + "/mock/config").json()
    check(cfg["error_rate"] == 0.25 and [x["out_trade_no"] for x in cfg["rules"]] == ["R?-*"],
          f"nothing changed by the refused PUTs: {cfg}")


@test
def a_rule_slows_one_order_past_the_service_timeout():
    """The payment service (3 s gateway timeout) answers 202 for the one
    order a rule delays by 6 s, and pays the others at once."""
    mock_reset()
    slow = unique("RSL")
    fast = [unique("RSF") for _ in range(3)]
    # the service charges a payment code with micropay (docs/FLOWS.md)
    mock_config(rules=[{"endpoint": "micropay", "out_trade_no": slow, "times": 1,
                        "fault": {"latency_ms": 6000}}])
    got = dict(parallel(lambda o: (o, pay(o, 93, "1.00", timeout=30).status), [(o,) for o in [slow] + fast]))
    check(got[slow] == 202, f"the delayed order is in flight (202): {got}")
    check(all(got[o] == 200 for o in fast), f"the other orders are paid: {got}")
    e = wait_until(lambda: [x for x in mock_requests(slow)["requests"] if x["endpoint"] == "micropay"],
                   15, 0.2, "the slow call's entry")[0]
    check(e["rule"] == 0 and e["endpoint"] == "micropay" and e["latency_ms"] >= 6000, f"journal: {e}")
    check(all(x["rule"] is None for o in fast for x in mock_requests(o)["requests"]), "fast ones: no rule")


try:
    run_tests(cleanup=mock_reset)
finally:
    _lib_mock_reset()
