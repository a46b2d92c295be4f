"""test_fcgi_edge - the FastCGI edge, spoken to directly (no web server in
front), as anything that reaches the service's FastCGI port can (issue 23):
a negative or oversized CONTENT_LENGTH with a large body is refused cleanly
and the process lives; PARAMS whose name-value lengths claim more bytes than
follow (they aborted the process inside libfcgi) are refused unread;
connections that send nothing do not freeze the workers; ":PORT" listens on
loopback only.

The service under test is a private idempay-fcgi of the running build on its
own port (HTTP + 7), 4 threads, so that 4 idle connections would freeze it
without the read timeout. Under ./stack test it is the ASan build: a heap
overflow aborts it and the test sees the process gone."""
import os
import struct
import subprocess
import time

from lib import *

PORT = HTTP_PORT + 7
THREADS = 4

FCGI_BEGIN_REQUEST, FCGI_END_REQUEST, FCGI_PARAMS, FCGI_STDIN, FCGI_STDOUT = 1, 3, 4, 5, 6


def record(rtype, content, req_id=1):
    out = b""
    while True:
        chunk, content = content[:65535], content[65535:]
        pad = (8 - len(chunk) % 8) % 8
        out += struct.pack(">BBHHBx", 1, rtype, req_id, len(chunk), pad) + chunk + b"\0" * pad
        if not content:
            return out


def nv(name, value):
    def ln(n):
        return struct.pack(">B", n) if n < 128 else struct.pack(">I", n | 0x80000000)
    name, value = name.encode(), value.encode()
    return ln(len(name)) + ln(len(value)) + name + value


def fcgi_request(params, body=b"", timeout=15.0):
    """One FastCGI request; returns (status, raw stdout) or (None, error)."""
    pairs = b"".join(nv(k, v) for k, v in params.items())
    msg = (record(FCGI_BEGIN_REQUEST, struct.pack(">HB5x", 1, 0)) + record(FCGI_PARAMS, pairs)
           + record(FCGI_PARAMS, b""))
    if body:
        msg += record(FCGI_STDIN, body)
    msg += record(FCGI_STDIN, b"")
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    try:
        s.sendall(msg)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError) as e:
                return None, repr(e)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        return None, repr(e)
    finally:
        s.close()
    stdout, i = b"", 0
    while i + 8 <= len(data):
        _, rtype, _, clen, pad = struct.unpack(">BBHHB", data[i:i + 7])
        if rtype == FCGI_STDOUT:
            stdout += data[i + 8:i + 8 + clen]
        i += 8 + clen + pad
    status = None
    for line in stdout.split(b"\r\n"):
        if line.lower().startswith(b"status:"):
            status = int(line.split()[1])
    return status, stdout


def base_params(**extra):
    p = {"REQUEST_METHOD": "POST", "REQUEST_URI": "/api/pay", "SCRIPT_NAME": "/api/pay",
         "CONTENT_TYPE": "application/json", "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1"}
    p.update(extra)
    return p


class Service:
    def __enter__(self):
        env = dict(os.environ)
        env["IDEMPAY_THREADS"] = str(THREADS)
        log = open(os.path.join(STATE, "log", "fcgi-edge.log"), "ab")
        self.proc = subprocess.Popen([os.path.join(bin_dir(), "app", "idempay-fcgi"), f":{PORT}"],
                                     env=env, stdout=log, stderr=log)
        wait_until(lambda: self.ping() == 200, 30, 0.2, "the private idempay-fcgi")
        return self

    def ping(self):
        try:
            return fcgi_request({"REQUEST_METHOD": "GET", "REQUEST_URI": "/api/ping"}, timeout=3)[0]
        except OSError:
            return None

    def alive(self):
        return self.proc.poll() is None

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return False


SVC = None


@test
def negative_content_length_with_a_large_body_is_refused_and_the_process_lives():
    body = b"A" * 200_000
    for cl in ("-2147483649", "-1", "+10", " 10", "10 ", "0x10", "99999999999999999999999"):
        status, out = fcgi_request(base_params(CONTENT_LENGTH=cl), body)
        check(status == 400, f"CONTENT_LENGTH {cl!r}: expected 400, got {status} {out[:200]!r}")
        check(b"invalid_request" in out, f"CONTENT_LENGTH {cl!r}: no JSON error: {out[:200]!r}")
        check(SVC.alive(), f"the service died on CONTENT_LENGTH {cl!r}")
    check(SVC.ping() == 200, "the service does not answer after the bad lengths")


@test
def oversized_content_length_is_413_and_a_body_longer_than_announced_is_cut():
    status, out = fcgi_request(base_params(CONTENT_LENGTH=str(65537)), b"B" * 70_000)
    check(status == 413, f"expected 413, got {status} {out[:200]!r}")
    # a body longer than its CONTENT_LENGTH: only the announced bytes are read
    # signed over the 2 announced bytes (the merchant door checks the caller first)
    signed = {"HTTP_" + k.upper().replace("-", "_"): v
              for k, v in caller_sign(dev_caller(), "POST", "/api/pay", "", b"{}").items()}
    status, out = fcgi_request(base_params(CONTENT_LENGTH="2", **signed), b"{}" + b"C" * 100_000)
    check(status == 400, f"expected 400 for the 2-byte body '{{}}', got {status} {out[:200]!r}")
    check(SVC.alive() and SVC.ping() == 200, "the service does not answer after the long bodies")


