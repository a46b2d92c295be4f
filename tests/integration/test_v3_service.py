#!/usr/bin/env python3
"""test_v3_service - the service speaking WeChat Pay APIv3 (issue 24, the
service half; docs/CALLBACKS.md "APIv3", README's IDEMPAY_WX_API).

Two variants of the service configured with IDEMPAY_WX_API=v3 against the
stack's mock (the merchant door for the payments, the public door for the
notifications, docs/SECURITY.md "Doors"):

- a NATIVE order is a v3 Native order at the mock (journal v3_native) and
  answers its code_url; the mock's payer pays it; the mock's v3
  notification (signed, AES-GCM encrypted) reaches the variant's public
  door, is acknowledged with 204 and makes the order PAID, recorded with
  the decrypted transaction;
- forged notifications for an unpaid order are refused and change nothing:
  a tampered AEAD tag (400), a body changed after signing (401), a stale
  timestamp (401), an unknown signer's serial (401); the genuine one (signed
  by the platform key, as WeChat would) applies - so the refusals can fail;
- an unpaid NATIVE order is closed through v3 (journal v3_close) after the
  minimum age, and the order is FAILED payment_closed;
- a refund of a paid v3 order is submitted through v3 (v3_refund) and
  completes (SUCCESS), its v3 refund notification acknowledged;
- a JSAPI order answers APIv3's bridge parameters (signType RSA, paySign
  verified with the merchant certificate over the four lines);
- the mock's platform certificate change (v3_platform_rotation 2) is
  followed: one /v3/certificates fetch, then replies and notifications
  signed with the new key are believed;
- the statement job reads the day through /v3/bill/tradebill and the
  download URL (the bill's SHA1 checked; a read is counted only then);
- --check-config fails, naming the setting, when v3 is chosen without the
  APIv3 key.

While a test needs the order's background work done by the v3 variant (the
close, the refund, the bill), the stack's own service processes are paused (SIGSTOP):
their reconciler and refund worker read the same tables and would do it in
v2's words (which the mock takes on the same ledger, but then this would not
show v3)."""
import base64
import contextlib
import json
import os
import secrets
import signal
import subprocess
import time

from lib import *  # noqa: F401,F403

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography import x509

TLS = os.path.join(STATE, "tls")
APIV3_FILE = os.path.join(TLS, "apiv3.key")
with open(APIV3_FILE, encoding="ascii") as fh:
    APIV3 = fh.read().strip().encode()
with open(os.path.join(TLS, "wechatpay_platform1_key.pem"), "rb") as fh:
    PLATFORM_KEY = serialization.load_pem_private_key(fh.read(), None)
with open(os.path.join(TLS, "wechatpay_platform1_cert.pem"), "rb") as fh:
    PLATFORM_SERIAL = format(x509.load_pem_x509_certificate(fh.read()).serial_number, "X")

USER, AMOUNT, FEE = 24, "3.21", 321
V3_PATH = "/api/pay/callback/wechat/v3"
DOOR_PORT = free_port()
ENV = {
    "IDEMPAY_WX_API": "v3",
    "IDEMPAY_WX_APIV3_KEY_FILE": APIV3_FILE,
    "IDEMPAY_WX_V3_NOTIFY_URL": f"http://127.0.0.1:{DOOR_PORT}{V3_PATH}",
    "IDEMPAY_RECONCILE_INTERVAL_MS": "100",
}


@contextlib.contextmanager
def v3_service():
    with Variant("v3", free_port(), env=ENV) as base, \
            Variant("v3-public", DOOR_PORT, env=dict(ENV, IDEMPAY_DOOR="public")) as door:
        yield base, door


@contextlib.contextmanager
def stack_service_paused():
    """The stack's own service processes stopped (their background workers
    would otherwise race the variant's), continued whatever happens."""
    pids = every_service_pid()
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    try:
        yield
    finally:
        for p in pids:
            os.kill(p, signal.SIGCONT)


def db_status(order_no):
    rows = db_query(f"SELECT status, final_reason, COALESCE(transaction_id, '') FROM payment_order "
                    f"WHERE order_no = '{order_no}'")
    return rows[0] if rows else None


def journal_endpoints(order_no):
    return [r.get("endpoint") for r in mock_requests(order_no)["requests"]]


def native_order(base, prefix):
    o = unique(prefix)
    r = pay(o, USER, AMOUNT, trade_type="NATIVE", base=base)
    check(r.status == 202, f"NATIVE {o} through the v3 variant: {r}")
    body = r.json()
    check(body.get("code_url", "").startswith("weixin://"), f"no code_url: {body}")
    return o, body


