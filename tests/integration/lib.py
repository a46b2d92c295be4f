"""lib - shared helpers for idempay's integration tests (python3, stdlib only).

The tests talk to the running stack (./stack up) over HTTP exactly as a
client would, read the mock gateway's ledger as the ground truth of what was
charged, and drive faults through ./stack and the mock's admin API.

Usage in a test file:

    from lib import *
    @test
    def one_charge_for_64_clicks():
        ...
        check(len(charges) == 1, f"expected 1 charge, got {charges}")
    run_tests()

The mock gateway's helpers (mock_reset, mock_config, mock_ledger, ...) are
lib_mock.py's, re-exported here.
"""
import hashlib
import hmac
import http.client as httpclient
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATE = os.environ.get("IDEMPAY_STATE_DIR", os.path.join(ROOT, ".stack"))
HTTP_PORT = int(os.environ.get("IDEMPAY_HTTP_PORT", "18080"))
MOCK_PORT = int(os.environ.get("IDEMPAY_MOCK_PORT", "18081"))
REDIS_PORT = int(os.environ.get("IDEMPAY_REDIS_PORT", "16379"))
# IDEMPAY_TEST_SERVICE_URL runs the same checks through another front
# (test_fronts.py: the nginx one); the default is lighttpd's.
SERVICE = os.environ.get("IDEMPAY_TEST_SERVICE_URL") or f"http://127.0.0.1:{HTTP_PORT}"
NGINX_PORT = int(os.environ.get("IDEMPAY_NGINX_PORT", str(HTTP_PORT + 5)))
MOCK = f"http://127.0.0.1:{MOCK_PORT}"


def dev_merchant():
    """The documented development merchant {"APPID", "MCHID", "KEY"}, read
    from its one definition, common/dev_merchant.h."""
    with open(os.path.join(ROOT, "common", "dev_merchant.h")) as f:
        return dict(re.findall(r'#define IDEMPAY_DEV_(\w+) "([^"]*)"', f.read()))


DEV_KEY = dev_merchant()["KEY"]
KEY = os.environ.get("IDEMPAY_WX_KEY", DEV_KEY)
APPID = os.environ.get("IDEMPAY_WX_APPID", dev_merchant()["APPID"])
MCHID = os.environ.get("IDEMPAY_WX_MCHID", dev_merchant()["MCHID"])
DB_SOCKET = os.environ.get("IDEMPAY_DB_SOCKET", os.path.join(STATE, "run", "mysqld.sock"))
# The public door (the gateway's notifications only; docs/SECURITY.md "Doors").
PUBLIC_PORT = int(os.environ.get("IDEMPAY_PUBLIC_PORT", str(HTTP_PORT + 4)))
PUBLIC = os.environ.get("IDEMPAY_TEST_PUBLIC_URL") or f"http://127.0.0.1:{PUBLIC_PORT}"
NGINX_PUBLIC_PORT = int(os.environ.get("IDEMPAY_NGINX_PUBLIC_PORT", str(NGINX_PORT + 4)))
# The merchant door's caller the tests sign as (./stack up makes it).
CALLER = os.environ.get("IDEMPAY_CALLER", "dev")
CALLER_SECRET_FILE = os.environ.get("IDEMPAY_CALLER_SECRET_FILE",
                                    os.path.join(STATE, "caller.secret"))


def bin_dir():
    """The build dir whose programs the stack runs (IDEMPAY_BIN_DIR, else the
    flavour recorded by ./stack, else the release build)."""
    d = os.environ.get("IDEMPAY_BIN_DIR")
    if d:
        return d
    try:
        flavor = open(os.path.join(STATE, "run", "flavor")).read().strip()
    except OSError:
        flavor = "release"
    return os.path.join(STATE, "build-" + flavor)


# --- HTTP ------------------------------------------------------------------

class Resp:
    """One HTTP exchange. status is None when no complete answer came
    (error then says 'timeout', 'reset' or 'refused')."""

    def __init__(self, status=None, headers=None, body=b"", error=None, seconds=0.0):
        self.status = status
        self.headers = headers or {}
        self.body = body
        self.error = error
        self.seconds = seconds

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        if self.status is None:
            return f"<no answer: {self.error}>"
        return f"<{self.status} {self.text[:300]!r}>"


_caller_secret = None


def dev_caller():
    """(name, secret hex) of the stack's development caller, None when its
    secret file is missing."""
    global _caller_secret
    if _caller_secret is None:
        try:
            with open(CALLER_SECRET_FILE) as f:
                _caller_secret = f.read().strip()
        except OSError:
            return None
    return (CALLER, _caller_secret)


