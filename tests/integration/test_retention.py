#!/usr/bin/env python3
"""test_retention - order retention (issue 23, docs/FENCE.md "Order
retention"): the reconciler moves a final order whose last change is older
than IDEMPAY_ORDER_RETENTION_DAYS (the stack runs the default, 400) into the
archive tables with what it owns (trade, finished refunds, notifications);
an in-flight order and an order with a refund still in progress stay live
however old; a repeat POST /api/pay of an archived order_no is refused
(409 order_archived) and charges nothing; GET /api/pay/orders/{no} still
answers from the archive.

Orders are made old by backdating their rows (db_query UPDATE), so the
service runs its production default. Needs a running stack (./stack up)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import SERVICE, charges_for, check, db_query, get_order, http, mock_config, \
    pay, run_tests_restoring_mock, test, unique, wait_until  # noqa: E402

USER = 4343
OLD = "NOW(3) - INTERVAL 401 DAY"
DEFAULTS = {"refund_delay_ms": 500}


def backdate(no, refunds=False):
    """Makes order no (and, with refunds, its refund rows) look untouched
    for 401 days."""
    db_query(f"UPDATE payment_order SET create_time = {OLD}, update_time = {OLD}"
             f" WHERE order_no = '{no}'")
    if refunds:
        db_query(f"UPDATE payment_refund SET create_time = {OLD}, update_time = {OLD}"
                 f" WHERE order_no = '{no}'")


def count(table, no):
    return int(db_query(f"SELECT COUNT(*) FROM {table} WHERE order_no = '{no}'")[0][0])


def archived(no):
    return count("payment_order_archive", no) == 1 and count("payment_order", no) == 0


def paid_order(amount="1.00"):
    no = unique("RET")
    r = pay(no, USER, amount)
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay {no}: {r}")
    return no


def refund(no, amount, key):
    return http("POST", f"{SERVICE}/api/pay/orders/{no}/refunds", {"amount": amount},
                {"Content-Type": "application/json", "Idempotency-Key": key})


@test
def old_paid_order_is_archived_with_what_it_owns():
    no = paid_order()
    check(count("payment_trade", no) == 1, "a new order has its trade row")
    backdate(no)
    wait_until(lambda: archived(no), 30, 0.3, f"{no} archived by the reconciler")
    check(count("payment_trade", no) == 0 and count("payment_trade_archive", no) == 1,
          "the trade row moved with its order")
    row = db_query("SELECT status, user_id, CAST(amount * 100 AS SIGNED), transaction_id IS NOT NULL"
                   f" FROM payment_order_archive WHERE order_no = '{no}'")[0]
    check(row == ["2", str(USER), "100", "1"], f"the archived row is the PAID order: {row}")


@test
def repeat_post_of_archived_order_is_refused_and_charges_nothing():
    no = paid_order("2.00")
    check(len(charges_for(no)) == 1, "one charge before archiving")
    backdate(no)
    wait_until(lambda: archived(no), 30, 0.3, f"{no} archived")
    for _ in range(3):  # the same request again, as a client retrying it a year later
        r = pay(no, USER, "2.00")
        check(r.status == 409 and r.json().get("error") == "order_archived",
              f"repeat POST of an archived order: {r}")
        check(r.header("Retry-After") is None, "a final refusal has no Retry-After")
    r = pay(no, USER + 1, "9.00", trade_type="NATIVE")  # another caller, amount and flow
    check(r.status == 409 and r.json().get("error") == "order_archived", f"other params: {r}")
    time.sleep(0.5)
    check(len(charges_for(no)) == 1, f"no second charge: {charges_for(no)}")
    check(count("payment_order", no) == 0, "no live order was created again")
    check(count("payment_trade", no) == 0, "the refused requests left no trade row behind")


@test
def get_answers_an_archived_order_from_the_archive():
    no = paid_order("3.00")
    backdate(no)
    live = get_order(no).json()  # the live answer, with the backdated times
    wait_until(lambda: archived(no), 30, 0.3, f"{no} archived")
    r = get_order(no)
    check(r.status == 200, f"GET archived: {r}")
    body = r.json()
    check(body.get("archived") is True and body.get("archived_at"), f"marked archived: {body}")
    for k in ("order_no", "user_id", "amount", "status", "transaction_id", "created_at",
              "updated_at"):
        check(body[k] == live[k], f"{k}: archived {body[k]!r} vs live {live[k]!r}")
    check(get_order(unique("RETX")).status == 404, "an unknown order is still 404")


@test
def in_flight_order_stays_live():
    no = unique("RETP")
    r = pay(no, USER, "1.00", trade_type="NATIVE")  # AWAITING_PAYMENT: PROCESSING, leased
    check(r.status == 202, f"NATIVE prepay: {r}")
    backdate(no)
    time.sleep(5)  # two reconciler rounds at least
    check(count("payment_order", no) == 1 and count("payment_order_archive", no) == 0,
          "a PROCESSING order is never archived")
    check(db_query(f"SELECT status FROM payment_order WHERE order_no = '{no}'")[0][0] == "1",
          "still PROCESSING")


@test
def order_with_refund_in_progress_stays_live():
    mock_config(refund_delay_ms=600000)  # the refund stays ACCEPTED at the gateway
    no = paid_order("4.00")
    r = refund(no, "1.00", unique("K"))
    check(r.status == 202, f"refund: {r}")
    backdate(no, refunds=True)
    time.sleep(5)
    check(count("payment_order", no) == 1 and count("payment_order_archive", no) == 0,
          "an order with a refund not finished stays live")
    state = db_query(f"SELECT state FROM payment_refund WHERE order_no = '{no}'")[0][0]
    check(state in ("0", "2"), f"its refund is still in progress: state {state}")
    mock_config(refund_delay_ms=DEFAULTS["refund_delay_ms"])


@test
def refunded_order_moves_with_its_refund():
    no = paid_order("5.00")
    r = refund(no, "5.00", unique("K"))
    check(r.status == 202, f"refund: {r}")
    wait_until(lambda: db_query(f"SELECT state FROM payment_refund WHERE order_no = '{no}'")
               [0][0] == "1", 30, 0.3, "the refund to succeed")
    backdate(no, refunds=True)
    wait_until(lambda: archived(no), 30, 0.3, f"{no} archived")
    check(count("payment_refund", no) == 0 and count("payment_refund_archive", no) == 1,
          "its finished refund moved with it")
    r = pay(no, USER, "5.00")
    check(r.status == 409, f"refunded and archived: still refused: {r}")
    r = http("GET", f"{SERVICE}/api/pay/orders/{no}/refunds")
    check(r.status == 404, f"the refunds of an archived order: 404 (WeChat refuses them): {r}")
    check(len(charges_for(no)) == 1, "still one charge")


@test
def recent_final_order_stays_live():
    no = paid_order()
    time.sleep(5)
    check(count("payment_order", no) == 1, "a final order changed recently stays live")


if __name__ == "__main__":
    run_tests_restoring_mock(DEFAULTS)
