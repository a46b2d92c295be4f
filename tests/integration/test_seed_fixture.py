"""test_seed_fixture - the simulator's checker can fail (issue 7).

Mounts the seed fixture (tests/fixtures/idempay-seed-fixture: the seed
article's Java payment code ported as written, flaws kept; docs/FIXTURE.md)
on its own port with lib.Variant, runs short seeded idempay-sim runs against
it, one scenario each, and asserts the violations the article's code really
has; then runs the same scenarios against the real service and asserts that
every invariant holds there.

What the article's code does under each scenario (docs/FIXTURE.md):
- crash (kill -9 of the fixture, gateway dedupe off): the gateway call runs
  inside the @Transactional pay(); a crash after the charge rolls the order
  row back, the client's retry inserts it afresh and charges again:
  no_double_charge.
- token-replay: GET-then-DELETE tokens never bound to an order: one token pays
  several orders: token_single_order.
- forged-callback: the callback verifies nothing and sets PAID
  unconditionally: forged_callback_no_effect.
- order-mismatch: an existing order answers success to any user/amount:
  mismatch_no_effect.
- double-click, retry-storm (dedupe off), callback-storm: processPayment
  reaches the gateway only after a successful INSERT of the order number
  (uk_order_no), so without a crash the article never charges an order twice;
  the test asserts exactly that (no_double_charge holds, the ledger agrees).
  callback-storm's copies do race the article's check-then-insert: the test
  asserts the duplicate callback records in idempay_seed, which no contract
  invariant can see.
- double-click, token-replay and retry-storm against the state-machine reading of the
  article (IDEMPAY_SEED_FAILED_RETRY=recharge: its PaymentStateMachine lets a
  FAILED order go back to PROCESSING "允许重试", here by an unconditional
  update and a new gateway call, as the brief describes the seed's bug):
  a charge that timed out is marked FAILED, the retry or a concurrent copy
  charges again: no_double_charge. The service holds under the same faults.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403



def _fixture_port():
    """IDEMPAY_FIXTURE_PORT, else HTTP port + 2 when that is below the
    kernel's ephemeral range (a client socket may hold a port up there),
    else a port the kernel says is free."""
    if os.environ.get("IDEMPAY_FIXTURE_PORT"):
        return int(os.environ["IDEMPAY_FIXTURE_PORT"])
    if HTTP_PORT + 2 < 32768:
        return HTTP_PORT + 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FIXTURE_PORT = _fixture_port()
SIM = os.path.join(bin_dir(), "sim", "idempay-sim")
FIXTURE_BIN = os.path.join(bin_dir(), "tests", "fixtures", "idempay-seed-fixture")
SEED = os.environ.get("IDEMPAY_SEED_FIXTURE_SEED", "7")
NODEDUPE = '{"dedupe":false}'
# crash runs: dedupe off (a second charge is taken), and a quarter of the
# charges answered late (the fixture holds its transaction open meanwhile)
CRASH_MOCK = '{"dedupe":false,"timeout_after_charge_rate":0.25}'
# what the fixture gets wrong is wrong by the end of the traffic (and stays
# so): a short settle is enough to read it
FIXTURE_SETTLE = 3

# scenario -> extra simulator arguments; the same runs go to both targets
RUNS = {
    "double-click": ["--orders", "30"],
    "retry-storm": ["--orders", "24", "--mock-config", NODEDUPE],
    "callback-storm": ["--orders", "24"],
    "token-replay": ["--orders", "40"],
    "forged-callback": ["--orders", "16"],
    "order-mismatch": ["--orders", "16"],
    "crash": ["--orders", "40", "--mock-config", CRASH_MOCK, "--chaos-every", "1"],
}

_variant = None


def fixture():
    """The fixture's base URL (started on first use, stopped at exit)."""
    global _variant
    if _variant is None:
        check(os.access(FIXTURE_BIN, os.X_OK), f"fixture not built: {FIXTURE_BIN}")
        tables = db_query("SELECT COUNT(*) FROM information_schema.tables WHERE "
                          "table_schema = 'idempay_seed'", "idempay")
        check(tables and int(tables[0][0]) >= 2,
              "idempay_seed tables missing: was sql/004_seed_fixture.sql applied?")
        with socket.socket() as s:  # a stale fixture there would be tested instead
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as lighttpd does
            try:
                s.bind(("127.0.0.1", FIXTURE_PORT))
                s.listen(1)
            except OSError as e:
                raise AssertionError(f"port {FIXTURE_PORT} for the fixture is taken: {e}")
        v = Variant("seed", FIXTURE_PORT, program=FIXTURE_BIN,
                    env={"IDEMPAY_WX_KEY": KEY, "IDEMPAY_GATEWAY_URL": MOCK,
                         "IDEMPAY_SEED_LOG": os.path.join(STATE, "log", "seed-fixture.log")})
        v.__enter__()
        _variant = v
    return _variant.base