def caller_sign(caller, method, path, query, body, timestamp=None, nonce=None):
    """The X-Idempay-* headers of a request signed as caller (name, secret
    hex): common/caller_sign.h's scheme. path as sent, query without '?'."""
    name, secret = caller
    ts = str(int(time.time()) if timestamp is None else timestamp)
    nonce = nonce or "py" + "".join(random.choice("0123456789abcdef") for _ in range(30))
    target = path + ("?" + query if query else "")
    text = "\n".join(["IDEMPAY-HMAC-SHA256", method, target, ts, nonce,
                      hashlib.sha256(body or b"").hexdigest()])
    sig = hmac.new(bytes.fromhex(secret), text.encode("utf-8"), hashlib.sha256).hexdigest()
    return {"X-Idempay-Caller": name, "X-Idempay-Timestamp": ts, "X-Idempay-Nonce": nonce,
            "X-Idempay-Signature": sig}


def signs(path):
    """The merchant API's paths (the ones that must be signed): /api/...
    but the notifications. A header on another path (the mock, the seed
    fixture) is harmless."""
    return path.startswith("/api/") and not path.startswith("/api/pay/callback/")


DEV = object()   # http(caller=DEV): the stack's development caller


def caller_id(name=None):
    """payment_caller.id of caller name (default: the development caller)."""
    rows = db_query(f"SELECT id FROM payment_caller WHERE name = '{name or CALLER}'")
    check(rows, f"no caller {name or CALLER} (./stack up makes the development caller)")
    return int(rows[0][0])


def token_key(token, name=None):
    """The Redis key of a token issued to caller name (app/token.h)."""
    return f"pay:token:c{caller_id(name)}:{token}"


def add_caller(name):
    """Adds a merchant-door caller with idempay-fcgi --add-caller (an
    existing one of that name is dropped first). Returns (name, secret)."""
    db_query(f"DELETE FROM payment_caller WHERE name = '{name}'")
    out = subprocess.run([os.path.join(bin_dir(), "app", "idempay-fcgi"), "--add-caller", name],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"--add-caller {name}: {out.returncode} {out.stdout}{out.stderr}")
    return (name, out.stdout.strip().splitlines()[-1])


def http(method, url, body=None, headers=None, timeout=10.0, caller=DEV):
    """One request on a fresh connection. body: bytes, str, or a dict/list
    (sent as JSON with Content-Type application/json unless headers say).
    A request to the merchant API (signs(path)) is signed as caller: DEV
    (the stack's development caller, when its secret file exists), a
    (name, secret hex) tuple, or None (unsigned)."""
    u = urllib.parse.urlsplit(url)
    hdrs = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        hdrs.setdefault("Content-Type", "application/json")
    if isinstance(body, str):
        body = body.encode("utf-8")
    path = u.path or "/"
    if caller is DEV:
        caller = dev_caller()
    if caller is not None and signs(path):
        for k, v in caller_sign(caller, method, path, u.query, body).items():
            hdrs.setdefault(k, v)
    if u.query:
        path += "?" + u.query
    t0 = time.monotonic()
    conn = httpclient.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        h = {k.lower(): v for k, v in r.getheaders()}
        return Resp(r.status, h, data, None, time.monotonic() - t0)
    except socket.timeout:
        return Resp(error="timeout", seconds=time.monotonic() - t0)
    except ConnectionRefusedError:
        return Resp(error="refused", seconds=time.monotonic() - t0)
    except (ConnectionError, httpclient.HTTPException, OSError) as e:
        return Resp(error="reset: " + type(e).__name__, seconds=time.monotonic() - t0)
    finally:
        conn.close()


# The payment-code flow (MICROPAY) is the charge with its reply that most
# tests exercise; a test of the prepay flows passes trade_type="NATIVE" or
# "JSAPI" (docs/FLOWS.md). A WeChat test payment code: 18 digits, 10..15.
AUTH_CODE = "134567890123456789"


def pay(order_no, user_id, amount, token=None, idem_key=None, timeout=10.0, base=None, extra=None,
        trade_type="MICROPAY", auth_code=AUTH_CODE, openid=None):
    """POST /api/pay as a client would (MICROPAY with a payment code unless
    trade_type says otherwise; trade_type=None sends no flow fields)."""
    body = {"order_no": order_no, "user_id": user_id, "amount": amount}
    if trade_type is not None:
        body["trade_type"] = trade_type
    if trade_type == "MICROPAY" and auth_code is not None:
        body["auth_code"] = auth_code
    if openid is not None:
        body["openid"] = openid
    if token is not None:
        body["token"] = token
    if extra:
        body.update(extra)
    headers = {"Content-Type": "application/json"}
    if idem_key is not None:
        headers["Idempotency-Key"] = idem_key
    return http("POST", (base or SERVICE) + "/api/pay", body, headers, timeout)


