"""test_results - every simulator run keeps its folder: a short seeded run
with --out leaves <out>/<UTC time>-seed<N>/ (reports, history, ledger,
orders, schedule with every phase's mock config, chaos log) and <out>/latest;
its report.html, opened in headless chromium, loads without console errors
and its charts hold the run's report.json numbers; `idempay-sim --check DIR`
judges the folder again offline with the same verdict and exit status; a
saved ledger given a second charge is judged a double charge (exit 1); an
edited schedule recipe is refused (its digest).

Runnable alone: python3 tests/integration/test_results.py (stack up first)."""
import atexit
import glob
import html.parser
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from lib import *  # noqa: F401,F403

FILES = ["report.txt", "report.json", "junit.xml", "report.html", "history.jsonl",
         "ledger.json", "orders.json", "schedule.json", "schedule.txt", "run.json", "chaos.json"]
TMP = tempfile.mkdtemp(prefix="test_results.")
OUT = os.path.join(TMP, "runs")
# Phases with faults of their own (retry-storm's timeouts and dedupe off), no
# gateway-chaos: its resets leave payment-code orders the gateway never knew,
# which read PROCESSING until the FAILED recheck (80 s of settle for a test of
# the folder; test_sim's run has gateway-chaos).
FLAGS = ["--scenario", "double-click,retry-storm,forged-callback", "--orders", "200",
         "--duration", "4", "--concurrency", "8", "--seed", "424242", "--quiet"]
RUN = {}
atexit.register(shutil.rmtree, TMP, True)


def sim_binary():
    for cand in (os.path.join(bin_dir(), "sim", "idempay-sim"),
                 os.path.join(ROOT, "sim", "idempay-sim")):
        if os.access(cand, os.X_OK):
            return cand
    raise AssertionError("idempay-sim not built")


