#!/usr/bin/env python3
"""junit_integration - the JUnit file of tests/run-integration: one testcase
per @test of every file that ran.

usage: junit_integration.py FILES.tsv PARTS_DIR OUT.xml

FILES.tsv has a line per file: name, pass|fail, seconds, log path.
PARTS_DIR/<name>.jsonl has a line per test the file ran (lib.py's
run_tests with IDEMPAY_TEST_RESULTS): {"name", "status", "seconds",
"detail"}. A file becomes a <testsuite> of its tests; when it failed but no
test of it did (it did not start, named an unknown test, crashed, or ran
none), a testcase named after the file carries the failure and the end of
its log, so a failure is never lost."""
import json
import os
import sys
import xml.etree.ElementTree as ET


def clean(text):
    """text without the control characters XML 1.0 refuses."""
    return "".join(c if c in "\t\n\r" or ord(c) >= 32 else "?" for c in text)


def log_tail(path, n=8000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError as e:
        return str(e)


def file_suite(name, status, secs, log, parts_dir):
    """The <testsuite> of one integration file."""
    cases = []
    try:
        with open(os.path.join(parts_dir, name + ".jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        cases = []
    suite = ET.Element("testsuite", name=f"integration.{name}", time=secs)
    nfail = 0
    for c in cases:
        case = ET.SubElement(suite, "testcase", classname=f"integration.{name}", name=c["name"],
                             time=str(c.get("seconds", 0)))
        if c.get("status") != "pass":
            nfail += 1
            ET.SubElement(case, "failure", message=f"{name}.{c['name']} failed (log: {log})").text = \
                clean(c.get("detail", "") + "\n--- end of the file's log ---\n" + log_tail(log, 4000))
    if status == "fail" and nfail == 0:
        why = "no test of it ran" if not cases else "it exited non-zero after its tests"
        case = ET.SubElement(suite, "testcase", classname=f"integration.{name}", name=f"({name})",
                             time=secs)
        ET.SubElement(case, "failure", message=f"{name} failed: {why} (log: {log})").text = \
            clean(log_tail(log))
        nfail = 1
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(nfail))
    return suite


def main():
    tsv, parts_dir, out = sys.argv[1:4]
    with open(tsv) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    root = ET.Element("testsuites", name="idempay-integration")
    for name, status, secs, log in rows:
        root.append(file_suite(name, status, secs, log, parts_dir))
    root.set("tests", str(sum(int(s.get("tests")) for s in root)))
    root.set("failures", str(sum(int(s.get("failures")) for s in root)))
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    main()
