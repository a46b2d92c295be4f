"""test_mock - the mock WeChat Pay v2 gateway from outside (docs/MOCK.md):
dedupe under concurrency (also across two mock processes), refusals,
notifications and their retry schedule, refunds, closes (also against a
unifiedorder already waiting inside the mock), the statement (downloadbill),
the journal, the admin API, and a ledger that survives a restart of the
mock. Its fault injection (the knobs, per endpoint, targeted rules):
test_mock_faults.py. The raw WeChat calls both make are lib_mock.py's;
mock_reset here is lib_mock's mock_reset_for_raw_calls (the mock's defaults,
plain HTTP refunds allowed, instant charges).

Runs against the stack (./stack up); IDEMPAY_MOCK_PORT points it at another
mock, and IDEMPAY_MOCK_RESTART_CMD replaces './stack restart lighttpd'."""
import datetime
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, MCHID, MOCK, Variant, bin_dir, check, http, mock_clock_next_day, \
    mock_closeorder, mock_config, mock_downloadbill, mock_ledger, mock_refunds_ended, \
    mock_requests, parallel, parse_bill, random_token, run_tests, stack, test, unique, \
    wait_until, wx_parse, wx_sign, wx_xml  # noqa: E402
from lib import mock_reset as _lib_mock_reset  # noqa: E402 - reset to its defaults at the end
from lib_mock import Merchant, check_signed, close, closed_in_ledger, ledger_for, order_fields, \
    orderquery, outcome, refund, signed, unifiedorder, wx_call, \
    mock_reset_for_raw_calls as mock_reset  # noqa: E402


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
    mock_refunds_ended(otn)   # accepted now, SUCCESS refund_delay_ms later
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
    mock_refunds_ended(otn2)
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
    check(led == {"charges": [], "notifications_sent": 0, "closed": [], "refunds": []},
          f"empty after reset: {led}")


# --- closeorder ----------------------------------------------------------------


@test
def close_before_charge_then_orderclosed():
    for dedupe in (True, False):
        mock_reset()
        mock_config(dedupe=dedupe)
        otn = unique("CLS")
        r, f = close(otn)
        check(r.status == 200 and outcome(f) == "SUCCESS", f"close of an unseen order: {r}")
        check(outcome(close(otn)[1]) == "ORDERCLOSED", "closing twice: ORDERCLOSED")
        for _ in range(3):
            r, f = unifiedorder(otn, 700)
            check(outcome(f) == "ORDERCLOSED" and f["result_code"] == "FAIL"
                  and "关闭" in f.get("err_code_des", ""), f"dedupe={dedupe}: after a close: {r}")
            check("transaction_id" not in f, f"no transaction_id after a close: {f}")
        mock_config(decline_rate=1.0)
        check(outcome(unifiedorder(otn, 700)[1]) == "ORDERCLOSED", "a decline after a close")
        check(ledger_for(otn) == [], f"dedupe={dedupe}: a closed order was charged: {ledger_for(otn)}")
        check(closed_in_ledger(otn) == [otn], f"the ledger lists the close: {closed_in_ledger(otn)}")
        q = orderquery(otn)
        check(outcome(q) == "SUCCESS" and q["trade_state"] == "CLOSED"
              and "transaction_id" not in q, f"orderquery of a closed order: {q}")


@test
def close_after_systemerror_or_decline():
    mock_reset()
    a, b = unique("CLSE"), unique("CLSD")
    mock_config(error_rate=1.0)
    check(outcome(unifiedorder(a)[1]) == "SYSTEMERROR", "SYSTEMERROR first")
    mock_config(error_rate=0.0, decline_rate=1.0)
    check(outcome(unifiedorder(b)[1]) == "NOTENOUGH", "a decline first")
    mock_config(decline_rate=0.0)
    for otn in (a, b):
        check(outcome(close(otn)[1]) == "SUCCESS", f"{otn}: not charged, so it closes")
        check(outcome(unifiedorder(otn)[1]) == "ORDERCLOSED", f"{otn}: then ORDERCLOSED")
        check(ledger_for(otn) == [], f"{otn}: no charge")


