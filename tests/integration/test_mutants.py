"""test_mutants - the CI-sized share of the mutant catalogue: every mutant of
tests/mutants/ still applies exactly (a mutant the service moved away from
is an error, not a skip), and the fastest ones (those with a `ci:` line: a
short simulator run with a fixed seed) are each built into a scratch stack
of their own and killed by the simulator. The whole catalogue, each against
the default simulation, is `./stack mutants` (tens of minutes).

Runnable alone: python3 tests/integration/test_mutants.py (stack up first)."""
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


run_tests()
