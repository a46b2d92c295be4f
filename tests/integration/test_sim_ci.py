"""test_sim_ci - the simulator as a CI pipeline uses it (issue 15, parts 3
and 4): `--json -` and `--junit -` leave stdout holding only that document;
progress lines reach a log that is not a terminal; every exit ends with a
`result:` line, also a run that cannot start; JUnit testcases carry real
times; --threshold gates exit 3 when they fail (1 still wins) and a bad one
exits 2; a scenario file reproducing a built-in scenario gives the same
schedule digest and the same invariants, the shipped files load, a file's
knobs reach the mock, and a bad file exits 2 naming the line or the field.

Runnable alone: python3 tests/integration/test_sim_ci.py (stack up first)."""
import glob
import os
import re
import socket
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from lib import *  # noqa: F401,F403


def sim_binary():
    path = os.path.join(bin_dir(), "sim", "idempay-sim")
    check(os.access(path, os.X_OK), f"idempay-sim not built: {path}")
    return path


def sim(*args, timeout=300):
    return subprocess.run([sim_binary(), *args], capture_output=True, text=True, timeout=timeout)


def digest_of(out):
    m = re.search(r"^schedule digest: ([0-9a-f]{64})$", out.stdout, re.M)
    check(m is not None, f"no schedule digest printed:\n{out.stdout}\n{out.stderr}")
    return m.group(1)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TMP = tempfile.mkdtemp(prefix="test_sim_ci.")
SCEN = os.path.join(ROOT, "sim", "scenarios")
SHORT = ["--scenario", "double-click", "--orders", "40", "--duration", "2", "--concurrency", "8",
         "--seed", "424242", "--settle", "20"]
RESULT = re.compile(r"^result: (PASS|FAIL|ERROR|THRESHOLD)\b.*\(exit (\d)", re.M)


def result_of(text):
    m = RESULT.search(text)
    check(m is not None, f"no result: line in:\n{text[-2000:]}")
    return m.group(1), int(m.group(2))


@test
def json_dash_leaves_stdout_pure_json():
    # The CI line, literally: the JSON survives json.tool.
    cmd = (f"'{sim_binary()}' {' '.join(SHORT)} --json - --quiet "
           f"--threshold 'pay.count>0' 2>/dev/null | python3 -m json.tool > {TMP}/tool.json")
    out = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True,
                         timeout=300)
    check(out.returncode == 0, f"pipeline exit {out.returncode}: {out.stderr[-2000:]}")
    report = json.load(open(f"{TMP}/tool.json"))
    check(report["result"] == "pass" and report["exit_code"] == 0, f"result {report['result']}")
    check(report["thresholds"][0]["expression"] == "pay.count>0"
          and report["thresholds"][0]["pass"] is True, f"thresholds: {report['thresholds']}")
    # And the human side went to stderr, ending with the verdict.
    out = sim(*SHORT, "--json", "-", "--quiet")
    check(out.returncode == 0, f"exit {out.returncode}: {out.stderr[-2000:]}")
    json.loads(out.stdout)  # nothing but the document
    check("seed: 424242" in out.stderr and "schedule digest:" in out.stderr,
          "seed/digest not on stderr")
    check(result_of(out.stderr) == ("PASS", 0), "stderr verdict")


@test
def junit_dash_with_real_times_and_a_failing_threshold_exits_3():
    out = sim(*SHORT, "--junit", "-", "--quiet", "--threshold", "pay.count<1",
              "--threshold", "pay.p99 < 60s", "--threshold", "all.error_rate<=100%")
    check(out.returncode == 3, f"exit {out.returncode}, expected 3: {out.stderr[-2000:]}")
    root = ET.fromstring(out.stdout)  # stdout is only the XML document
    cases = list(root.iter("testcase"))
    check(len(cases) > 15, f"{len(cases)} testcases")
    for tc in cases:
        check(float(tc.get("time")) > 0, f"testcase {tc.get('classname')}/{tc.get('name')} "
                                          f"has time {tc.get('time')}")
    th = {tc.get("name"): tc for tc in cases if tc.get("classname") == "idempay-sim.thresholds"}
    check(set(th) == {"pay.count<1", "pay.p99 < 60s", "all.error_rate<=100%"}, f"{list(th)}")
    check(th["pay.count<1"].find("failure") is not None, "the failing threshold has no <failure>")
    check(th["pay.p99 < 60s"].find("failure") is None, "a passing threshold failed")
    inv = [tc for tc in cases if tc.get("classname") == "idempay-sim.double-click"]
    check(inv and all(tc.find("failure") is None for tc in inv), "an invariant failed")
    check(result_of(out.stderr) == ("THRESHOLD", 3), "stderr verdict")
    check(re.search(r"FAIL\s+pay\.count<1\s+count = \d+", out.stderr), "human report lacks it")


