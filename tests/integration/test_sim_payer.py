"""test_sim_payer - the simulator on the real flows (issue 22, docs/FLOWS.md):
a short seeded run of the `payer` scenario (NATIVE and JSAPI customers who
pay once, twice, late, after the close, a stale code, never, or into the
close, through the mock's payer; payment-code clients against USERPAYING)
holds every invariant, the payer's payments and refusals are in the report,
abandoned orders end closed; today's scenarios pay with the customer's
payment code (micropay at the gateway); --check of the saved run judges an
edited ledger (a charge refunded beyond its fee) as a violation of
refund_within_charge.

Runnable alone: python3 tests/integration/test_sim_payer.py (stack up first;
about 40 s)."""
import json
import os
import re
import subprocess
import tempfile

from lib import *  # noqa: F401,F403

TMP = tempfile.mkdtemp(prefix="test_sim_payer.")
# The service's prepay life as ./stack sets it: the simulator's stale and
# into-close customers wait for it (the same environment the service reads).
ENV = dict(os.environ, IDEMPAY_PREPAY_TTL_MS=os.environ.get("IDEMPAY_PREPAY_TTL_MS", "8000"))
RESULT = re.compile(r"^result: (PASS|FAIL|ERROR|THRESHOLD)\b.*\(exit (\d)", re.M)


def sim_binary():
    path = os.path.join(bin_dir(), "sim", "idempay-sim")
    check(os.access(path, os.X_OK), f"idempay-sim not built: {path}")
    return path


def sim(*args, timeout=180):
    return subprocess.run([sim_binary(), *args], capture_output=True, text=True, timeout=timeout,
                          env=ENV)


def history(folder):
    with open(os.path.join(folder, "history.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


PAYER_RUN = {}


def payer_run():
    """One seeded run of the payer scenario, shared by the tests below."""
    if not PAYER_RUN:
        out_dir = os.path.join(TMP, "runs")
        out = sim("--scenario", "payer", "--orders", "28", "--duration", "4", "--seed", "7",
                  "--settle", "40", "--quiet", "--out", out_dir,
                  "--json", os.path.join(TMP, "payer.json"))
        PAYER_RUN.update(out=out, folder=os.path.realpath(os.path.join(out_dir, "latest")),
                         report=json.load(open(os.path.join(TMP, "payer.json"))))
    return PAYER_RUN


@test
def payer_scenario_holds_every_invariant():
    r = payer_run()
    out, report = r["out"], r["report"]
    check(out.returncode == 0, f"exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-2000:]}")
    check(RESULT.search(out.stdout).group(1) == "PASS", out.stdout[-500:])
    for name in ("payment_kept_or_refunded", "one_kept_charge", "closed_client_not_charged",
                 "refund_within_charge"):
        check(report["invariants"][name]["pass"], f"{name}: {report['invariants'][name]}")
    sc = [s for s in report["scenarios"] if s["name"] == "payer"]
    check(len(sc) == 1, f"scenarios: {[s['name'] for s in report['scenarios']]}")
    payer = sc[0]["payer"]
    # once, twice (the first), late and some into-close pay; the second of
    # twice, after-close and stale are refused.
    check(payer["paid"] >= 8 and payer["refused"] >= 8, f"payer: {payer}")
    check("refunds" in sc[0], sc[0])
    check(re.search(r"^payer\s+payments\s+paid\s+refused", out.stdout, re.M), out.stdout)


@test
def payer_refusals_are_wechats():
    ops = history(payer_run()["folder"])
    payer = [o for o in ops if o["kind"] == "payer"]
    errors = {o.get("error") for o in payer if o["outcome"] == "fail"}
    check("ORDERPAID" in errors, f"refusals: {errors}")  # the second payment
    check(errors & {"ORDERCLOSED", "ORDER_EXPIRED"}, f"refusals: {errors}")  # after the close, stale
    # NATIVE and JSAPI orders got a prepay (202 AWAITING_PAYMENT) before the customer paid.
    prepays = [o for o in ops if o["kind"] == "pay" and o["http_code"] == 202]
    check(len(prepays) >= 20, f"{len(prepays)} prepay answers")


@test
def abandoned_orders_end_closed():
    folder = payer_run()["folder"]
    rows = json.load(open(os.path.join(folder, "orders.json")))["orders"]
    statuses = [(r.get("api") or {}).get("status") for r in rows]
    check(statuses.count("FAILED") >= 4, f"statuses: {statuses}")
    check("PROCESSING" not in statuses, f"statuses: {statuses}")


@test
def todays_scenarios_pay_with_the_payment_code():
    out = sim("--scenario", "double-click", "--orders", "12", "--duration", "1", "--seed", "3",
              "--settle", "20", "--quiet", "--no-out", "--history", os.path.join(TMP, "h.jsonl"))
    check(out.returncode == 0, f"exit {out.returncode}:\n{out.stdout[-2000:]}")
    ops = [json.loads(line) for line in open(os.path.join(TMP, "h.jsonl")) if line.strip()]
    first = next(o for o in ops if o["kind"] == "pay" and o["http_code"] == 200)
    calls = mock_requests(first["order_no"])["requests"]
    check(any(c["endpoint"] == "micropay" for c in calls), f"calls: {calls}")
    check(not any(c["endpoint"] == "unifiedorder" for c in calls), f"calls: {calls}")


@test
def check_judges_a_refund_beyond_its_charge():
    folder = payer_run()["folder"]
    copy = os.path.join(TMP, "edited")
    subprocess.run(["cp", "-r", folder, copy], check=True)
    path = os.path.join(copy, "ledger.json")
    ledger = json.load(open(path))
    check(ledger["charges"], "no charge in the saved ledger")
    c = ledger["charges"][0]
    c.update(refunded=True, refund_count=2, refunded_fee=c["total_fee"] + 1)
    json.dump(ledger, open(path, "w"))
    out = sim("--check", copy, timeout=60)
    check(out.returncode == 1, f"exit {out.returncode}:\n{out.stdout[-2000:]}")
    check("[refund_within_charge]" in out.stdout or "refund_within_charge" in out.stdout,
          out.stdout[-2000:])
    check(re.search(r"of %d fen was refunded %d fen" % (c["total_fee"], c["total_fee"] + 1),
                    out.stdout), out.stdout[-2000:])


run_tests()
