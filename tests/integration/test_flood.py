#!/usr/bin/env python3
"""test_flood - bounded growth under a flood from one caller (issue 23,
docs/SECURITY.md "Bounded growth"), loopback only, against a Variant of the
service with low per-caller rates (IDEMPAY_RATE_*_PER_S=RATE) and a short
Idempotency-Key lifetime, sharing the stack's MariaDB and Redis:

- N token requests as fast as the client goes: every answer is 200 or 429
  with Retry-After, never 5xx; at most RATE tokens a second are issued, so
  the tokens Redis holds grow by at most RATE x seconds; refusal log lines
  are capped (idempay_log_lines_suppressed_total); a customer paying
  meanwhile (token, then POST /api/pay, retrying a 429 after Retry-After)
  is paid every time.
- N stored refusals (POST /api/pay of a PAID order with another amount, a
  new Idempotency-Key each: 422 order_mismatch is a final answer the key
  keeps): at most RATE rows a second; the reconciler's purge keeps the
  table at most RATE x (lifetime + purge lag) rows for that caller, and
  empties it after the flood (the purge rate is measured and printed).
- Redis near its maxmemory (noeviction): new tokens are refused (503
  token_store_full), the tokens already issued still pay, none is evicted.

IDEMPAY_FLOOD_N sets N (default 20000; `./stack flood` runs 1,000,000)."""
import http.client as httpclient
import itertools
import json
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

N = int(os.environ.get("IDEMPAY_FLOOD_N", "20000"))
THREADS = 8
RATE = 50              # per caller per second, tokens and orders each
IDEM_TTL_S = 3         # the Variant's IDEMPAY_IDEMPOTENCY_TTL
RECON_S = 2.0          # the Variant's IDEMPAY_RECONCILE_INTERVAL_MS / 1000
ENV = {"IDEMPAY_RATE_TOKENS_PER_S": str(RATE), "IDEMPAY_RATE_ORDERS_PER_S": str(RATE),
       "IDEMPAY_IDEMPOTENCY_TTL": str(IDEM_TTL_S),
       "IDEMPAY_RECONCILE_INTERVAL_MS": str(int(RECON_S * 1000)),
       "IDEMPAY_LOG_REJECTS_PER_S": "5", "IDEMPAY_THREADS": "16"}


def flood(base, n, request):
    """n requests over THREADS keep-alive connections, each signed as the
    stack's development caller (one caller); request(i) gives (method,
    path, body bytes or None, headers). Returns (status counts,
    seconds, 429s without Retry-After)."""
    u = urllib.parse.urlsplit(base)
    counts, lock, bare = {}, threading.Lock(), [0]
    seq = itertools.count()

    def worker():
        conn, mine, no_retry = None, {}, 0
        while True:
            i = next(seq)
            if i >= n:
                break
            method, path, body, headers = request(i)
            p, _, q = path.partition("?")
            headers = dict(headers, **caller_sign(dev_caller(), method, p, q, body))
            for attempt in range(2):
                try:
                    if conn is None:
                        conn = httpclient.HTTPConnection(u.hostname, u.port, timeout=30)
                    conn.request(method, path, body=body, headers=headers)
                    r = conn.getresponse()
                    r.read()
                    status = r.status
                    if status == 429 and not r.getheader("Retry-After"):
                        no_retry += 1
                    break
                except (OSError, httpclient.HTTPException):
                    conn = None   # the front closed a keep-alive connection: open another
                    status = "error"
            mine[status] = mine.get(status, 0) + 1
        with lock:
            for k, v in mine.items():
                counts[k] = counts.get(k, 0) + v
            bare[0] += no_retry

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return counts, time.monotonic() - t0, bare[0]