@test
def close_wins_over_a_unifiedorder_waiting_inside_the_mock():
    """The unifiedorder arrives first and sleeps its latency; the close runs
    meanwhile: the unifiedorder must answer ORDERCLOSED and charge nothing."""
    for dedupe in (True, False):
        mock_reset()
        mock_config(dedupe=dedupe, latency_ms=1500,
                    endpoints={"closeorder": {"latency_ms": 0}, "orderquery": {"latency_ms": 0}})
        otn = unique("CLSW")
        box = {}
        t = threading.Thread(target=lambda: box.update(r=unifiedorder(otn, 900, timeout=10)))
        t.start()
        time.sleep(0.4)
        t0 = time.monotonic()
        r, f = close(otn)
        check(outcome(f) == "SUCCESS" and time.monotonic() - t0 < 1.0,
              f"dedupe={dedupe}: the close must not wait for the sleeping unifiedorder: {r}")
        t.join()
        r, f = box["r"]
        check(r.status == 200 and outcome(f) == "ORDERCLOSED",
              f"dedupe={dedupe}: the waiting unifiedorder after the close: {r}")
        check(ledger_for(otn) == [], f"dedupe={dedupe}: charged after a close: {ledger_for(otn)}")
        check(orderquery(otn)["trade_state"] == "CLOSED", "orderquery CLOSED")


@test
def close_of_a_charged_order_is_orderpaid():
    for dedupe in (True, False):
        mock_reset()
        mock_config(dedupe=dedupe)
        otn = unique("CLSP")
        txid = unifiedorder(otn, 1000)[1]["transaction_id"]
        r, f = close(otn)
        check(outcome(f) == "ORDERPAID" and f["result_code"] == "FAIL", f"close of a charged order: {r}")
        check(outcome(refund("R" + otn, 1000, 1000, txid=txid)) == "SUCCESS", "refund")
        check(outcome(close(otn)[1]) == "ORDERPAID", "refunded, still ORDERPAID")
        check(closed_in_ledger(otn) == [], "nothing closed")
        mock_refunds_ended(otn)
        check(orderquery(otn)["trade_state"] == "REFUND", "orderquery unchanged")
        if not dedupe:
            check(outcome(unifiedorder(otn, 1000)[1]) == "SUCCESS", "dedupe off: charges again")


@test
def closeorder_disabled_is_404_and_closes_nothing():
    mock_reset()
    mock_config(closeorder_enabled=False)
    otn = unique("CLS404")
    r, f = mock_closeorder(otn)
    check(r.status == 404 and r.header("content-type").startswith("text/plain") and r.body,
          f"closeorder off: {r}")
    check(closed_in_ledger(otn) == [], "nothing closed")
    check(outcome(unifiedorder(otn)[1]) == "SUCCESS", "the order still charges")
    entries = mock_requests(otn)["requests"]
    check([e["reply"] for e in entries] == ["not_found", "xml"], f"journal: {entries}")
    mock_config(closeorder_enabled=True)
    check(outcome(close(otn)[1]) == "ORDERPAID", "on again")


@test
def closeorder_refusals():
    mock_reset()
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24)}
    r, g = wx_call("/pay/closeorder", signed(f))
    check(outcome(g) == "LACK_PARAMS" and "out_trade_no" in g["err_code_des"], f"no out_trade_no: {r}")
    f["out_trade_no"] = "bad no"
    check(outcome(wx_call("/pay/closeorder", signed(f))[1]) == "PARAM_ERROR", "bad out_trade_no")
    otn = unique("CLSR")
    f["out_trade_no"] = otn
    r, g = wx_call("/pay/closeorder", signed(f, key="0123456789abcdef0123456789abcdef"))
    check(outcome(g) == "FAIL:签名错误", f"bad signature: {r}")
    check(closed_in_ledger(otn) == [], "a refused close closes nothing")
    r, g = wx_call("/pay/closeorder", signed(f, sign_type="HMAC-SHA256"))
    check(outcome(g) == "SUCCESS" and g.get("sign_type") == "HMAC-SHA256", f"HMAC: {r}")
    check_signed(g, "HMAC close")


