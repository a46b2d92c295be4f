#!/usr/bin/env python3
"""test_privilege - least privilege (issue 23, docs/SECURITY.md).

Database: ./stack up makes one MariaDB account per program
(idempay-migrate --create-users): the service's may read and write its own
tables but not change the schema nor read the mock's ledger or the seed
fixture's tables; the mock's touches only its ledger; the simulator's only
reads idempay.payment_order; the migration account owns the idempay
databases' schema and has no global privilege (no other database, no
accounts). Each is tried here with the credentials the programs get, over
TCP like a program on another host, and refused where it must be.

Redis: the stack's redis.conf disables the default user and gives the
service an ACL user limited to its commands and keys: a connection without
credentials, or with the service's credentials running what the service
never runs, is refused; the service (which authenticates on every connect)
works. Secrets: --check-config masks the passwords."""
import os
import socket
import subprocess

from lib import *

DB_PORT = int(os.environ.get("IDEMPAY_DB_PORT", "13306"))
FCGI = os.path.join(bin_dir(), "app", "idempay-fcgi")


def account(kind):
    """(user, password) of a program's account, as ./stack exports them."""
    prefix = {"service": "IDEMPAY_DB", "mock": "IDEMPAY_MOCK_DB", "sim": "IDEMPAY_SIM_DB",
              "migrate": "IDEMPAY_MIGRATE_DB"}[kind]
    user, password = os.environ.get(prefix + "_USER"), os.environ.get(prefix + "_PASSWORD")
    check(user and password, f"{prefix}_USER / _PASSWORD are not in the environment (./stack sets them)")
    return user, password


def as_account(kind, sql, database=""):
    """Runs sql over TCP as kind's account. (ok, stdout, stderr)."""
    user, password = account(kind)
    env = dict(os.environ, MYSQL_PWD=password)   # not on the command line
    args = ["mariadb", "--no-defaults", "--protocol=TCP", "-h", "127.0.0.1", "-P", str(DB_PORT),
            "-u", user, "-N", "-B", "-e", sql]
    if database:
        args.append(database)
    out = subprocess.run(args, capture_output=True, text=True, timeout=30, env=env)
    return out.returncode == 0, out.stdout, out.stderr


def allowed(kind, sql, database=""):
    ok, out, err = as_account(kind, sql, database)
    check(ok, f"{kind} account: {sql!r} should be allowed: {err.strip()}")
    return out


def refused(kind, sql, database=""):
    ok, _, err = as_account(kind, sql, database)
    check(not ok, f"{kind} account: {sql!r} must be refused, it was allowed")
    check("denied" in err, f"{kind} account: {sql!r} failed, but not for want of privilege: "
                           f"{err.strip()}")


@test
def the_service_account_reads_and_writes_its_tables_only():
    allowed("service", "SELECT COUNT(*) FROM payment_order", "idempay")
    allowed("service", "SELECT COUNT(*) FROM payment_statement_job", "idempay")
    for sql in ("DROP TABLE idempay.payment_order",
                "ALTER TABLE idempay.payment_order ADD COLUMN x INT",
                "CREATE TABLE idempay.probe (id INT)",
                "TRUNCATE TABLE idempay.payment_callback_record",
                "CREATE DATABASE idempay_probe",
                "SELECT COUNT(*) FROM idempay_mock.mock_charge",
                "UPDATE idempay_mock.mock_charge SET refunded_fee = 0",
                "SELECT COUNT(*) FROM idempay_seed.seed_payment_order",
                "SELECT COUNT(*) FROM mysql.user",
                "CREATE USER 'probe'@'localhost'",
                "GRANT SELECT ON idempay.* TO 'idempay_sim'@'localhost'"):
        refused("service", sql)


@test
def the_mock_account_touches_its_ledger_only():
    allowed("mock", "SELECT COUNT(*) FROM mock_charge", "idempay_mock")
    for sql in ("SELECT COUNT(*) FROM idempay.payment_order",
                "UPDATE idempay.payment_order SET status = 2",
                "DELETE FROM idempay.payment_idempotent",
                "DROP TABLE idempay_mock.mock_charge",
                "ALTER TABLE idempay_mock.mock_charge ADD COLUMN x INT",
                "SELECT COUNT(*) FROM idempay_seed.seed_payment_order"):
        refused("mock", sql)


@test
def the_simulator_account_only_reads_payment_order():
    allowed("sim", "SELECT COUNT(*) FROM payment_order", "idempay")
    for sql in ("UPDATE idempay.payment_order SET status = 2 WHERE id = -1",
                "INSERT INTO idempay.payment_order (order_no, user_id, amount, status) "
                "VALUES ('PRIVPROBE', 1, 1.00, 0)",
                "DELETE FROM idempay.payment_order WHERE id = -1",
                "SELECT COUNT(*) FROM idempay.payment_idempotent",
                "SELECT COUNT(*) FROM idempay.payment_callback_record",
                "SELECT COUNT(*) FROM idempay_mock.mock_charge",
                "DROP TABLE idempay.payment_order"):
        refused("sim", sql)


@test
def the_migration_account_owns_the_schema_and_nothing_else():
    allowed("migrate", "CREATE TABLE IF NOT EXISTS idempay.privilege_probe (id INT);"
                       "ALTER TABLE idempay.privilege_probe ADD COLUMN IF NOT EXISTS x INT;"
                       "DROP TABLE idempay.privilege_probe")
    allowed("migrate", "SELECT COUNT(*) FROM idempay_mock.mock_charge")
    for sql in ("CREATE DATABASE idempay_probe",
                "SELECT COUNT(*) FROM mysql.user",
                "CREATE USER 'probe'@'localhost'",
                "GRANT SELECT ON idempay.* TO 'idempay_sim'@'localhost'"):
        refused("migrate", sql)