# --- forging notifications as the platform would sign them ---------------------

def notification(order_no, txn, fee=FEE, ts=None, serial=None, tamper=None):
    """(body, headers) of a TRANSACTION.SUCCESS notification for order_no,
    encrypted under the APIv3 key and signed with the platform key; tamper:
    "tag" flips a bit of the AEAD tag before signing, "body" changes the
    body after signing."""
    resource = {"appid": APPID, "mchid": MCHID, "out_trade_no": order_no, "transaction_id": txn,
                "trade_type": "NATIVE", "trade_state": "SUCCESS", "trade_state_desc": "支付成功",
                "bank_type": "OTHERS", "attach": "", "success_time": "2026-12-02T12:00:00+08:00",
                "payer": {"openid": "oV3test"},
                "amount": {"total": fee, "payer_total": fee, "currency": "CNY",
                           "payer_currency": "CNY"}}
    nonce = secrets.token_hex(6)
    ct = bytearray(AESGCM(APIV3).encrypt(nonce.encode(), json.dumps(resource).encode(),
                                         b"transaction"))
    if tamper == "tag":
        ct[-1] ^= 1
    env = {"id": secrets.token_hex(8), "create_time": "2026-12-02T12:00:01+08:00",
           "resource_type": "encrypt-resource", "event_type": "TRANSACTION.SUCCESS",
           "summary": "支付成功",
           "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM",
                        "ciphertext": base64.b64encode(bytes(ct)).decode(),
                        "associated_data": "transaction", "nonce": nonce}}
    body = json.dumps(env, separators=(",", ":"), ensure_ascii=False)
    ts = str(ts if ts is not None else int(time.time()))
    hn = secrets.token_hex(16)
    sig = base64.b64encode(PLATFORM_KEY.sign(f"{ts}\n{hn}\n{body}\n".encode(), padding.PKCS1v15(),
                                             hashes.SHA256())).decode()
    if tamper == "body":
        body = body.replace('"summary":"支付成功"', '"summary":"支付成功!"')
    headers = {"Content-Type": "application/json", "Wechatpay-Serial": serial or PLATFORM_SERIAL,
               "Wechatpay-Signature": sig, "Wechatpay-Timestamp": ts, "Wechatpay-Nonce": hn}
    return body, headers


def post_notification(door, body, headers):
    return http("POST", door + V3_PATH, body.encode(), headers)


# --- the tests --------------------------------------------------------------------

@test
def native_pay_code_url_then_v3_notification_makes_it_paid():
    with v3_service() as (base, door):
        o, body = native_order(base, "V3N")
        check("v3_native" in journal_endpoints(o), f"not a v3 order: {journal_endpoints(o)}")
        r = mock_payer_pay(code_url=body["code_url"])
        check(r.status == 200, f"the payer could not pay: {r}")
        wait_until(lambda: (db_status(o) or [""])[0] == "2", 20, 0.2, f"{o} PAID")
        notes = [n for n in mock_requests(o)["notifications"]]
        check(any(n.get("return_code") == "SUCCESS" for n in notes),
              f"the mock's v3 notification was not acknowledged: {notes}")
        rec = db_query(f"SELECT raw_xml FROM payment_callback_record WHERE order_no = '{o}'")
        check(rec and '"trade_state":"SUCCESS"' in rec[0][0].replace(" ", ""),
              f"the order was not paid by the v3 notification: {rec}")
        r = get_order(o, base=base)
        check(r.status == 200 and r.json()["status"] == "PAID", f"GET {o}: {r}")


@test
def tampered_stale_or_unknown_signer_notifications_change_nothing():
    with v3_service() as (base, door):
        o, _ = native_order(base, "V3T")
        txn = "42" + "".join(secrets.choice("0123456789") for _ in range(26))
        cases = [("tag", {}, 400, "decrypt"), ("body", {}, 401, "bad_signature"),
                 (None, {"ts": int(time.time()) - 3600}, 401, "stale_timestamp"),
                 (None, {"serial": "7E57AB1E" * 4}, 401, "unknown_serial")]
        for tamper, kw, want, why in cases:
            b, h = notification(o, txn, tamper=tamper, **kw)
            r = post_notification(door, b, h)
            check(r.status == want and r.json().get("code") == "FAIL" and why in r.json()["message"],
                  f"{tamper or kw}: expected {want} FAIL ({why}), got {r}")
            check(db_status(o)[0] != "2", f"{tamper or kw} paid the order")
        check(not db_query(f"SELECT 1 FROM payment_callback_record WHERE order_no = '{o}'"),
              "a refused notification was recorded")
        b, h = notification(o, txn)
        r = post_notification(door, b, h)
        check(r.status == 204, f"the genuine notification: {r}")
        check(db_status(o)[0] == "2" and db_status(o)[2] == txn, f"not applied: {db_status(o)}")
        r = post_notification(door, b, h)
        check(r.status == 204 and db_status(o)[2] == txn, f"a repeat: {r}")