class Payer(threading.Thread):
    """A real customer paying during the flood: a token (if the budget says
    429, again after Retry-After), then POST /api/pay with it (the same),
    one order after another, until stopped. Records each order's answer."""

    def __init__(self, base, use_token):
        super().__init__()
        self.base, self.use_token = base, use_token
        self.stop, self.results, self.waits = threading.Event(), [], 0

    def retrying(self, fn):
        while True:
            r = fn()
            if r.status != 429:
                return r
            self.waits += 1
            time.sleep(float(r.header("Retry-After") or 1))

    def run(self):
        user = random.randint(1, 2**62)
        while not self.stop.is_set():
            no = unique("FLOODPAY")
            token = None
            if self.use_token:
                r = self.retrying(lambda: get_token(user, base=self.base))
                if r.status != 200:
                    self.results.append((no, r))
                    continue
                token = r.json()["token"]
            r = self.retrying(lambda: pay(no, user, "0.50", token=token, base=self.base, timeout=30))
            self.results.append((no, r))
            time.sleep(0.2)


def windows(seconds):
    """The one-second windows a run of this length can touch."""
    return int(seconds) + 2


def check_payer(p):
    check(len(p.results) >= 2, f"the customer paid only {len(p.results)} orders during the flood")
    bad = [(no, r) for no, r in p.results if r.status not in (200, 202)]
    check(not bad, f"a real payment during the flood failed: {bad[:3]}")
    for no, _ in p.results:
        wait_until(lambda: (get_order(no).json() or {}).get("status") == "PAID", 30, 0.3,
                   f"{no} PAID")
    print(f"  the customer paid {len(p.results)} orders, waited {p.waits} times on 429")


def redis_used():
    return int([ln.split(":")[1] for ln in redis_cli("INFO", "memory").splitlines()
                if ln.startswith("used_memory:")][0])


def token_keys():
    return int(redis_cli("EVAL", "return #redis.call('KEYS', 'pay:token:*')", "0") or 0)


@test
def token_flood_is_rate_limited_and_payments_go_through():
    with Variant("flood-tok", free_port(), env=ENV) as base:
        limited0 = metric('idempay_rate_limit_total{outcome="limited_tokens"}')
        quiet0 = metric("idempay_log_lines_suppressed_total")
        keys0, mem0 = token_keys(), redis_used()
        payer = Payer(base, use_token=True)
        payer.start()
        path = "/api/pay/token?user_id="
        counts, secs, bare = flood(base, N, lambda i: ("GET", f"{path}{1000000 + i}", None, {}))
        payer.stop.set()
        payer.join()
        print(f"  {N} token requests in {secs:.1f} s ({N / secs:.0f}/s): {counts}")
        check(set(counts) <= {200, 429}, f"only 200 and 429 may answer a flood: {counts}")
        check(bare == 0, f"{bare} answers 429 without Retry-After")
        issued = counts.get(200, 0)
        bound = RATE * windows(secs)   # the payer's tokens share the budget
        check(issued <= bound, f"{issued} tokens issued in {secs:.1f} s: over {RATE}/s ({bound})")
        check(counts.get(429, 0) >= N - bound, f"the rest must be 429: {counts}")
        grown = token_keys() - keys0
        check(grown <= bound + len(payer.results),
              f"Redis grew by {grown} token keys: more than the {bound} the rate allows")
        mem1 = redis_used()
        print(f"  Redis: +{grown} token keys, +{(mem1 - mem0) / 1024:.0f} KiB "
              f"(bound: {RATE}/s x token lifetime per caller)")
        check(metric('idempay_rate_limit_total{outcome="limited_tokens"}') - limited0
              >= counts.get(429, 0), "every 429 counted in idempay_rate_limit_total")
        quiet = metric("idempay_log_lines_suppressed_total") - quiet0
        check(quiet >= counts.get(429, 0) - 5 * windows(secs),
              f"refusal lines over IDEMPAY_LOG_REJECTS_PER_S (5) are left out and counted: {quiet}")
        check_payer(payer)


def idem_rows(user):
    return int(db_query(f"SELECT COUNT(*) FROM payment_idempotent WHERE user_id = {user}")[0][0])


