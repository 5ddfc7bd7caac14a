#!/usr/bin/env python3
"""Floods against the exporter's HTTP server (issue 33, item 2), each run
beside well-behaved clients, against the real `gpudoctor serve --from` on
loopback. A well-behaved client opens a new connection per request, gives
it 1 s in all, and asks 4 times a second: one scrapes /metrics, one asks
/healthz. Over each flood's window at least 99 % of them must be answered:

- 128 keep-alive connections that each ask /healthz every 1.5 s (and come
  back when cut): once they held every thread;
- 1,000 idle connections that send nothing and reconnect when cut: once
  they filled the listen backlog ahead of every scrape;
- 300 TLS handshakes stalled after 5 bytes (and reconnecting): once each
  held a thread for 10 s;
- 16 connections sending wrong basic-auth passwords as fast as they can:
  once each cost a bcrypt, both cores; now the flood gets no more 401s
  (each one bcrypt) than the per-address limit on failures allows, and
  429s (no bcrypt) for the rest, counted from the answers it got.

And an unknown user's 401 costs a bcrypt as dear as a known user's wrong
password (server CPU time per 401, /proc/PID/stat, from two addresses so
that neither meets the limit on failures).

Each flood runs in a child process (its own interpreter: the scrapers'
timing is not the flood's GIL), with fixed counts, for a few seconds.

usage: http_floods.py GPUDOCTOR [-k NAME] [--sanitized]
       http_floods.py --flood KIND PORT N   (the flood itself)

--sanitized (ASan build): accepted for the build's uniform command line;
the counts judged here do not depend on it."""
import json
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import Skip, run_tests, take_k  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNAPSHOT = os.path.join(SRC, "tests", "snapshots", "ws-4x4090.json")
LISTENING = re.compile(r"listening on https?://127\.0\.0\.1:(\d+)$")
GD = None
SANITIZED = False

WINDOW = 5.0  # seconds of well-behaved requests per flood
RAMP = 1.0  # seconds the flood runs before they start
# bcrypt cost 8 of "scrape-pass": cheap enough for a test, dear enough to
# measure (a few ms to tens of ms a check); not cost 10, the fallback hash's
# cost before issue 33, so that an unknown user's old price shows.
USER = "prometheus"
PASSWORD = "scrape-pass"
HASH = "$2b$08$4LF.6CsWyjaJqWBM6u9mLOVW8CNL.ePrfOJHkgq3kdtC4XpCre3Uu"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU time of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


class Daemon:
    """`gpudoctor serve --from SNAPSHOT` on a free loopback port."""

    def __init__(self, web_config=None):
        args = [GD, "serve", "--listen", "127.0.0.1:0", "--from", SNAPSHOT]
        if web_config:
            args += ["--web-config", web_config]
        self.proc = subprocess.Popen(args, env={"PATH": "/usr/bin:/bin"},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        line = self.proc.stderr.readline().rstrip("\n")
        m = LISTENING.search(line)
        if not m:
            self.close()
            raise AssertionError(f"no listening line: {line!r}")
        self.port = int(m.group(1))
        threading.Thread(target=lambda: self.proc.stderr.read(), daemon=True).start()

    def cpu_seconds(self):
        return cpu_seconds(self.proc.pid)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def ask(port, path, headers="", tls=None, source="127.0.0.1", timeout=1.0):
    """One request on a new connection, within `timeout` in all: (status,
    body), or (None, why)."""
    end = time.monotonic() + timeout
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                     source_address=(source, 0))
    except OSError as e:
        return None, f"connect: {e}"
    try:
        if tls:
            s.settimeout(max(0.01, end - time.monotonic()))
            s = tls.wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode())
        data = b""
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None, "timeout"
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 "):
            return None, f"no answer: {data[:80]!r}"
        return int(head.split()[1]), body
    except (OSError, ssl.SSLError) as e:
        return None, f"{type(e).__name__}: {e}"
    finally:
        s.close()


