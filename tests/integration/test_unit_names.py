#!/usr/bin/env python3
"""test_unit_names - a CUnit test's name says the behaviour it proves, as
an integration test's does: a sentence ("an expired token is invalid"),
not a noun ("limits", "format", "known vector"). The check it can make:
every name in a tests/unit suite's table has at least three words, and no
two tests of a suite share a name (CUnit refuses the second). Needs no
running stack."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

# { "name", test_fn } rows of a cu_test table, or CU_add_test(s, "name", test_fn).
NAME = re.compile(r'(?:\{\s*|CU_add_test\(\s*\w+\s*,\s*)"((?:[^"\\]|\\.)+)"\s*,\s*(test_\w+)')


def suite_names():
    """{suite file: [test names]} over tests/unit/test_*.c."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "unit", "test_*.c"))):
        with open(path, encoding="utf-8") as f:
            out[os.path.basename(path)] = [m.group(1) for m in NAME.finditer(f.read())]
    return out


def short_names(names):
    return [n for n in names if len(n.split()) < 3]


@test
def every_cunit_test_name_is_a_sentence():
    suites = suite_names()
    check(sum(len(v) for v in suites.values()) > 300, "the table pattern found too few tests")
    short = [f"{f}: {n!r}" for f, names in suites.items() for n in short_names(names)]
    check(not short, "CUnit test names that are not sentences of behaviour:\n  " + "\n  ".join(short))


@test
def no_two_tests_of_a_suite_share_a_name():
    twice = [f"{f}: {n!r}" for f, names in suite_names().items()
             for n in sorted(set(names)) if names.count(n) > 1]
    check(not twice, f"names used twice: {twice}")


@test
def the_check_sees_a_noun():
    check(short_names(["limits", "known vector", "PAID is terminal"]) == ["limits", "known vector"],
          "the word count is broken")


run_tests()