# --- downloadbill ---------------------------------------------------------------

CST = datetime.timezone(datetime.timedelta(hours=8))


def cst(utc_text, fmt="%Y-%m-%d %H:%M:%S"):
    """A ledger time ('...T...Z', UTC) in China time."""
    t = datetime.datetime.strptime(utc_text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return t.astimezone(CST).strftime(fmt)


def now_cst(fmt):
    return datetime.datetime.now(CST).strftime(fmt)


def yuan(fen):
    return f"{fen // 100}.{fen % 100:02d}"


def bill_of(resp, what):
    check(resp.status == 200 and resp.header("content-type") == "text/plain; charset=utf-8",
          f"{what}: a statement expected: {resp}")
    return parse_bill(resp.text)


@test
def downloadbill_lists_charges_refunds_and_totals():
    mock_reset()
    mock_config(bill_range_enabled=True)  # the mock's begin_time/end_time extension
    start = datetime.datetime.now(CST) - datetime.timedelta(seconds=2)
    otns = [unique("BILL") for _ in range(3)]
    fees = [1230, 99999, 1]
    tx = [unifiedorder(o, fee)[1]["transaction_id"] for o, fee in zip(otns, fees)]
    check(outcome(refund("RA" + otns[0], 1230, 230, txid=tx[0])) == "SUCCESS", "refund 1")
    check(outcome(refund("RB" + otns[0], 1230, 1000, txid=tx[0])) == "SUCCESS", "refund 2")
    close(unique("BILLC"))                          # a close is no trade
    end = datetime.datetime.now(CST) + datetime.timedelta(seconds=2)
    r = mock_downloadbill(begin_time=start.strftime("%Y%m%d%H%M%S"), end_time=end.strftime("%Y%m%d%H%M%S"))
    check(r.text.split("\r\n")[0] == ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,"
          "用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,"
          "退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,"
          "费率备注"), f"header: {r.text[:400]!r}")
    records, summary = bill_of(r, "range")
    mock_refunds_ended()
    charges = mock_ledger()["charges"]
    by_tx = {c["transaction_id"]: c for c in charges}
    sales = [x for x in records if x["交易状态"] == "SUCCESS"]
    refunds = [x for x in records if x["交易状态"] == "REFUND"]
    check(len(records) == 5 and len(sales) == 3 and len(refunds) == 2, f"records: {records}")
    check({x["微信订单号"] for x in sales} == set(by_tx), "one line per charge of the ledger")
    for x in sales:
        c = by_tx[x["微信订单号"]]
        check(x["商户订单号"] == c["out_trade_no"] and x["应结订单金额"] == yuan(c["total_fee"])
              and x["订单金额"] == yuan(c["total_fee"]) and x["交易时间"] == cst(c["charged_at"])
              and x["公众账号ID"] == APPID and x["商户号"] == MCHID and x["货币种类"] == "CNY"
              and x["微信退款单号"] == "0" and x["退款金额"] == "0.00" and x["退款类型"] == "",
              f"charge line {x} vs ledger {c}")
    check(sorted(x["退款金额"] for x in refunds) == ["10.00", "2.30"], f"refund lines: {refunds}")
    for x in refunds:
        check(x["微信订单号"] == tx[0] and x["商户订单号"] == otns[0] and x["订单金额"] == "12.30"
              and x["退款类型"] == "ORIGINAL" and x["退款状态"] == "SUCCESS" and x["应结订单金额"] == "0.00"
              and x["申请退款金额"] == x["退款金额"] and x["微信退款单号"].startswith("5030")
              and x["商户退款单号"] in ("RA" + otns[0], "RB" + otns[0]), f"refund line {x}")
    keys = [(x["交易时间"], x["微信订单号"]) for x in records]
    check(keys == sorted(keys), f"ordered by time, then transaction_id: {keys}")
    total = sum(c["total_fee"] for c in charges)
    refunded = sum(c["refunded_fee"] for c in charges)
    fee = sum((c["total_fee"] * 6 + 500) // 1000 for c in charges)
    check(summary == {"总交易单数": "5", "应结订单总金额": yuan(total), "退款总金额": yuan(refunded),
                      "充值券退款总金额": "0.00", "手续费总金额": yuan(fee), "订单总金额": yuan(total),
                      "申请退款总金额": yuan(refunded)}, f"summary {summary} vs the ledger")
    # bill_type SUCCESS / REFUND
    rs, _ = bill_of(mock_downloadbill(bill_type="SUCCESS", begin_time=start.strftime("%Y%m%d%H%M%S"),
                                      end_time=end.strftime("%Y%m%d%H%M%S")), "SUCCESS")
    check(len(rs) == 3 and all(x["交易状态"] == "SUCCESS" for x in rs), f"SUCCESS only: {rs}")
    rr, sr = bill_of(mock_downloadbill(bill_type="REFUND", begin_time=start.strftime("%Y%m%d%H%M%S"),
                                       end_time=end.strftime("%Y%m%d%H%M%S")), "REFUND")
    check(len(rr) == 2 and all(x["交易状态"] == "REFUND" for x in rr) and sr["总交易单数"] == "2"
          and sr["应结订单总金额"] == "0.00" and sr["退款总金额"] == "12.30", f"REFUND only: {rr} {sr}")


@test
def downloadbill_by_bill_date_and_by_range():
    mock_reset()
    mock_config(bill_range_enabled=True)
    a = unique("BILLA")
    unifiedorder(a, 500)
    # The next whole second: a's charge lies before it, b's after it.
    boundary = datetime.datetime.now(CST).replace(microsecond=0) + datetime.timedelta(seconds=1)
    time.sleep(max(0.0, (boundary - datetime.datetime.now(CST)).total_seconds()) + 0.05)
    b = unique("BILLB")
    unifiedorder(b, 600)
    later = (boundary + datetime.timedelta(hours=1)).strftime("%Y%m%d%H%M%S")
    recs, summary = bill_of(mock_downloadbill(begin_time=boundary.strftime("%Y%m%d%H%M%S"), end_time=later),
                            "range after a")
    check([x["商户订单号"] for x in recs] == [b] and summary["应结订单总金额"] == "6.00", f"range: {recs}")
    recs, _ = bill_of(mock_downloadbill(begin_time=(boundary - datetime.timedelta(hours=1)).strftime(
        "%Y%m%d%H%M%S"), end_time=boundary.strftime("%Y%m%d%H%M%S")), "range before b")
    check([x["商户订单号"] for x in recs] == [a], f"range before: {recs}")
    # By day (China time), once the day is ready (the mock's clock to
    # tomorrow 10:00): the day of each charge lists it.
    mock_clock_next_day(10, 1)
    for c in mock_ledger()["charges"]:
        recs, _ = bill_of(mock_downloadbill(bill_date=cst(c["charged_at"], "%Y%m%d")), "bill_date")
        check(c["transaction_id"] in [x["微信订单号"] for x in recs], f"bill_date lists {c}")
    # Ready days without trades: WeChat's answer for an empty day (signed XML).
    for day in ("20200101", (datetime.datetime.now(CST) - datetime.timedelta(days=2)).strftime("%Y%m%d")):
        r = mock_downloadbill(bill_date=day)
        f = wx_parse(r.text)
        check(r.status == 200 and f["return_code"] == "FAIL" and f["return_msg"] == "No Bill Exist",
              f"{day}: {r}")
        check_signed(f, "No Bill Exist")


@test
def downloadbill_refusals():
    mock_reset()
    unifiedorder(unique("BILLR"))
    today = now_cst("%Y%m%d")
    cases = [({"bill_type": "CASH", "bill_date": today}, "PARAM_ERROR"), ({}, "LACK_PARAMS"),
             ({"bill_date": "2024-03-01"}, "PARAM_ERROR"), ({"bill_date": "20240230"}, "PARAM_ERROR"),
             ({"begin_time": today + "000000"}, "PARAM_ERROR"),
             ({"begin_time": today + "120000", "end_time": today + "110000"}, "PARAM_ERROR")]
    for kw, code in cases:
        r = mock_downloadbill(**kw)
        f = wx_parse(r.text)
        check(r.status == 200 and outcome(f) == code, f"{kw}: expected {code}, got {r}")
        check_signed(f, f"refusal {code}")
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(24), "bill_date": today}
    r, g = wx_call("/pay/downloadbill", signed(f, key="0123456789abcdef0123456789abcdef"))
    check(outcome(g) == "FAIL:签名错误", f"bad signature: {r}")


