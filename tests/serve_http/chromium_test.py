#!/usr/bin/env python3
"""The status page as a browser sees it: `gpudoctor serve --from SNAPSHOT`
(the real binary, the real HTTP server) rendered by headless Chromium.

For each snapshot (one recorded in tests/snapshots with findings, and, when
the fakes are given, one taken through them of a hot workstation, which has
every NVML health value):
  - the served HTML names no other origin (no src=, href=, action= ... to
    anything but a same-origin path, no <script>, no <link>, no CSS url());
  - Chromium loads the page through a recording proxy (loopback included,
    --proxy-bypass-list=<-loopback>): the only requests are the page itself
    (and /favicon.ico, which the browser asks for on its own);
  - --dump-dom: the DOM has one GPU row per GPU of the snapshot and one
    finding row per finding of /report.json that is not ok or n/a; the
    findings (the cause first) come before the GPU table, the GPUs worst
    first with their severity as the row's class, and a meta refresh
    reloads the page;
  - --screenshot: a PNG is written (look at it: --keep DIR keeps it).

usage: chromium_test.py GPUDOCTOR [FAKES_DIR] [--keep DIR]

Exits 77 (ctest's skip) when chromium is not installed or under GD_SANITIZE.
"""
import html.parser
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
RECORDED = os.path.join(SRC, "tests", "snapshots", "ws-4x4090-ulimit.json")
# Chromium's own services, which it calls whatever the page (flags below
# silence most of them; these remain in version 156).
BROWSER_HOSTS = {"update.googleapis.com", "accounts.google.com", "clients2.google.com",
                 "optimizationguide-pa.googleapis.com"}
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--disable-extensions", "--no-pings",
                  "--disable-domain-reliability", "--disable-client-side-phishing-detection",
                  "--disable-field-trial-config", "--metrics-recording-only",
                  "--no-service-autorun", "--password-store=basic",
                  "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,"
                  "MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,"
                  "CertificateTransparencyComponentUpdater,ComponentUpdater"]


def skip(why):
    print("serve_http_chromium: SKIP: " + why)
    sys.exit(77)


class Failures(list):
    def check(self, cond, what):
        if not cond:
            self.append(what)
            print("FAIL: " + what)


# --- the recording proxy -------------------------------------------------------

class Proxy:
    """A forward proxy on loopback that records every request and forwards
    only those to `allowed` (a set of host:port); everything else gets 403.
    Requests Chromium makes on its own (component updates, sign-in) are kept
    apart in `background`: hosts in BROWSER_HOSTS, with no Referer."""

    def __init__(self, allowed):
        self.requests, self.background = [], []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def record(self, line, host):
                own = host.split(":")[0] in BROWSER_HOSTS and not self.headers.get("Referer")
                (outer.background if own else outer.requests).append(line)

            def do_CONNECT(self):
                self.record("CONNECT " + self.path, self.path)
                self.send_error(403)

            def do_GET(self):
                m = re.match(r"http://([^/]+)(/.*)?$", self.path)
                self.record(self.command + " " + self.path, m.group(1) if m else "")
                if not m or m.group(1) not in allowed:
                    self.send_error(403)
                    return
                try:
                    with urllib.request.urlopen("http://" + m.group(1) + (m.group(2) or "/"),
                                                timeout=10) as r:
                        body, status, headers = r.read(), r.status, r.headers
                except urllib.error.HTTPError as e:
                    body, status, headers = e.read(), e.code, e.headers
                self.send_response(status)
                for k in ("Content-Type", "Content-Security-Policy"):
                    if headers.get(k):
                        self.send_header(k, headers[k])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_HEAD = do_POST = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- static checks of the HTML ------------------------------------------------

class Refs(html.parser.HTMLParser):
    URL_ATTRS = {"src", "href", "action", "formaction", "srcset", "poster", "data", "background",
                 "ping", "manifest", "cite", "longdesc", "xlink:href"}

    def __init__(self):
        super().__init__()
        self.refs, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k in self.URL_ATTRS:
                self.refs.append((tag, k, v or ""))


