"""test_sim - the simulator as CI uses it: a short seeded run of every
scenario against the service (also reading MariaDB, --db) holds every
invariant (exit 0, JSON and JUnit say so); the same seed gives the same schedule digest and another seed
another; bad arguments and a target or gateway that is down exit 2.

Runnable alone: python3 tests/integration/test_sim.py (stack up first)."""
import os
import re
import socket
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from lib import *  # noqa: F401,F403

SCENARIOS = ["double-click", "retry-storm", "callback-storm", "token-replay",
             "forged-callback", "order-mismatch", "gateway-chaos", "nemesis"]
INVARIANTS = ["no_double_charge", "charge_has_paid_order", "paid_has_charge",
              "client_paid_is_final", "token_single_order", "forged_callback_no_effect",
              "mismatch_no_effect", "all_settled", "no_402_after_charge", "no_paid_after_402",
              "no_failed_read_after_charge", "paid_answer_has_charge", "refusal_no_effect",
              "second_charge_refunded", "closed_after_doubt", "payment_kept_or_refunded",
              "one_kept_charge", "closed_client_not_charged", "refund_within_charge",
              "no_charge_after_close", "refund_result_reported", "refund_names_a_charge",
              "refund_made_once", "no_fence_within_call"]


def sim_binary():
    for cand in (os.path.join(bin_dir(), "sim", "idempay-sim"),
                 os.path.join(ROOT, "sim", "idempay-sim")):
        if os.access(cand, os.X_OK):
            return cand
    raise AssertionError("idempay-sim not built (looked in the stack's build dir and sim/)")


def sim(*args, timeout=300, env=None):
    out = subprocess.run([sim_binary(), *args], capture_output=True, text=True, timeout=timeout,
                         env=env)
    return out


def digest_of(out):
    m = re.search(r"^schedule digest: ([0-9a-f]{64})$", out.stdout, re.M)
    check(m is not None, f"no schedule digest printed:\n{out.stdout}\n{out.stderr}")
    return m.group(1)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


TMP = tempfile.mkdtemp(prefix="test_sim.")
# No --settle: the simulator's own horizon (the service's windows: a second
# charge whose notification the nemesis drops is found by the statement job,
# every 30 s under ./stack; an order failed without a fence reads PROCESSING
# until its recheck); the wait ends once nothing is pending.
RUN_FLAGS = ["--scenario", "all", "--orders", "240", "--duration", "6", "--concurrency", "16",
             "--seed", "20260101", "--quiet", "--db"]


@test
def short_seeded_run_of_all_holds_every_invariant():
    jpath, xpath = os.path.join(TMP, "run.json"), os.path.join(TMP, "run.xml")
    hpath = os.path.join(TMP, "run.jsonl")
    out = sim(*RUN_FLAGS, "--json", jpath, "--junit", xpath, "--history", hpath)
    check(out.returncode == 0,
          f"simulator exit {out.returncode} (expected 0):\n{out.stdout[-6000:]}\n{out.stderr[-2000:]}")
    check("seed: 20260101" in out.stdout, "the seed is not printed")
    report = json.load(open(jpath))
    check(report["exit_code"] == 0 and report["result"] == "pass", f"JSON says {report['result']}")
    check(report["all_invariants_held"] is True, "JSON: all_invariants_held is not true")
    check(report["violations"] == [], f"violations: {report['violations'][:3]}")
    check(set(report["invariants"]) == set(INVARIANTS), f"invariants: {list(report['invariants'])}")
    for name, inv in report["invariants"].items():
        check(inv["pass"] is True and inv["violations"] == 0, f"{name}: {inv}")
    names = [s["name"] for s in report["scenarios"]]
    check(names == SCENARIOS, f"scenarios run: {names}")
    check(report["orders"] >= 240, f"orders: {report['orders']}")
    req = report["requests"]
    check(req["total"] >= 240 and req["ok"] > 0, f"requests: {req}")
    check(report["latency"]["all"]["count"] == req["total"], "latency count != requests")
    # --history: every client operation, in time order, with what was seen.
    ops = [json.loads(line) for line in open(hpath)]
    check(len(ops) == req["total"], f"history has {len(ops)} ops, the report {req['total']}")
    check(all(a["start_s"] <= b["start_s"] for a, b in zip(ops, ops[1:])), "history not in time order")
    check(all(o["outcome"] in ("ok", "fail", "unknown") for o in ops), "bad outcome in history")
    check({o["kind"] for o in ops} >= {"pay", "token", "callback"}, "history lacks request kinds")
    paid_ops = [o for o in ops if o["kind"] == "pay" and o["http_code"] == 200]
    check(paid_ops and all(o["status"] == "PAID" and o.get("transaction_id") for o in paid_ops),
          "a 200 answer to POST /api/pay without PAID and a transaction_id in the history")
    paid = sum(s["paid"] for s in report["scenarios"])
    check(paid > 100, f"only {paid} orders paid")
    check(sum(s["duplicates"] for s in report["scenarios"]) > 0, "no duplicates were sent")
    # The digest printed by the real run is the schedule's: --schedule-only agrees.
    check(digest_of(out) == report["schedule_digest"] == digest_of(sim(*RUN_FLAGS, "--schedule-only")),
          "the run's digest differs from --schedule-only's")

    # JUnit: well-formed, one testcase per scenario x invariant, no failures.
    root = ET.parse(xpath).getroot()
    cases = {(tc.get("classname"), tc.get("name")) for tc in root.iter("testcase")}
    want = {(f"idempay-sim.{s}", i) for s in SCENARIOS for i in INVARIANTS}
    check(cases == want, f"JUnit testcases differ: missing {sorted(want - cases)[:5]}, "
                         f"extra {sorted(cases - want)[:5]}")
    check(not list(root.iter("failure")) and not list(root.iter("error")), "JUnit has failures")