@test
def progress_lines_reach_a_log_file():
    log = os.path.join(TMP, "progress.log")
    jpath = os.path.join(TMP, "progress.json")
    with open(log, "w") as err:
        rc = subprocess.run([sim_binary(), *SHORT, "--duration", "6", "--json", jpath],
                            stdout=subprocess.PIPE, stderr=err, text=True, timeout=300)
    text = open(log).read()
    check(rc.returncode == 0, f"exit {rc.returncode}: {text[-2000:]}")
    lines = [ln for ln in text.splitlines() if ln.startswith("progress: ")]
    check(len(lines) >= 3, f"only {len(lines)} progress lines in a 6 s run:\n{text}")
    check(any("double-click/slow-nodedupe" in ln for ln in lines), "no line for the 2nd phase")
    check(lines[-1].startswith("progress: traffic done"), f"last line: {lines[-1]}")
    check("\r" not in text and "\033[" not in text, "terminal control codes in a log")
    check(result_of(rc.stdout) == ("PASS", 0), "stdout verdict")


@test
def every_exit_has_a_result_line():
    out = sim("--orders", "0", timeout=30)                     # bad arguments
    check(out.returncode == 2 and result_of(out.stdout) == ("ERROR", 2), f"{out.stdout}")
    out = sim("--orders", "0", "--json", "-", timeout=30)      # ... with stdout taken
    check(out.returncode == 2 and out.stdout == "", f"stdout not empty: {out.stdout!r}")
    check(result_of(out.stderr) == ("ERROR", 2), "no result on stderr")
    for bad in (["--threshold", "pay.p99<800xs"], ["--threshold", "bogus.p99<1"],
                ["--json", "-", "--junit", "-"], ["--scenario", "crash"]):
        out = sim(*bad, timeout=30)
        check(out.returncode == 2, f"{bad}: exit {out.returncode}")
        check(re.search(r"^result: ERROR", out.stdout + out.stderr, re.M), f"{bad}: no result")
    check("unit 'xs'" in sim("--threshold", "pay.p99<800xs").stderr, "no reason for a bad unit")
    out = sim("--target", f"http://127.0.0.1:{closed_port()}", "--orders", "20", "--quiet",
              "--junit", "-", timeout=60)                         # target down
    check(out.returncode == 2, f"exit {out.returncode}")
    check(result_of(out.stderr) == ("ERROR", 2), "target down: no result line")
    err_case = ET.fromstring(out.stdout).find(".//testcase[@name='carried_out']")
    check(err_case is not None and float(err_case.get("time")) > 0, "carried_out time is 0")


