"""test_mutants - the CI-sized share of the mutant catalogue: every mutant of
tests/mutants/ still applies exactly (a mutant the service moved away from
is an error, not a skip), and the fastest ones (those with a `ci:` line: a
short simulator run with a fixed seed) are each built into a scratch stack
of their own and killed by the simulator. The whole catalogue, each against
the default simulation, is `./stack mutants` (tens of minutes).

Runnable alone: python3 tests/integration/test_mutants.py (stack up first)."""
# run-integration: beside the others (its own scratch tree and stack, on ports + 100: nothing of the running stack)
import os
import subprocess
import sys

from lib import *  # noqa: F401,F403

RUNNER = os.path.join(ROOT, "tests", "mutants", "mutants.py")


def sim_binary():
    for cand in (os.path.join(bin_dir(), "sim", "idempay-sim"),
                 os.path.join(ROOT, "sim", "idempay-sim")):
        if os.access(cand, os.X_OK):
            return cand
    raise AssertionError("idempay-sim not built")


@test
def every_mutant_still_applies():
    out = subprocess.run([sys.executable, RUNNER, "--check"], capture_output=True, text=True,
                         timeout=120)
    check(out.returncode == 0, f"a mutant no longer applies (exit {out.returncode}):\n"
                               f"{out.stdout}{out.stderr}")
    names = [line.split()[0] for line in out.stdout.splitlines() if " applies " in line]
    check(len(names) >= 12, f"only {len(names)} mutants: {names}")


@test
def the_ci_mutants_are_killed():
    out = subprocess.run([sys.executable, RUNNER, "--ci", "--sim", sim_binary()],
                         capture_output=True, text=True, timeout=1500)
    print(out.stdout)
    check(out.returncode == 0, f"mutants --ci exit {out.returncode}:\n{out.stdout}{out.stderr}")
    rows = [line for line in out.stdout.splitlines() if line.split()[1:2] == ["killed"]]
    check(len(rows) >= 2, f"fewer than 2 CI mutants killed:\n{out.stdout}")
    # killed by what the mutant says it breaks, not by any violation (a run
    # too short to settle would "kill" an unmutated service too)
    for line in rows:
        name, by = line.split()[0], set(line.split()[2].split(","))
        kills = ci_kills().get(name, [])
        check(by & set(kills), f"{name} killed by {sorted(by)}, not by its kills: line {kills}")


def ci_kills():
    """{mutant: the invariants its `kills:` line names} of the CI share."""
    out = {}
    folder = os.path.dirname(RUNNER)
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".mutant"):
            continue
        lines = open(os.path.join(folder, f), encoding="utf-8").read().splitlines()
        if any(x.startswith("ci:") for x in lines):
            kills = [x.split(":", 1)[1] for x in lines if x.startswith("kills:")]
            out[f[:-len(".mutant")]] = [k.strip() for k in ",".join(kills).split(",") if k.strip()]
    return out


run_tests()
