#!/usr/bin/env python3
"""mutants.py - measures the simulator's power: plants each mutant of
tests/mutants/*.mutant (a small, realistic bug in the service) into a
scratch copy of the tree, builds it, runs it as a stack of its own (own
state dir and ports), runs the simulator against it with a fixed seed and
says whether an invariant caught the bug ("killed") or not ("survived").

A mutant file is one mutant:

    description: one line: the bug it plants
    kills: invariant[,invariant]      (optional: the invariants expected to catch it)
    ci: SIM-ARGS                      (optional: a short run that kills it, for CI)
    args: SIM-ARGS                    (optional: the mutant's own run, always, instead of
                                       the default scenarios; e.g. --gateway v3 ...)
    service: NAME=VALUE[ NAME=VALUE]  (optional: the mutated stack's service started with
                                       these settings, e.g. IDEMPAY_WX_API=v3)
    file: app/pay.c
    <<<< find
    exact text, matched exactly once in the file
    ==== replace
    its replacement
    >>>> end

`file:` applies to the hunks after it; a mutant may have several hunks (in
one or several files). A hunk whose text is not found exactly once is an
ERROR (the service moved on and the mutant must be updated), never a skip.

Exit 0 only when the unmutated service passes and every mutant is killed;
1 when one survived; 2 on an error (a mutant that no longer applies or does
not build, a stack that does not start, a simulator run that could not be
carried out).

Called by `./stack mutants [--only a,b] [--seed N] [--ci] [--check] [--base REV]`."""
import argparse
import glob
import json
import os
import shlex
import signal
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SEED = 1
# The default run: ./stack sim's scenarios (the real flows' customer, their edges and the
# merchant's refunds, which the mutants of issue 22 need, besides `all`), unless the
# extra arguments name their own.
DEFAULT_SCENARIOS = "all,payer,payer-edge,refunds"
PORT_VARS = ("IDEMPAY_HTTP_PORT", "IDEMPAY_MOCK_PORT", "IDEMPAY_DB_PORT", "IDEMPAY_REDIS_PORT")
PORT_DEFAULTS = (18080, 18081, 13306, 16379)
DERIVED_VARS = ("IDEMPAY_NGINX_PORT", "IDEMPAY_BIN_DIR", "IDEMPAY_CLUSTER_PORT_BASE",
                "IDEMPAY_GATEWAY_URL", "IDEMPAY_NOTIFY_URL", "IDEMPAY_METRICS_FILE",
                # the mock's HTTPS port and the merchant's certificates (./stack makes them per state dir)
                "IDEMPAY_MOCK_TLS_PORT", "IDEMPAY_GATEWAY_SECAPI_URL", "IDEMPAY_REFUND_NOTIFY_URL",
                "IDEMPAY_WX_CERT", "IDEMPAY_WX_CERT_KEY", "IDEMPAY_GATEWAY_CA",
                # the doors: the public port and the development caller's secret (per state dir)
                "IDEMPAY_PUBLIC_PORT", "IDEMPAY_NGINX_PUBLIC_PORT", "IDEMPAY_CALLER_SECRET_FILE",
                # APIv3's material (./stack makes it per state dir; V3_FILES gives the
                # simulator the mutant stack's own)
                "IDEMPAY_WX_V3_CERT", "IDEMPAY_WX_V3_NOTIFY_URL", "IDEMPAY_WX_APIV3_KEY_FILE",
                "IDEMPAY_MOCK_V3_PLATFORM_CERT", "IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY",
                "IDEMPAY_MOCK_V3_PLATFORM2_CERT", "IDEMPAY_MOCK_V3_PLATFORM2_CERT_KEY")
# The simulator's APIv3 material (v3-attacks signs like the platform): the
# files ./stack made under the mutant stack's tls/.
V3_FILES = {"IDEMPAY_MOCK_V3_PLATFORM_CERT": "wechatpay_platform1_cert.pem",
            "IDEMPAY_MOCK_V3_PLATFORM_CERT_KEY": "wechatpay_platform1_key.pem",
            "IDEMPAY_MOCK_V3_PLATFORM2_CERT": "wechatpay_platform2_cert.pem",
            "IDEMPAY_MOCK_V3_PLATFORM2_CERT_KEY": "wechatpay_platform2_key.pem",
            "IDEMPAY_WX_APIV3_KEY_FILE": "apiv3.key"}