def retry_busy(answers, again):
    """Replaces each 503 unavailable + Retry-After answer in answers (a click
    the gateway bulkhead turned away before writing anything: more clicks at
    once than the front's threads, e.g. nginx's 8) by again() after its
    Retry-After, as a browser's retry would. Returns answers."""
    for i, a in enumerate(answers):
        if getattr(a, "status", None) == 503 and a.header("Retry-After") and \
                (a.json() or {}).get("error") == "unavailable":
            time.sleep(float(a.header("Retry-After")))
            answers[i] = again()
    return answers


def get_order(order_no, base=None):
    return http("GET", (base or SERVICE) + "/api/pay/orders/" + urllib.parse.quote(order_no, safe=""))


def get_token(user_id, base=None):
    return http("GET", f"{base or SERVICE}/api/pay/token?user_id={user_id}")


def parallel(fn, args_list, workers=None):
    """Runs fn(*args) for every args tuple on its own thread, released
    together by a barrier so the calls really overlap. Returns the results
    in order (an exception becomes the result)."""
    n = len(args_list)
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i, args):
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        try:
            results[i] = fn(*args)
        except Exception as e:  # noqa: BLE001 - reported to the caller
            results[i] = e

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(args_list)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# --- WeChat Pay v2 (an independent implementation, to check the C one) -----

def wx_sign(fields, key=KEY, sign_type="MD5"):
    items = sorted((k, v) for k, v in fields.items() if k != "sign" and v not in (None, ""))
    s = "&".join(f"{k}={v}" for k, v in items) + "&key=" + key
    if sign_type == "HMAC-SHA256":
        return hmac.new(key.encode(), s.encode(), hashlib.sha256).hexdigest().upper()
    return hashlib.md5(s.encode()).hexdigest().upper()


def wx_xml(fields):
    parts = ["<xml>"]
    for k, v in fields.items():
        v = str(v)
        if v.isdigit():
            parts.append(f"<{k}>{v}</{k}>")
        else:
            parts.append(f"<{k}><![CDATA[{v}]]></{k}>")
    parts.append("</xml>")
    return "".join(parts)


def wx_parse(text):
    root = ET.fromstring(text)
    return {child.tag: (child.text or "") for child in root}


def notification(order_no, total_fee, transaction_id, key=KEY, sign_type="MD5", **overrides):
    """A signed payment notification as WeChat sends it (overrides may
    change or, with value None, remove any field before signing)."""
    f = {
        "appid": APPID, "bank_type": "CMC", "cash_fee": str(total_fee), "fee_type": "CNY",
        "is_subscribe": "N", "mch_id": MCHID, "nonce_str": random_token(16),
        "openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "out_trade_no": order_no,
        "result_code": "SUCCESS", "return_code": "SUCCESS",
        "time_end": time.strftime("%Y%m%d%H%M%S"), "total_fee": str(total_fee),
        "trade_type": "NATIVE", "transaction_id": transaction_id,
    }
    if sign_type != "MD5":
        f["sign_type"] = sign_type
    for k, v in overrides.items():
        if v is None:
            f.pop(k, None)
        else:
            f[k] = v
    f["sign"] = wx_sign(f, key, sign_type)
    return f


def send_notification(fields_or_xml, base=None, timeout=10.0):
    body = fields_or_xml if isinstance(fields_or_xml, str) else wx_xml(fields_or_xml)
    return http("POST", (base or PUBLIC) + "/api/pay/callback/wechat", body,
                {"Content-Type": "text/xml"}, timeout)


def random_token(n=16):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return "".join(random.choice(alphabet) for _ in range(n))


def unique(prefix="T"):
    """A fresh valid order number (<= 32 chars of [0-9A-Za-z_-])."""
    return f"{prefix[:8]}{int(time.time() * 1000) % 10**10}{random_token(8)}"


def fake_transaction_id():
    return "4200" + time.strftime("%Y%m%d") + "".join(random.choice("0123456789") for _ in range(16))


# --- the service's internals, read-only, for assertions ----------------------