def bill_xml(resp):
    f = wx_parse(resp.text)
    check_signed(f, "downloadbill XML")
    return f


@test
def downloadbill_day_ready_only_from_the_next_day_at_the_ready_hour():
    # WeChat's downloadbill page: 微信在次日9点启动生成前一天的对账单，建议商户10点后再获取.
    mock_reset()
    cfg = http("GET", MOCK + "/mock/config").json()
    check(cfg["bill_ready_hour"] == 10 and cfg["bill_range_enabled"] is False
          and cfg["bill_forge"] is False and cfg["clock_offset_ms"] == 0, f"defaults: {cfg}")
    otn = unique("BILLD")
    unifiedorder(otn, 321)
    today = now_cst("%Y%m%d")
    f = bill_xml(mock_downloadbill(bill_date=today))
    check(f["return_code"] == "FAIL" and f["return_msg"] == "Bill Creating", f"today: {f}")
    mock_clock_next_day(9, 59)
    f = bill_xml(mock_downloadbill(bill_date=today))
    check(f["return_msg"] == "Bill Creating", f"tomorrow 09:59: {f}")
    mock_clock_next_day(10, 0)
    recs, _ = bill_of(mock_downloadbill(bill_date=today), "tomorrow 10:00")
    check(otn in [x["商户订单号"] for x in recs], f"the day's bill lists the charge: {recs}")
    # tomorrow itself: not ready; the knob moves the hour
    tomorrow = (datetime.datetime.now(CST) + datetime.timedelta(days=1)).strftime("%Y%m%d")
    check(bill_xml(mock_downloadbill(bill_date=tomorrow))["return_msg"] == "Bill Creating", "tomorrow")
    mock_clock_next_day(8, 0)
    check(bill_xml(mock_downloadbill(bill_date=today))["return_msg"] == "Bill Creating", "08:00")
    mock_config(bill_ready_hour=8)
    bill_of(mock_downloadbill(bill_date=today), "bill_ready_hour 8")


