"""test_fronts - the same service behind nginx (fastcgi_pass, the shipped
deploy/nginx-idempay.conf.in, idempay-fcgi under spawn-fcgi as DEPLOY.md
shows) passes the integration checks of payments, tokens and callbacks that
lighttpd's front passes: each named test of test_pay, test_token and
test_callback runs again with its requests sent through nginx."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import NGINX_PORT, NGINX_PUBLIC_PORT, check, http, parallel, run_tests, test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX = f"http://127.0.0.1:{NGINX_PORT}"

# The checks that exercise the front (request parsing, headers, bodies,
# status codes, concurrency); the fault-injection ones that stop MariaDB or
# Redis stay with the lighttpd run.
SUBSETS = {
    "test_pay.py": ["sixty_four_identical_clicks_charge_once",
                    "same_order_other_amount_or_user_is_422",
                    "bad_input_is_refused_and_writes_nothing",
                    "decline_is_402_and_a_later_retry_pays_once",
                    "gateway_systemerror_is_202_and_the_retry_closes_the_attempt"],
    "test_token.py": ["issue_gives_random_user_bound_token",
                      "issue_rejects_bad_user_id",
                      "double_click_one_token_one_order_one_charge",
                      "one_token_32_orders_one_accepted",
                      "retry_of_paid_order_with_its_token_replays",
                      "token_of_another_user_is_refused",
                      "unknown_and_malformed_tokens_are_refused"],
    "test_callback.py": ["twenty_concurrent_copies_apply_once",
                         "forged_and_broken_notifications_change_nothing",
                         "second_charge_detected_and_refunded_once",
                         "method_and_reply_format"],
}


def warm_up():
    """Every thread of the nginx front's process on fresh connections: an
    earlier test may have restarted MariaDB or Redis (test_chaos), and a
    thread's first request after that answers 503 while it reconnects, as
    the contract allows. /healthz drops and replaces a dead connection."""
    deadline = time.monotonic() + 20
    while True:
        answers = parallel(lambda: http("GET", NGINX + "/healthz"), [()] * 24)
        if all(a.status == 200 for a in answers):
            return
        check(time.monotonic() < deadline,
              f"the nginx front on {NGINX} is not healthy (./stack up starts it): {answers}")
        time.sleep(0.3)


def through_nginx(test_file):
    warm_up()
    # the merchant door's requests and the notifications both through nginx
    env = dict(os.environ, IDEMPAY_TEST_SERVICE_URL=NGINX,
               IDEMPAY_TEST_PUBLIC_URL=f"http://127.0.0.1:{NGINX_PUBLIC_PORT}")
    out = subprocess.run([sys.executable, os.path.join(HERE, test_file), *SUBSETS[test_file]],
                         env=env, capture_output=True, text=True, timeout=600)
    print(out.stdout, end="")
    check(out.returncode == 0, f"{test_file} through nginx failed:\n{out.stdout[-3000:]}{out.stderr[-2000:]}")
    passed = [line for line in out.stdout.splitlines() if line.startswith("PASS ")]
    check(len(passed) == len(SUBSETS[test_file]),
          f"{test_file}: expected {len(SUBSETS[test_file])} PASS lines, got {passed}")


@test
def nginx_front_serves_the_api_with_the_service_own_answers():
    r = http("GET", NGINX + "/api/ping")
    check(r.status == 200 and r.json() == {"ok": True}, f"ping through nginx: {r}")
    r = http("GET", NGINX + "/no/such/route")
    check(r.status == 404 and (r.json() or {}).get("error") == "not_found", f"404 through nginx: {r}")
    r = http("PUT", NGINX + "/api/pay", b"{}", {"Content-Type": "application/json"})
    check(r.status == 405 and (r.json() or {}).get("error") == "method_not_allowed", f"405: {r}")
    r = http("POST", NGINX + "/api/pay", b"x" * (70 * 1024), {"Content-Type": "application/json"})
    check(r.status == 413 and (r.json() or {}).get("error") == "payload_too_large", f"413: {r}")


@test
def payments_through_nginx():
    through_nginx("test_pay.py")


@test
def tokens_through_nginx():
    through_nginx("test_token.py")


@test
def callbacks_through_nginx():
    through_nginx("test_callback.py")


run_tests()
