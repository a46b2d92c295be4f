#!/usr/bin/env python3
"""test_idempotency - the Idempotency-Key header of POST /api/pay (IETF
httpapi-idempotency-key-header semantics): one run per key, 409 while it
runs, byte-for-byte replays with Idempotent-Replayed: true, 422 for a key
reused with another request, keys scoped per user, unfinished answers (202)
not frozen, a dead holder's claim taken over, expired records purged."""
import os
import random
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

MOCK_DEFAULTS = dict(latency_ms=0, jitter_ms=0, error_rate=0.0, decline_rate=0.0,
                     timeout_after_charge_rate=0.0, reset_rate=0.0, dedupe=True,
                     notify_enabled=True, hold_max_ms=30000)


def uid():
    return random.randint(1, 2**62)


def key():
    return str(uuid.uuid4())


def idem_rows(user, k):
    return db_query(f"SELECT state, response_code FROM payment_idempotent "
                    f"WHERE user_id={int(user)} AND idem_key='{k}'")


@test
def concurrent_requests_with_one_key_run_once():
    no, user, k = unique("IKC"), uid(), key()
    # a little gateway latency keeps the first request running while the rest arrive
    mock_config(latency_ms=300)
    answers = parallel(pay, [(no, user, "9.99", None, k)] * 16)
    statuses = [a.status for a in answers]
    check(all(s in (200, 409) for s in statuses), f"answers: {answers}")
    firsts = [a for a in answers if a.status == 200 and a.header("Idempotent-Replayed") != "true"]
    check(len(firsts) == 1, f"exactly one request should have run, got {len(firsts)}: {statuses}")
    for a in answers:
        if a.status == 409:
            check(a.json()["error"] == "request_in_progress" and a.header("Retry-After"),
                  f"409: {a} {a.headers}")
        elif a is not firsts[0]:
            check(a.body == firsts[0].body, f"replay differs: {a.body!r} vs {firsts[0].body!r}")
    charges = charges_for(no)
    check(len(charges) == 1, f"one key, one charge: {charges}")
    # once finished, every retry is a replay of the first answer
    again = pay(no, user, "9.99", idem_key=k)
    check(again.status == 200 and again.body == firsts[0].body and
          again.header("Idempotent-Replayed") == "true", f"replay after finish: {again}")


@test
def replay_is_byte_for_byte_with_header():
    no, user, k = unique("IKR"), uid(), key()
    first = pay(no, user, "1.50", idem_key=k)
    check(first.status == 200, f"first: {first}")
    check(first.header("Idempotent-Replayed") is None, "the first answer is not a replay")
    for _ in range(3):
        r = pay(no, user, "1.5", idem_key=k)   # the same request, amount by value
        check(r.status == first.status and r.body == first.body, f"replay: {r} vs {first}")
        check(r.header("Idempotent-Replayed") == "true", f"replay header: {r.headers}")
        check(r.header("content-type").startswith("application/json"), f"{r.headers}")
    # the quoted sf-string form names the same key
    r = pay(no, user, "1.50", idem_key=f'"{k}"')
    check(r.status == 200 and r.body == first.body and r.header("Idempotent-Replayed") == "true",
          f"sf-string form of the key: {r}")
    check(idem_rows(user, k) == [["1", "200"]], f"stored record: {idem_rows(user, k)}")
    check(len(charges_for(no)) == 1, "replays charged")


@test
def key_reused_with_another_request_is_422():
    no, user, k = unique("IKM"), uid(), key()
    first = pay(no, user, "2.00", idem_key=k)
    check(first.status == 200, f"first: {first}")
    other_no = unique("IKM2")
    for r in (pay(no, user, "2.01", idem_key=k), pay(other_no, user, "2.00", idem_key=k)):
        check(r.status == 422 and r.json()["error"] == "idempotency_key_mismatch",
              f"mismatch must be 422 idempotency_key_mismatch: {r}")
    check(charges_for(other_no) == [], "a mismatched key charged another order")
    check(get_order(other_no).status == 404, "a mismatched key wrote an order")
    r = pay(no, user, "2.00", idem_key=k)
    check(r.status == 200 and r.body == first.body, f"the original still replays: {r}")


@test
def keys_are_scoped_per_user():
    k = key()
    a_no, b_no, a_user = unique("IKUA"), unique("IKUB"), uid()
    b_user = a_user + 1
    a = pay(a_no, a_user, "3.00", idem_key=k)
    b = pay(b_no, b_user, "4.00", idem_key=k)
    check(a.status == 200 and b.status == 200, f"same key, two users: {a} {b}")
    check(b.header("Idempotent-Replayed") is None, "another user's key was replayed")
    check(len(charges_for(a_no)) == 1 and len(charges_for(b_no)) == 1, "one charge each")