def metric(name):
    """The value of one exposition line, e.g.
    metric('idempay_double_charge_detected_total') or
    metric('idempay_callbacks_total{outcome="applied"}'); 0 when absent."""
    r = http("GET", SERVICE + "/metrics")
    check(r.status == 200, f"/metrics failed: {r}")
    for line in r.text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def redis_admin_cli(*args, port=None):
    """redis-cli as the stack's Redis admin user (the default user is off:
    tools/conf/redis-acl.conf.in) with args; the CompletedProcess."""
    auth = []
    if os.environ.get("IDEMPAY_REDIS_ADMIN_PASSWORD"):
        auth = ["--user", os.environ.get("IDEMPAY_REDIS_ADMIN_USER", "idempay-admin"),
                "--pass", os.environ["IDEMPAY_REDIS_ADMIN_PASSWORD"], "--no-auth-warning"]
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port or REDIS_PORT), *auth,
                           *args], capture_output=True, text=True, timeout=10)


def redis_cli(*args):
    """redis-cli --raw as the admin user against the stack's Redis: its
    stdout, stripped."""
    return redis_admin_cli("--raw", *args).stdout.strip()


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def db_query(sql, database="idempay"):
    """Rows (lists of strings) of a query run as the DB root over the socket."""
    out = subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={DB_SOCKET}",
                          "-N", "-B", "-e", sql, database],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"db query failed: {out.stderr}")
    return [line.split("\t") for line in out.stdout.splitlines()]


def stack(*args, check_rc=True):
    """Runs ./stack with args (e.g. stack('stop', 'redis'))."""
    out = subprocess.run([os.path.join(ROOT, "stack"), *args], capture_output=True, text=True,
                         timeout=300)
    if check_rc:
        check(out.returncode == 0, f"./stack {' '.join(args)} failed: {out.stdout}{out.stderr}")
    return out


