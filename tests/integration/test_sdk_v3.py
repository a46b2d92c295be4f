"""test_sdk_v3 - real WeChat Pay APIv3 SDKs that no one here wrote drive the
merchant side against the mock gateway (issue 24, "What it must show"): npm
wechatpay-node-v3 and wechatpay-axios-plugin, pinned by
tests/sdk/package-lock.json and installed by `./stack sdk` (./stack test does
it) into $STATE/sdk. tests/sdk/v3_node.js and v3_axios.js run the steps
(platform certificates, a Native order, the mock's payer, the payment
notification verified and decrypted by the SDK, tampered notifications
refused, query, close, refund + refund query + its notification, yesterday's
trade bill downloaded and its SHA1 checked, a refused merchant signature, a
platform certificate rotation) and print one JSON line per step; this file
fails on any step that is not ok.

Runs against the stack (./stack up): the mock at IDEMPAY_MOCK_PORT, the
APIv3 material of $STATE/tls (apiclient_cert.pem / apiclient_key.pem, the
merchant's API certificate; apiv3.key), or the files IDEMPAY_WX_V3_CERT,
IDEMPAY_SDK_V3_KEY and IDEMPAY_WX_APIV3_KEY(_FILE) name. The mock is reset
before each driver and afterwards."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import APPID, MCHID, MOCK, ROOT, STATE, check, mock_reset, run_tests, stack, \
    test  # noqa: E402

STEPS = ["certificates", "native", "sign_refused", "payer_pay", "notify_pay", "notify_tampered",
         "query", "close_fresh", "refund", "refund_query", "notify_refund", "tradebill",
         "rotation"]
SDK_DIR = os.path.join(STATE, "sdk")
TLS_DIR = os.path.join(STATE, "tls")


def material():
    """The merchant's v3 certificate, key and serial, and the APIv3 key."""
    cert = os.environ.get("IDEMPAY_WX_V3_CERT") or os.path.join(TLS_DIR, "apiclient_cert.pem")
    key = os.environ.get("IDEMPAY_SDK_V3_KEY") or os.path.join(TLS_DIR, "apiclient_key.pem")
    apiv3 = os.environ.get("IDEMPAY_WX_APIV3_KEY")
    if not apiv3:
        path = os.environ.get("IDEMPAY_WX_APIV3_KEY_FILE") or os.path.join(TLS_DIR, "apiv3.key")
        check(os.path.isfile(path), f"no APIv3 key at {path}: ./stack up makes it")
        with open(path, encoding="ascii") as fh:
            apiv3 = fh.read().strip()
    out = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-serial"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"openssl x509 -serial of {cert}: {out.stderr}")
    serial = out.stdout.strip().split("=", 1)[1].upper()
    return cert, key, serial, apiv3


def run_driver(script):
    """Runs one driver; returns its steps as {name: (ok, detail)}."""
    check(shutil.which("node"), "node is missing: ./stack up (as root) installs nodejs and npm")
    for pkg in ("wechatpay-node-v3", "wechatpay-axios-plugin"):
        if not os.path.isfile(os.path.join(SDK_DIR, "node_modules", pkg, "package.json")):
            stack("sdk")
    cert, key, serial, apiv3 = material()
    env = dict(os.environ, SDK_DIR=SDK_DIR, MOCK_URL=MOCK, WX_APPID=APPID, WX_MCHID=MCHID,
               V3_MCH_CERT=cert, V3_MCH_KEY=key, V3_MCH_SERIAL=serial, APIV3_KEY=apiv3)
    out = subprocess.run(["node", os.path.join(ROOT, "tests", "sdk", script)],
                         capture_output=True, text=True, timeout=600, env=env)
    sys.stderr.write(out.stderr)
    check(out.returncode == 0, f"{script} exited {out.returncode}: {out.stderr[-2000:]}")
    steps = {}
    for line in out.stdout.splitlines():
        s = json.loads(line)
        steps[s["name"]] = (s["ok"], s["detail"])
    return steps


def judge(script):
    mock_reset()
    steps = run_driver(script)
    problems = []
    for name in STEPS:
        if name not in steps:
            problems.append(f"{name}: the driver printed no line for it")
            continue
        ok, detail = steps[name]
        print(f"  {'PASS' if ok else 'FAIL'}    {name}: {detail}", flush=True)
        if not ok:
            problems.append(f"{name}: {detail}")
    check(not problems, "; ".join(problems))


@test
def wechatpay_node_v3_drives_the_mock():
    judge("v3_node.js")


@test
def wechatpay_axios_plugin_drives_the_mock():
    judge("v3_axios.js")


if __name__ == "__main__":
    try:
        run_tests()
    finally:
        mock_reset()