@test
def downloadbill_range_only_behind_its_knob():
    mock_reset()
    otn = unique("BILLR")
    unifiedorder(otn, 100)
    start = (datetime.datetime.now(CST) - datetime.timedelta(minutes=5)).strftime("%Y%m%d%H%M%S")
    end = (datetime.datetime.now(CST) + datetime.timedelta(minutes=5)).strftime("%Y%m%d%H%M%S")
    f = bill_xml(mock_downloadbill(begin_time=start, end_time=end))
    check(outcome(f) == "LACK_PARAMS", f"a range alone, extension off: {f}")
    # with a bill_date the range is ignored (a real gateway ignores unknown fields): the day's rules
    f = bill_xml(mock_downloadbill(bill_date=now_cst("%Y%m%d"), begin_time=start, end_time=end))
    check(f["return_msg"] == "Bill Creating", f"range with today's bill_date: {f}")
    mock_config(bill_range_enabled=True)
    recs, _ = bill_of(mock_downloadbill(begin_time=start, end_time=end), "range, extension on")
    check(otn in [x["商户订单号"] for x in recs], f"range: {recs}")


@test
def downloadbill_gzip():
    import gzip
    mock_reset()
    otn = unique("BILLG")
    unifiedorder(otn, 777)
    today = mock_clock_next_day(10, 5)
    plain = mock_downloadbill(bill_date=today)
    bill_of(plain, "plain")
    r = mock_downloadbill(bill_date=today, tar_type="GZIP")
    check(r.status == 200 and r.body[:2] == b"\x1f\x8b", f"a gzip stream: {r.status} {r.body[:8]!r}")
    check(gzip.decompress(r.body) == plain.body, "the gzip stream is the plain statement")
    f = bill_xml(mock_downloadbill(bill_date=today, tar_type="ZIP"))
    check(outcome(f) == "PARAM_ERROR", f"tar_type ZIP: {f}")