_sm_variant = None


def fixture_state_machine():
    """A second fixture that retries a FAILED order the way the article's
    state machine allows (3 -> 1, unconditional update, pay again) instead
    of the literal insert recursion (IDEMPAY_SEED_FAILED_RETRY=recharge)."""
    global _sm_variant
    if _sm_variant is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        v = Variant("seed-sm", port, program=FIXTURE_BIN,
                    env={"IDEMPAY_WX_KEY": KEY, "IDEMPAY_GATEWAY_URL": MOCK,
                         "IDEMPAY_SEED_FAILED_RETRY": "recharge",
                         "IDEMPAY_SEED_LOG": os.path.join(STATE, "log", "seed-fixture-sm.log")})
        v.__enter__()
        _sm_variant = v
    return _sm_variant.base


def stop_fixture():
    global _variant, _sm_variant
    for v in (_variant, _sm_variant):
        if v is not None:
            v.__exit__(None, None, None)
    _variant = _sm_variant = None


def with_instant_charge(args):
    """The article's code (the fixture) calls unifiedorder and expects the
    charge in its reply: it plays the gateway it was written for, the mock's
    instant_charge (docs/MOCK.md). idempay's own requests are MICROPAY, which
    instant_charge does not touch, so both targets run with the same knobs."""
    args = list(args)
    if "--mock-config" in args:
        i = args.index("--mock-config") + 1
        knobs = json.loads(args[i])
        knobs["instant_charge"] = True
        args[i] = json.dumps(knobs)
    else:
        args += ["--mock-config", '{"instant_charge":true}']
    return args


def simulate(target, scenario, chaos_cmd=None, settle=None, extra=None):
    """One short seeded simulator run. Returns (exit status, JSON report,
    output). The settle period ends early once every order is settled; an
    order the fixture left wrong for good (e.g. PAID by a forged callback)
    keeps it waiting to the end, so fixture runs pass a shorter one. The
    service's runs take the simulator's own horizon (None): an order failed
    without a fence reads PROCESSING until its recheck."""
    check(os.access(SIM, os.X_OK), f"simulator not built: {SIM}")
    with tempfile.TemporaryDirectory() as d:
        report_file = os.path.join(d, "report.json")
        cmd = [SIM, "--target", target, "--gateway", MOCK, "--scenario", scenario,
               "--seed", SEED, "--duration", "4", "--concurrency", "16",
               "--quiet", "--json", report_file, *with_instant_charge(extra or RUNS[scenario])]
        if settle is not None:
            cmd += ["--settle", str(settle)]
        if chaos_cmd:
            cmd += ["--chaos-cmd", chaos_cmd]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        report = None
        if os.path.exists(report_file):
            with open(report_file) as f:
                report = json.load(f)
    text = out.stdout + out.stderr
    check(report is not None, f"{scenario}: no JSON report (exit {out.returncode}):\n{text[-3000:]}")
    return out.returncode, report, text