DATA_TABLES = ("payment_order", "payment_idempotent", "payment_callback_record", "payment_refund")
# The statement job's per-day progress (sql/013); emptied last, so that a tree
# without them still gets everything above.
DAY_TABLES = ("payment_statement_day", "payment_statement_bad_line")


class MutantError(Exception):
    pass


def parse_mutant(path):
    """The mutant at path: {name, description, kills, ci, hunks: [(file, find, replace)]}."""
    name = os.path.basename(path)[: -len(".mutant")]
    m = {"name": name, "path": path, "description": "", "kills": [], "ci": None, "args": "",
         "service": {}, "hunks": []}
    lines = open(path, encoding="utf-8").read().split("\n")
    i, file = 0, None
    while i < len(lines):
        line = lines[i]
        if line.startswith("description:"):
            m["description"] = line.split(":", 1)[1].strip()
        elif line.startswith("kills:"):
            m["kills"] = [k.strip() for k in line.split(":", 1)[1].split(",") if k.strip()]
        elif line.startswith("ci:"):
            m["ci"] = line.split(":", 1)[1].strip()
        elif line.startswith("args:"):
            m["args"] = line.split(":", 1)[1].strip()
        elif line.startswith("service:"):
            for kv in line.split(":", 1)[1].split():
                if "=" not in kv:
                    raise MutantError(f"{name}: 'service:' wants NAME=VALUE, not {kv}")
                m["service"][kv.split("=", 1)[0]] = kv.split("=", 1)[1]
        elif line.startswith("file:"):
            file = line.split(":", 1)[1].strip()
        elif line == "<<<< find":
            if file is None:
                raise MutantError(f"{name}: a hunk before any 'file:' line")
            try:
                mid = lines.index("==== replace", i + 1)
                end = lines.index(">>>> end", mid + 1)
            except ValueError:
                raise MutantError(f"{name}: a hunk without '==== replace' / '>>>> end'")
            m["hunks"].append((file, "\n".join(lines[i + 1:mid]), "\n".join(lines[mid + 1:end])))
            i = end
        elif line.strip() and not line.startswith("#"):
            raise MutantError(f"{name}: line {i + 1} is not part of the format: {line[:60]}")
        i += 1
    if not m["description"] or not m["hunks"]:
        raise MutantError(f"{name}: needs a description and at least one hunk")
    return m


def load_mutants(only):
    mutants = [parse_mutant(p) for p in sorted(glob.glob(os.path.join(HERE, "*.mutant")))]
    if only:
        names = [n for n in only.split(",") if n]
        known = {m["name"] for m in mutants}
        missing = [n for n in names if n not in known]
        if missing:
            raise MutantError(f"no such mutant: {', '.join(missing)} (known: {', '.join(sorted(known))})")
        mutants = [m for m in mutants if m["name"] in names]
    return mutants


def apply_mutant(src, m):
    """Applies m's hunks to the tree at src. Returns the original text of
    each file touched, to restore it. Raises MutantError when a find text
    is not found exactly once."""
    originals = {}
    for file, find, replace in m["hunks"]:
        path = os.path.join(src, file)
        if not os.path.exists(path):
            raise MutantError(f"{m['name']}: {file} does not exist")
        text = open(path, encoding="utf-8").read()
        originals.setdefault(file, text)
        n = text.count(find)
        if n != 1:
            raise MutantError(f"{m['name']}: no longer applies: its find text occurs {n} times in "
                              f"{file} (expected exactly once): {find.strip().splitlines()[0][:70]!r}")
        open(path, "w", encoding="utf-8").write(text.replace(find, replace, 1))
    return originals


def restore(src, originals):
    for file, text in originals.items():
        open(os.path.join(src, file), "w", encoding="utf-8").write(text)