@test
def stored_refusal_flood_is_bounded_and_purged():
    with Variant("flood-idem", free_port(), env=ENV) as base:
        user, no = random.randint(1, 2**62), unique("FLOODIDM")
        r = pay(no, user, "1.00", base=base)
        check(r.status == 200, f"the order the flood repeats: {r}")
        body = json.dumps({"order_no": no, "user_id": user, "amount": "2.00",
                           "trade_type": "MICROPAY", "auth_code": AUTH_CODE}).encode()
        run = random_token(6)
        rows_max, stop = [0], threading.Event()

        def sample():
            while not stop.is_set():
                rows_max[0] = max(rows_max[0], idem_rows(user))
                time.sleep(0.25)
        sampler = threading.Thread(target=sample)
        sampler.start()
        payer = Payer(base, use_token=False)
        payer.start()
        counts, secs, bare = flood(base, N, lambda i: (
            "POST", "/api/pay", body,
            {"Content-Type": "application/json", "Idempotency-Key": f"fl-{run}-{i}"}))
        payer.stop.set()
        payer.join()
        print(f"  {N} refusals in {secs:.1f} s ({N / secs:.0f}/s): {counts}")
        check(set(counts) <= {422, 429}, f"only 422 and 429 may answer: {counts}")
        check(bare == 0, f"{bare} answers 429 without Retry-After")
        stored = counts.get(422, 0)
        check(stored <= RATE * windows(secs), f"{stored} refusals stored in {secs:.1f} s: over {RATE}/s")
        # Rows live IDEM_TTL_S, then wait at most one reconciler round (each
        # round purges up to RECONCILER_PURGE_BATCH rows; 500 per 2 s here).
        bound = RATE * (IDEM_TTL_S + 2 * RECON_S + 2)
        t_end = time.monotonic()
        left = idem_rows(user)
        wait_until(lambda: idem_rows(user) == 0, IDEM_TTL_S + 4 * RECON_S + 10, 0.25,
                   "the purge to remove the flood's Idempotency-Key rows")
        drained = time.monotonic() - t_end
        stop.set()
        sampler.join()
        print(f"  payment_idempotent: at most {rows_max[0]} rows of the flood's caller at once "
              f"(bound {bound:.0f}); inserted {stored / secs:.1f}/s; the last {left} purged "
              f"within {drained:.1f} s of the flood's end")
        check(rows_max[0] <= bound, f"{rows_max[0]} rows at once: the purge fell behind ({bound})")
        check_payer(payer)


@test
def a_nearly_full_redis_refuses_new_tokens_and_keeps_live_ones():
    before = redis_cli("CONFIG", "GET", "maxmemory").split("\n")[1]
    # Room 50%: the test's Redis holds a few MB, so 10% of it (the default
    # room) is less than a moment's AOF and client buffers; half of it is
    # room enough to consume a token.
    with Variant("flood-room", free_port(), env=dict(ENV, IDEMPAY_TOKEN_ROOM_PCT="50")) as base:
        user = random.randint(1, 2**62)
        try:
            # used_memory at 1/3 of maxmemory, whatever Redis holds now (a
            # 1M-request `./stack flood` leaves its tokens until they expire)
            redis_cli("CONFIG", "SET", "maxmemory", str(redis_used() * 3))
            time.sleep(1.2)   # the service asks INFO memory at most once a second
            r = get_token(user, base=base)
            check(r.status == 200, f"a token before: {r}")
            live = r.json()["token"]
            used = redis_used()
            # used_memory at 2/3 of maxmemory: past the 50% room, below the wall
            redis_cli("CONFIG", "SET", "maxmemory", str(int(used * 1.5)))
            time.sleep(1.2)   # the service asks INFO memory at most once a second
            r = get_token(user + 1, base=base)
            check(r.status == 503 and (r.json() or {}).get("error") == "token_store_full"
                  and r.header("Retry-After"), f"a new token near maxmemory: {r}")
            check(redis_cli("EXISTS", token_key(live)) == "1", "a live token was evicted")
            no = unique("FLOODRM")
            r = pay(no, user, "0.60", token=live, base=base)
            check(r.status in (200, 202), f"the live token still pays: {r}")
            redis_cli("CONFIG", "SET", "maxmemory", str(redis_used() * 3))
            time.sleep(1.2)
            check(get_token(user + 2, base=base).status == 200, "tokens again once there is room")
        finally:
            redis_cli("CONFIG", "SET", "maxmemory", before)
        check(redis_cli("CONFIG", "GET", "maxmemory-policy").split("\n")[1] == "noeviction",
              "the stack's Redis never evicts (maxmemory-policy noeviction)")


if __name__ == "__main__":
    run_tests()