@test
def decline_is_kept_but_a_new_key_can_retry():
    no, user, k = unique("IKD"), uid(), key()
    mock_config(decline_rate=1.0)
    first = pay(no, user, "5.55", idem_key=k)
    check(first.status == 402, f"decline: {first}")
    mock_config(decline_rate=0.0)
    again = pay(no, user, "5.55", idem_key=k)
    check(again.status == 402 and again.body == first.body and
          again.header("Idempotent-Replayed") == "true", f"the key keeps its 402: {again}")
    check(charges_for(no) == [], "a replayed decline charged")
    # a new key runs the request again; the payment code is spent (WeChat
    # refuses its out_trade_no again), so it is declined anew, not replayed
    fresh = pay(no, user, "5.55", idem_key=key())
    check(fresh.status == 402 and fresh.header("Idempotent-Replayed") is None,
          f"a new key retries the declined order: {fresh}")
    check(charges_for(no) == [], "a retry of a spent payment code charged")


@test
def processing_answer_is_not_frozen():
    no, user, k = unique("IKP"), uid(), key()
    # charged, reply withheld past the service's timeout: 202; the
    # notification meanwhile settles the order through the callback
    mock_config(timeout_after_charge_rate=1.0, hold_max_ms=6000)
    first = pay(no, user, "6.66", idem_key=k, timeout=15)
    check(first.status == 202, f"timeout answer: {first}")
    mock_config(timeout_after_charge_rate=0.0)
    check(idem_rows(user, k) == [], f"a 202 must not be stored: {idem_rows(user, k)}")
    r = wait_until(lambda: (lambda a: a if a.status == 200 else None)(pay(no, user, "6.66",
                                                                          idem_key=k)),
                   20, 0.5, "the key's retry to see PAID")
    check(r.json()["status"] == "PAID", f"{r}")
    again = pay(no, user, "6.66", idem_key=k)
    check(again.status == 200 and again.body == r.body and
          again.header("Idempotent-Replayed") == "true", f"now stored: {again}")
    check(len(charges_for(no)) == 1, "one charge")


@test
def dead_holders_claim_is_taken_over():
    no, user, k = unique("IKT"), uid(), key()
    # a claim left by a crashed request: state 0, lease long over
    db_query("INSERT INTO payment_idempotent (caller_id, user_id, idem_key, fingerprint, state, lease_until,"
             f" expires_at) VALUES ({caller_id()}, {user}, '{k}', "
             f"SHA2(CONCAT('order_no=', '{no}', '\\n', 'user_id=', '{user}', '\\n',"
             f" 'amount_fen=', '777', '\\n', 'flow=MICROPAY:134567890123456789', '\\n'), 256), 0, NOW(3) - INTERVAL 1 SECOND,"
             f" NOW(3) + INTERVAL 1 DAY)")
    r = pay(no, user, "7.77", idem_key=k)
    check(r.status == 200, f"an expired claim should be taken over: {r}")
    check(idem_rows(user, k) == [["1", "200"]], f"record after takeover: {idem_rows(user, k)}")
    # a live claim of another request: 409, and nothing runs
    k2, no2 = key(), unique("IKT2")
    db_query("INSERT INTO payment_idempotent (caller_id, user_id, idem_key, fingerprint, state, lease_until,"
             f" expires_at) VALUES ({caller_id()}, {user}, '{k2}', "
             f"SHA2(CONCAT('order_no=', '{no2}', '\\n', 'user_id=', '{user}', '\\n',"
             f" 'amount_fen=', '100', '\\n', 'flow=MICROPAY:134567890123456789', '\\n'), 256), 0, NOW(3) + INTERVAL 1 MINUTE,"
             f" NOW(3) + INTERVAL 1 DAY)")
    r = pay(no2, user, "1.00", idem_key=k2)
    check(r.status == 409 and r.header("Retry-After"), f"a live claim: {r}")
    check(get_order(no2).status == 404, "a 409 ran the request")


@test
def expired_records_are_reused_and_purged():
    user, k = uid(), key()
    no_old, no_new = unique("IKE"), unique("IKE2")
    # an expired record of another request no longer binds the key
    db_query("INSERT INTO payment_idempotent (caller_id, user_id, idem_key, fingerprint, state, response_code,"
             f" response_body, lease_until, created_at, expires_at) VALUES ({caller_id()}, {user}, '{k}', "
             f"SHA2('{no_old}', 256), 1, 200, '{{}}', NOW(3) - INTERVAL 2 DAY,"
             f" NOW(3) - INTERVAL 2 DAY, NOW(3) - INTERVAL 1 DAY)")
    r = pay(no_new, user, "1.23", idem_key=k)
    check(r.status == 200 and r.header("Idempotent-Replayed") is None, f"expired record: {r}")
    # the reconciler purges expired records
    k2 = key()
    db_query("INSERT INTO payment_idempotent (caller_id, user_id, idem_key, fingerprint, state, lease_until,"
             f" created_at, expires_at) VALUES ({caller_id()}, {user}, '{k2}', SHA2('x', 256), 1,"
             f" NOW(3) - INTERVAL 2 DAY, NOW(3) - INTERVAL 2 DAY, NOW(3) - INTERVAL 1 DAY)")
    wait_until(lambda: idem_rows(user, k2) == [], 15, 0.5, "the purge of an expired record")
    check(idem_rows(user, k) == [["1", "200"]], "a live record was purged")


if __name__ == "__main__":
    run_tests_restoring_mock(MOCK_DEFAULTS)
