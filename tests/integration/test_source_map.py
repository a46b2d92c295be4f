#!/usr/bin/env python3
"""test_source_map - README's source map names every source file of app/,
common/, gateway-mock/ and sim/ (issue 25): a `name` or `name.c` (or a
`dir/name.c`) in the "Source map" section for each dir/name.c. A file added
without its line in the map fails here, naming it. Needs no stack."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

DIRS = ["app", "common", "gateway-mock", "sim"]


def named_in_map():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    start = text.index("## Source map")
    end = text.index("\n## ", start + 1)
    names = set()
    for quoted in re.findall(r"`([^`]+)`", text[start:end]):
        for part in re.split(r"[\s,]+", quoted):
            names.add(os.path.basename(part).removesuffix(".c"))
    return names


@test
def every_source_file_is_in_the_readme_map():
    names = named_in_map()
    missing = [f"{d}/{f}" for d in DIRS for f in sorted(os.listdir(os.path.join(ROOT, d)))
               if f.endswith(".c") and f[:-2] not in names]
    check(not missing, f"README's source map does not name: {', '.join(missing)}")


@test
def the_check_sees_a_missing_file():
    names = named_in_map()
    check("order_store" in names and "no_such_module_here" not in names,
          "the map reader finds names it should and none it should not")


if __name__ == "__main__":
    run_tests()
