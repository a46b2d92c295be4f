"""Crash chaos (issue 9): while the simulator's traffic runs, service workers
are killed with -9, Redis, the mock gateway and MariaDB are restarted; the
contract's invariants must hold afterwards (zero double charges, zero lost
payments, every order settled by the reconciler) and the simulator says so."""
import json
import os
import subprocess
import tempfile

from lib import *

SIM = os.path.join(bin_dir(), "sim", "idempay-sim")


@test
def crash_chaos_keeps_every_invariant():
    tmp = tempfile.mkdtemp(prefix="idempay-chaos-")
    report = os.path.join(tmp, "report.json")
    state = os.path.join(tmp, "chaos.count")
    # a fault every 3 s: the cycle's first four (every kind) within 16 s
    cmd = [SIM, "--scenario", "crash", "--orders", "190",
           "--duration", "16", "--concurrency", "16", "--seed", "9001",
           "--quiet", "--json", report,
           "--chaos-cmd", f"{ROOT}/tests/chaos-cycle {state}", "--chaos-every", "3"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    print(out.stdout[-6000:])
    print(out.stderr[-3000:])
    actions = open(state + ".log").read() if os.path.exists(state + ".log") else ""
    print(actions)
    check(out.returncode == 0, f"simulator exit {out.returncode} under chaos (seed 9001)")
    r = json.load(open(report))
    for kind in ("kill-worker", "restart-redis", "restart-mock", "restart-mariadb"):
        check(kind in actions, f"chaos action {kind} never ran: {actions}")
    check(r.get("all_invariants_held") is True, f"invariants violated: {r.get('invariants')}")
    check(r.get("violations") == [], f"the report lists violations: {r.get('violations')[:3]}")
    wait_healthy()


def cleanup():
    # leave the stack whole for the next test file
    stack("up")
    wait_healthy()
    mock_reset()


run_tests(cleanup)
