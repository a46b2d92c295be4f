"""test_profile - target profiles: the simulator judges a payment service of
another API shape (issue 15, item 5; docs/SIMULATOR.md "Target profiles").

Mounts the seed fixture (tests/fixtures: the seed article's flawed code) with
IDEMPAY_SEED_API=article, so it serves the article's own shape (paths under
/api/pay/get-token, /submit, /query, ResultDTO bodies, status numbers) and
not idempay's, and runs idempay-sim through sim/profiles/seed-article.json
against it: the run is judged (orders read through the profile) and finds the
article's known violations, as test_seed_fixture.py finds them through our
API. Then our own profile, sim/profiles/idempay.json, against our service:
the same seed gives the same schedule digest as no --profile, and a pass.
Finally, what a profile cannot do: scenarios needing a missing feature are
skipped with a note, a broken profile and --db without idempay's table are
refused (exit 2).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

SIM = os.path.join(bin_dir(), "sim", "idempay-sim")
FIXTURE_BIN = os.path.join(bin_dir(), "tests", "fixtures", "idempay-seed-fixture")
PROFILES = os.path.join(ROOT, "sim", "profiles")
ARTICLE = os.path.join(PROFILES, "seed-article.json")
OURS = os.path.join(PROFILES, "idempay.json")
SEED = os.environ.get("IDEMPAY_PROFILE_TEST_SEED", "7")
# scenario -> the invariant the article's code breaks (docs/FIXTURE.md)
CAUGHT = {
    "token-replay": "token_single_order",
    "forged-callback": "forged_callback_no_effect",
    "order-mismatch": "mismatch_no_effect",
}

_variant = None


def article_fixture():
    """The fixture serving the article's API shape (started on first use)."""
    global _variant
    if _variant is None:
        check(os.access(FIXTURE_BIN, os.X_OK), f"fixture not built: {FIXTURE_BIN}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        v = Variant("seed-article", port, program=FIXTURE_BIN,
                    env={"IDEMPAY_WX_KEY": KEY, "IDEMPAY_GATEWAY_URL": MOCK,
                         "IDEMPAY_SEED_API": "article",
                         "IDEMPAY_SEED_LOG": os.path.join(STATE, "log", "seed-article.log")})
        v.__enter__()
        _variant = v
    return _variant.base


def stop_fixture():
    global _variant
    if _variant is not None:
        _variant.__exit__(None, None, None)
    _variant = None