def sim(*args, timeout=300, env=None):
    return subprocess.run([sim_binary(), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def result_line(text):
    m = re.search(r"^result: .*$", text, re.M)
    check(m is not None, f"no result: line in\n{text[-3000:]}")
    return m.group(0)


def offline_env():
    """--check must need nothing: every port points at nothing."""
    env = dict(os.environ)
    for var in ("IDEMPAY_HTTP_PORT", "IDEMPAY_MOCK_PORT", "IDEMPAY_DB_PORT",
                "IDEMPAY_REDIS_PORT"):
        env[var] = "1"
    env.pop("IDEMPAY_DB_SOCKET", None)
    return env


def chromium(*args, timeout=120):
    exe = shutil.which("chromium")
    check(exe is not None, "chromium is not installed (./stack installs Debian's chromium)")
    home = os.path.join(TMP, "chromium-home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home)
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--disable-extensions", "--disable-sync",
                           f"--user-data-dir={home}", "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def console_errors(stderr):
    """The page's console messages and uncaught exceptions as chromium logs
    them with --enable-logging=stderr ("...:CONSOLE(12)] \"msg\", source: ...")."""
    return [l for l in stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]


class DataBlock(html.parser.HTMLParser):
    """The page's JSON data block and the data-* attributes of its charts."""

    def __init__(self):
        super().__init__()
        self.in_data = False
        self.data = ""
        self.body = {}
        self.latency_rows = {}
        self.series = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("id") == "idempay-report-data":
            self.in_data = True
        elif tag == "body":
            self.body = a
        elif tag == "tr" and a.get("class") == "latency":
            self.latency_rows[a["data-kind"]] = a
        elif tag == "g" and a.get("class") == "series" and "data-total" in a:
            self.series[a["data-kind"]] = a

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_data = False

    def handle_data(self, data):
        if self.in_data:
            self.data += data


@test
def a_run_leaves_its_folder():
    out = sim(*FLAGS, "--out", OUT)
    check(out.returncode in (0, 1), f"exit {out.returncode}:\n{out.stdout[-4000:]}\n{out.stderr[-2000:]}")
    runs = [d for d in glob.glob(os.path.join(OUT, "*-seed424242")) if os.path.isdir(d)]
    check(len(runs) == 1, f"run folders: {os.listdir(OUT)}")
    d = runs[0]
    check(re.fullmatch(r"\d{8}T\d{6}Z-seed424242", os.path.basename(d)), f"name: {d}")
    check(os.path.realpath(os.path.join(OUT, "latest")) == os.path.realpath(d),
          "latest does not point at the run")
    check(f"results: {d}" in out.stderr, f"the folder is not named on stderr: {out.stderr}")
    for name in FILES:
        check(os.path.getsize(os.path.join(d, name)) > 0, f"{name} missing or empty")
    report = json.load(open(os.path.join(d, "report.json")))
    check(report["exit_code"] == out.returncode, f"report.json exit {report['exit_code']}")
    digest = re.search(r"^schedule digest: (\w+)$", out.stdout, re.M).group(1)
    sched = json.load(open(os.path.join(d, "schedule.json")))
    check(sched["digest"] == digest == report["schedule_digest"], "digests differ")
    check(sched["recipe"]["orders"] == 200 and
          sched["recipe"]["scenarios"] == "double-click,retry-storm,forged-callback",
          f"recipe: {sched['recipe']}")
    check(len(sched["phases"]) == len(report["phases"]) and
          all(isinstance(p["mock_config"], dict) for p in sched["phases"]),
          "schedule.json lacks the phases' mock configs")
    history = [json.loads(l) for l in open(os.path.join(d, "history.jsonl"))]
    kinds = {k: v["total"] for k, v in report["requests"]["by_kind"].items() if k != "ping"}
    check(len(history) == sum(kinds.values()), f"history {len(history)} ops, report {kinds}")
    ledger = json.load(open(os.path.join(d, "ledger.json")))
    check(len(ledger["charges"]) == sum(s["charges"] for s in report["scenarios"]),
          "ledger.json is not the charges the checker counted")
    orders = json.load(open(os.path.join(d, "orders.json")))["orders"]
    check(len(orders) == report["orders"], f"orders.json has {len(orders)} rows")
    check(sum(o["api"]["status"] == "PAID" for o in orders) ==
          sum(s["paid"] for s in report["scenarios"]), "orders.json PAID != report's paid")
    root = ET.parse(os.path.join(d, "junit.xml")).getroot()
    check(len(list(root.iter("testcase"))) > 0, "junit.xml has no testcase")
    RUN.update(dir=d, rc=out.returncode, stdout=out.stdout, report=report)


@test
def report_html_in_headless_chromium():
    check("dir" in RUN, "no run")
    page = os.path.join(RUN["dir"], "report.html")
    text = open(page).read()
    check(not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the page fetches something")
    # the console capture works: a page that logs an error is seen
    probe = os.path.join(TMP, "probe.html")
    open(probe, "w").write("<script>console.error('probe-4711'); undefinedFn();</script>")
    p = chromium("--dump-dom", "file://" + probe)
    check("probe-4711" in p.stderr, f"chromium's console is not captured:\n{p.stderr[-2000:]}")
    r = chromium("--dump-dom", "file://" + page)
    check(r.returncode == 0, f"chromium exit {r.returncode}: {r.stderr[-2000:]}")
    errors = console_errors(r.stderr)
    check(errors == [], f"console messages: {errors}")
    dom = DataBlock()
    dom.feed(r.stdout)
    check(dom.body.get("data-loaded") == "consistent", f"the page's script says {dom.body}")
    data = json.loads(dom.data)
    rep = RUN["report"]
    for kind, lat in rep["latency"].items():
        for key in ("count", "p50_ms", "p99_ms"):
            check(data["latency"][kind][key] == lat[key], f"latency {kind} {key}: "
                  f"page {data['latency'][kind][key]}, report.json {lat[key]}")
        row = dom.latency_rows[kind]
        check(int(row["data-count"]) == lat["count"] and
              float(row["data-p99-ms"]) == lat["p99_ms"], f"latency table {kind}: {row}")
    for key in ("total", "ok", "fail", "unknown"):
        check(data["requests"][key] == rep["requests"][key], f"requests {key}")
    for name, inv in rep["invariants"].items():
        check(data["invariants"][name] == {"pass": inv["pass"], "violations": inv["violations"]},
              f"invariant {name}")
    for kind, n in rep["requests"]["by_kind"].items():
        if kind == "ping" or n["total"] == 0:
            continue
        check(sum(data["series"]["kinds"][kind]["count"]) == n["total"], f"series {kind}")
        check(int(dom.series[kind]["data-total"]) == n["total"], f"throughput chart {kind}")
    check(len(data["events"]["phases"]) == len(rep["phases"]), "phase bands")
    shot = os.path.join(STATE, "log", "test_results-report.png")
    s = chromium(f"--screenshot={shot}", "--window-size=1400,2400", "file://" + page)
    check(s.returncode == 0 and os.path.getsize(shot) > 10000, f"no screenshot: {s.stderr[-1000:]}")


@test
def check_judges_the_folder_again_offline():
    check("dir" in RUN, "no run")
    out = sim("--check", RUN["dir"], env=offline_env(), timeout=120)
    check(out.returncode == RUN["rc"], f"--check exit {out.returncode}, the run's {RUN['rc']}:"
          f"\n{out.stdout[-3000:]}\n{out.stderr}")
    saved = open(os.path.join(RUN["dir"], "report.txt")).read()
    check(result_line(out.stdout) == result_line(saved), "another verdict")
    table = lambda t: t[t.index("invariants "):t.index("latency ")]  # noqa: E731
    check(table(out.stdout) == table(saved), f"invariant tables differ:\n{table(out.stdout)}")


@test
def check_finds_a_second_charge_added_to_the_ledger():
    check("dir" in RUN, "no run")
    edited = os.path.join(TMP, "edited")
    shutil.copytree(RUN["dir"], edited)
    path = os.path.join(edited, "ledger.json")
    ledger = json.load(open(path))
    check(ledger["charges"], "no charge to copy")
    first = ledger["charges"][0]
    ledger["charges"].append(dict(first, transaction_id=first["transaction_id"][:-4] + "9999"))
    json.dump(ledger, open(path, "w"))
    out = sim("--check", edited, env=offline_env(), timeout=120)
    check(out.returncode == 1, f"exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr}")
    check("[no_double_charge]" in out.stdout and first["out_trade_no"] in out.stdout,
          "the double charge is not named")
    check("result: FAIL" in out.stdout, result_line(out.stdout))


@test
def check_refuses_an_edited_recipe():
    check("dir" in RUN, "no run")
    edited = os.path.join(TMP, "recipe")
    shutil.copytree(RUN["dir"], edited)
    path = os.path.join(edited, "schedule.json")
    sched = json.load(open(path))
    sched["recipe"]["orders"] += 1
    json.dump(sched, open(path, "w"))
    out = sim("--check", edited, env=offline_env(), timeout=120)
    check(out.returncode == 2 and "digest" in out.stderr, f"exit {out.returncode}: {out.stderr}")


@test
def check_judges_a_scenario_file_run_and_a_profile_run_again():
    # the schedule of a --scenario-file run comes from the file (kept as
    # scenario.json in the folder), a --profile run's from the scenarios the
    # profile could run: --check rebuilds both to the saved digest
    out_dir = os.path.join(TMP, "recipes")
    runs = [["--scenario-file", os.path.join(ROOT, "sim", "scenarios", "timeouts-nodedupe.json"),
             "--orders", "120", "--duration", "3", "--seed", "77", "--settle", "30", "--quiet"],
            ["--scenario", "double-click,token-replay", "--orders", "100", "--duration", "3",
             "--seed", "78", "--settle", "30", "--quiet",
             "--profile", os.path.join(ROOT, "sim", "profiles", "idempay.json")]]
    for args in runs:
        out = sim(*args, "--out", out_dir)
        check(out.returncode in (0, 1), f"{args}: exit {out.returncode}:\n{out.stderr[-2000:]}")
        d = os.path.realpath(os.path.join(out_dir, "latest"))
        check("--scenario-file" not in args or os.path.exists(os.path.join(d, "scenario.json")),
              f"{d}: the scenario file is not kept")
        again = sim("--check", d, env=offline_env(), timeout=120)
        check(again.returncode == out.returncode and
              result_line(again.stdout) == result_line(out.stdout),
              f"{args}: --check exit {again.returncode}: {again.stderr[-2000:]}")


run_tests(cleanup=None)