@test
def a_wrong_password_is_refused_and_the_programs_use_their_own():
    user, _ = account("service")
    env = dict(os.environ, MYSQL_PWD="not-the-password")
    out = subprocess.run(["mariadb", "--no-defaults", "--protocol=TCP", "-h", "127.0.0.1", "-P",
                          str(DB_PORT), "-u", user, "-e", "SELECT 1"],
                         capture_output=True, text=True, timeout=30, env=env)
    check(out.returncode != 0 and "denied" in out.stderr, f"a wrong password was let in: {out}")
    # The running programs connect with their own accounts: the service and
    # the mock serve, and MariaDB counts their sessions under their names.
    check(http("GET", SERVICE + "/healthz").status == 200, "the service is not healthy")
    check(http("GET", MOCK + "/mock/config").status == 200, "the mock does not answer")
    users = {r[0] for r in db_query("SELECT DISTINCT user FROM information_schema.processlist")}
    check(account("service")[0] in users, f"no session of the service's account: {users}")
    check(account("mock")[0] in users, f"no session of the mock's account: {users}")


@test
def check_config_masks_the_passwords():
    secrets = {name: "Pw" + random_token(20) for name in
               ("IDEMPAY_DB_PASSWORD", "IDEMPAY_MOCK_DB_PASSWORD", "IDEMPAY_SIM_DB_PASSWORD",
                "IDEMPAY_MIGRATE_DB_PASSWORD", "IDEMPAY_REDIS_PASSWORD")}
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PASSWORD_FILE")}
    env.update(secrets)
    out = subprocess.run([FCGI, "--check-config"], capture_output=True, text=True, timeout=20,
                         stdin=subprocess.DEVNULL, env=env)
    text = out.stdout + out.stderr
    for name in ("IDEMPAY_DB_PASSWORD", "IDEMPAY_REDIS_PASSWORD"):
        check(f"{name}=<masked" in text, f"--check-config does not show {name} masked:\n{text}")
    for name, value in secrets.items():
        check(value not in text, f"--check-config printed {name}")


def redis_as(user, password, *args):
    """redis-cli as user (None: no credentials) with args: (stdout+stderr)."""
    auth = ["--user", user, "--pass", password, "--no-auth-warning"] if user else []
    out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(REDIS_PORT), *auth, *args],
                         capture_output=True, text=True, timeout=10)
    return (out.stdout + out.stderr).strip()


def service_redis():
    user, password = os.environ.get("IDEMPAY_REDIS_USER"), os.environ.get("IDEMPAY_REDIS_PASSWORD")
    check(user and password, "IDEMPAY_REDIS_USER / _PASSWORD are not in the environment (./stack)")
    return user, password


@test
def redis_without_credentials_is_refused():
    for args in (["PING"], ["GET", "pay:token:x"], ["SET", "pay:token:x", "1"], ["FLUSHALL"]):
        out = redis_as(None, None, *args)
        check("NOAUTH" in out, f"redis {args} without credentials: {out!r}")
    out = redis_as(service_redis()[0], "not-the-password", "PING")
    check("WRONGPASS" in out, f"a wrong password: {out!r}")


@test
def the_service_redis_user_runs_only_what_the_service_runs():
    user, password = service_redis()
    check(redis_as(user, password, "PING") == "PONG", "the service's user cannot PING")
    check("NOPERM" not in redis_as(user, password, "GET", "pay:token:privilege-probe"),
          "the service's user cannot GET its own keys")
    for args in (["FLUSHALL"], ["KEYS", "*"], ["CONFIG", "GET", "*"], ["GET", "seed:pay:token:x"],
                 ["SET", "other:key", "1"], ["SHUTDOWN"],
                 ["ACL", "LIST"], ["SCRIPT", "FLUSH"], ["CLIENT", "KILL", "ID", "1"]):
        out = redis_as(user, password, *args)
        check("NOPERM" in out, f"the service's Redis user ran {args}: {out!r}")


@test
def the_service_works_with_its_redis_user():
    r = http("GET", SERVICE + "/healthz")
    check(r.status == 200 and r.json().get("redis") == "ok", f"/healthz: {r}")
    r = get_token(7)
    check(r.status == 200 and r.json().get("token"), f"a token through the service: {r}")


@test
def the_service_fails_closed_without_the_redis_password():
    port = free_port_near(HTTP_PORT + 40)
    log = os.path.join(STATE, "log", "variant-noredispw-service.log")
    for name, env in (("no password", {"IDEMPAY_REDIS_USER": "", "IDEMPAY_REDIS_PASSWORD": ""}),
                      ("wrong password", {"IDEMPAY_REDIS_PASSWORD": "not-the-password"})):
        if os.path.exists(log):
            os.remove(log)
        with Variant("noredispw", port, env=dict(env, IDEMPAY_LOG_FILE=log)) as base:
            r = http("GET", base + "/healthz")
            check(r.status == 503 and r.json().get("redis") == "down",
                  f"{name}: /healthz must say Redis is down: {r}")
            r = get_token(7, base=base)
            check(r.status == 503, f"{name}: a token without Redis: {r}")
        with open(log, errors="replace") as fh:
            text = fh.read()
        check("IDEMPAY_REDIS_PASSWORD" in text, f"{name}: no log line names IDEMPAY_REDIS_PASSWORD")
        check("not-the-password" not in text, f"{name}: the password reached a log")


def free_port_near(p):
    for port in range(p, p + 20):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise AssertionError("no free port")


if __name__ == "__main__":
    run_tests()