def well_behaved(port, ready, headers="", tls=None):
    """/metrics and /healthz, 4 times a second each, over WINDOW: the
    number answered, the number asked, and the first failures."""
    results = []
    lock = threading.Lock()

    def client(path, want):
        t0 = time.monotonic()
        for k in range(int(WINDOW * 4)):
            delay = t0 + k * 0.25 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = time.monotonic()
            status, body = ask(port, path, headers, tls)
            ok = status == 200 and want in body
            with lock:
                results.append((ok, path, status, body if status is None else b"",
                                time.monotonic() - t))

    ready()
    threads = [threading.Thread(target=client, args=a)
               for a in (("/metrics", b"gpudoctor_"), ("/healthz", b"ok"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = sum(r[0] for r in results)
    return answered, len(results), [r[1:] for r in results if not r[0]][:5]


def beside_flood(d, kind, n, headers="", tls=None):
    """Runs flood `kind` with n connections and the well-behaved clients
    beside it; asserts >= 99 % of them were answered. Returns the CPU
    seconds of the daemon and of the flood over the window."""
    flood = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--flood", kind,
                              str(d.port), str(n)], stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    cpu = []
    statuses = {}
    try:
        assert flood.stdout.readline().strip() == "ready", "the flood did not start"

        def ready():
            time.sleep(RAMP)
            cpu.append((d.cpu_seconds(), cpu_seconds(flood.pid)))

        answered, asked, failures = well_behaved(d.port, ready, headers, tls)
        cpu.append((d.cpu_seconds(), cpu_seconds(flood.pid)))
        # Stopped politely, the flood says which answers it got.
        flood.terminate()
        out, _ = flood.communicate(timeout=10)
        statuses = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        statuses["seconds"] = time.monotonic() - started
    finally:
        if flood.poll() is None:
            flood.kill()
            flood.wait(10)
    rate = answered / asked
    daemon, attacker = cpu[1][0] - cpu[0][0], cpu[1][1] - cpu[0][1]
    print(f"  {kind} flood ({n} connections): {answered} of {asked} well-behaved requests "
          f"answered within 1 s ({rate:.0%}); over {WINDOW:.0f} s the daemon used "
          f"{daemon:.2f} s of CPU, the flood {attacker:.2f} s", flush=True)
    assert rate >= 0.99, f"{answered} of {asked} answered; first failures: {failures}"
    return daemon, attacker, statuses


# ---------------------------------------------------------------------------


def test_keep_alive_healthz_holders():
    with Daemon() as d:
        beside_flood(d, "keepalive", 128)


def test_reconnecting_idle_clients():
    with Daemon() as d:
        beside_flood(d, "idle", 1000)


def make_cert(tmp):
    if not shutil.which("openssl"):
        raise Skip("no openssl(1) to make a certificate")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", os.path.join(tmp, "server.key"),
                    "-out", os.path.join(tmp, "server.crt")],
                   check=True, capture_output=True, timeout=30)


def test_stalled_tls_handshakes():
    with tempfile.TemporaryDirectory(prefix="gd-floods-") as tmp:
        make_cert(tmp)
        web = os.path.join(tmp, "web.yml")
        with open(web, "w") as f:
            f.write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
        tls = ssl.create_default_context(cafile=os.path.join(tmp, "server.crt"))
        with Daemon(web) as d:
            beside_flood(d, "tls", 300, tls=tls)


def basic(user, password):
    import base64
    return "Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def auth_config(tmp):
    web = os.path.join(tmp, "web.yml")
    with open(web, "w") as f:
        f.write(f"basic_auth_users:\n  {USER}: {HASH}\n")
    return web


def cpu_per_401(d, user, source, count=8):
    """Daemon CPU seconds per 401 for `count` wrong logins as `user` from
    address `source`, one connection each."""
    before = d.cpu_seconds()
    for _ in range(count):
        status, body = ask(d.port, "/metrics", basic(user, "wrong") + "\r\n", source=source,
                           timeout=10)
        assert status == 401, (user, status, body)
    return (d.cpu_seconds() - before) / count


def test_an_unknown_user_costs_what_a_known_one_costs():
    with tempfile.TemporaryDirectory(prefix="gd-floods-") as tmp, Daemon(auth_config(tmp)) as d:
        # Each from an address of its own (127.0.0.0/8 is all loopback):
        # 8 failures are within one address's allowance (10 at once).
        known = cpu_per_401(d, USER, "127.0.0.2")
        unknown = cpu_per_401(d, "nobody", "127.0.0.3")
        print(f"  daemon CPU per 401: known user {known * 1000:.1f} ms, unknown user "
              f"{unknown * 1000:.1f} ms (bcrypt cost 8)")
        # CPU time, not answer time: a loaded machine stretches the second,
        # not the first. Both must have paid a bcrypt (cost 8 is well over
        # 2 ms on any CPU), and the two must be alike: the fallback hash at
        # cost 10, as before, makes the unknown user's 4 times dearer.
        assert known >= 0.002 and unknown >= 0.002, (known, unknown)
        assert 1 / 2.5 <= unknown / known <= 2.5, (known, unknown)


