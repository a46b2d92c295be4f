#!/usr/bin/env python3
"""test_stack_commands - `./stack help` and README's "Commands" table are one
list (issue 25): the usage text is made from STACK_COMMANDS in `stack`, and
README's table has a row `./stack SYNOPSIS` for each of its synopses, in the
same order, and no other; every command the list names is one `stack`'s
main() dispatches, and every command main() dispatches is in the list. A
command added to one place only fails here, naming it. Needs no stack: runs
`./stack help` with a throwaway state dir."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

SYNOPSIS = re.compile(r"^  (\S+(?: \S+)*)(?: {2,}\S.*)?$")


def usage_synopses():
    """The synopses `./stack help` prints, in order."""
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, IDEMPAY_STATE_DIR=state)
        out = subprocess.run([os.path.join(ROOT, "stack"), "help"], env=env, capture_output=True,
                             text=True, timeout=60)
    check(out.returncode == 0, f"./stack help exit {out.returncode}: {out.stderr}")
    lines = out.stdout.splitlines()
    check(lines and lines[0].startswith("usage: ./stack"), f"not a usage text: {out.stdout[:200]}")
    return [m.group(1) for m in map(SYNOPSIS.match, lines[1:]) if m]


def readme_synopses(text):
    """The synopses of README's "## Commands" table (`./stack X` rows), in order."""
    m = re.search(r"^## Commands\n(.*?)(?=^## )", text, re.S | re.M)
    check(m is not None, "README.md has no '## Commands' section")
    rows = re.findall(r"^\| `\./stack ((?:[^`])+)` \|", m.group(1), re.M)
    return [r.replace("\\|", "|") for r in rows]


def dispatched():
    """The command words main() in `stack` dispatches (help and -h apart)."""
    with open(os.path.join(ROOT, "stack"), encoding="utf-8") as fh:
        text = fh.read()
    body = text[text.index("\nmain() {"):]
    words = set()
    for labels in re.findall(r"^    ([a-z|-]+)\)", body, re.M):
        words.update(labels.split("|"))
    return words - {"help", "-h"}


def commands_of(synopses):
    """The command words the synopses name ("start|stop|restart NAME": three)."""
    return {w for s in synopses for w in s.split(" ", 1)[0].split("|")}


def differences(usage, readme):
    """What keeps the two lists from being one, as sentences; [] when none."""
    diffs = []
    only_usage = [s for s in usage if s not in readme]
    only_readme = [s for s in readme if s not in usage]
    if only_usage:
        diffs.append(f"in ./stack's usage (STACK_COMMANDS) but not README's Commands table: {only_usage}")
    if only_readme:
        diffs.append(f"in README's Commands table but not ./stack's usage: {only_readme}")
    if not diffs and usage != readme:
        diffs.append(f"the same commands in another order: usage {usage}, README {readme}")
    return diffs


@test
def usage_and_readme_table_are_one_list():
    usage = usage_synopses()
    check(len(usage) > 10 and "up" in usage and "down" in usage,
          f"the usage parser found only {usage}: the pattern is broken")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = readme_synopses(fh.read())
    diffs = differences(usage, readme)
    check(not diffs, "; ".join(diffs))


@test
def every_listed_command_is_dispatched_and_back():
    listed, handled = commands_of(usage_synopses()), dispatched()
    check(len(handled) > 10, f"found only {sorted(handled)} in main(): the pattern is broken")
    check(not listed - handled, f"in the usage but not dispatched by main(): {sorted(listed - handled)}")
    check(not handled - listed, f"dispatched by main() but not in the usage: {sorted(handled - listed)}")


@test
def the_check_sees_a_missing_row():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    readme = readme_synopses(text)
    without = readme_synopses(re.sub(r"^\| `\./stack flood \[N\]` \|.*\n", "", text, flags=re.M))
    diffs = differences(readme, without)
    check(len(without) == len(readme) - 1 and diffs and "flood [N]" in diffs[0],
          f"a README without the flood row should differ, naming it: {diffs}")
    check(differences(readme, list(reversed(readme))), "another order should differ")


if __name__ == "__main__":
    run_tests()