@test
def same_seed_same_digest_other_seed_other_digest():
    flags = ["--orders", "500", "--duration", "20", "--schedule-only"]
    a = sim("--seed", "77", *flags)
    b = sim("--seed", "77", *flags)
    c = sim("--seed", "78", *flags)
    for o in (a, b, c):
        check(o.returncode == 0, f"--schedule-only exit {o.returncode}: {o.stderr}")
    check(digest_of(a) == digest_of(b), "same seed, different digests")
    check(digest_of(a) != digest_of(c), "different seeds, same digest")
    # Another flag that shapes the schedule changes it too; the per-run order
    # prefix does not.
    d = sim("--seed", "77", "--orders", "501", "--duration", "20", "--schedule-only")
    e = sim("--seed", "77", "--prefix", "otherpfx", *flags)
    check(digest_of(d) != digest_of(a), "--orders does not change the digest")
    check(digest_of(e) == digest_of(a), "the order prefix changes the digest")
    # Without --seed a seed is chosen, printed, and replays the same digest.
    f = sim(*flags)
    m = re.search(r"^seed: (\d+)$", f.stdout, re.M)
    check(m is not None, "no seed printed")
    check(digest_of(sim("--seed", m.group(1), *flags)) == digest_of(f), "printed seed does not replay")


@test
def nemesis_aims_at_the_windows():
    """The nemesis' schedule follows the service windows in the environment,
    always has one episode with the safety nets removed, and plans chaos
    runs (with their action) only with a chaos command."""
    flags = ["--scenario", "nemesis", "--seed", "5", "--schedule-only", "--print-schedule"]
    plain = sim(*flags)
    check(plain.returncode == 0, f"exit {plain.returncode}: {plain.stderr}")
    check("timeout=3000 lease=10000" in plain.stdout, "the default windows are not in the schedule")
    check(plain.stdout.count("NETS REMOVED") == 1, "not exactly one nets-removed episode")
    check("\nchaos " not in plain.stdout, "chaos planned without --chaos-cmd")
    env = dict(os.environ, IDEMPAY_LEASE_MS="7000", IDEMPAY_GATEWAY_TIMEOUT_MS="2000")
    other = sim(*flags, env=env)
    check("timeout=2000 lease=7000" in other.stdout, "the windows of the environment are ignored")
    check(digest_of(other) != digest_of(plain), "other windows, same digest")
    chaos = sim(*flags, "--chaos-cmd", "true")
    check(re.search(r"^chaos phase=\d+ at=\d+ action=kill-worker$", chaos.stdout, re.M),
          "no kill-worker planned with a chaos command")
    check(digest_of(sim(*flags)) == digest_of(plain), "the same seed gives another digest")


@test
def soak_runs_new_seeds_until_the_time_is_up():
    out = sim("--scenario", "order-mismatch", "--orders", "8", "--duration", "0", "--quiet",
              "--soak", "0.02", timeout=120)
    check(out.returncode == 0, f"soak exit {out.returncode}: {out.stdout[-2000:]}{out.stderr}")
    seeds = re.findall(r"^soak: run \d+, seed (\d+)$", out.stdout, re.M)
    check(len(seeds) >= 1, f"no seed printed: {out.stdout[-1000:]}")
    check(re.search(r"^soak: \d+ run\(s\), every invariant held", out.stdout, re.M),
          "no closing line")
    check(len(set(seeds)) == len(seeds), "a seed was drawn twice")


@test
def bad_arguments_exit_2():
    cases = [["--orders", "0"], ["--orders", "x"], ["--scenario", "bogus"],
             ["--scenario", "crash"], ["--seed", "-1"], ["--seed", "abc"],
             ["--target", "ftp://127.0.0.1:1"], ["--concurrency", "0"], ["--bogus"],
             ["stray-argument"], ["--chaos-every", "5"], ["--mock-config", "[1]"],
             ["--prefix", "bad_prefix"], ["--soak", "0"], ["--soak", "x"]]
    for args in cases:
        out = sim(*args, timeout=30)
        check(out.returncode == 2, f"{args}: exit {out.returncode}, expected 2 ({out.stderr})")
        check(out.stderr.strip() != "", f"{args}: no message on stderr")
    check("--chaos-cmd" in sim("--scenario", "crash").stderr, "crash without --chaos-cmd: no hint")


@test
def target_down_exits_2():
    jpath, xpath = os.path.join(TMP, "down.json"), os.path.join(TMP, "down.xml")
    t0 = time.monotonic()
    out = sim("--target", f"http://127.0.0.1:{closed_port()}", "--orders", "20", "--quiet",
              "--json", jpath, "--junit", xpath, timeout=60)
    check(out.returncode == 2, f"exit {out.returncode}, expected 2: {out.stdout}{out.stderr}")
    check(time.monotonic() - t0 < 30, "took too long to notice the target is down")
    check("not answering" in out.stderr, f"no reason given: {out.stderr}")
    report = json.load(open(jpath))
    check(report["exit_code"] == 2 and report["result"] == "error", f"JSON: {report['result']}")
    root = ET.parse(xpath).getroot()
    check(len(list(root.iter("error"))) == 1, "JUnit has no error testcase")


@test
def gateway_down_exits_2():
    out = sim("--gateway", f"http://127.0.0.1:{closed_port()}", "--orders", "20", "--quiet",
              timeout=60)
    check(out.returncode == 2, f"exit {out.returncode}, expected 2: {out.stdout}{out.stderr}")
    check("gateway" in out.stderr, f"no reason given: {out.stderr}")


run_tests()
