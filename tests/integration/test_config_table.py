#!/usr/bin/env python3
"""test_config_table - the README's configuration table and the IDEMPAY_*
variables the programs read say the same thing.

Every variable read in app/, common/, gateway-mock/, sim/, bench/ or tools/
(env_str, env_int, env_double, getenv with a literal name, or a row
{ "IDEMPAY_X", default, ... } of a settings table such as
common/service_windows.c's) or by lighttpd.conf (env.IDEMPAY_*, e.g. the
service's process count) must have a row in README.md's "## Configuration"
table, and every variable the table names must be read by one of them. No
variable has two rows (two rows drift apart: they did, with different
defaults). The scan sees every reader: a read whose name is not a literal it
can see (getenv(name) or env_int(name, ...) outside common/env.c and the
settings tables) fails, and so does getenv("IDEMPAY_...") (the environment
alone, without the configuration file): every program reads its settings
through common/env (the simulator once read its windows with getenv(name),
the mock IDEMPAY_MOCK_DEFAULTS with getenv). Where the code's
default is a number literal and the table gives a number for that variable,
the two agree (a default that ./stack overrides is written "32 (`./stack`:
48)"; the first number counts). Needs no running stack."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import ROOT, check, run_tests, test  # noqa: E402

PROGRAM_DIRS = ("app", "common", "gateway-mock", "sim", "bench", "tools")
READ = re.compile(r'\b(?:env_str|env_int|env_double|getenv)\s*\(\s*"(IDEMPAY_[A-Z0-9_]+)"'
                  r'(?:\s*,\s*(-?\d+)\s*\))?')
# A row of a settings table: { "IDEMPAY_X", default, ... } (common/service_windows.c).
TABLE_ROW = re.compile(r'\{\s*"(IDEMPAY_[A-Z0-9_]+)"\s*,\s*(-?\d+)\s*,')
# A read whose name the scan cannot see: not a string literal.
HIDDEN_READ = re.compile(r'\b(?:env_str|env_int|env_double|getenv|secure_getenv)\s*\(\s*(?!")[^)]')
# A setting read from the environment alone, past common/env and the
# configuration file.
BYPASS_READ = re.compile(r'\b(?:getenv|secure_getenv)\s*\(\s*"IDEMPAY_')
# Where such reads are the mechanism itself: common/env.[ch] declare and read the
# environment for every getter; a settings table's loop reads its rows,
# which TABLE_ROW sees.
HIDDEN_READ_ALLOWED = {"common/env.h", "common/env.c", "common/service_windows.c"}


def program_sources():
    """(path relative to ROOT, text) of every .c and .h file of the programs."""
    for d in PROGRAM_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, ROOT), fh.read()


def code_reads():
    """{variable: {default literal or None, ...}} over the programs' sources."""
    reads = {}
    for _, text in program_sources():
        for m in list(READ.finditer(text)) + list(TABLE_ROW.finditer(text)):
            reads.setdefault(m.group(1), set()).add(m.group(2))
    with open(os.path.join(ROOT, "lighttpd.conf"), encoding="utf-8") as fh:
        for name in re.findall(r"\benv\.(IDEMPAY_[A-Z0-9_]+)", fh.read()):
            reads.setdefault(name, set()).add(None)
    return reads


def stack_reads():
    """Variables ./stack itself reads with a default (${IDEMPAY_X:-...}): a
    table row for one of them documents ./stack, not a program."""
    with open(os.path.join(ROOT, "stack"), encoding="utf-8") as fh:
        return set(re.findall(r"\$\{(IDEMPAY_[A-Z0-9_]+):-", fh.read()))