def tree_files(rev):
    """The files of the tree (the work tree, or git revision rev)."""
    if rev:
        return None
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if f and os.path.isfile(os.path.join(ROOT, f))]


def copy_tree(src, rev):
    """A fresh copy of the sources at src (keeps src's build products when
    the sources did not change, so builds stay incremental)."""
    os.makedirs(src, exist_ok=True)
    if rev:
        shutil.rmtree(src)
        os.makedirs(src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        return
    for f in tree_files(None):
        a, b = os.path.join(ROOT, f), os.path.join(src, f)
        if os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read():
            continue
        os.makedirs(os.path.dirname(b), exist_ok=True)
        shutil.copy(a, b)  # a new mtime: make rebuilds what depends on it
        shutil.copymode(a, b)


class Stack:
    """The scratch tree's own stack: its state dir and ports."""

    def __init__(self, src, state, offset):
        self.src, self.state = src, state
        self.env = dict(os.environ)
        self.env["IDEMPAY_STATE_DIR"] = state
        self.env.pop("IDEMPAY_FLAVOR", None)
        self.env["IDEMPAY_FLAVOR"] = "release"
        # what ./stack derives from the ports or the state dir must be derived
        # again for this stack (under ./stack test the parent exported its own:
        # its nginx port, its build dir)
        for var in DERIVED_VARS:
            self.env.pop(var, None)
        for var, dflt in zip(PORT_VARS, PORT_DEFAULTS):
            self.env[var] = str(int(os.environ.get(var, dflt)) + offset)
        self.env["IDEMPAY_DB_SOCKET"] = os.path.join(state, "run", "mysqld.sock")
        # APIv3's certificate paths named, not just dropped: a record of an
        # older runner's up (tools/stack_memory.sh) may hold the parent's
        self.env["IDEMPAY_WX_V3_CERT"] = os.path.join(state, "tls", "apiclient_cert.pem")
        for var, name in V3_FILES.items():
            if var != "IDEMPAY_WX_APIV3_KEY_FILE":
                self.env[var] = os.path.join(state, "tls", name)
        # the mutant stack's development caller (its ./stack up writes the secret)
        self.env["IDEMPAY_CALLER_SECRET_FILE"] = os.path.join(state, "caller.secret")
        self.log = os.path.join(state, "mutants.log")

    def run(self, *args, timeout=900, nice=False):
        """./stack args in the scratch tree; nice: at the lowest CPU priority
        (a build: what else runs on the machine goes first)."""
        os.makedirs(self.state, exist_ok=True)
        cmd = [os.path.join(self.src, "stack"), *args]
        with open(self.log, "a") as log:
            log.write(f"\n$ stack {' '.join(args)}\n")
            log.flush()
            r = subprocess.run(["nice", "-n", "19", *cmd] if nice else cmd, env=self.env,
                               stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        return r.returncode

    def stop_service(self):
        """Stops every process running the service: lighttpd's FastCGI
        children and, in a tree that has one, the nginx front's own
        idempay-fcgi (spawn-fcgi), whose reconciler, refund worker and
        statement job would otherwise go on with the previous build."""
        self.run("stop", "nginx")  # an older tree has no nginx front: its refusal is harmless
        self.run("stop", "lighttpd")

    def restart(self):
        """Stops the programs, builds, starts everything, and empties the
        service's tables and Redis (each run starts from a clean service)."""
        self.stop_service()
        if self.run("build", nice=True) != 0:
            return "build failed"
        if self.run("up") != 0:
            # a port in the ephemeral range may be taken for a moment: once more
            self.run("down")
            if self.run("up") != 0:
                return "the stack did not come up (log: " + self.log + ")"
        sock = self.env["IDEMPAY_DB_SOCKET"]
        # The rows of earlier runs go (the job tables keep their seeded rows:
        # payment_statement_job's one row is what the statement job claims).
        sql = "".join(f"TRUNCATE TABLE idempay.{t};" for t in DATA_TABLES) + \
            "INSERT IGNORE INTO idempay.payment_statement_job (name) VALUES ('statement');" \
            "UPDATE idempay.payment_statement_job SET lease_until = NULL, covered_until_ms = NULL;" + \
            "".join(f"TRUNCATE TABLE idempay.{t};" for t in DAY_TABLES)
        subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={sock}", "-e", sql],
                       capture_output=True)
        auth = []   # the stack's Redis admin user (tools/conf/redis-acl.conf.in: the default user is off)
        if self.env.get("IDEMPAY_REDIS_ADMIN_PASSWORD"):
            auth = ["--user", self.env.get("IDEMPAY_REDIS_ADMIN_USER", "idempay-admin"),
                    "--pass", self.env["IDEMPAY_REDIS_ADMIN_PASSWORD"], "--no-auth-warning"]
        subprocess.run(["redis-cli", "-p", self.env["IDEMPAY_REDIS_PORT"], *auth, "FLUSHALL"],
                       capture_output=True)
        return None

    def url(self, var):
        return f"http://127.0.0.1:{self.env[var]}"


def run_sim(stack, sim, seed, extra, out_dir, name):
    """Runs the simulator against stack. Returns (exit code, invariants
    violated, error, seconds, report path)."""
    os.makedirs(out_dir, exist_ok=True)
    jpath = os.path.join(out_dir, f"{name}.json")
    tpath = os.path.join(out_dir, f"{name}.txt")
    args = [sim, "--target", stack.url("IDEMPAY_HTTP_PORT"), "--gateway",
            stack.url("IDEMPAY_MOCK_PORT"), "--chaos-cmd", f"{os.path.join(stack.src, 'stack')} chaos",
            "--chaos-every", "5", "--seed", str(seed), "--quiet", "--json", jpath]
    more = shlex.split(extra) if extra else []
    if not any(m.startswith("--scenario") for m in more):
        args += ["--scenario", DEFAULT_SCENARIOS]
    args += more
    env = dict(stack.env)
    for var, name in V3_FILES.items():
        path = os.path.join(stack.state, "tls", name)
        if os.path.exists(path) and "IDEMPAY_WX_APIV3_KEY" not in env:
            env[var] = path
    t0 = time.time()
    with open(tpath, "w") as out:
        rc = subprocess.run(args, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    secs = time.time() - t0
    invs, error = [], None
    try:
        rep = json.load(open(jpath))
        for v in rep.get("violations", []):
            if v["invariant"] not in invs:
                invs.append(v["invariant"])
        error = rep.get("error")
    except (OSError, ValueError) as e:
        error = f"no JSON report ({e})"
    return rc, invs, error, secs, tpath


def verdict(rc, invs, error):
    if rc == 1:
        return "killed", ",".join(invs)
    if rc == 0:
        return "survived", "-"
    return "ERROR", f"run not carried out: {error}"


def print_row(name, result, by, build_s, sim_s, file=sys.stdout):
    print(f"{name:<28} {result:<9} {by:<52} {build_s:6.0f} {sim_s:7.0f}", file=file, flush=True)


def on_signal(signum, frame):
    raise KeyboardInterrupt  # unwinds through the finally that restores the scratch tree


def main():
    signal.signal(signal.SIGTERM, on_signal)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--ci", action="store_true",
                    help="only the mutants with a 'ci:' line, each with its own short run; no baseline")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant applies exactly; build nothing")
    ap.add_argument("--build-only", action="store_true",
                    help="apply and build every mutant, run nothing")
    ap.add_argument("--base", help="take the service from this git revision instead of the work tree")
    ap.add_argument("--baseline-only", action="store_true", help="only run the unmutated service")
    ap.add_argument("--sim", required=False, help="the idempay-sim binary to run")
    ap.add_argument("--sim-args", default="", help="more simulator arguments for every run")
    ap.add_argument("--port-offset", type=int, default=int(os.environ.get("IDEMPAY_MUTANTS_PORT_OFFSET", 100)))
    a = ap.parse_args()

    try:
        mutants = [] if a.baseline_only else load_mutants(a.only)
        if a.ci:
            mutants = [m for m in mutants if m["ci"]]
    except MutantError as e:
        print(f"mutants: ERROR: {e}", file=sys.stderr)
        return 2

    state_root = os.path.join(os.environ.get("IDEMPAY_STATE_DIR", os.path.join(ROOT, ".stack")), "mutants")
    src = os.path.join(state_root, "src-" + (a.base or "worktree"))
    state_dir = os.path.join(state_root, "state" + ("-" + a.base if a.base else ""))
    copy_tree(src, a.base)
    if a.check:
        bad = 0
        for m in mutants:
            try:
                restore(src, apply_mutant(src, m))
                print(f"{m['name']:<28} applies   {m['description']}")
            except MutantError as e:
                print(f"{m['name']:<28} ERROR     {e}")
                bad = 1
        return 2 if bad else 0
    if a.build_only:
        stack = Stack(src, state_dir, a.port_offset)
        bad = 0
        for m in mutants:
            try:
                originals = apply_mutant(src, m)
            except MutantError as e:
                print(f"{m['name']:<28} ERROR     {e}")
                bad = 1
                continue
            t0 = time.time()
            rc = stack.run("build")
            restore(src, originals)
            print(f"{m['name']:<28} {'builds' if rc == 0 else 'ERROR: does not build':<9} "
                  f"{time.time() - t0:.0f} s" + ("" if rc == 0 else f" (log: {stack.log})"), flush=True)
            bad |= rc != 0
        return 2 if bad else 0
    if not a.sim or not os.access(a.sim, os.X_OK):
        print("mutants: --sim must name a built idempay-sim", file=sys.stderr)
        return 2

    stack = Stack(src, state_dir, a.port_offset)
    out_dir = os.path.join(state_root, "runs-" + (a.base or "worktree"))
    print(f"mutants: scratch tree {src}, stack on ports "
          + " ".join(stack.env[v] for v in PORT_VARS) + f", seed {a.seed}; reports in {out_dir}")
    print(f"{'mutant':<28} {'result':<9} {'killed by (invariants)':<52} {'build s':>6} {'sim s':>7}")
    worst = 0
    if not a.ci:
        t0 = time.time()
        err = stack.restart()
        build_s = time.time() - t0
        if err:
            print_row("(unmutated)", "ERROR", err, build_s, 0)
            return 2
        rc, invs, error, sim_s, tpath = run_sim(stack, a.sim, a.seed, a.sim_args, out_dir, "unmutated")
        result = "pass" if rc == 0 else "FAIL" if rc == 1 else "ERROR"
        print_row("(unmutated)", result, ",".join(invs) or (error or "-") if rc else "-", build_s, sim_s)
        if rc != 0:
            print(f"  the unmutated service does not pass: see {tpath}")
            worst = 2 if rc == 2 else 1
    for m in mutants:
        t0 = time.time()
        try:
            originals = apply_mutant(src, m)
        except MutantError as e:
            print_row(m["name"], "ERROR", str(e)[:52], 0, 0)
            print(f"  {e}")
            worst = 2
            continue
        saved_env = {k: stack.env.get(k) for k in m["service"]}
        stack.env.update(m["service"])
        try:
            err = stack.restart()
            build_s = time.time() - t0
            if err:
                print_row(m["name"], "ERROR", err, build_s, 0)
                worst = 2
                continue
            extra = (m["ci"] if a.ci else "") + " " + m["args"] + " " + a.sim_args
            rc, invs, error, sim_s, tpath = run_sim(stack, a.sim, a.seed, extra.strip(), out_dir, m["name"])
        finally:
            restore(src, originals)
            for k, v in saved_env.items():
                if v is None:
                    stack.env.pop(k, None)
                else:
                    stack.env[k] = v
        result, by = verdict(rc, invs, error)
        print_row(m["name"], result, by, build_s, sim_s)
        if result == "survived":
            worst = max(worst, 1)
            print(f"  survived: {m['description']} (report: {tpath})")
        elif result == "ERROR":
            worst = 2
    stack.run("down")
    print("mutants: " + ("every mutant killed" if worst == 0 else "NOT every mutant killed"
                         if worst == 1 else "ERROR (see above)"))
    return worst


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("mutants: interrupted (the scratch tree is back to the unmutated service)",
              file=sys.stderr)
        sys.exit(2)