def test_failed_basic_auth_flood():
    with tempfile.TemporaryDirectory(prefix="gd-floods-") as tmp, Daemon(auth_config(tmp)) as d:
        per_bcrypt = cpu_per_401(d, USER, "127.0.0.2")
        good = basic(USER, PASSWORD) + "\r\n"
        assert ask(d.port, "/metrics", good, timeout=10)[0] == 200  # cached from now on
        _, _, statuses = beside_flood(d, "auth", 16, headers=good)
        # Unlimited, each failure costs the daemon a bcrypt (issue 33: both
        # cores, 191 %). Limited (10 failures at once per address, then 2 a
        # second), every 401 is one bcrypt and the rest are 429s, which cost
        # none. Counted by the flood from the answers it got: a loaded CI
        # machine changes CPU shares, not these counts.
        allowed = 10 + 2 * statuses["seconds"] + 2
        print(f"  the flood got {statuses.get('401', 0)} 401s (the limit allows {allowed:.0f} in "
              f"{statuses['seconds']:.1f} s) and {statuses.get('429', 0)} 429s; "
              f"{per_bcrypt * 1000:.1f} ms per bcrypt")
        assert statuses.get("401", 0) <= allowed, statuses
        assert statuses.get("429", 0) > statuses.get("401", 0), statuses


# ---------------------------------------------------------------------------
# The floods, each in its own process: one selector loop over N sockets.


def flood(kind, port, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
    sel = selectors.DefaultSelector()
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind == "auth":
        request = f"GET /metrics HTTP/1.1\r\nHost: x\r\n{basic(USER, 'wrong')}\r\n\r\n".encode()
    first = {"tls": b"\x16\x03\x01\x02\x00",  # a TLS record header, then nothing
             "keepalive": request, "auth": request}.get(kind, b"")
    period = 1.5 if kind == "keepalive" else 0.0  # between one answer and the next request
    conns = {}  # socket -> [connected, next request due (monotonic), bytes read]
    statuses = {}  # status code -> answers seen; printed when stopped (SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: (print(json.dumps(statuses), flush=True),
                                              os._exit(0)))

    def open_one(at=0.0):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        conns[s] = [False, at, b""]
        sel.register(s, selectors.EVENT_WRITE)

    def reopen(s):
        sel.unregister(s)
        del conns[s]
        s.close()
        open_one(time.monotonic() + period)  # a holder cut keeps to its pace

    for i in range(n):
        # Keep-alive holders are spread over their period.
        open_one(time.monotonic() + period * i / n)
    started = time.monotonic()
    said_ready = False
    while True:
        now = time.monotonic()
        if not said_ready and (all(c[0] for c in conns.values()) or now - started > 2):
            print("ready", flush=True)
            said_ready = True
        for key, events in sel.select(timeout=0.05):
            s = key.fileobj
            c = conns[s]
            if not c[0]:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    reopen(s)
                    continue
                c[0] = True
                sel.modify(s, selectors.EVENT_READ)
                if first and c[1] <= now:
                    try:
                        s.send(first)
                    except OSError:
                        reopen(s)
                        continue
                    c[1] = float("inf")  # until its answer
                continue
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                reopen(s)
                continue
            c[2] += chunk
            if kind in ("keepalive", "auth") and b"\r\n\r\n" in c[2]:
                head, _, rest = c[2].partition(b"\r\n\r\n")
                code = head[9:12].decode(errors="replace")
                statuses[code] = statuses.get(code, 0) + 1
                m = re.search(rb"(?i)content-length: *(\d+)", head)
                length = int(m.group(1)) if m else 0
                if len(rest) >= length:
                    c[2] = rest[length:]
                    c[1] = time.monotonic() + period
        if kind not in ("keepalive", "auth"):
            continue
        for s, c in list(conns.items()):
            if c[0] and c[1] <= now:
                try:
                    s.send(request)
                    c[1] = float("inf")
                except OSError:
                    reopen(s)


def main():
    global GD, SANITIZED
    args = sys.argv[1:]
    if args[:1] == ["--flood"] and len(args) == 4:
        try:
            flood(args[1], int(args[2]), int(args[3]))
        except KeyboardInterrupt:
            pass
        return 0
    only = take_k(args)
    if "--sanitized" in args:
        SANITIZED = True
        args.remove("--sanitized")
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    GD = os.path.abspath(args[0])
    return run_tests(globals(), only)


if __name__ == "__main__":
    sys.exit(main())