@test
def scenario_file_reproduces_the_builtin_scenario():
    builtin = ["--scenario", "double-click", "--orders", "200", "--duration", "5"]
    infile = ["--scenario-file", os.path.join(SCEN, "double-click.json")]
    explicit = ["--scenario-file", os.path.join(SCEN, "double-click-explicit.json")]
    flags = ["--seed", "5150", "--concurrency", "16", "--quiet"]
    a, b = sim(*builtin, *flags, "--schedule-only"), sim(*infile, *flags, "--schedule-only")
    check(digest_of(a) == digest_of(b), "the file's digest differs from the built-in's")
    # The defaults written out: the same schedule but its parameters line.
    pa = sim(*builtin, *flags, "--schedule-only", "--print-schedule").stdout
    pe = sim(*explicit, *flags, "--schedule-only", "--print-schedule").stdout
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith(("params ", "schedule digest"))]
    check(strip(pa) == strip(pe), "the explicit file's schedule differs beyond its parameters")
    check("params scenario-file=" in pe and digest_of(a) != digest_of(sim(*explicit, *flags, "--schedule-only")),
          "the explicit file's hash is not in its digest")
    # Both run, against the same service, to the same verdict and invariants.
    reports = []
    short = ["--orders", "80", "--duration", "2"]   # the runs: shorter, the same on both sides
    for args in (builtin, infile):
        path = os.path.join(TMP, f"repro{len(reports)}.json")
        out = sim(*args, *flags, *short, "--json", path)
        check(out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout[-3000:]}")
        reports.append(json.load(open(path)))
    r0, r1 = reports
    check(r0["schedule_digest"] == r1["schedule_digest"], "run digests differ")
    check(r0["invariants"] == r1["invariants"], "different invariants")
    check([s["name"] for s in r0["scenarios"]] == [s["name"] for s in r1["scenarios"]] == ["double-click"],
          "different scenarios")
    check(r0["orders"] == r1["orders"] == 80, f"orders {r0['orders']} / {r1['orders']}")
    # Every built-in scenario at once: all.json is --scenario all (no chaos command).
    for extra in ([], ["--orders", "500", "--duration", "10"]):
        allf = sim("--scenario-file", os.path.join(SCEN, "all.json"), "--seed", "11", *extra,
                   "--schedule-only")
        check(digest_of(allf) == digest_of(sim("--seed", "11", *extra, "--schedule-only")),
              f"all.json {extra} differs from --scenario all")


@test
def shipped_files_load_and_a_file_knob_reaches_the_mock():
    files = sorted(glob.glob(os.path.join(SCEN, "*.json")))
    check(len(files) >= 3, f"scenario files: {files}")
    for f in files:
        out = sim("--scenario-file", f, "--seed", "1", "--schedule-only", timeout=30)
        check(out.returncode == 0, f"{f}: exit {out.returncode}: {out.stderr}")
        again = sim("--scenario-file", f, "--seed", "1", "--schedule-only", timeout=30)
        check(digest_of(out) == digest_of(again), f"{f}: same file and seed, other digest")
    # The example, kept short by the command line (its flags win),
    # runs against the service and holds; its knobs were the phases' config.
    path = os.path.join(TMP, "qa.json")
    out = sim("--scenario-file", os.path.join(SCEN, "timeouts-nodedupe.json"), "--orders", "40",
              "--duration", "3", "--seed", "77", "--settle", "30", "--json", path, "--quiet")
    check(out.returncode == 0, f"exit {out.returncode}:\n{out.stdout[-3000:]}")
    report = json.load(open(path))
    check(report["orders"] == 40, f"orders {report['orders']}: --orders did not win")
    for ph in report["phases"]:
        cfg = json.loads(ph["mock_config"])
        check(cfg["dedupe"] is False and abs(cfg["timeout_after_charge_rate"] - 0.3) < 1e-9,
              f"phase {ph['label']}: {cfg}")


@test
def bad_scenario_files_exit_2_naming_where():
    cases = [('{"phases": [{"scenario": "double-click"},]}', r":1:\d+:"),
             ('{\n "phases": [\n  {"scenario": "double-click",\n   "mock": {"dedup": false}}]}',
              r"phases\[0\]\.mock: unknown mock knob 'dedup'"),
             ('{"phases": [{"scenario": "retry-storm", "client": {"attempts": 0}}]}',
              r"phases\[0\]\.client: 'attempts' needs"),
             ('{"phases": [{"scenario": "crash"}]}', r"phases\[0\]: crash needs --chaos-cmd")]
    for i, (text, want) in enumerate(cases):
        path = os.path.join(TMP, f"bad{i}.json")
        open(path, "w").write(text)
        out = sim("--scenario-file", path, "--seed", "1", timeout=30)
        check(out.returncode == 2, f"case {i}: exit {out.returncode}")
        check(re.search(want, out.stderr) and path in out.stderr, f"case {i}: {out.stderr}")
        check(result_of(out.stdout) == ("ERROR", 2), f"case {i}: no result line")
    out = sim("--scenario-file", os.path.join(SCEN, "double-click.json"), "--scenario", "ping")
    check(out.returncode == 2 and "replaces --scenario" in out.stderr, out.stderr)


run_tests()