@test
def downloadbill_forged_and_unreadable_lines_behind_their_knobs():
    mock_reset()
    otn = unique("BILLF")
    tx = unifiedorder(otn, 250)[1]["transaction_id"]
    today = mock_clock_next_day(10, 5)
    mock_config(bill_forge=True)
    recs, summary = bill_of(mock_downloadbill(bill_date=today), "forged")
    mine = [x["微信订单号"] for x in recs if x["商户订单号"] == otn]
    check(sorted(mine) == sorted([tx, "F" + tx[1:]]), f"one forged copy of the charge: {mine}")
    check(outcome(orderquery(otn, txid="F" + tx[1:])) == "ORDERNOTEXIST",
          "the ledger has no forged charge: orderquery does not confirm it")
    mock_config(bill_forge=False)
    recs, _ = bill_of(mock_downloadbill(bill_date=today), "forge off")
    check([x["微信订单号"] for x in recs if x["商户订单号"] == otn] == [tx], "no forged line by default")
    mock_config(bill_bad_line=True)
    r = mock_downloadbill(bill_date=today)
    check(r.status == 200 and f"`{tx},`UNREADABLE LINE," in r.text, f"an unreadable copy: {r.text[:600]!r}")


# --- the journal ------------------------------------------------------------------

@test
def journal_lists_calls_faults_and_notification_answers():
    mock_reset()
    m = Merchant(lambda n: n > 0)   # FAIL the first delivery, then SUCCESS
    try:
        mock_config(notify_retry_ms=200)
        otn, other = unique("JRN"), unique("JRNO")
        mock_config(error_rate=1.0)
        unifiedorder(otn, 300, notify=m.url)
        mock_config(error_rate=0.0, reset_rate=1.0)
        unifiedorder(otn, 300, notify=m.url)
        mock_config(reset_rate=0.0)
        txid = unifiedorder(otn, 300, notify=m.url)[1]["transaction_id"]
        unifiedorder(otn, 300, notify=m.url)
        close(otn)
        orderquery(otn)
        unifiedorder(other, 300)
        req = mock_requests(otn)["requests"]
        got = [(e["endpoint"], e["fault"], e["reply"], e["result_code"], e["err_code"]) for e in req]
        check(got == [("unifiedorder", "error", "xml", "FAIL", "SYSTEMERROR"),
                      ("unifiedorder", "reset", "reset", None, None),
                      ("unifiedorder", "none", "xml", "SUCCESS", None),
                      ("unifiedorder", "none", "xml", "FAIL", "ORDERPAID"),
                      ("closeorder", "none", "xml", "FAIL", "ORDERPAID"),
                      ("orderquery", "none", "xml", "SUCCESS", None)], f"journal: {got}")
        check([e["transaction_id"] for e in req] == [None, None, txid, None, None, None],
              "transaction_id only where charged")
        check(all(e["out_trade_no"] == otn and e["time"].endswith("Z") and e["latency_ms"] >= 0
                  and e["return_code"] in ("SUCCESS", None) for e in req), f"fields: {req}")
        wait_until(lambda: len(mock_requests(otn)["notifications"]) >= 2, 10, 0.1, "two deliveries")
        ntf = mock_requests(otn)["notifications"]
        check([(n["http_status"], n["return_code"], n["acknowledged"], n["attempt"]) for n in ntf[:2]]
              == [(200, "FAIL", False, 1), (200, "SUCCESS", True, 2)], f"deliveries: {ntf}")
        check(all(n["transaction_id"] == txid and n["notify_url"] == m.url and n["error"] is None
                  for n in ntf), f"delivery fields: {ntf}")
        dead = mock_requests(other)["notifications"]
        wait_until(lambda: mock_requests(other)["notifications"], 5, 0.1, "a failed delivery")
        dead = mock_requests(other)["notifications"]
        check(dead[0]["http_status"] is None and dead[0]["error"] and not dead[0]["acknowledged"],
              f"transport error: {dead}")
        everything = mock_requests()
        check({e["out_trade_no"] for e in everything["requests"]} == {otn, other}, "unfiltered")
        check(len(mock_requests(limit=1)["requests"]) == 1, "limit")
        check(mock_requests(limit=1)["requests"][0]["out_trade_no"] == other, "newest last")
        # prefix=: every out_trade_no that starts with it (a run's orders)
        common = os.path.commonprefix([otn, other])
        byprefix = mock_requests(prefix=common)
        check({e["out_trade_no"] for e in byprefix["requests"]} == {otn, other}, f"prefix {common}")
        only = mock_requests(prefix=otn)
        check({e["out_trade_no"] for e in only["requests"]} == {otn}, "prefix of one order")
        for bad in ("limit=0", "limit=x", "out_trade_no=a%20b", "prefix=a_b", "prefix=a%25",
                    "prefix=" + "a" * 33, f"prefix=JRN&out_trade_no={otn}"):
            check(http("GET", f"{MOCK}/mock/requests?{bad}").status == 400, bad)
    finally:
        m.close()
    # A withheld reply is in the journal before the client gives up.
    mock_config(timeout_after_charge_rate=1.0, hold_max_ms=3000)
    held = unique("JRNH")
    box = {}
    t = threading.Thread(target=lambda: box.update(r=unifiedorder(held, timeout=5)))
    t.start()
    e = wait_until(lambda: mock_requests(held)["requests"], 2.5, 0.05, "the withheld call's entry")
    check(e[0]["reply"] == "withheld" and e[0]["fault"] == "timeout_after_charge"
          and e[0]["transaction_id"] == ledger_for(held)[0]["transaction_id"], f"withheld: {e}")
    t.join()
    # Switched off: nothing appended; a reset empties it.
    mock_config(journal=False, timeout_after_charge_rate=0.0)
    quiet = unique("JRNQ")
    unifiedorder(quiet)
    check(mock_requests(quiet) == {"requests": [], "notifications": []}, "journal off")
    mock_reset()
    check(mock_requests() == {"requests": [], "notifications": []}, "reset empties the journal")


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
    mock_config(notify_copies=3, decline_rate=0.0, seed=99,
                rules=[{"endpoint": "*", "times": 5, "fault": {"kind": "error"}}])
    before = mock_ledger()["charges"]
    restart_mock()
    after = mock_ledger()["charges"]
    check(after == before, f"ledger changed across a restart:\n{before}\n{after}")
    cfg = http("GET", MOCK + "/mock/config").json()
    check(cfg["notify_copies"] == 3 and cfg["seed"] == 99, f"config kept: {cfg}")
    check(cfg["rules"] == [], f"rules live in memory only: {cfg['rules']}")
    check(outcome(unifiedorder(otns[0], 111)[1]) == "ORDERPAID", "dedupe remembers across a restart")


try:
    run_tests(cleanup=mock_reset)
finally:
    _lib_mock_reset()
