#!/usr/bin/env python3
"""test_stack_commands - `./stack help` and README's "Commands" table are one
list (issue 25): the usage text is made from STACK_COMMANDS in `stack`, and
README's table has a row `./stack SYNOPSIS` for each of its synopses, in the
same order, and no other; every command the list names is one `stack`'s
main() dispatches, and every command main() dispatches is in the list. The
same for `./stack cluster help` (CLUSTER_COMMANDS in cluster/cluster),
docs/CLUSTER.md's table (`./stack cluster SYNOPSIS`) and cluster_main(). A
command added to one place only fails here, naming it. Needs no stack: runs
the usage with a throwaway state dir."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

SYNOPSIS = re.compile(r"^  (\S+(?: \S+)*)(?: {2,}\S.*)?$")


# (the usage's words, the doc with the table, the table's prefix, the file
# and function that dispatch, dispatched words the usage leaves out)
STACK = (["help"], "README.md", "./stack ", "stack", "main", set())
CLUSTER = (["cluster", "help"], "docs/CLUSTER.md", "./stack cluster ", "cluster/cluster", "cluster_main",
           {"nemesis-locked"})


def usage_synopses(which):
    """The synopses the usage text prints, in order."""
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, IDEMPAY_STATE_DIR=state)
        out = subprocess.run([os.path.join(ROOT, "stack"), *which[0]], env=env, capture_output=True,
                             text=True, timeout=60)
    check(out.returncode == 0, f"./stack {' '.join(which[0])} exit {out.returncode}: {out.stderr}")
    lines = out.stdout.splitlines()
    check(lines and lines[0].startswith("usage: ./stack"), f"not a usage text: {out.stdout[:200]}")
    return [m.group(1) for m in map(SYNOPSIS.match, lines[1:]) if m]


def doc_text(which):
    with open(os.path.join(ROOT, which[1]), encoding="utf-8") as fh:
        return fh.read()


def table_synopses(which, text):
    """The synopses of the doc's "## Commands" table (its `PREFIX X` rows), in order."""
    m = re.search(r"^## Commands\n(.*?)(?=^## )", text, re.S | re.M)
    check(m is not None, f"{which[1]} has no '## Commands' section")
    rows = re.findall(r"^\| `" + re.escape(which[2]) + r"([^`]+)` \|", m.group(1), re.M)
    return [r.replace("\\|", "|") for r in rows]


def dispatched(which):
    """The command words the dispatching function's case handles (help, -h
    and the internal ones apart)."""
    with open(os.path.join(ROOT, which[3]), encoding="utf-8") as fh:
        text = fh.read()
    body = text[text.index(f"\n{which[4]}() {{"):]
    words = set()
    for labels in re.findall(r"^    ([a-z|-]+)\)", body, re.M):
        words.update(labels.split("|"))
    return words - {"help", "-h"} - which[5]


def commands_of(synopses):
    """The command words the synopses name ("start|stop|restart NAME": three)."""
    return {w for s in synopses for w in s.split(" ", 1)[0].split("|")}


def differences(which, usage, table):
    """What keeps the two lists from being one, as sentences; [] when none."""
    diffs = []
    only_usage = [s for s in usage if s not in table]
    only_table = [s for s in table if s not in usage]
    if only_usage:
        diffs.append(f"in {which[3]}'s usage but not {which[1]}'s Commands table: {only_usage}")
    if only_table:
        diffs.append(f"in {which[1]}'s Commands table but not {which[3]}'s usage: {only_table}")
    if not diffs and usage != table:
        diffs.append(f"the same commands in another order: usage {usage}, {which[1]} {table}")
    return diffs


def one_list(which):
    usage = usage_synopses(which)
    check(len(usage) > 10 and "up" in usage and "down" in usage,
          f"the usage parser found only {usage}: the pattern is broken")
    diffs = differences(which, usage, table_synopses(which, doc_text(which)))
    check(not diffs, "; ".join(diffs))


def dispatched_and_back(which):
    listed, handled = commands_of(usage_synopses(which)), dispatched(which)
    fn = f"{which[4]}()"
    check(len(handled) > 10, f"found only {sorted(handled)} in {fn}: the pattern is broken")
    check(not listed - handled, f"in the usage but not dispatched by {fn}: {sorted(listed - handled)}")
    check(not handled - listed, f"dispatched by {fn} but not in the usage: {sorted(handled - listed)}")


@test
def stack_usage_and_readme_table_are_one_list():
    one_list(STACK)


@test
def every_stack_command_listed_is_dispatched_and_back():
    dispatched_and_back(STACK)


@test
def cluster_usage_and_cluster_md_table_are_one_list():
    one_list(CLUSTER)


@test
def every_cluster_command_listed_is_dispatched_and_back():
    dispatched_and_back(CLUSTER)


@test
def the_check_sees_a_missing_row():
    text = doc_text(STACK)
    readme = table_synopses(STACK, text)
    without = table_synopses(STACK, re.sub(r"^\| `\./stack flood \[N\]` \|.*\n", "", text, flags=re.M))
    diffs = differences(STACK, readme, without)
    check(len(without) == len(readme) - 1 and diffs and "flood [N]" in diffs[0],
          f"a README without the flood row should differ, naming it: {diffs}")
    check(differences(STACK, readme, list(reversed(readme))), "another order should differ")


if __name__ == "__main__":
    run_tests()
