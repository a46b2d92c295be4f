#!/usr/bin/env python3
"""test_notify_policy - the sign type policy and "a notification is a
notification" (issue 23, docs/CALLBACKS.md, docs/SECURITY.md).

- A genuine signed orderquery reply of a paid order, fetched from the mock
  gateway and posted to the notification URL, is refused (FAIL,
  fail_not_notification): it carries trade_state, which no notification
  does. So is a keyed orderquery-shaped message for an unpaid order, which
  stays unpaid; the same charge as a real notification applies.
- A service configured with IDEMPAY_WX_SIGN_TYPE=HMAC-SHA256 (a variant)
  refuses an MD5-signed notification (FAIL, fail_sign_type) and changes
  nothing; the HMAC-SHA256 one applies; its payments through the mock
  (HMAC-SHA256 requests and replies) work."""
import os

from lib import *

USER, AMOUNT, FEE = 7, "12.30", 1230
HMAC_PORT = HTTP_PORT + 43


def reply_of(r):
    f = wx_parse(r.text)
    return f.get("return_code"), f.get("return_msg")


def mock_orderquery(order_no):
    f = {"appid": APPID, "mch_id": MCHID, "nonce_str": random_token(16), "out_trade_no": order_no}
    f["sign"] = wx_sign(f)
    r = http("POST", MOCK + "/pay/orderquery", wx_xml(f), {"Content-Type": "text/xml"})
    check(r.status == 200, f"mock orderquery: {r}")
    return r.text


def refused_as(payload, label, base=None):
    before = metric(f'idempay_callbacks_total{{outcome="{label}"}}')
    code, msg = reply_of(send_notification(payload, base=base))
    check(code == "FAIL", f"expected FAIL ({label}), got {code} {msg!r}")
    after = metric(f'idempay_callbacks_total{{outcome="{label}"}}')
    check(after >= before + 1, f"callbacks_total{{outcome={label}}} not counted")
    return msg


@test
def a_signed_orderquery_reply_is_not_a_notification():
    paid = unique("NPQ")
    r = pay(paid, USER, AMOUNT)
    check(r.status == 200 and r.json()["status"] == "PAID", f"pay {paid}: {r}")
    reply = mock_orderquery(paid)
    check("trade_state" in reply, f"the mock's orderquery reply: {reply}")
    msg = refused_as(reply, "fail_not_notification")
    check("trade_state" in msg or "no " in msg, f"reason: {msg!r}")

    # An unpaid (prepay) order: an orderquery-shaped message signed with the
    # merchant key is refused and the order stays unpaid ...
    unpaid = unique("NPU")
    r = pay(unpaid, USER, AMOUNT, trade_type="NATIVE")
    check(r.status == 202, f"NATIVE {unpaid}: {r}")
    txn = "42" + "".join(str(ord(c) % 10) for c in random_token(26))
    forged = notification(unpaid, FEE, txn, trade_state="SUCCESS", trade_state_desc="ok")
    refused_as(forged, "fail_not_notification")
    check(get_order(unpaid).json()["status"] != "PAID", "an orderquery-shaped message paid the order")
    # ... and without the orderquery fields the same charge applies.
    code, msg = reply_of(send_notification(notification(unpaid, FEE, txn)))
    check((code, msg) == ("SUCCESS", "OK"), f"the notification itself: {code} {msg!r}")
    check(get_order(unpaid).json()["status"] == "PAID", "the notification did not apply")


@test
def hmac_sha256_configured_refuses_md5():
    env = {"IDEMPAY_WX_SIGN_TYPE": "HMAC-SHA256"}
    # the merchant door for the payments, the public door for the
    # notifications: two variants of the same settings (docs/SECURITY.md, "Doors")
    with Variant("hmac", HMAC_PORT, env=env) as base, \
            Variant("hmac-public", free_port(), env=dict(env, IDEMPAY_DOOR="public")) as door:
        # its own payments: HMAC-SHA256 requests, the mock answers in kind
        o = unique("NPH")
        r = pay(o, USER, AMOUNT, base=base)
        check(r.status == 200 and r.json()["status"] == "PAID", f"pay through HMAC variant: {r}")

        unpaid = unique("NPM")
        r = pay(unpaid, USER, AMOUNT, trade_type="NATIVE", base=base)
        check(r.status == 202, f"NATIVE {unpaid}: {r}")
        txn = "42" + "".join(str(ord(c) % 10) for c in random_token(26))
        msg = refused_as(notification(unpaid, FEE, txn), "fail_sign_type", base=door)
        check("HMAC-SHA256" in msg and KEY not in msg, f"reason: {msg!r}")
        refused_as(notification(unpaid, FEE, txn, sign_type="MD5"), "fail_sign_type", base=door)
        check(get_order(unpaid, base=base).json()["status"] != "PAID", "an MD5 notification applied")
        code, msg = reply_of(send_notification(notification(unpaid, FEE, txn,
                                                            sign_type="HMAC-SHA256"), base=door))
        check((code, msg) == ("SUCCESS", "OK"), f"HMAC-SHA256 notification: {code} {msg!r}")
        check(get_order(unpaid, base=base).json()["status"] == "PAID", "HMAC notification not applied")


if __name__ == "__main__":
    run_tests()