def static_checks(page, fails):
    p = Refs()
    p.feed(page)
    for tag, attr, value in p.refs:
        same_origin = value.startswith("/") and not value.startswith("//")
        fails.check(same_origin and tag == "a",
                    "only same-origin links are allowed, found <%s %s=%r>" % (tag, attr, value))
    for t in ("script", "link", "iframe", "img", "object", "embed", "base", "meta"):
        if t == "meta":
            continue  # charset, viewport and a refresh of this page only: checked below
        fails.check(t not in p.tags, "the page has a <%s>" % t)
    # The one http-equiv: a reload of the page itself (seconds, no url=).
    equivs = re.findall(r"<meta http-equiv[^>]*>", page)
    fails.check(len(equivs) == 1 and re.fullmatch(r"<meta http-equiv=refresh content=\d+>",
                                                  equivs[0]) is not None,
                "the page's <meta http-equiv> must be one refresh of itself: %s" % equivs)
    fails.check("url(" not in page and "@import" not in page, "the CSS loads something")
    for a in ("/metrics", "/report.json"):
        fails.check(("a", "href", a) in p.refs, "no link to " + a)


# --- the daemon ----------------------------------------------------------------

def start_serve(gd, snapshot, tmp):
    err = open(os.path.join(tmp, "serve.err"), "w+")
    proc = subprocess.Popen([gd, "serve", "--from", snapshot, "--no-history",
                             "--listen", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    deadline = time.time() + 20
    while time.time() < deadline:
        err.seek(0)
        m = re.search(r"gpudoctor serve: listening on http://(127\.0\.0\.1:\d+)", err.read())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    err.seek(0)
    text = err.read()
    stop(proc)
    raise RuntimeError("gpudoctor serve did not start: " + text.strip())


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, dict(r.headers), r.read().decode("utf-8")


def chromium(binary, tmp, extra, url, timeout=90):
    prof = tempfile.mkdtemp(prefix="prof.", dir=tmp)
    argv = [binary] + CHROMIUM_FLAGS + ["--user-data-dir=" + prof] + extra + [url]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return r


# --- one page ------------------------------------------------------------------

def check_page(gd, browser, snapshot, label, tmp, keep, fails):
    with open(snapshot) as f:
        snap = json.load(f)
    n_gpus = len(snap.get("nvml", {}).get("gpus", []))
    proc, hostport = start_serve(gd, snapshot, tmp)
    proxy = None
    try:
        base = "http://" + hostport
        status, headers, page = fetch(base + "/")
        fails.check(status == 200, "%s: GET / answered %d" % (label, status))
        fails.check(headers.get("Content-Type", "").startswith("text/html"),
                    "%s: Content-Type %r" % (label, headers.get("Content-Type")))
        fails.check("default-src 'none'" in headers.get("Content-Security-Policy", ""),
                    "%s: no Content-Security-Policy" % label)
        static_checks(page, fails)
        _, _, report = fetch(base + "/report.json")
        report = json.loads(report)
        shown = [f["id"] for f in report.get("findings", [])
                 if f.get("severity") not in ("ok", "n/a")]
        fails.check(shown, "%s: the snapshot should have findings" % label)

        proxy = Proxy({hostport})
        via_proxy = ["--proxy-server=http://127.0.0.1:%d" % proxy.port,
                     "--proxy-bypass-list=<-loopback>"]
        t0 = time.time()
        r = chromium(browser, tmp, via_proxy + ["--dump-dom"], base + "/")
        dom = r.stdout
        print("%s: --dump-dom took %.1f s, %d bytes" % (label, time.time() - t0, len(dom)))
        fails.check(r.returncode == 0 and "<html" in dom,
                    "%s: chromium --dump-dom failed: %s" % (label, r.stderr[-2000:]))
        rows = re.findall(r'<tr class="gpu ([a-z]+)" data-bus="([^"]*)"', dom)
        fails.check(len(rows) == n_gpus,
                    "%s: %d GPU rows in the DOM, the snapshot has %d GPUs" % (label, len(rows),
                                                                             n_gpus))
        rank = {"fail": 0, "warn": 1, "info": 2, "ok": 3, "na": 4}
        order = [rank.get(sev, 9) for sev, _ in rows]
        fails.check(order == sorted(order), "%s: GPU rows not worst first: %s" % (label, rows))
        # Each GPU a problem finding names is marked with that finding's severity.
        worst = {}
        for f in report.get("findings", []):
            if f.get("severity") in ("fail", "warn"):
                for bus in f.get("gpus", []):
                    worst.setdefault(bus, rank[f["severity"]])
                    worst[bus] = min(worst[bus], rank[f["severity"]])
        for sev, bus in rows:
            if bus in worst:
                fails.check(rank[sev] == worst[bus], "%s: GPU %s is %s, its findings say %s"
                            % (label, bus, sev, worst[bus]))
        at_findings = min(i for i in (dom.find('id="findings"'), dom.find('id="no-findings"'))
                          if i >= 0)
        fails.check(0 <= at_findings < dom.find('id="gpus"'),
                    "%s: the findings are not above the GPU table" % label)
        fails.check(re.search(r'<meta http-equiv="refresh" content="\d+">', dom) is not None,
                    "%s: no meta refresh" % label)
        dom_findings = re.findall(r'<tr class="finding [a-z]+">.*?<td class="mono id">([^<]+)</td>',
                                  dom, re.S)
        fails.check(dom_findings == shown,
                    "%s: finding rows %s, report has %s" % (label, dom_findings, shown))
        fails.check('id="verdict"' in dom and report["verdict"] + "</span>" in dom,
                    "%s: verdict %s not shown" % (label, report["verdict"]))

        shot = os.path.join(keep or tmp, "status-page-%s.png" % label)
        r = chromium(browser, tmp, via_proxy + ["--window-size=1400,900", "--screenshot=" + shot],
                     base + "/")
        fails.check(r.returncode == 0 and os.path.getsize(shot) > 10000,
                    "%s: no screenshot: %s" % (label, r.stderr[-2000:]))
        if keep:
            print("%s: screenshot in %s" % (label, shot))

        page_reqs = ["GET http://%s/" % hostport, "GET http://%s/favicon.ico" % hostport]
        others = [q for q in proxy.requests if q not in page_reqs]
        fails.check(("GET http://%s/" % hostport) in proxy.requests,
                    "%s: the proxy saw no page load (is it in the path?): %s"
                    % (label, proxy.requests))
        fails.check(not others, "%s: the page made other requests: %s" % (label, others))
    finally:
        if proxy:
            proxy.close()
        stop(proc)
    fails.check(proc.returncode == 0, "%s: serve exited %s on SIGTERM" % (label, proc.returncode))

def control(browser, tmp, fails):
    """The proxy check must be able to fail: a page with an image from
    another origin, loaded the same way, shows that request."""
    page = (b"<!doctype html><title>control</title>"
            b"<img src='http://gd-canary.invalid/x.png'><p>control</p>")

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    hostport = "127.0.0.1:%d" % srv.server_address[1]
    proxy = Proxy({hostport})
    try:
        chromium(browser, tmp, ["--proxy-server=http://127.0.0.1:%d" % proxy.port,
                                "--proxy-bypass-list=<-loopback>", "--dump-dom"],
                 "http://" + hostport + "/")
    finally:
        proxy.close()
        srv.shutdown()
        srv.server_close()
    fails.check("GET http://gd-canary.invalid/x.png" in proxy.requests,
                "control: the proxy did not see the control page's image: %s" % proxy.requests)


def hot_snapshot(gd, fakes, tmp):
    """A snapshot of the hot 4x4090 workstation taken through the fakes."""
    out = os.path.join(tmp, "ws-4x4090-hot.json")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests", "fakes", "scenarios",
                                                   "ws-4x4090-hot.json")}
    r = subprocess.run([gd, "snapshot", "-o", out, "--root",
                        os.path.join(SRC, "tests", "roots", "ws-4x4090"),
                        "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                        "--cuda-lib", os.path.join(fakes, "libcuda.so.1")],
                       env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError("gpudoctor snapshot failed: " + r.stderr.strip())
    return out


def main():
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = os.path.abspath(args[i + 1])
        del args[i:i + 2]
        os.makedirs(keep, exist_ok=True)
    if not args:
        print(__doc__)
        return 64
    gd = args[0]
    fakes = args[1] if len(args) > 1 else None
    if os.environ.get("GD_SANITIZE"):
        skip("GD_SANITIZE is set (Chromium is not run in sanitized builds)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        skip("chromium is not installed (apt-get install --no-install-recommends chromium)")

    fails = Failures()
    tmp = tempfile.mkdtemp(prefix="gd-chromium-")
    try:
        control(browser, tmp, fails)
        pages = [("recorded", RECORDED)]
        if fakes:
            pages.append(("hot", hot_snapshot(gd, fakes, tmp)))
        for label, snap in pages:
            check_page(gd, browser, snap, label, tmp, keep, fails)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        print("serve_http_chromium: %d failure(s)" % len(fails))
        return 1
    print("serve_http_chromium: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