def sim(*args, timeout=240):
    """Runs idempay-sim; returns (exit status, stdout + stderr, JSON report or None)."""
    check(os.access(SIM, os.X_OK), f"simulator not built: {SIM}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "report.json")
        out = subprocess.run([SIM, "--gateway", MOCK, "--seed", SEED, "--json", path, *args],
                             capture_output=True, text=True, timeout=timeout)
        report = None
        if os.path.exists(path):
            with open(path) as f:
                report = json.load(f)
    return out.returncode, out.stdout + out.stderr, report


def digest_of(text):
    for line in text.splitlines():
        if line.startswith("schedule digest: "):
            return line.split(": ", 1)[1].strip()
    raise AssertionError(f"no schedule digest in:\n{text[-2000:]}")


def violated(report, scenario):
    for sc in report["scenarios"]:
        if sc["name"] == scenario:
            return {n: i["violations"] for n, i in sc["invariants"].items() if not i["pass"]}
    raise AssertionError(f"scenario {scenario} missing from the report")


@test
def article_fixture_speaks_only_the_article_shape():
    base = article_fixture()
    check(http("GET", base + "/api/ping").status == 404, "the article fixture serves /api/ping")
    check(http("GET", base + "/api/pay/orders/nosuch1").status == 404,
          "the article fixture serves the contract's order view")
    r = http("GET", base + "/actuator/health")
    check(r.status == 200 and r.json() == {"status": "UP"}, f"health: {r.status} {r.text}")
    r = http("GET", base + "/api/pay/query?orderNo=nosuch1")
    check(r.status == 200 and r.json()["code"] == 404 and r.json()["data"] is None,
          f"query of an unknown order: {r.status} {r.text}")
    r = http("GET", base + "/api/pay/get-token?userId=42")
    check(r.status == 200 and r.json()["code"] == 200 and r.json()["data"].startswith("TOKEN_"),
          f"get-token: {r.status} {r.text}")


@test
def article_profile_is_judged_and_catches_the_article():
    base = article_fixture()
    # The article's code takes unifiedorder's reply as the charge: the mock
    # plays the gateway it was written for (instant_charge; docs/MOCK.md).
    rc, text, report = sim("--target", base, "--profile", ARTICLE,
                           "--scenario", ",".join(CAUGHT), "--orders", "60", "--duration", "4",
                           "--settle", "6", "--concurrency", "16", "--quiet",
                           "--mock-config", '{"instant_charge":true}')
    check(report is not None, f"no JSON report (exit {rc}):\n{text[-3000:]}")
    print(f"  article profile: exit {rc}, "
          f"{ {sc: violated(report, sc) for sc in CAUGHT} }", flush=True)
    check(report["profile"] == "seed-article", f"profile in the report: {report['profile']}")
    check(rc == 1 and report["error"] is None,
          f"expected exit 1 (violations found, run carried out), got {rc}: {report['error']}\n"
          f"{text[-3000:]}")
    # judged: every order was read through the profile (none unreadable) and
    # the reads saw what the clients were told
    paid = sum(sc["paid"] for sc in report["scenarios"])
    ok = report["requests"]["by_kind"]["pay"]["ok"]
    check(paid > 0 and ok > 0, f"nothing paid or no definite pay answer: paid {paid}, ok {ok}")
    for scenario, invariant in CAUGHT.items():
        found = violated(report, scenario)
        check(found.get(invariant, 0) > 0,
              f"{scenario} through the article profile: {invariant} not reported "
              f"(got {found}):\n{text[-3000:]}")
    check("skipped" not in report, f"nothing should be skipped: {report.get('skipped')}")


@test
def own_profile_gives_the_same_digest_and_a_pass():
    args = ["--scenario", "double-click,token-replay,order-mismatch", "--orders", "60",
            "--duration", "4", "--concurrency", "16"]
    rc, plain, _ = sim("--target", SERVICE, *args, "--schedule-only")
    check(rc == 0, f"--schedule-only without --profile: exit {rc}\n{plain[-2000:]}")
    rc, text, report = sim("--target", SERVICE, "--profile", OURS, *args, "--quiet")
    print(f"  idempay profile: exit {rc}, digest {report and report['schedule_digest'][:16]}",
          flush=True)
    check(report is not None, f"no JSON report (exit {rc}):\n{text[-3000:]}")
    check(digest_of(text) == digest_of(plain) == report["schedule_digest"],
          f"digest with --profile {digest_of(text)} != without {digest_of(plain)}")
    check(rc == 0 and report["result"] == "pass" and report["profile"] == "idempay",
          f"our service through our profile: exit {rc}, {report['result']}:\n{text[-4000:]}")
    check(report["requests"]["by_kind"]["token"]["ok"] > 0, "no token was issued")


@test
def missing_features_are_skipped_with_a_note():
    with open(ARTICLE) as f:
        bare = json.load(f)
    bare["name"] = "article-without-tokens-and-callbacks"
    bare["features"].update(tokens=False, callbacks=False)
    del bare["token"], bare["callback"], bare["pay"]["send"]["token"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(bare, f)
        path = f.name
    try:
        rc, text, _ = sim("--profile", path, "--scenario", "double-click,token-replay,forged-callback",
                          "--schedule-only")
        check(rc == 0, f"exit {rc}:\n{text}")
        check("token-replay (no tokens)" in text and "forged-callback (no callbacks)" in text,
              f"no skip note:\n{text}")
        rc, alone, _ = sim("--scenario", "double-click", "--schedule-only")
        check(digest_of(text) == digest_of(alone), "the skipped run is not just double-click")
        rc, text, _ = sim("--profile", path, "--scenario", "token-replay", "--schedule-only")
        check(rc == 2 and "nothing to run" in text, f"only skipped scenarios: exit {rc}\n{text}")
    finally:
        os.unlink(path)


@test
def bad_profiles_are_refused():
    with open(ARTICLE) as f:
        broken = json.load(f)
    broken["pay"]["send"]["amount"] = "bdy:amount"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(broken, f)
        path = f.name
    try:
        rc, text, _ = sim("--profile", path, "--schedule-only")
        check(rc == 2 and "pay.send.amount: unknown place 'bdy'" in text, f"exit {rc}: {text}")
    finally:
        os.unlink(path)
    rc, text, _ = sim("--profile", ARTICLE, "--db", "--schedule-only")
    check(rc == 2 and "features.db" in text, f"--db with the article profile: exit {rc}: {text}")
    rc, text, _ = sim("--profile", "/nonexistent.json", "--schedule-only")
    check(rc == 2 and "/nonexistent.json" in text, f"missing file: exit {rc}: {text}")


if __name__ == "__main__":
    try:
        run_tests()
    finally:
        stop_fixture()