@test
def unpaid_native_order_is_closed_through_v3_after_min_age():
    env = dict(ENV, IDEMPAY_PREPAY_TTL_MS="3000", IDEMPAY_CLOSE_MIN_AGE_MS="3000",
               IDEMPAY_CLOSE_MARGIN_MS="500")
    with Variant("v3-close", free_port(), env=env) as base:
        o, _ = native_order(base, "V3C")
        with stack_service_paused():
            wait_until(lambda: (db_status(o) or [""])[0] == "3" and db_status(o)[1] != "0", 30,
                       0.2, f"{o} closed")
        ends = journal_endpoints(o)
        check("v3_close" in ends and "closeorder" not in ends, f"not closed through v3: {ends}")
        r = get_order(o, base=base)
        check(r.status == 200 and r.json()["status"] == "FAILED", f"GET {o}: {r}")
        r = mock_payer_pay(code_url=_["code_url"])
        check(r.status != 200 or r.json().get("status") != "SUCCESS", f"paid after close: {r}")


@test
def refund_of_a_v3_order_is_submitted_through_v3_and_completes():
    with v3_service() as (base, door):
        o, body = native_order(base, "V3R")
        check(mock_payer_pay(code_url=body["code_url"]).status == 200, "the payer could not pay")
        wait_until(lambda: (db_status(o) or [""])[0] == "2", 20, 0.2, f"{o} PAID")
        with stack_service_paused():
            r = http("POST", f"{base}/api/pay/orders/{o}/refunds",
                     {"amount": "1.00", "reason": "v3 test"},
                     {"Content-Type": "application/json", "Idempotency-Key": unique("K")})
            check(r.status in (200, 201, 202), f"refund request: {r}")
            wait_until(lambda: db_query(f"SELECT state FROM payment_refund WHERE order_no = '{o}'")
                       == [["1"]], 30, 0.2, f"{o}'s refund SUCCESS")
        ends = journal_endpoints(o)
        check("v3_refund" in ends and "refund" not in ends, f"not refunded through v3: {ends}")
        acked = [n for n in mock_requests(o)["notifications"] if n.get("http_status") == 204]
        check(len(acked) >= 2, f"the payment and refund v3 notifications, acknowledged: {acked}")


@test
def jsapi_answers_v3s_rsa_pay_sign():
    with open(os.path.join(TLS, "apiclient_cert.pem"), "rb") as fh:
        merchant = x509.load_pem_x509_certificate(fh.read()).public_key()
    with v3_service() as (base, door):
        o = unique("V3J")
        r = pay(o, USER, AMOUNT, trade_type="JSAPI", openid="oV3jsapiPayer", base=base)
        check(r.status == 202, f"JSAPI {o}: {r}")
        js = r.json().get("jsapi", {})
        check(js.get("signType") == "RSA" and js.get("package") == "prepay_id=" + r.json()["prepay_id"],
              f"not v3's JSAPI parameters: {js}")
        msg = f"{js['appId']}\n{js['timeStamp']}\n{js['nonceStr']}\n{js['package']}\n".encode()
        merchant.verify(base64.b64decode(js["paySign"]), msg, padding.PKCS1v15(), hashes.SHA256())
        check("v3_jsapi" in journal_endpoints(o), f"not a v3 JSAPI order: {journal_endpoints(o)}")


@test
def a_platform_certificate_change_is_followed():
    """The mock signs with its second platform key (v3_platform_rotation 2):
    the variant, knowing only the first, fetches /v3/certificates once and
    verifies the reply; an order placed then works."""
    try:
        with v3_service() as (base, door):
            native_order(base, "V3W")   # the first certificate learnt
            time.sleep(1.1)             # a process fetches the list at most once a second
            mock_config(v3_platform_rotation=2)
            before = len([r for r in mock_requests()["requests"] if r["endpoint"] == "v3_certificates"])
            o, body = native_order(base, "V3X")
            after = len([r for r in mock_requests()["requests"] if r["endpoint"] == "v3_certificates"])
            check(after == before + 1, f"certificates fetched {after - before} times, not once")
            check(mock_payer_pay(code_url=body["code_url"]).status == 200, "the payer could not pay")
            wait_until(lambda: (db_status(o) or [""])[0] == "2", 20, 0.2,
                       f"{o} PAID by a notification signed with the new key")
    finally:
        mock_config(v3_platform_rotation=0)