def violations(report, scenario):
    """{invariant: count} of the violated invariants of one scenario."""
    for sc in report.get("scenarios", []):
        if sc.get("name") == scenario:
            return {name: inv["violations"] for name, inv in sc["invariants"].items()
                    if not inv["pass"]}
    raise AssertionError(f"scenario {scenario} missing from the report")


def ledger_counts(prefix):
    """Charges per out_trade_no of one run (the mock's ledger, read by us)."""
    counts = {}
    for c in mock_ledger()["charges"]:
        if c["out_trade_no"].startswith(prefix):
            counts[c["out_trade_no"]] = counts.get(c["out_trade_no"], 0) + 1
    return counts


def expect_caught(scenario, invariant, chaos_cmd=None, base=None, extra=None):
    """Runs scenario against the fixture: exit 1 and invariant violated."""
    rc, report, text = simulate(base or fixture(), scenario, chaos_cmd, settle=FIXTURE_SETTLE,
                                extra=extra)
    check(any(sc.get("name") == scenario for sc in report.get("scenarios", [])),
          f"{scenario} against the seed fixture: no result (exit {rc}):\n{text[-3000:]}")
    found = violations(report, scenario)
    print(f"  fixture {scenario}: exit {rc}, violated {found}", flush=True)
    check(rc == 1, f"{scenario} against the seed fixture: exit {rc}, expected 1:\n{text[-3000:]}")
    check(found.get(invariant, 0) > 0,
          f"{scenario} against the seed fixture: {invariant} not reported (got {found}):\n"
          f"{text[-3000:]}")
    return report


def expect_no_double_charge(scenario):
    """Runs scenario against the fixture: the run is carried out and, as the
    article's insert-gated processPayment promises, nothing is charged
    twice (by the checker and by our own read of the ledger)."""
    rc, report, text = simulate(fixture(), scenario, settle=FIXTURE_SETTLE)
    found = violations(report, scenario)
    print(f"  fixture {scenario}: exit {rc}, violated {found or 'nothing'}", flush=True)
    check(rc in (0, 1), f"{scenario} against the seed fixture could not run (exit {rc}):\n"
          f"{text[-3000:]}")
    check("no_double_charge" not in found,
          f"{scenario}: the fixture charged twice without a crash; the article's code cannot "
          f"(docs/FIXTURE.md): {found}\n{text[-3000:]}")
    twice = {o: n for o, n in ledger_counts(report["prefix"]).items() if n > 1}
    check(not twice, f"{scenario}: ledger shows orders charged twice: {twice}")
    return report


# --- the checker fails against the article's code ---------------------------

@test
def fixture_crash_double_charge_is_caught():
    base = fixture()
    # kill -9 the fixture process(es) lighttpd spawned for this variant (by
    # its pid); lighttpd spawns a new one, like a restarted JVM
    chaos = f"kill -9 $(pgrep -P {_variant.proc.pid}) 2>/dev/null; true"
    report = expect_caught("crash", "no_double_charge", chaos)
    twice = {o: n for o, n in ledger_counts(report["prefix"]).items() if n > 1}
    check(twice, f"the checker reported a double charge but the ledger shows none ({base})")


@test
def fixture_token_replay_is_caught():
    expect_caught("token-replay", "token_single_order")


@test
def fixture_forged_callback_is_caught():
    expect_caught("forged-callback", "forged_callback_no_effect")


@test
def fixture_order_mismatch_is_caught():
    expect_caught("order-mismatch", "mismatch_no_effect")


# The seed's FAILED-on-timeout bug with its state machine's retry (3 -> 1):
# a charge that timed out is marked FAILED, the retry (or a concurrent copy
# of the click) moves it back to PROCESSING without a compare-and-set and
# charges again. Gateway dedupe off, a share of charges answered too late.
TIMEOUT_NODEDUPE = '{"dedupe":false,"timeout_after_charge_rate":0.3,"hold_max_ms":3500}'