def send_raw(msg, timeout=15.0):
    """Sends msg as is; returns what came back before the service closed."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    data = b""
    try:
        s.sendall(msg)
        s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        s.close()
    return data


@test
def params_whose_lengths_lie_are_refused_unread_and_the_process_lives():
    # found by fuzz/fuzz_fcgi: libfcgi allocates nameLength + valueLength + 2
    # in int; these two overflow it, malloc fails and libfcgi's assert()
    # aborted the whole process. Lengths near 2^31 made it allocate GiB.
    begin = record(FCGI_BEGIN_REQUEST, struct.pack(">HB5x", 1, 0))
    for lens in ((0x5DDDDDDD, 0x5DDDDDDD), (0x7FFFFFFF, 0x7FFFFFFF), (0x7FFFFFF0, 1), (200, 2)):
        pair = struct.pack(">II", lens[0] | 0x80000000, lens[1] | 0x80000000) + b"AB" * 40
        data = send_raw(begin + record(FCGI_PARAMS, pair) + record(FCGI_PARAMS, b"")
                        + record(FCGI_STDIN, b""))
        check(data == b"", f"lengths {lens}: expected the connection closed unanswered, got "
                           f"{data[:100]!r}")
        check(SVC.alive(), f"the service died on PARAMS lengths {lens}")
    # the same pair hidden in a BEGIN_REQUEST's padding, which libfcgi reads
    # as records (found by fuzz_fcgi against the first version of the screen)
    hidden = record(FCGI_PARAMS, struct.pack(">II", 0xDDDDDDDD, 0xDDDDDDDD) + b"AB" * 40)
    msg = (struct.pack(">BBHHBx", 1, FCGI_BEGIN_REQUEST, 1, 8, len(hidden))
           + struct.pack(">HB5x", 1, 0) + hidden + record(FCGI_PARAMS, b"") + record(FCGI_STDIN, b""))
    check(send_raw(msg) == b"", "a PARAMS record hidden in BEGIN_REQUEST's padding was answered")
    check(SVC.alive(), "the service died on a PARAMS record hidden in BEGIN_REQUEST's padding")
    check(SVC.ping() == 200, "the service does not answer after the lying lengths")


@test
def idle_connections_do_not_freeze_the_workers():
    idle = [socket.create_connection(("127.0.0.1", PORT)) for _ in range(THREADS * 2)]
    try:
        # every worker is blocked on an idle connection until its read times out (10 s)
        t0 = time.time()
        wait_until(lambda: SVC.ping() == 200, 60, 0.5, "a ping while idle connections are open")
        check(time.time() - t0 < 60, "the workers stayed frozen")
    finally:
        for s in idle:
            s.close()
    check(SVC.alive(), "the service died")


def listeners(port):
    """The local addresses listening on TCP port (from /proc/net/tcp*)."""
    found = []
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if state == "0A" and int(p, 16) == port:
                found.append(addr)
    return found


@test
def port_only_listens_on_loopback():
    addrs = listeners(PORT)
    check(addrs == ["0100007F"], f"':{PORT}' should listen on 127.0.0.1 only; listening: {addrs}")


def socket_path_mode(mode_setting):
    """Starts a private idempay-fcgi on a socket path with IDEMPAY_SOCKET_MODE
    (None: unset); returns (exit status or None while it runs, the socket's
    permission bits or None), and stops it."""
    import stat
    import tempfile
    d = tempfile.mkdtemp(prefix="fcgi-mode-", dir=os.path.join(STATE, "run"))
    path = os.path.join(d, "s.sock")
    env = dict(os.environ, IDEMPAY_THREADS="2")
    env.pop("IDEMPAY_SOCKET_MODE", None)
    if mode_setting is not None:
        env["IDEMPAY_SOCKET_MODE"] = mode_setting
    log = open(os.path.join(STATE, "log", "fcgi-edge.log"), "ab")
    p = subprocess.Popen([os.path.join(bin_dir(), "app", "idempay-fcgi"), path], env=env,
                         stdout=log, stderr=log)
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end and p.poll() is None and not os.path.exists(path):
            time.sleep(0.1)
        time.sleep(0.3)
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else None
        return p.poll(), mode
    finally:
        if p.poll() is None:
            p.terminate()
            p.wait(15)


@test
def a_socket_path_is_0600_unless_configured():
    rc, mode = socket_path_mode(None)
    check(rc is None and mode == 0o600, f"default: running={rc is None}, mode {mode and oct(mode)}")
    rc, mode = socket_path_mode("0660")
    check(rc is None and mode == 0o660, f"IDEMPAY_SOCKET_MODE=0660: mode {mode and oct(mode)}")
    for bad in ("0777", "0644x", "0400", "755"):
        rc, _ = socket_path_mode(bad)
        check(rc not in (None, 0), f"IDEMPAY_SOCKET_MODE={bad} must refuse to start: {rc}")


if __name__ == "__main__":
    with Service() as SVC:
        run_tests()
