"""test_bench - `./stack bench` cannot flatter (issue 18): against a stack
started with its own merchant key it signs with that key (read from the
running service, not from the caller's environment) and every row is
measured; with a wrong key on purpose the callback row is "not measured",
says why, and the bench exits non-zero; the APIv3 notification row
(callback_v3, the service switched to v3 for it) is measured beside v2's
against its raw baseline.

Short phases (1 s); what is checked is honesty, not speed.
Run alone: python3 tests/integration/test_bench.py [test_name ...]
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

STACK = os.path.join(ROOT, "stack")
OWN_KEY = "benchOwnKey0123456789abcdefGHIJ1"   # 32 characters, not the development key
WRONG_KEY = "wrongKey0123456789abcdefGHIJKLM2"  # 32 characters, nobody's key
SHORT = ["--duration", "1", "--settle-max", "1", "--concurrency", "8"]


def run_stack(args, env_overrides, timeout=240):
    env = dict(os.environ)
    for k, v in env_overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([STACK, *args], capture_output=True, text=True, env=env, timeout=timeout)


def bench(extra, env_overrides):
    """Runs ./stack bench with a JSON report; returns (exit status, output, report)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        out = run_stack(["bench", *SHORT, "--json", path, *extra], env_overrides)
        text = out.stdout + out.stderr
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            report = None
        return out.returncode, text, report
    finally:
        os.unlink(path)


def rows(report):
    return {w["workload"]: w for w in report["workloads"]}


def restart_lighttpd(key):
    out = run_stack(["restart", "lighttpd"], {"IDEMPAY_WX_KEY": key})
    check(out.returncode == 0, f"./stack restart lighttpd failed: {out.stdout}{out.stderr}")
    wait_healthy()


@test
def bench_signs_with_the_running_stacks_own_key():
    # the stack runs with its own key; the caller's environment has the
    # development key (as in a new shell): the bench must use the stack's
    restart_lighttpd(OWN_KEY)
    try:
        rc, text, report = bench(["--only", "ping,pay_fresh,callback,rawpay,rawcallback,prepay,rawprepay"],
                                 {"IDEMPAY_WX_KEY": None})
    finally:
        restart_lighttpd(KEY)
    check(report is not None, f"no JSON report; output:\n{text}")
    check(rc == 0, f"bench exited {rc}; output:\n{text}")
    check(OWN_KEY not in text and KEY not in text, "the bench printed a merchant key")
    check("not the development key" in report["key_source"] and "service pid" in report["key_source"],
          f"key source: {report['key_source']!r}")
    check("same as the service" in report["mock_key_source"], f"mock key: {report['mock_key_source']!r}")
    for name, w in rows(report).items():
        check(w["measured"] and w["errors"] == 0 and w["first_error"] is None,
              f"{name}: measured={w['measured']} errors={w['errors']} first={w['first_error']}")
        check(w["requests"] > 0 and w["rps"]["median"] > 0, f"{name}: nothing measured: {w['rps']}")
        cpu = w["cpu_ms_per_request"]
        check(cpu["bench"]["median"] is not None, f"{name}: no client CPU per request")
    r = rows(report)
    check(r["pay_fresh"]["ratio"] is not None and r["pay_fresh"]["baseline"] == "rawpay",
          f"pay_fresh ratio: {r['pay_fresh']['ratio']}")
    check(r["callback"]["ratio"] is not None and r["callback"]["baseline"] == "rawcallback",
          f"callback ratio: {r['callback']['ratio']}")
    # the flows' rows (docs/FLOWS.md): a NATIVE prepay against the same work
    # raw (order and trade INSERTs, the signed unifiedorder, the prepay UPDATE)
    check(r["prepay"]["ratio"] is not None and r["prepay"]["baseline"] == "rawprepay",
          f"prepay ratio: {r['prepay']['ratio']}")
    writes = r["rawprepay"]["mariadb_per_request"]["Questions"]["median"]
    check(writes is not None and writes >= 4, f"raw prepay: {writes} statements per request, expected >= 4")
    left = db_query("SELECT COUNT(*) FROM payment_trade WHERE order_no LIKE 'BN%' OR order_no LIKE 'RN%'")
    check(left[0][0] == "0", f"the bench left {left[0][0]} open prepays for the reconciler to close")
    # the cost rows: the service's CPU and MariaDB's statements per request
    check(r["pay_fresh"]["cpu_ms_per_request"]["service"]["median"] > 0, "no service CPU per payment")
    stmts = r["rawcallback"]["mariadb_per_request"]["Questions"]["median"]
    check(stmts is not None and stmts >= 4, f"raw callback: {stmts} statements per request, expected >= 4")
    commits = r["rawpay"]["mariadb_per_request"]["Com_commit"]["median"]
    check(commits is not None and commits >= 1, f"raw payment: {commits} COMMITs (the mock's) per request")
    for head in ("cost per request", "service CPU per request", "targets"):
        check(head in text, f"no '{head}' in the output:\n{text}")


@test
def a_wrong_key_voids_the_callback_row_and_fails_the_run():
    rc, text, report = bench(["--only", "ping,callback,rawcallback", "--key-source", "env"],
                             {"IDEMPAY_WX_KEY": WRONG_KEY})
    check(rc == 1, f"bench exited {rc}, expected 1; output:\n{text}")
    check(report is not None, f"no JSON report; output:\n{text}")
    check(WRONG_KEY not in text, "the bench printed the key")
    r = rows(report)
    cb = r["callback"]
    check(not cb["measured"] and cb["ratio"] is None, f"callback row still measured: {cb}")
    check(cb["errors"] > 0 and cb["errors"] == cb["requests"], f"errors {cb['errors']} of {cb['requests']}")
    check("invalid sign" in (cb["first_error"] or ""), f"first error: {cb['first_error']!r}")
    check(r["ping"]["measured"], "ping should still be measured")
    verdicts = {t["workload"]: t["verdict"] for t in report["targets"]}
    check(verdicts.get("callback") == "not measured", f"callback target: {verdicts}")
    check("not measured" in text and "invalid sign" in text, f"the table does not say why:\n{text}")


@test
def the_v3_notification_row_is_measured_beside_v2s():
    # ./stack bench names the v3 pair: the service speaks APIv3 for that run
    # (its v2 notification route still answers) and v2 again afterwards
    rc, text, report = bench(["--only", "callback,rawcallback,callback_v3,rawcallback_v3"], {})
    check(rc == 0, f"bench exited {rc}; output:\n{text}")
    check("WeChat Pay v3" in text and "WeChat Pay v2" in text,
          f"the service was not switched to v3 and back:\n{text}")
    r = rows(report)
    for w in ("callback", "rawcallback", "callback_v3", "rawcallback_v3"):
        check(r[w]["measured"] and r[w]["errors"] == 0, f"{w} not measured: {r[w]}")
    check(r["callback_v3"]["baseline"] == "rawcallback_v3" and r["callback_v3"]["ratio"] is not None,
          f"callback_v3: {r['callback_v3']}")
    stmts = r["rawcallback_v3"]["mariadb_per_request"]["Questions"]["median"]
    check(stmts is not None and stmts >= 4, f"raw v3 callback: {stmts} statements per request")
    check("POST callback v3 (verified)" in text and "raw v3 callback pipeline" in text,
          f"no v3 rows in the table:\n{text}")
    wait_healthy()


run_tests()