def expect_state_machine_double_charge(scenario, orders):
    """Runs scenario against the state-machine fixture under timeouts with
    dedupe off: the checker reports no_double_charge and the ledger agrees."""
    report = expect_caught(scenario, "no_double_charge", base=fixture_state_machine(),
                           extra=["--orders", orders, "--mock-config", TIMEOUT_NODEDUPE])
    twice = {o: n for o, n in ledger_counts(report["prefix"]).items() if n > 1}
    check(twice, f"{scenario}: the checker reported a double charge but the ledger shows none")


@test
def fixture_state_machine_double_click_is_caught():
    expect_state_machine_double_charge("double-click", "30")


@test
def fixture_state_machine_token_replay_is_caught():
    # one token for many copies of one order: GET-then-DELETE lets them all
    # through, and the ones that find the order FAILED charge it again
    expect_state_machine_double_charge("token-replay", "40")


@test
def fixture_state_machine_retry_storm_is_caught():
    expect_state_machine_double_charge("retry-storm", "24")


# --- what the article's code does get right, and what no invariant sees -------

@test
def fixture_double_click_never_charges_twice():
    expect_no_double_charge("double-click")


@test
def fixture_retry_storm_never_charges_twice():
    expect_no_double_charge("retry-storm")


@test
def fixture_callback_storm_duplicates_callback_records():
    report = expect_no_double_charge("callback-storm")
    rows = db_query("SELECT COUNT(*), COUNT(DISTINCT third_party_no) FROM "
                    "seed_payment_callback_record WHERE order_no LIKE "
                    f"'{report['prefix']}%'", "idempay_seed")
    records, txns = int(rows[0][0]), int(rows[0][1])
    print(f"  callback records: {records} for {txns} transactions", flush=True)
    check(txns > 0, "no callback record at all: did the notifications reach the fixture?")
    check(records > txns, "racing notification copies left no duplicate callback records: "
          "the fixture's check-then-insert is not the article's")


# --- the same runs against the real service hold every invariant ------------

def expect_service_passes(scenario, chaos_cmd=None, extra=None):
    rc, report, text = simulate(SERVICE, scenario, chaos_cmd, extra=extra)
    found = violations(report, scenario)
    print(f"  service {scenario}: exit {rc}", flush=True)
    check(rc == 0 and not found, f"{scenario} against the service: exit {rc}, violated {found}:\n"
          f"{text[-4000:]}")


@test
def service_holds_where_the_fixture_failed():
    # the fixture's runs above, one scenario each; against the service the
    # five that run on the mock's defaults share one run (same seed, their
    # orders together: the schedule's scenario phases follow one another)
    together = ["double-click", "callback-storm", "token-replay", "forged-callback", "order-mismatch"]
    orders = sum(int(RUNS[sc][RUNS[sc].index("--orders") + 1]) for sc in together)
    rc, report, text = simulate(SERVICE, ",".join(together), extra=["--orders", str(orders)])
    found = {sc: violations(report, sc) for sc in together}
    print(f"  service {','.join(together)}: exit {rc}", flush=True)
    check(rc == 0 and not any(found.values()), f"against the service: exit {rc}, violated {found}:\n"
          f"{text[-4000:]}")


@test
def service_holds_where_the_state_machine_fixture_charged_twice():
    # the three runs of the state-machine fixture, in one run against the
    # service (their orders together, the same timeouts with dedupe off)
    together = ["double-click", "token-replay", "retry-storm"]
    rc, report, text = simulate(SERVICE, ",".join(together),
                                extra=["--orders", "94", "--mock-config", TIMEOUT_NODEDUPE])
    found = {sc: violations(report, sc) for sc in together}
    print(f"  service {','.join(together)} (timeouts, dedupe off): exit {rc}", flush=True)
    check(rc == 0 and not any(found.values()), f"against the service: exit {rc}, violated {found}:\n"
          f"{text[-4000:]}")


@test
def service_retry_storm_holds():
    expect_service_passes("retry-storm")


@test
def service_crash_holds():
    expect_service_passes("crash", os.path.join(ROOT, "stack") + " chaos kill-worker")
    wait_healthy()


if __name__ == "__main__":
    try:
        run_tests()
    finally:
        stop_fixture()
