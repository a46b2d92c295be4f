"""test_token - single-use, user-bound payment tokens (issue 5), seen from
outside: GET /api/pay/token, the token field of POST /api/pay, the mock
gateway's ledger as the truth of what was charged, Redis stopped and started.

Run alone: python3 tests/integration/test_token.py [test_name ...]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

AMOUNT = "12.30"
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{22,}$")   # base64url, >= 128 bits
NOT_A_CHARGE = (400, 403, 404, 405, 413, 415, 422, 503)


def new_token(user_id, base=None):
    r = get_token(user_id, base)
    check(r.status == 200, f"GET /api/pay/token?user_id={user_id}: {r}")
    j = r.json() or {}
    t = j.get("token")
    check(isinstance(t, str) and TOKEN_RE.match(t), f"bad token in {r}")
    return t


def user():
    return int(time.time() * 1000) % 10**9 * 1000 + random.randint(1, 999)


def check_refused(r, what):
    check(r.status == 403, f"{what}: expected 403, got {r}")
    j = r.json() or {}
    check(j.get("error") == "invalid_token", f"{what}: expected invalid_token, got {r}")
    check(isinstance(j.get("message"), str) and j["message"], f"{what}: no message in {r}")


def check_nothing_written(order_no, base=None):
    r = get_order(order_no, base)
    check(r.status == 404, f"order {order_no} should not exist, got {r}")
    check(charges_for(order_no) == [], f"order {order_no} was charged: {charges_for(order_no)}")


def settled_paid(order_no, base=None):
    def paid():
        r = get_order(order_no, base)
        return r.status == 200 and (r.json() or {}).get("status") == "PAID" and r
    return wait_until(paid, 20, 0.2, f"order {order_no} PAID")


def mock_defaults():
    """A gateway without faults: these tests judge tokens, not gateway chaos."""
    mock_config(latency_ms=0, jitter_ms=0, error_rate=0, decline_rate=0,
                timeout_after_charge_rate=0, reset_rate=0, dedupe=True)


# --- GET /api/pay/token -------------------------------------------------------

@test
def issue_gives_random_user_bound_token():
    u = user()
    r = get_token(u)
    check(r.status == 200, f"{r}")
    check((r.header("content-type") or "").startswith("application/json"), f"content type {r.headers}")
    j = r.json()
    check(j is not None and j.get("expires_in") == 900, f"expires_in should be 900: {r}")
    t = j.get("token")
    check(isinstance(t, str) and TOKEN_RE.match(t), f"token not URL-safe >= 128 bits: {t!r}")
    # bound to the user in Redis for 900 s, under the contract's key
    check(redis_cli("GET", token_key(t)) == str(u), f"redis value of the token for user {u}")
    ttl = int(redis_cli("TTL", token_key(t)))
    check(880 < ttl <= 900, f"TTL {ttl}")
    many = {new_token(u) for _ in range(50)}
    check(len(many) == 50 and t not in many, "tokens repeat")


@test
def issue_rejects_bad_user_id():
    for q in ["", "?user_id=", "?user_id=0", "?user_id=-1", "?user_id=abc", "?user_id=1.5",
              "?user_id=9223372036854775808", "?user_id=1&user_id=2", "?uid=1"]:
        r = http("GET", SERVICE + "/api/pay/token" + q)
        check(r.status == 400 and (r.json() or {}).get("error") == "invalid_request",
              f"GET /api/pay/token{q}: expected 400 invalid_request, got {r}")
    r = get_token(9223372036854775807)
    check(r.status == 200, f"max user_id: {r}")
    r = http("POST", SERVICE + "/api/pay/token?user_id=1", {})
    check(r.status == 405, f"POST /api/pay/token: expected 405, got {r}")


# --- POST /api/pay with tokens ---------------------------------------------------

@test
def double_click_one_token_one_order_one_charge():
    u, o = user(), unique("TKD")
    t = new_token(u)
    rs = parallel(lambda: pay(o, u, AMOUNT, token=t, timeout=30), [()] * 32)
    # A click that found every gateway slot of its process taken is told 503
    # with Retry-After, nothing written (the bulkhead, pay.c); the browser's
    # retry of it is one more click of the same order with the same token.
    retry_busy(rs, lambda: pay(o, u, AMOUNT, token=t, timeout=30))
    bad = [r for r in rs if not hasattr(r, "status") or r.status not in (200, 202)]
    check(not bad, f"every click of the same order with its token is accepted or in flight: {bad}")
    settled_paid(o)
    ch = charges_for(o)
    check(len(ch) == 1, f"expected exactly one charge for {o}, got {ch}")


@test
def one_token_32_orders_one_accepted():
    u = user()
    t = new_token(u)
    orders = [unique(f"TKR{i}") for i in range(32)]
    rs = parallel(lambda o: pay(o, u, AMOUNT, token=t, timeout=30), [(o,) for o in orders])
    ok = [(o, r) for o, r in zip(orders, rs) if getattr(r, "status", None) in (200, 202)]
    refused = [(o, r) for o, r in zip(orders, rs) if getattr(r, "status", None) == 403]
    check(len(ok) == 1, f"exactly one order may use the token, got {len(ok)}: {ok}")
    check(len(refused) == 31, f"31 refusals expected: {[r for r in rs if getattr(r, 'status', 0) != 403]}")
    for o, r in refused:
        check_refused(r, f"replay of the token with {o}")
    settled_paid(ok[0][0])
    led = mock_ledger()["charges"]
    charged = [c for c in led if c["out_trade_no"] in set(orders)]
    check(len(charged) == 1 and charged[0]["out_trade_no"] == ok[0][0],
          f"exactly one charge expected across the 32 orders, got {charged}")
    for o, _ in refused[:5]:
        check_nothing_written(o)


@test
def retry_of_paid_order_with_its_token_replays():
    u, o = user(), unique("TKP")
    t = new_token(u)
    first = pay(o, u, AMOUNT, token=t)
    check(first.status in (200, 202), f"first payment: {first}")
    settled_paid(o)
    again = pay(o, u, AMOUNT, token=t)
    check(again.status == 200, f"retry with the same token: {again}")
    check(again.header("Idempotent-Replayed") == "true", f"no Idempotent-Replayed: {again.headers}")
    j = again.json() or {}
    check(j.get("status") == "PAID" and j.get("order_no") == o and j.get("amount") == AMOUNT,
          f"replayed body: {again}")
    check(len(charges_for(o)) == 1, f"charged again: {charges_for(o)}")
    # the used token cannot pay any other order, not even the same user's
    o2 = unique("TKP2")
    check_refused(pay(o2, u, AMOUNT, token=t), "used token with another order")
    check_nothing_written(o2)


@test
def token_of_another_user_is_refused():
    a, b = user(), user() + 1
    t = new_token(a)
    o = unique("TKU")
    check_refused(pay(o, b, AMOUNT, token=t), "user B presenting user A's token")
    check_nothing_written(o)
    # B's attempt did not use it up: A can still pay with it
    r = pay(o, a, AMOUNT, token=t)
    check(r.status in (200, 202), f"owner after B's attempt: {r}")
    settled_paid(o)


@test
def unknown_and_malformed_tokens_are_refused():
    u = user()
    for t in [random_token(32).replace("a", "_"), "x", "TOKEN_" + "0" * 32 + "_1",
              "../../../etc/passwd", "a" * 200]:
        o = unique("TKK")
        r = pay(o, u, AMOUNT, token=t)
        check_refused(r, f"token {t[:12]!r}")
        check_nothing_written(o)


# --- variant: tokens required, short TTL ----------------------------------------

@test
def required_mode_and_expiry():
    port = free_port()
    with Variant("token", port, env={"IDEMPAY_TOKEN_MODE": "required",
                                     "IDEMPAY_TOKEN_TTL": "2"}) as base:
        u = user()
        # no token at all: refused before anything is written
        o = unique("TKN")
        r = pay(o, u, AMOUNT, base=base)
        check_refused(r, "POST without a token, tokens required")
        check_nothing_written(o, base)
        # short TTL: announced, and enforced by Redis
        r = get_token(u, base)
        check(r.status == 200 and (r.json() or {}).get("expires_in") == 2, f"short TTL: {r}")
        expired = r.json()["token"]
        fresh_at = time.monotonic()
        ok_t = new_token(u, base)
        o_ok = unique("TKV")
        r = pay(o_ok, u, AMOUNT, token=ok_t, base=base)
        check(r.status in (200, 202), f"valid token in required mode: {r}")
        time.sleep(max(0.0, 3.2 - (time.monotonic() - fresh_at)))
        o = unique("TKE")
        check_refused(pay(o, u, AMOUNT, token=expired, base=base), "expired token")
        check_nothing_written(o, base)
        settled_paid(o_ok, base)
        # a consumed token outlives its 2 s TTL: the retry is still recognised
        r = pay(o_ok, u, AMOUNT, token=ok_t, base=base)
        check(r.status == 200 and r.header("Idempotent-Replayed") == "true",
              f"retry after the token's TTL: {r}")


# --- Redis down ------------------------------------------------------------------

@test
def redis_down_503_nothing_charged_then_recovers():
    u = user()
    before_restart = new_token(u)
    spare = new_token(u)
    o = unique("TKX")
    try:
        stack("stop", "redis")
        r = get_token(u)
        check(r.status == 503, f"GET token with Redis down: {r}")
        check((r.json() or {}).get("error") == "unavailable", f"{r}")
        check(r.header("Retry-After") is not None, f"no Retry-After: {r.headers}")
        r = pay(o, u, AMOUNT, token=spare)
        check(r.status == 503 and (r.json() or {}).get("error") == "unavailable",
              f"POST with a token, Redis down: {r}")
        check(r.header("Retry-After") is not None, f"no Retry-After: {r.headers}")
        # the API's caller check needs Redis too (its nonce memory: docs/SECURITY.md),
        # so the row is looked for in the database while Redis is down
        check(db_query(f"SELECT COUNT(*) FROM payment_order WHERE order_no = '{o}'") == [["0"]],
              f"order {o} was written with Redis down")
        check(charges_for(o) == [], f"order {o} was charged: {charges_for(o)}")
    finally:
        stack("start", "redis")
    # every worker notices its old connection is gone and reconnects at once:
    # no request fails after ./stack start redis has returned
    rs = parallel(lambda: get_token(u), [()] * 32)
    bad = [r for r in rs if getattr(r, "status", None) != 200]
    check(not bad, f"GET token right after Redis restarted: {bad}")
    # the request refused with 503 may be sent again with its token
    r = pay(o, u, AMOUNT, token=spare)
    if redis_cli("EXISTS", token_key(spare)) == "1":
        check(r.status in (200, 202), f"retry after Redis came back: {r}")
        settled_paid(o)
    else:
        check_refused(r, "token lost in the Redis restart")
    # a token issued before the restart: usable if Redis kept it, else 403
    kept = redis_cli("EXISTS", token_key(before_restart)) == "1"
    o2 = unique("TKY")
    r = pay(o2, u, AMOUNT, token=before_restart)
    if kept:
        check(r.status in (200, 202), f"token kept across the restart: {r}")
    else:
        check_refused(r, "token lost in the Redis restart")
    # and the flow works end to end with a fresh token
    o3 = unique("TKZ")
    r = pay(o3, u, AMOUNT, token=new_token(u))
    check(r.status in (200, 202), f"fresh token after the restart: {r}")
    settled_paid(o3)
    check(len(charges_for(o3)) == 1, f"charges of {o3}: {charges_for(o3)}")


@test
def lost_token_message_says_fetch_a_new_one():
    # what a client sees when its token is gone (e.g. lost in a Redis restart)
    u = user()
    t = new_token(u)
    redis_cli("DEL", token_key(t))
    o = unique("TKL")
    r = pay(o, u, AMOUNT, token=t)
    check_refused(r, "token lost")
    msg = (r.json() or {}).get("message", "")
    check("new token" in msg or "/api/pay/token" in msg,
          f"the 403 message should tell the client to fetch a new token: {msg!r}")
    check_nothing_written(o)


if __name__ == "__main__":
    mock_defaults()
    run_tests()
