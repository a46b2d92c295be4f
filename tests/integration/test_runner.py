#!/usr/bin/env python3
"""test_runner - the test runners say when a name runs nothing, and CI sees
every test: lib.py's run_tests exits 2 on a test name the file does not
have (and on a file with no @test); tests/run-integration exits 2 on a
selector (argument or IDEMPAY_TEST_ONLY) that names no file; each @test is
recorded (IDEMPAY_TEST_RESULTS) and becomes its own JUnit testcase
(tests/junit_integration.py), a file that failed outside its tests a
failing testcase of its own. Needs no running stack."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = f"""import sys
sys.path.insert(0, {HERE!r})
from lib import check, run_tests, test
@test
def one_passes():
    pass
@test
def one_fails():
    check(False, "planted failure")
run_tests()
"""


def run_sample(tmp, text, *args, results=None):
    path = os.path.join(tmp, "test_sample.py")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ)
    env.pop("IDEMPAY_TEST_RESULTS", None)
    if results:
        env["IDEMPAY_TEST_RESULTS"] = results
    return subprocess.run([sys.executable, path, *args], capture_output=True, text=True,
                          env=env, timeout=60)


@test
def an_unknown_test_name_exits_2_and_runs_nothing():
    with tempfile.TemporaryDirectory() as tmp:
        out = run_sample(tmp, SAMPLE, "one_passes", "no_such_test")
        check(out.returncode == 2, f"rc {out.returncode}: {out.stdout}{out.stderr}")
        check("no such test" in out.stderr and "no_such_test" in out.stderr, out.stderr)
        check("PASS" not in out.stdout, f"something ran: {out.stdout}")


@test
def a_file_without_tests_exits_2():
    with tempfile.TemporaryDirectory() as tmp:
        out = run_sample(tmp, SAMPLE.split("@test")[0] + "run_tests()\n")
        check(out.returncode == 2, f"rc {out.returncode}: {out.stdout}{out.stderr}")


@test
def each_test_is_recorded_with_its_verdict():
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "r.jsonl")
        out = run_sample(tmp, SAMPLE, results=results)
        check(out.returncode == 1, f"rc {out.returncode}")
        rows = [json.loads(line) for line in open(results)]
        check([(r["name"], r["status"]) for r in rows] == [("one_passes", "pass"),
                                                           ("one_fails", "fail")], f"{rows}")
        check("planted failure" in rows[1]["detail"], rows[1]["detail"])


@test
def a_selector_naming_no_file_exits_2():
    runner = os.path.join(ROOT, "tests", "run-integration")
    env = dict(os.environ, IDEMPAY_STATE_DIR=tempfile.gettempdir())
    for args, extra in ((["test_no_such_file"], {}), ([], {"IDEMPAY_TEST_ONLY": "no_such_file"}),
                        (["runner:an_unknown_test_name_exits_2_and_runs_nothing", "nosuch"], {})):
        out = subprocess.run([runner, *args], capture_output=True, text=True, timeout=60,
                             env=dict(env, **extra))
        check(out.returncode == 2, f"{args} {extra}: rc {out.returncode} {out.stdout}{out.stderr}")
        check("names no tests/integration" in out.stderr, f"{args}: {out.stderr}")
        check("PASS" not in out.stdout, f"{args}: something ran: {out.stdout}")


@test
def junit_has_one_testcase_per_test_and_keeps_a_file_failure():
    with tempfile.TemporaryDirectory() as tmp:
        parts = os.path.join(tmp, "parts")
        os.mkdir(parts)
        run_sample(tmp, SAMPLE, results=os.path.join(parts, "test_sample.jsonl"))
        log = os.path.join(tmp, "crash.log")
        with open(log, "w") as f:
            f.write("ImportError: planted\x01\n")
        tsv = os.path.join(tmp, "files.tsv")
        with open(tsv, "w") as f:
            f.write(f"test_sample\tfail\t1\t{log}\ntest_crash\tfail\t0\t{log}\n")
        out = os.path.join(tmp, "integration.xml")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "junit_integration.py"), tsv,
                        parts, out], check=True, timeout=60)
        root = ET.parse(out).getroot()
        cases = {(c.get("classname"), c.get("name")): c.find("failure") is not None
                 for c in root.iter("testcase")}
        check(cases == {("integration.test_sample", "one_passes"): False,
                        ("integration.test_sample", "one_fails"): True,
                        ("integration.test_crash", "(test_crash)"): True}, f"{cases}")
        check(root.get("tests") == "3" and root.get("failures") == "2", f"{root.attrib}")


run_tests()
