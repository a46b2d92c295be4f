#!/usr/bin/env python3
"""test_statement_days - the statement job reads the gateway's bill by whole
China day, as WeChat serves it (docs/FENCE.md, "The statement job"), against
the running stack (./stack: IDEMPAY_STATEMENT_READY_HOUR=-24, so the service
asks for today's bill and the mock's own clock, knob clock_offset_ms with
bill_ready_hour 10, decides when it exists): a charge whose notification is
lost is found from its day's bill only once the bill is ready (tomorrow
10:00 by the mock's clock), confirmed by a signed orderquery, and refunded;
before that the day waits ("Bill Creating") and nothing changes; a forged
bill line (a charge the ledger does not have, the mock's bill_forge knob)
changes nothing: no refund, no PAID, counted as unconfirmed; an unreadable
line (the mock's bill_bad_line knob) is set aside — kept, counted, logged —
and the rest of the bill is judged."""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import check, charges_for, china_now, db_query, get_order, metric, mock_clock_next_day, \
    mock_config, mock_requests, mock_unifiedorder, pay, run_tests_restoring_mock, statement_due_now, \
    test, unique, wait_until  # noqa: E402

MOCK_DEFAULTS = dict(dedupe=True, instant_charge=False, notify_enabled=True, clock_offset_ms=0, bill_forge=False,
                     bill_bad_line=False,
                     bill_ready_hour=10, bill_range_enabled=False)
STATEMENT_S = float(os.environ.get("IDEMPAY_STATEMENT_INTERVAL_MS", "30000")) / 1000.0


def uid():
    return random.randint(1, 2**62)


def order_of(no):
    r = get_order(no)
    check(r.status == 200, f"GET {no}: {r}")
    return r.json()


def today_row():
    rows = db_query("SELECT state, `reads`, bad_lines, IFNULL(last_error, '') FROM payment_statement_day"
                    f" WHERE day = '{china_now().strftime('%Y-%m-%d')}'")
    return rows[0] if rows else None


@test
def a_lost_charge_is_found_from_the_bill_only_after_the_ready_hour():
    no, user = unique("SDLOST"), uid()
    r = pay(no, user, "3.21")
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay: {r}")
    kept = r.json()["transaction_id"]
    # The customer pays again at the gateway; its notification is lost.
    # (instant_charge: the old mock's charging unifiedorder, a second charge of
    # the same out_trade_no with dedupe off; the real flows cannot make one)
    mock_config(dedupe=False, notify_enabled=False, instant_charge=True)
    stray = mock_unifiedorder(no, 321)
    check(stray.get("result_code") == "SUCCESS", f"second charge: {stray}")
    lost = stray["transaction_id"]
    # Tomorrow 09:58 at the gateway: today's bill is not generated yet.
    mock_clock_next_day(9, 58)
    reads = int((today_row() or ["0", "0"])[1])
    # a run that starts now asks for today's bill and is told Bill Creating
    # (the days before are ready: their replies come first or after)
    seq = statement_due_now()
    wait_until(lambda: any(e["seq"] > seq and e["endpoint"] == "downloadbill" and
                           e["return_msg"] == "Bill Creating"
                           for e in mock_requests(limit=200)["requests"]),
               STATEMENT_S + 20, 0.25, "a run asking for today's bill")
    time.sleep(2.0)     # what that run would change, it has changed by now
    live = [c for c in charges_for(no) if not c.get("refunded")]
    check(len(live) == 2, f"{no}: nothing may change before the bill exists: {charges_for(no)}")
    row = today_row()
    check(row is not None and int(row[1]) == reads and row[3] == "Bill Creating",
          f"the service asked, the gateway said Bill Creating, nothing was read: {row}")
    # 10:01: the bill exists; the next run finds the lost charge, confirms it
    # by orderquery and queues its refund.
    mock_clock_next_day(10, 1)
    statement_due_now()
    t0 = time.monotonic()
    wait_until(lambda: any(c["transaction_id"] == lost and c.get("refunded") for c in charges_for(no)),
               STATEMENT_S + 20, 0.5, f"{no}: the statement job to refund the lost charge")
    check(time.monotonic() - t0 <= STATEMENT_S + 20, "found within one interval")
    o = order_of(no)
    check(o["status"] == "PAID" and o["transaction_id"] == kept, f"{no}: {o}")
    check([c["transaction_id"] for c in charges_for(no) if not c.get("refunded")] == [kept],
          f"{no}: exactly the order's charge is kept: {charges_for(no)}")
    calls = [e["endpoint"] for e in mock_requests(no)["requests"]]
    check("orderquery" in calls, f"{no}: the line was confirmed by orderquery first: {calls}")
    statement_due_now()     # the next run finds nothing open: the day is done
    wait_until(lambda: (today_row() or ["0"])[0] == "2", STATEMENT_S + 10, 0.5, "today done")


