#!/usr/bin/env python3
"""test_stack_memory - the stack remembers how it was started
(tools/stack_memory.sh, issue 25): the running stack is restarted with a
merchant key of its own; then

- `./stack restart lighttpd` from an environment without IDEMPAY_WX_KEY (a
  new shell) starts the service with the stack's key, not with the
  development default (the service process' own environment says so):
  every service process, the nginx front's two included (one left on the
  old key ran a reconciler whose every gateway call was refused: the
  orders it leased never settled, seen in CI);
- `./stack sim` from an environment without IDEMPAY_WX_KEY passes, and
  says it used the configuration recorded at up;
- a command from an environment with another key says that the running
  programs keep theirs, naming the setting, never its value;
- the record is mode 0600 (it holds the key).
The stack is restarted with the test's key at the end."""
import os
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import *  # noqa: E402,F401,F403

STACK = os.path.join(ROOT, "stack")
OWN_KEY = "stackmemoryK3y0123456789abcdefgh"
OTHER_KEY = "someoneelsesK3y0123456789abcdefg"
RECORD = os.path.join(STATE, "run", "stack.env")
SIM_ARGS = ["--scenario", "double-click,callback-storm", "--orders", "60", "--duration", "2",
            "--settle", "25", "--seed", "7", "--quiet", "--no-out"]


def run(cmd, env_overrides, timeout=300):
    env = dict(os.environ)
    for k, v in env_overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def restart_lighttpd(key):
    out = run([STACK, "restart", "lighttpd"], {"IDEMPAY_WX_KEY": key})
    check(out.returncode == 0, f"./stack restart lighttpd failed: {out.stdout}{out.stderr}")
    wait_healthy()
    return out.stdout + out.stderr


def service_key(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        for kv in f.read().split(b"\0"):
            if kv.startswith(b"IDEMPAY_WX_KEY="):
                return kv.split(b"=", 1)[1].decode()
    return None


def recorded(name):
    with open(RECORD, "rb") as f:
        for entry in f.read().split(b"\0"):
            k, _, v = entry.decode().partition("=")
            if k == name:
                return v
    return None


@test
def a_stack_started_with_its_own_key_is_simulated_with_it():
    out = restart_lighttpd(OWN_KEY)
    try:
        check(recorded("IDEMPAY_WX_KEY") == OWN_KEY, "restart records the key it started with")
        check(stat.S_IMODE(os.stat(RECORD).st_mode) == 0o600, "the record holds the key: mode 0600")
        check(OWN_KEY not in out, "the stack printed the key")
        # a restart from a new shell keeps the stack's key
        out = run([STACK, "restart", "lighttpd"], {"IDEMPAY_WX_KEY": None})
        check(out.returncode == 0, f"restart from a clean environment: {out.stdout}{out.stderr}")
        wait_healthy()
        # every service process: lighttpd's and the nginx front's (a
        # reconciler left with the old key takes leases and never settles)
        keys = set(service_key(pid) for pid in every_service_pid())
        check(keys == {OWN_KEY}, "every service process restarted from a new shell must run with"
              f" the stack's key, not the development default ({len(keys)} distinct keys seen)")
        # ./stack sim from a new shell: the record's key
        new_shell = run([STACK, "sim", *SIM_ARGS], {"IDEMPAY_WX_KEY": None})
        text = new_shell.stdout + new_shell.stderr
        check(new_shell.returncode == 0, f"./stack sim from a clean environment failed:\n{text[-3000:]}")
        check("configuration: the one recorded at up" in text, f"which configuration was used:\n{text[:800]}")
        # another key in the environment: said by name (any command but
        # down/reset/help reads the record; status is the cheapest)
        other = run([STACK, "status"], {"IDEMPAY_WX_KEY": OTHER_KEY})
        text = other.stdout + other.stderr
        check("IDEMPAY_WX_KEY otherwise than the running stack" in text, f"no warning:\n{text[:800]}")
        check(OTHER_KEY not in text and OWN_KEY not in text, "a key was printed")
    finally:
        restart_lighttpd(KEY)
    check(recorded("IDEMPAY_WX_KEY") == KEY, "the record follows the restart back")
    keys = set(service_key(pid) for pid in every_service_pid())
    check(keys == {KEY}, f"every service process is back on the test's key ({len(keys)} keys)")


if __name__ == "__main__":
    run_tests()
