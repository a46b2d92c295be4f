"""test_secrets - the service fails closed (issue 23): without the merchant
key it does not start, the published development key and a plain-http
gateway are refused outside IDEMPAY_DEVELOPMENT=1 (which ./stack sets), and
--check-config exits non-zero on each of these; in development mode it
starts and says so in its log."""
import os
import subprocess
import time

from lib import *

FCGI = os.path.join(bin_dir(), "app", "idempay-fcgi")
REAL_KEY = "Rk3" + "x" * 29


def env_without(*names, **extra):
    env = {k: v for k, v in os.environ.items() if k not in names}
    env["IDEMPAY_CONFIG"] = "none"
    env.update(extra)
    return env


def run(args, env):
    return subprocess.run([FCGI, *args], env=env, capture_output=True, text=True, timeout=20,
                          stdin=subprocess.DEVNULL)


@test
def no_key_no_start_and_the_message_names_the_setting():
    env = env_without("IDEMPAY_WX_KEY", "IDEMPAY_WX_KEY_FILE", "IDEMPAY_DEVELOPMENT")
    for args in ([f":{HTTP_PORT + 3}"], ["--check-config"]):
        out = run(args, env)
        check(out.returncode != 0, f"{args}: started without a key: rc {out.returncode}")
        check("IDEMPAY_WX_KEY is not set" in out.stderr, f"{args}: message: {out.stderr}")


@test
def the_development_key_is_refused_outside_development():
    env = env_without("IDEMPAY_DEVELOPMENT", IDEMPAY_WX_KEY=DEV_KEY)
    for args in ([f":{HTTP_PORT + 3}"], ["--check-config"]):
        out = run(args, env)
        check(out.returncode != 0, f"{args}: accepted the development key: rc {out.returncode}")
        check("published development key" in out.stderr, f"{args}: message: {out.stderr}")


@test
def a_plain_http_gateway_is_refused_outside_development():
    env = env_without("IDEMPAY_DEVELOPMENT", IDEMPAY_WX_KEY=REAL_KEY,
                      IDEMPAY_GATEWAY_URL="http://127.0.0.1:1")
    out = run(["--check-config"], env)
    check(out.returncode != 0 and "IDEMPAY_GATEWAY_URL" in out.stderr,
          f"rc {out.returncode}: {out.stderr}")
    env["IDEMPAY_GATEWAY_URL"] = "https://api.mch.weixin.qq.com"
    out = run(["--check-config"], env)
    check(out.returncode == 0, f"a real key and an https gateway: rc {out.returncode} {out.stderr}")
    check(REAL_KEY not in out.stdout + out.stderr, "--check-config printed the key")


@test
def development_mode_starts_and_says_so():
    log = os.path.join(STATE, "log", "secrets-dev.log")
    if os.path.exists(log):
        os.unlink(log)
    env = env_without("IDEMPAY_WX_KEY", "IDEMPAY_WX_KEY_FILE", IDEMPAY_DEVELOPMENT="1",
                      IDEMPAY_LOG_FILE=log, IDEMPAY_THREADS="2")
    proc = subprocess.Popen([FCGI, f":{HTTP_PORT + 3}"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: os.path.exists(log) and "DEVELOPMENT MODE" in open(log).read(), 20, 0.2,
                   "the development-mode line in the log")
        check(proc.poll() is None, "the service did not keep running in development mode")
        check(DEV_KEY not in open(log).read(), "the key reached the log")
    finally:
        proc.terminate()
        proc.wait(15)


if __name__ == "__main__":
    run_tests()
