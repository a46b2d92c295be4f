"""test_metrics - /metrics by the book: `promtool check metrics` (Debian's
prometheus package) finds nothing to say, every family has # HELP and
# TYPE, the request histogram has method/route/code labels and a bucket per
bound, and build_info, the gauges and process_* are there; through
lighttpd and through nginx alike; and the PROCESSING gauge stays in every
scrape after a MariaDB restart (a thread whose connection was lost opens
another and asks again)."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import NGINX_PORT, SERVICE, check, http, run_tests, stack, test, unique  # noqa: E402

NGINX = f"http://127.0.0.1:{NGINX_PORT}"


def scrape(base):
    r = http("GET", base + "/metrics")
    check(r.status == 200, f"/metrics: {r}")
    check(r.header("Content-Type").startswith("text/plain; version=0.0.4"),
          f"content type {r.header('Content-Type')}")
    return r.text


def some_traffic(base):
    http("GET", base + "/api/ping")
    http("GET", base + "/api/pay/orders/NOSUCHORDER1")
    http("GET", base + "/nowhere")
    http("POST", base + "/api/pay", {"order_no": unique("MET"), "user_id": 7, "amount": "1.00"})


def promtool(text):
    exe = shutil.which("promtool")
    check(exe is not None, "promtool not found: ./stack installs Debian's prometheus package")
    out = subprocess.run([exe, "check", "metrics"], input=text, capture_output=True, text=True,
                         timeout=60)
    check(out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(),
          f"promtool check metrics: rc {out.returncode}\n{out.stdout}{out.stderr}")


def families(text):
    helps = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    return helps, types


def check_exposition(base):
    some_traffic(base)
    text = scrape(base)
    promtool(text)
    helps, types = families(text)
    check(helps == set(types), f"HELP and TYPE differ: {helps ^ set(types)}")
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
        fam = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        check(fam in types, f"sample {name} has no # TYPE")
    for fam, typ in [("idempay_http_request_duration_seconds", "histogram"),
                     ("idempay_gateway_seconds", "histogram"),
                     ("idempay_payments_total", "counter"),
                     ("idempay_double_charge_detected_total", "counter"),
                     ("idempay_build_info", "gauge"),
                     ("idempay_gateway_calls_in_flight", "gauge"),
                     ("idempay_orders_processing", "gauge"),
                     ("process_cpu_seconds_total", "counter"),
                     ("process_resident_memory_bytes", "gauge"),
                     ("process_start_time_seconds", "gauge"),
                     ("process_open_fds", "gauge")]:
        check(types.get(fam) == typ, f"{fam}: type {types.get(fam)}, expected {typ}")
    m = re.search(r'^idempay_http_request_duration_seconds_count\{method="GET",route="/api/ping",'
                  r'code="200"\} (\d+)$', text, re.M)
    check(m and int(m.group(1)) >= 1, "no ping in the request histogram")
    check(re.search(r'^idempay_http_request_duration_seconds_bucket\{method="GET",'
                    r'route="/api/pay/orders/\{order_no\}",code="404",le="\+Inf"\} \d+$', text, re.M),
          "the order route is not a template")
    check(re.search(r'^idempay_http_requests_total\{method="GET",route="other",code="404"\} \d+$',
                    text, re.M), "an unknown path is not route=\"other\"")
    check(re.search(r'^idempay_build_info\{version="[^"]+",revision="[^"]+"\} 1$', text, re.M),
          "no build_info")
    check(not re.search(r'route="(GET|POST) ', text), "a route label still packs the method")


@test
def lighttpd_front_metrics_pass_promtool():
    check_exposition(SERVICE)


@test
def nginx_front_metrics_pass_promtool():
    check_exposition(NGINX)


@test
def both_fronts_count_into_the_same_numbers():
    """lighttpd's processes and nginx's spawn-fcgi one share the metrics file."""
    def pings(text):
        m = re.search(r'^idempay_http_requests_total\{method="GET",route="/api/ping",code="200"\} '
                      r'(\d+)$', text, re.M)
        return int(m.group(1)) if m else 0
    before = pings(scrape(SERVICE))
    http("GET", NGINX + "/api/ping")
    http("GET", SERVICE + "/api/ping")
    after = pings(scrape(NGINX))
    check(after >= before + 2, f"pings {before} -> {after}")
    text = scrape(SERVICE)
    procs = re.search(r"^idempay_service_processes (\d+)$", text, re.M)
    check(procs and int(procs.group(1)) >= 2, f"live processes: {procs and procs.group(0)}")


@test
def the_processing_gauge_survives_a_mariadb_restart():
    for _ in range(80):  # every worker thread has a connection of its own
        scrape(SERVICE)
    stack("restart", "mariadb")
    missing = sum(1 for _ in range(80)
                  if not re.search(r"^idempay_orders_processing \d+$", scrape(SERVICE), re.M))
    check(missing == 0, f"{missing} of 80 scrapes after a MariaDB restart lack the PROCESSING gauge")


run_tests()
