#!/usr/bin/env python3
"""test_fuzz - the short fuzzing run of ./stack test: `make fuzz
FUZZ_SECONDS=3` in the build the stack runs (lib.bin_dir()). Each libFuzzer
harness (notification, pay request, amount, gateway reply, statement, refund
info and notification, the FastCGI edge, APIv3 replies and notifications)
first replays its
saved crashes (fuzz/regressions/<harness>/), then fuzzes for 3 s from its
seed corpus (the long sessions: docs/FUZZING.md); the run must succeed, every harness must report executed units,
and every saved regression must have been replayed. See docs/FUZZING.md."""
# run-integration: beside the others (libFuzzer harnesses built with clang in the build dir's fuzz/; no stack)
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, bin_dir, check, run_tests, test  # noqa: E402

HARNESSES = ["fuzz_notify", "fuzz_pay_request", "fuzz_amount", "fuzz_gateway_reply",
             "fuzz_statement", "fuzz_refund_info", "fuzz_refund_notify", "fuzz_fcgi", "fuzz_v3"]
SECONDS_EACH = 3
STAT = re.compile(r"^(fuzz_\w+)\s+stat::number_of_executed_units:\s*(\d+)"
                  r".*?(\d+) regressions replayed")

_run = {}


def fuzz_run():
    """Runs `make fuzz` once per test process; returns (returncode, output)."""
    if not _run:
        build = bin_dir()
        check(os.path.isfile(os.path.join(build, "Makefile")),
              f"no configured build in {build} (./stack up builds it)")
        t0 = time.monotonic()
        # at the lowest CPU priority: it runs beside the other files
        out = subprocess.run(["nice", "-n", "19", "make", "-C", build, "-j2", "fuzz",
                              f"FUZZ_SECONDS={SECONDS_EACH}"],
                             capture_output=True, text=True, timeout=300)
        _run["rc"] = out.returncode
        _run["out"] = out.stdout + out.stderr
        print(f"make fuzz FUZZ_SECONDS={SECONDS_EACH}: exit {out.returncode} "
              f"after {time.monotonic() - t0:.0f}s")
        for line in _run["out"].splitlines():
            if line.startswith("fuzz") or "FAILED" in line or "property violated" in line:
                print("  " + line)
    return _run["rc"], _run["out"]


def stats(output):
    """{harness: (executed units, regressions replayed)} from run-fuzzers' lines."""
    found = {}
    for line in output.splitlines():
        m = STAT.match(line)
        if m:
            found[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return found


@test
def every_harness_fuzzes_without_a_crash():
    rc, out = fuzz_run()
    check(rc == 0, f"make fuzz failed (exit {rc}); a crashing input is under "
                   f"{bin_dir()}/fuzz/out/artifacts/:\n{out[-4000:]}")
    found = stats(out)
    for h in HARNESSES:
        check(h in found, f"{h} reported no stat::number_of_executed_units:\n{out[-2000:]}")
        check(found[h][0] > 0, f"{h} executed no input: {found[h]}")


@test
def every_saved_regression_is_replayed():
    rc, out = fuzz_run()
    found = stats(out)
    for h in HARNESSES:
        d = os.path.join(ROOT, "fuzz", "regressions", h)
        saved = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))] \
            if os.path.isdir(d) else []
        check(h in found, f"{h} did not run:\n{out[-2000:]}")
        check(found[h][1] == len(saved),
              f"{h}: {found[h][1]} regressions replayed, {len(saved)} saved in {d}")


run_tests()