def service_pids():
    """pids of the service's FastCGI processes (children of lighttpd)."""
    try:
        lpid = open(os.path.join(STATE, "run", "lighttpd.pid")).read().strip()
    except OSError:
        return []
    out = subprocess.run(["pgrep", "-P", lpid, "-f", "idempay-fcgi"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def every_service_pid():
    """pids of every service process of the stack: lighttpd's children and
    the nginx front's two (spawn-fcgi, pid files fcgi-nginx*.pid)."""
    pids = service_pids()
    for name in ("fcgi-nginx", "fcgi-nginx-public"):
        try:
            pid = int(open(os.path.join(STATE, "run", name + ".pid")).read().strip())
        except (OSError, ValueError):
            continue
        if os.path.exists(f"/proc/{pid}"):
            pids.append(pid)
    return pids


def wait_until(fn, timeout=30.0, interval=0.2, what="condition"):
    """Polls fn() until it returns a true value (returned), or fails the test."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def wait_healthy(timeout=60.0):
    return wait_until(lambda: http("GET", SERVICE + "/healthz", timeout=5).status == 200,
                      timeout, 0.5, "GET /healthz to answer 200")


class Variant:
    """A second lighttpd serving one FastCGI program with extra environment on
    its own port, for tests that need other settings (a context manager):

        with Variant("tokreq", 18090, env={"IDEMPAY_TOKEN_MODE": "required"}) as base:
            pay(..., base=base)

    program defaults to the service (app/idempay-fcgi of the running build)."""

    def __init__(self, name, port, program=None, env=None):
        self.name, self.port = name, port
        self.program = program or os.path.join(bin_dir(), "app", "idempay-fcgi")
        self.env = dict(os.environ)
        self.env.update({
            "IDEMPAY_STATE_DIR": STATE, "VARIANT_NAME": name, "VARIANT_PORT": str(port),
            "VARIANT_BIN": self.program, "IDEMPAY_DB_SOCKET": DB_SOCKET,
            "IDEMPAY_HTTP_PORT": str(HTTP_PORT), "IDEMPAY_MOCK_PORT": str(MOCK_PORT),
            "IDEMPAY_REDIS_PORT": str(REDIS_PORT),
            # notifications for orders paid through the variant go to the
            # variant; for the service, to the stack's public door (a variant
            # of idempay-fcgi serves the merchant door only)
            "IDEMPAY_NOTIFY_URL": (PUBLIC if program is None else self.base_of(port))
                                  + "/api/pay/callback/wechat",
        })
        self.env.update(env or {})
        self.proc = None
        self.base = f"http://127.0.0.1:{port}"

    @staticmethod
    def base_of(port):
        return f"http://127.0.0.1:{port}"

    def __enter__(self):
        conf = os.path.join(ROOT, "tests", "lighttpd-variant.conf")
        self.proc = subprocess.Popen(["lighttpd", "-D", "-f", conf], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: http("GET", self.base + "/api/ping", timeout=2).status is not None,
                   20, 0.2, f"variant {self.name} on port {self.port}")
        return self.base

    def __exit__(self, *exc):
        if self.proc:
            kids = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                                  text=True).stdout.split()
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            for k in kids:
                try:
                    os.kill(int(k), 9)
                except OSError:
                    pass
        return False


# --- a tiny test runner ------------------------------------------------------

_tests = []


def test(fn):
    """Registers a test function (run in definition order by run_tests)."""
    _tests.append(fn)
    return fn


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


# Where run_tests records each result (tests/run-integration sets it per
# file); taken out of the environment so that a program a test starts (a
# ./stack command running another test file) does not write into it.
_RESULTS_FILE = os.environ.pop("IDEMPAY_TEST_RESULTS", None)


def _record_result(name, passed, seconds, detail):
    """Appends one test's result to the file IDEMPAY_TEST_RESULTS named (one
    JSON object a line: name, status pass|fail, seconds, detail): what
    tests/run-integration turns into one JUnit testcase per test."""
    path = _RESULTS_FILE
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"name": name, "status": "pass" if passed else "fail",
                            "seconds": round(seconds, 3), "detail": detail}) + "\n")


def run_tests(cleanup=None):
    """Runs the registered tests (or those named on the command line), prints
    PASS/FAIL per test with timing, runs cleanup() after each (a cleanup that
    raises is printed, as before), records each result (_record_result), exits 1
    when any failed. A name on the command line that names no test of the
    file, or a file that registers no test, exits 2: nothing is run."""
    only = set(sys.argv[1:])
    unknown = only - {fn.__name__ for fn in _tests}
    if unknown:
        print(f"no such test in {os.path.basename(sys.argv[0])}: {', '.join(sorted(unknown))}"
              f" (its tests: {', '.join(fn.__name__ for fn in _tests) or 'none'})",
              file=sys.stderr)
        sys.exit(2)
    if not _tests:
        print(f"{os.path.basename(sys.argv[0])} registers no @test: nothing ran", file=sys.stderr)
        sys.exit(2)
    failed = 0
    for fn in _tests:
        if only and fn.__name__ not in only:
            continue
        t0 = time.monotonic()
        detail = ""
        try:
            fn()
        except Exception:  # noqa: BLE001 - any failure is reported
            detail = traceback.format_exc()
        seconds = time.monotonic() - t0
        print(f"{'FAIL' if detail else 'PASS'} {fn.__name__} ({seconds:.1f}s)", flush=True)
        if detail:
            failed += 1
            print(detail, end="", file=sys.stderr, flush=True)
        _record_result(fn.__name__, not detail, seconds, detail)
        if cleanup:
            try:
                cleanup()
            except Exception:  # noqa: BLE001
                traceback.print_exc()
    sys.exit(1 if failed else 0)


def run_tests_restoring_mock(defaults):
    """run_tests, setting the mock gateway back to the knobs in defaults after
    each test, and resetting it when the file is done."""
    try:
        run_tests(cleanup=lambda: mock_config(**defaults))
    finally:
        mock_reset()


# --- the doors -------------------------------------------------------------------

def check_json_error(r, status, code, what):
    body = r.json() or {}
    check(r.status == status and body.get("error") == code,
          f"{what}: want {status} {code}, got {r}")


def check_public_doors_refuse(bases, order_no, user, amount, extra=()):
    """Every merchant route (and extra (method, path) pairs) on each public
    door answers 404 not_found, though signed as the development caller (a
    valid signature opens nothing there), and the POST /api/pay writes no
    order."""
    routes = (("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/api/ping"),
              ("GET", "/api/pay/token?user_id=1"), ("GET", "/api/pay/orders/" + order_no),
              ("POST", "/api/pay"), *extra)
    for base in bases:
        for method, path in routes:
            r = http(method, base + path, {"order_no": order_no, "user_id": user,
                                           "amount": amount} if method == "POST" else None)
            check_json_error(r, 404, "not_found", f"{method} {path} on the public door {base}")
    check(db_query(f"SELECT COUNT(*) FROM payment_order WHERE order_no = '{order_no}'") == [["0"]],
          "a POST /api/pay on a public door wrote an order")


# --- the mock gateway (lib_mock.py) ---------------------------------------------

from lib_mock import *  # noqa: E402,F401,F403 - its __all__, at the end: it imports from lib