@test
def a_forged_bill_line_changes_nothing():
    no, user = unique("SDFORGE"), uid()
    r = pay(no, user, "2.50")
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay: {r}")
    tx = r.json()["transaction_id"]
    forged = "F" + tx[1:]
    before = metric('idempay_statement_charges_total{outcome="unconfirmed"}')
    mock_config(bill_forge=True)        # every charge line of the bill gets a forged copy
    mock_clock_next_day(10, 1)
    statement_due_now()
    wait_until(lambda: metric('idempay_statement_charges_total{outcome="unconfirmed"}') >= before + 1,
               STATEMENT_S + 20, 0.5, "the statement job to read the forged bill")
    time.sleep(1.0)
    o = order_of(no)
    check(o["status"] == "PAID" and o["transaction_id"] == tx, f"{no}: {o}")
    check(db_query(f"SELECT COUNT(*) FROM payment_refund WHERE transaction_id = '{forged}'") == [["0"]],
          f"{no}: a refund of the forged charge was queued")
    check(db_query(f"SELECT COUNT(*) FROM payment_refund WHERE order_no = '{no}'") == [["0"]],
          f"{no}: no refund queued for the order")
    check([e for e in mock_requests(no)["requests"] if e["endpoint"] == "refund"] == [],
          f"{no}: the service asked the gateway for a refund")
    check([c["transaction_id"] for c in charges_for(no)] == [tx], f"{no}: {charges_for(no)}")


@test
def an_unreadable_line_is_set_aside_and_the_rest_judged():
    no, user = unique("SDBAD"), uid()
    r = pay(no, user, "1.23")
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay: {r}")
    mock_config(dedupe=False, notify_enabled=False, instant_charge=True)
    lost = mock_unifiedorder(no, 123)["transaction_id"]
    before = metric("idempay_statement_bad_lines_total")
    mock_config(bill_bad_line=True)     # an unreadable copy after every charge line
    mock_clock_next_day(10, 1)
    statement_due_now()
    wait_until(lambda: any(c["transaction_id"] == lost and c.get("refunded") for c in charges_for(no)),
               STATEMENT_S + 20, 0.5, f"{no}: the rest of the bill judged (the lost charge refunded)")
    check(metric("idempay_statement_bad_lines_total") > before, "bad lines counted")
    day = china_now().strftime("%Y-%m-%d")
    rows = db_query("SELECT reason, line_text FROM payment_statement_bad_line"
                    f" WHERE day = '{day}' AND line_text LIKE '%{lost}%'")
    check(rows and rows[0][0] == "bad out_trade_no" and "UNREADABLE LINE" in rows[0][1],
          f"the line is kept for an operator: {rows}")
    # the day's row is written at the end of the run that read the bad lines
    # (a run made due earlier may end after it: wait for the count)
    wait_until(lambda: int((today_row() or ["0", "0", "0"])[2]) > 0, STATEMENT_S + 10, 0.25,
               f"the day counts its bad lines: {today_row()}")


if __name__ == "__main__":
    run_tests_restoring_mock(MOCK_DEFAULTS)
