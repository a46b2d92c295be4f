#!/usr/bin/env python3
"""test_cluster_doors - the two doors on `./stack cluster` (docs/CLUSTER.md
"The two doors", docs/SECURITY.md "Doors"); run by `./stack cluster test`
(= ./stack test --cluster) after `cluster up`, with the environment
cluster/cluster gives it:

  IDEMPAY_HTTP_PORT / IDEMPAY_PUBLIC_PORT  HAProxy's merchant and public fronts
  IDEMPAY_CLUSTER_MERCHANT_DOORS, IDEMPAY_CLUSTER_PUBLIC_DOORS  the nodes' own
      ports (comma-separated, s1..s3)
  IDEMPAY_DB_SOCKET  a Galera node's socket (reads as the database root)
  IDEMPAY_CALLER_SECRET_FILE  the cluster's development caller

What it shows: every node's public door, and the public front, answer the
notification paths only; the merchant front and every node's merchant door
refuse unsigned API calls and have no notification path; the cluster's
development caller signs on every node; a nonce spent on one node is
refused on another (the nonces live in the one Redis the Sentinels name);
a notification the mock sends to the notify_url the nodes give reaches a
public door through HAProxy and is applied (only the notification path
writes a payment_callback_record)."""
import os
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from lib import *  # noqa: E402,F401,F403

AMOUNT = "1.00"
USER = 2323


def ports(name):
    v = os.environ.get(name, "")
    check(v, f"{name} is not set (run through ./stack cluster test)")
    return [int(p) for p in v.split(",")]


MERCHANT_DOORS = [f"http://127.0.0.1:{p}" for p in ports("IDEMPAY_CLUSTER_MERCHANT_DOORS")]
PUBLIC_DOORS = [f"http://127.0.0.1:{p}" for p in ports("IDEMPAY_CLUSTER_PUBLIC_DOORS")]


@test
def caller_secret_is_private():
    st = os.stat(CALLER_SECRET_FILE)
    check(stat.S_IMODE(st.st_mode) == 0o600,
          f"{CALLER_SECRET_FILE}: mode {oct(stat.S_IMODE(st.st_mode))}, want 0600")
    check(dev_caller() is not None and len(dev_caller()[1]) == 64,
          f"{CALLER_SECRET_FILE} holds no caller secret")
    rows = db_query(f"SELECT enabled FROM payment_caller WHERE name = '{CALLER}'")
    check(rows == [["1"]], f"caller {CALLER} in the Galera database: {rows}")


@test
def public_doors_serve_only_notifications():
    check_public_doors_refuse([PUBLIC] + PUBLIC_DOORS, unique("CDP"), USER, AMOUNT)


@test
def merchant_doors_refuse_unsigned_and_have_no_notification_path():
    for base in [SERVICE] + MERCHANT_DOORS:
        for path in ("/api/pay/callback/wechat", "/api/pay/callback/wechat/refund"):
            r = http("POST", base + path, "<xml/>", {"Content-Type": "text/xml"})
            check_json_error(r, 404, "not_found", f"POST {path} on the merchant door {base}")
        check_json_error(http("GET", f"{base}/api/pay/token?user_id={USER}", caller=None), 401,
                         "unauthenticated", f"an unsigned token request on {base}")
        check(http("GET", base + "/healthz", caller=None).status == 200, f"{base}/healthz")
        r = http("GET", f"{base}/api/pay/token?user_id={USER}")
        check(r.status == 200 and (r.json() or {}).get("token"), f"a signed token request on {base}: {r}")


@test
def a_nonce_spent_on_one_node_is_refused_on_another():
    path = f"/api/pay/token?user_id={USER}"
    h = caller_sign(dev_caller(), "GET", path.split("?")[0], path.split("?")[1], b"")
    first = http("GET", MERCHANT_DOORS[0] + path, headers=h, caller=None)
    check(first.status == 200, f"the signed request on s1: {first}")
    for base in MERCHANT_DOORS[1:] + [SERVICE]:
        again = http("GET", base + path, headers=h, caller=None)
        check_json_error(again, 401, "replayed", f"the same signed request again on {base}")


@test
def notification_reaches_a_public_door_through_haproxy():
    """A prepay order paid at the gateway: the mock sends its notification to
    the notify_url the service gave (HAProxy's public front), a node's public
    door applies it."""
    order_no = unique("CDN")
    mock_config(notify_enabled=True, notify_delay_ms=0, notify_copies=1)
    r = pay(order_no, USER, AMOUNT, trade_type="NATIVE")
    check(r.status == 202, f"prepay: {r}")
    paid = mock_payer_pay(code_url=r.json()["code_url"]).json()
    check(paid["result"] == "SUCCESS", f"payer: {paid}")
    wait_until(lambda: db_query("SELECT COUNT(*) FROM payment_callback_record WHERE order_no = '%s'"
                                % order_no) != [["0"]], 30, 0.2,
               f"the notification of {order_no} recorded (sent to the public front)")
    wait_until(lambda: get_order(order_no).json().get("status") == "PAID", 30, 0.2,
               f"{order_no} PAID")
    check(len(charges_for(order_no)) == 1, f"{order_no}: {charges_for(order_no)}")
    bad = notification(unique("CDX"), 100, fake_transaction_id(), key="x" * 32)
    r = send_notification(bad)
    check(r.status == 200 and "FAIL" in r.text, f"a forged notification on the public front: {r}")


try:
    run_tests()
finally:
    mock_reset()   # the knobs this file set (the simulator resets the mock itself too)