def today_reads():
    rows = db_query("SELECT `reads`, IFNULL(last_error, '') FROM payment_statement_day"
                    f" WHERE day = '{china_now().strftime('%Y-%m-%d')}'")
    return (int(rows[0][0]), rows[0][1]) if rows else (0, "")


@test
def the_statement_job_reads_the_v3_trade_bill_and_checks_its_hash():
    env = dict(ENV, IDEMPAY_STATEMENT_INTERVAL_MS="300")
    try:
        with Variant("v3-bill", free_port(), env=env) as base, \
                Variant("v3-public", DOOR_PORT, env=dict(ENV, IDEMPAY_DOOR="public")), \
                stack_service_paused():
            o, body = native_order(base, "V3B")
            check(mock_payer_pay(code_url=body["code_url"]).status == 200, "the payer could not pay")
            wait_until(lambda: (db_status(o) or [""])[0] == "2", 20, 0.2, f"{o} PAID")
            reads0 = today_reads()[0]
            seq0 = max([r["seq"] for r in mock_requests(limit=1)["requests"]] or [0])
            mock_clock_next_day(11, 0)      # today's bill exists at the gateway
            wait_until(lambda: today_reads()[0] > reads0, 75, 0.2, "the day read again")
            # a read counts only a bill downloaded, its SHA1 matched and parsed
            # (a failed download saves "downloadbill ..." and no read)
            reads, err = today_reads()
            check(not err.startswith("downloadbill"), f"the v3 bill was not read: {err!r}")
            ends = [r["endpoint"] for r in mock_requests(limit=400)["requests"] if r["seq"] > seq0]
            check("v3_tradebill" in ends and "v3_billfile" in ends and "downloadbill" not in ends,
                  f"not read through v3: {ends}")
    finally:
        mock_config(clock_offset_ms=0)


@test
def the_simulators_prepay_scenarios_hold_against_the_v3_service():
    """idempay-sim --gateway v3: the real flows' customer (payer, payer-edge)
    against the v3 variant; every invariant holds and the run's prepay
    orders reached the mock through /v3/ (the simulator checks it: exit 2
    otherwise). The same run told --gateway v2 refuses the target."""
    sim = os.path.join(bin_dir(), "sim", "idempay-sim")
    with v3_service() as (base, door):
        args = [sim, "--target", base, "--gateway", "v3", "--scenario", "payer,payer-edge",
                "--orders", "60", "--duration", "4", "--seed", "24", "--no-out", "--quiet"]
        env = dict(os.environ, IDEMPAY_NOTIFY_URL=door + "/api/pay/callback/wechat")
        out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        check(out.returncode == 0 and "dialect: v3" in out.stdout,
              f"sim --gateway v3: rc {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-2000:]}")
        # the wrong dialect: a short payer run is enough for the journal to
        # show it (the check runs after the run)
        args = [sim, "--target", base, "--gateway", "v2", "--scenario", "payer",
                "--orders", "24", "--duration", "2", "--seed", "25", "--no-out", "--quiet"]
        out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        check(out.returncode == 2 and "does not speak v2" in out.stdout,
              f"sim --gateway v2 against the v3 service: rc {out.returncode}\n{out.stdout[-2000:]}")


@test
def check_config_fails_closed_naming_the_missing_v3_key():
    env = dict(os.environ, IDEMPAY_WX_API="v3", IDEMPAY_WX_APIV3_KEY="", IDEMPAY_WX_APIV3_KEY_FILE="")
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--check-config"],
                         env=env, capture_output=True, text=True, timeout=30)
    check(out.returncode != 0 and "IDEMPAY_WX_APIV3_KEY" in out.stderr,
          f"--check-config with v3 and no APIv3 key: rc {out.returncode} {out.stderr!r}")
    env = dict(env, IDEMPAY_WX_APIV3_KEY_FILE=APIV3_FILE)
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--check-config"],
                         env=env, capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and "IDEMPAY_WX_API=v3" in out.stdout and APIV3.decode() not in out.stdout,
          f"--check-config with the key: rc {out.returncode} {out.stderr[-300:]!r}")


if __name__ == "__main__":
    run_tests()