def readme_table(text=None):
    """{variable: its default cell's text for that variable} from README.md
    (or text); fails when a variable has two rows."""
    if text is None:
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
            text = fh.read()
    m = re.search(r"^## Configuration\n(.*?)(?=^## )", text, re.S | re.M)
    check(m is not None, "README.md has no '## Configuration' section")
    rows, twice = {}, []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`IDEMPAY_"):
            continue
        names = re.findall(r"IDEMPAY_[A-Z0-9_]+", cells[0])
        defaults = [d.strip() for d in cells[1].split(" / ")]
        for i, name in enumerate(names):
            if name in rows:
                twice.append(f"{name} ({rows[name]!r} and {cells[1]!r})")
            rows[name] = defaults[i] if len(defaults) == len(names) else cells[1]
    check(not twice, f"README's table has two rows for: {'; '.join(twice)}")
    return rows


@test
def every_variable_read_is_in_the_table_and_back():
    reads, rows = code_reads(), readme_table()
    check(len(reads) > 20, f"found only {sorted(reads)} in the sources: the pattern is broken")
    undocumented = sorted(set(reads) - set(rows))
    unread = sorted(set(rows) - set(reads) - stack_reads())
    check(not undocumented, f"read by the programs but missing from README's table: {undocumented}")
    check(not unread, f"in README's table but read by no program nor ./stack: {unread}")


@test
def no_setting_has_two_rows():
    readme_table()   # fails on a second row
    doubled = ("## Configuration\n| variable | default | meaning |\n|---|---|---|\n"
               "| `IDEMPAY_DB_SOCKET` | unset | MariaDB unix socket |\n"
               "| `IDEMPAY_DB_SOCKET` / `IDEMPAY_DB_HOST` | `.stack/run/mysqld.sock` / 127.0.0.1 | x |\n"
               "## Next\n")
    try:
        readme_table(doubled)
    except AssertionError as e:
        check("IDEMPAY_DB_SOCKET" in str(e) and "IDEMPAY_DB_HOST" not in str(e), f"message: {e}")
    else:
        check(False, "a table with IDEMPAY_DB_SOCKET twice was accepted")


@test
def every_reader_is_seen():
    hidden = []
    for path, text in program_sources():
        if path in HIDDEN_READ_ALLOWED:
            continue
        for m in list(HIDDEN_READ.finditer(text)) + list(BYPASS_READ.finditer(text)):
            line = text.count("\n", 0, m.start()) + 1
            hidden.append(f"{path}:{line}: {text[m.start():text.find(chr(10), m.start())].strip()}")
    check(not hidden, "settings read under a name the table check cannot see, or past the"
                      " configuration file (read them through common/env with a literal name,"
                      " or a settings table row):\n  "
                      + "\n  ".join(hidden))
    reads = code_reads()
    for name in ("IDEMPAY_LEASE_MS", "IDEMPAY_RETRY_AFTER", "IDEMPAY_STATEMENT_INTERVAL_MS"):
        check(reads.get(name) and reads[name] != {None}, f"{name}: the settings table row unseen")


@test
def number_defaults_agree():
    reads, rows = code_reads(), readme_table()
    wrong, compared = [], 0
    for name, defaults in sorted(reads.items()):
        literals = {d for d in defaults if d is not None}
        if len(literals) > 1:
            wrong.append(f"{name}: the programs disagree on its default {sorted(literals)}")
            continue
        m = re.match(r"-?\d+(?=\D|$)", rows.get(name, ""))
        if literals and m:
            compared += 1
            if m.group(0) not in literals:
                wrong.append(f"{name}: README says {rows[name]!r}, the code {literals.pop()}")
    check(compared >= 15, f"only {compared} defaults compared: the table parser is broken")
    check(not wrong, "; ".join(wrong))


@test
def the_table_parser_sees_pairs():
    rows = readme_table()
    check(rows.get("IDEMPAY_GATEWAY_TIMEOUT_MS") == "3000", f"got {rows.get('IDEMPAY_GATEWAY_TIMEOUT_MS')!r}")
    check(rows.get("IDEMPAY_SERVICE_PROCS") == "2", f"got {rows.get('IDEMPAY_SERVICE_PROCS')!r}")


run_tests()
