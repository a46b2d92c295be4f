#!/usr/bin/env python3
"""test_doors - issue 23's two doors (docs/SECURITY.md "Doors", docs/API.md
"Authentication" and "Scoping").

The public door (IDEMPAY_PUBLIC_PORT: lighttpd's, and nginx's when it runs)
answers the notification paths only: the API, /healthz and /metrics are 404
there, a valid notification is applied. The merchant door refuses the API
without a valid signature (401: none, a wrong one, a stale timestamp, a
replayed request) and never serves the notification paths. Two callers:
B cannot read, pay or refund A's order, cannot use A's token and does not
get A's Idempotency-Key answer; nothing B tries charges anything."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

AMOUNT = "1.00"
USER = 2300


def signed_headers(caller, method, url, body=b"", **kw):
    u = urllib.parse.urlsplit(url)
    return caller_sign(caller, method, u.path, u.query, body, **kw)


def public_bases():
    bases = [PUBLIC]
    if http("GET", f"http://127.0.0.1:{NGINX_PORT}/healthz", timeout=3).status == 200:
        bases.append(f"http://127.0.0.1:{NGINX_PUBLIC_PORT}")
    return bases


@test
def public_door_serves_only_notifications():
    order_no = unique("DRP")
    check_public_doors_refuse(public_bases(), order_no, USER, AMOUNT,
                              extra=(("POST", "/api/pay/orders/" + order_no + "/refunds"),
                                     ("GET", "/")))


@test
def notification_applied_on_public_door():
    """A prepay order paid at the gateway; its notification, sent by the mock
    to the service's notify_url (the public door), makes it PAID. A forged
    copy with a bad signature is refused there."""
    order_no = unique("DRN")
    r = pay(order_no, USER, AMOUNT, trade_type="NATIVE")
    check(r.status == 202, f"prepay: {r}")
    mock_config(notify_enabled=True, notify_delay_ms=0, notify_copies=1)
    paid = mock_payer_pay(code_url=r.json()["code_url"]).json()
    check(paid["result"] == "SUCCESS", f"payer: {paid}")
    wait_until(lambda: db_query(f"SELECT status FROM payment_order WHERE order_no = '{order_no}'")
               == [["2"]], 20, 0.2, f"{order_no} PAID by its notification")
    # the notification's record: only the notification path writes one
    wait_until(lambda: db_query("SELECT COUNT(*) FROM payment_callback_record WHERE order_no = '%s'"
                                % order_no) != [["0"]], 10, 0.2,
               f"the notification of {order_no} recorded (sent to the public door)")
    bad = notification(unique("DRX"), 100, fake_transaction_id(), key="x" * 32)
    r = send_notification(bad)
    check(r.status == 200 and "FAIL" in r.text, f"a forged notification on the public door: {r}")


@test
def merchant_door_has_no_notification_paths():
    for path in ("/api/pay/callback/wechat", "/api/pay/callback/wechat/refund"):
        r = http("POST", SERVICE + path, "<xml/>", {"Content-Type": "text/xml"})
        check_json_error(r, 404, "not_found", f"POST {path} on the merchant door")
    for path in ("/healthz", "/metrics", "/api/ping"):
        r = http("GET", SERVICE + path, caller=None)
        check(r.status == 200, f"{path} on the merchant door, unsigned: {r}")


@test
def unsigned_and_badly_signed_calls_are_401():
    dev = dev_caller()
    order_no = unique("DRU")
    url = SERVICE + "/api/pay"
    body = json.dumps({"order_no": order_no, "user_id": USER, "amount": AMOUNT,
                       "trade_type": "MICROPAY", "auth_code": AUTH_CODE}).encode()
    ctype = {"Content-Type": "application/json"}
    cases = [("no headers", {}, "unauthenticated")]
    h = signed_headers(dev, "POST", url, body)
    h["X-Idempay-Signature"] = ("0" if h["X-Idempay-Signature"][0] != "0" else "1") + \
        h["X-Idempay-Signature"][1:]
    cases.append(("one digit of the signature changed", h, "bad_signature"))
    cases.append(("signed over another body", signed_headers(dev, "POST", url, body + b" "),
                  "bad_signature"))
    cases.append(("another secret", signed_headers((dev[0], "ab" * 32), "POST", url, body),
                  "bad_signature"))
    cases.append(("unknown caller", signed_headers(("nobody-" + random_token(6), dev[1]), "POST",
                                                   url, body), "bad_signature"))
    cases.append(("timestamp 10 min old",
                  signed_headers(dev, "POST", url, body, timestamp=int(time.time()) - 600),
                  "stale_timestamp"))
    cases.append(("timestamp 10 min ahead",
                  signed_headers(dev, "POST", url, body, timestamp=int(time.time()) + 600),
                  "stale_timestamp"))
    h = signed_headers(dev, "POST", url, body)
    del h["X-Idempay-Nonce"]
    cases.append(("no nonce", h, "unauthenticated"))
    h = signed_headers(dev, "POST", url, body, nonce="short")
    cases.append(("a nonce too short", h, "unauthenticated"))
    for what, headers, code in cases:
        r = http("POST", url, body, dict(ctype, **headers), caller=None)
        check_json_error(r, 401, code, what)
        check(r.header("www-authenticate") == "Idempay-HMAC-SHA256", f"{what}: {r.headers}")
    for path in ("/api/pay/token?user_id=5", "/api/pay/orders/" + order_no,
                 "/api/pay/orders/" + order_no + "/refunds"):
        check_json_error(http("GET", SERVICE + path, caller=None), 401, "unauthenticated", path)
    check(db_query(f"SELECT COUNT(*) FROM payment_order WHERE order_no = '{order_no}'") == [["0"]],
          "a refused call wrote an order")
    check(charges_for(order_no) == [], "a refused call charged")


@test
def replayed_signed_request_is_refused():
    dev = dev_caller()
    url = f"{SERVICE}/api/pay/token?user_id={USER}"
    h = signed_headers(dev, "GET", url)
    first = http("GET", url, headers=h, caller=None)
    check(first.status == 200, f"the signed request: {first}")
    again = http("GET", url, headers=h, caller=None)
    check_json_error(again, 401, "replayed", "the same signed request again")
    order_no = unique("DRR")
    body = json.dumps({"order_no": order_no, "user_id": USER, "amount": AMOUNT,
                       "trade_type": "MICROPAY", "auth_code": AUTH_CODE}).encode()
    h = signed_headers(dev, "POST", SERVICE + "/api/pay", body)
    h["Content-Type"] = "application/json"
    r = http("POST", SERVICE + "/api/pay", body, h, caller=None)
    check(r.status == 200, f"signed pay: {r}")
    r = http("POST", SERVICE + "/api/pay", body, h, caller=None)
    check_json_error(r, 401, "replayed", "a replayed signed payment")
    check(len(charges_for(order_no)) == 1, f"{order_no}: {charges_for(order_no)}")


@test
def callers_are_scoped():
    a = add_caller("doors-a")
    b = add_caller("doors-b")
    order_no = unique("DRS")
    r = http("POST", SERVICE + "/api/pay", {"order_no": order_no, "user_id": USER, "amount": AMOUNT,
                                             "trade_type": "MICROPAY", "auth_code": AUTH_CODE},
             caller=a)
    check(r.status == 200 and r.json()["status"] == "PAID", f"A pays: {r}")
    charges = charges_for(order_no)
    check(len(charges) == 1, f"one charge: {charges}")
    check(http("GET", SERVICE + "/api/pay/orders/" + order_no, caller=a).status == 200, "A reads")
    # B: the order does not exist for it
    check_json_error(http("GET", SERVICE + "/api/pay/orders/" + order_no, caller=b), 404,
                     "not_found", "B reads A's order")
    check_json_error(http("GET", SERVICE + f"/api/pay/orders/{order_no}/refunds", caller=b), 404,
                     "not_found", "B lists A's refunds")
    r = http("POST", SERVICE + f"/api/pay/orders/{order_no}/refunds", {"amount": "0.50"},
             {"Idempotency-Key": "doors-" + random_token(8)}, caller=b)
    check_json_error(r, 404, "not_found", "B refunds A's order")
    for body in ({"order_no": order_no, "user_id": USER, "amount": AMOUNT, "trade_type": "MICROPAY",
                  "auth_code": AUTH_CODE},
                 {"order_no": order_no, "user_id": USER + 1, "amount": "2.00",
                  "trade_type": "NATIVE"}):
        r = http("POST", SERVICE + "/api/pay", body, caller=b)
        check_json_error(r, 404, "not_found", f"B pays A's order_no ({body['amount']})")
    check(db_query(f"SELECT COUNT(*) FROM payment_refund WHERE order_no = '{order_no}'") == [["0"]],
          "B's refund was written")
    check(charges_for(order_no) == charges, f"B's calls changed the charges: {charges_for(order_no)}")
    # tokens: A's token is unknown to B
    t = http("GET", f"{SERVICE}/api/pay/token?user_id={USER}", caller=a).json()["token"]
    o2 = unique("DRT")
    r = http("POST", SERVICE + "/api/pay", {"order_no": o2, "user_id": USER, "amount": AMOUNT,
                                             "trade_type": "MICROPAY", "auth_code": AUTH_CODE,
                                             "token": t}, caller=b)
    check_json_error(r, 403, "invalid_token", "B pays with A's token")
    check(charges_for(o2) == [], "B's payment with A's token charged")
    r = http("POST", SERVICE + "/api/pay", {"order_no": o2, "user_id": USER, "amount": AMOUNT,
                                             "trade_type": "MICROPAY", "auth_code": AUTH_CODE,
                                             "token": t}, caller=a)
    check(r.status == 200, f"A pays with its own token: {r}")
    # Idempotency-Keys: B's request with A's key is B's own (not A's stored answer)
    key = "doors-key-" + random_token(8)
    o3 = unique("DRI")
    ra = http("POST", SERVICE + "/api/pay", {"order_no": o3, "user_id": USER, "amount": AMOUNT,
                                              "trade_type": "MICROPAY", "auth_code": AUTH_CODE},
              {"Idempotency-Key": key}, caller=a)
    check(ra.status == 200, f"A with a key: {ra}")
    rb = http("POST", SERVICE + "/api/pay", {"order_no": o3, "user_id": USER, "amount": AMOUNT,
                                              "trade_type": "MICROPAY", "auth_code": AUTH_CODE},
              {"Idempotency-Key": key}, caller=b)
    check_json_error(rb, 404, "not_found", "B with A's Idempotency-Key and order")
    check(rb.header("idempotent-replayed") is None, f"B got A's stored answer: {rb.headers}")
    # the same key on B's own order is B's key: a new payment, not A's
    # request's mismatch (422) nor its replay
    o4 = unique("DRJ")
    rb = http("POST", SERVICE + "/api/pay", {"order_no": o4, "user_id": USER, "amount": AMOUNT,
                                              "trade_type": "MICROPAY", "auth_code": AUTH_CODE},
              {"Idempotency-Key": key}, caller=b)
    check(rb.status == 200 and rb.json()["order_no"] == o4 and
          rb.header("idempotent-replayed") is None, f"B's own order with the same key: {rb}")
    rows = db_query("SELECT caller_id FROM payment_idempotent WHERE idem_key = '%s' ORDER BY caller_id"
                    % key)
    check(rows == [[str(caller_id("doors-a"))], [str(caller_id("doors-b"))]],
          f"one Idempotency-Key row per caller: {rows}")
    check(len(charges_for(o3)) == 1 and len(charges_for(o4)) == 1,
          f"{o3}: {charges_for(o3)}; {o4}: {charges_for(o4)}")
    # a re-keyed caller: the old secret no longer signs, the new one does,
    # and the caller's orders stay its own (same id)
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--rekey-caller",
                          "doors-a"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"--rekey-caller: {out.stdout}{out.stderr}")
    a2 = (a[0], out.stdout.strip().splitlines()[-1])
    check(a2[1] != a[1], "--rekey-caller printed the old secret")
    check_json_error(http("GET", SERVICE + "/api/pay/orders/" + order_no, caller=a), 401,
                     "bad_signature", "the old secret after --rekey-caller")
    check(http("GET", SERVICE + "/api/pay/orders/" + order_no, caller=a2).status == 200,
          "A reads its order with its new secret")
    # a disabled caller is refused
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--disable-caller",
                          "doors-b"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"--disable-caller: {out.stdout}{out.stderr}")
    check_json_error(http("GET", f"{SERVICE}/api/pay/token?user_id={USER}", caller=b), 401,
                     "bad_signature", "a disabled caller")
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--list-callers"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and "doors-b\tdisabled" in out.stdout and
          a[1] not in out.stdout, f"--list-callers: {out.stdout}")


run_tests()
