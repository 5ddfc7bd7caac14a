#!/usr/bin/env python3
"""A real Prometheus scrapes `gpudoctor serve` on the fake 8-GPU machine.

Starts `gpudoctor serve` live on the fake HGX H100 (tests/roots/hgx-8xh100,
tests/fakes/scenarios/hgx-8xh100.json, the fake libraries in FAKES_DIR) on
127.0.0.1 with a port of its choosing, checks its /metrics with
`promtool check metrics`, then starts Debian's prometheus on 127.0.0.1 with a
temporary storage dir, a 1 s scrape interval and deploy/prometheus/
gpudoctor-rules.yml, and asserts through Prometheus' HTTP API that:

- the target is up (up == 1);
- the temperature of all 8 GPUs arrived, and gpudoctor_node_info;
- the rules loaded (api/v1/rules: every alert of the file, health ok), and
  no GPU alert fires on the healthy machine;
- every PromQL expression of the Grafana dashboard is valid on this server.

Prometheus' first scrape comes 5-6 s after it starts (its discovery runs on a
fixed 5 s period), so the polls have a budget of 60 s. Everything started is
stopped in `finally`; serve must exit 0 on SIGTERM.

usage: scrape_test.py GPUDOCTOR FAKES_DIR [--sanitized]

Exits 77 (ctest's skip) under --sanitized (the ASan build: no external
daemons) or when prometheus/promtool are not installed.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
RULES = os.path.join(SRC, "deploy", "prometheus", "gpudoctor-rules.yml")
DASHBOARD = os.path.join(SRC, "deploy", "grafana", "gpudoctor-dashboard.json")
LISTENING = re.compile(r"gpudoctor serve: listening on (https?)://127\.0\.0\.1:(\d+)")
BUDGET_S = 60


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8")


def start_serve(gd, fakes, tmp):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests", "fakes", "scenarios",
                                                   "hgx-8xh100.json")}
    argv = [gd, "serve", "--root", os.path.join(SRC, "tests", "roots", "hgx-8xh100"),
            "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
            "--cudart-lib", os.path.join(fakes, "libcudart.so.13"),
            "--interval", "1s", "--no-history", "--listen", "127.0.0.1:0"]
    err_path = os.path.join(tmp, "serve.err")
    err = open(err_path, "w+")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    # The listening line on stderr gives the port.
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(err_path) as f:
            m = LISTENING.search(f.read())
        if m:
            return proc, f"{m.group(1)}://127.0.0.1:{m.group(2)}", err_path
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    with open(err_path) as f:
        text = f.read()
    raise AssertionError(f"gpudoctor serve did not print its listening line (exit "
                         f"{proc.poll()}): {text}")


def query(prom, expr):
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        _, _, body = http_get(url)
    except urllib.error.HTTPError as e:  # 400 for a bad expression
        return json.loads(e.read().decode("utf-8"))
    return json.loads(body)


def wait_for(what, fn, deadline):
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last is True:
                return
        except (OSError, ValueError) as e:
            last = e
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


def vector_values(resp):
    if resp.get("status") != "success":
        return None
    return [float(r["value"][1]) for r in resp["data"]["result"]]


def dashboard_exprs():
    with open(DASHBOARD, encoding="utf-8") as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((p.get("title"), t["expr"]))
            walk(p.get("panels", []))

    walk(dash["panels"])
    return out


def stop(proc, name, failures, expect_zero=False):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=15)
        if expect_zero and rc != 0:
            failures.append(f"{name} exited {rc} on SIGTERM, expected 0")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        failures.append(f"{name} did not stop within 15 s of SIGTERM")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--sanitized" in sys.argv:
        skip("not in the sanitized build (it starts an external daemon)")
    if len(args) != 2:
        sys.exit(__doc__)
    gd, fakes = (os.path.abspath(a) for a in args)
    prometheus = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    if prometheus is None or promtool is None:
        skip("prometheus/promtool are not installed (apt-get install prometheus)")

    failures = []
    serve = prom = None
    tmp = tempfile.mkdtemp(prefix="gd-scrape-")
    try:
        serve, base, serve_err = start_serve(gd, fakes, tmp)
        print(f"serve: {base}")

        # /metrics straight from the exporter: the content type, and promtool.
        status, ctype, body = http_get(base + "/metrics")
        if status != 200 or not ctype.startswith("text/plain") or "version=0.0.4" not in ctype:
            failures.append(f"/metrics: status {status}, Content-Type {ctype!r}")
        scrape = os.path.join(tmp, "scrape.prom")
        with open(scrape, "w") as f:
            f.write(body)
        with open(scrape, "rb") as f:
            r = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True,
                               text=True, timeout=30)
        if r.returncode != 0 or r.stderr.strip():
            failures.append(f"promtool check metrics on the live scrape: exit {r.returncode}: "
                            f"{r.stdout}{r.stderr}")

        port = free_port()
        prom_url = f"http://127.0.0.1:{port}"
        target = base.split("://", 1)[1]
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global: {{scrape_interval: 1s, evaluation_interval: 1s}}
rule_files: [{json.dumps(RULES)}]
scrape_configs:
  - job_name: gpudoctor
    scheme: {base.split("://", 1)[0]}
    static_configs: [{{targets: ['{target}']}}]
""")
        prom_log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=prom_log, stderr=subprocess.STDOUT, cwd=tmp)
        deadline = time.time() + BUDGET_S

        def ready():
            if prom.poll() is not None:
                raise AssertionError(f"prometheus exited {prom.returncode}")
            return http_get(prom_url + "/-/ready")[0] == 200

        wait_for("prometheus /-/ready", ready, deadline)
        wait_for("up{job=\"gpudoctor\"} == 1",
                 lambda: vector_values(query(prom_url, 'up{job="gpudoctor"}')) == [1.0] or
                 query(prom_url, 'up{job="gpudoctor"}'), deadline)
        wait_for("8 GPUs' temperatures",
                 lambda: len(vector_values(query(prom_url, "gpudoctor_gpu_temperature_celsius"))
                             or []) == 8, deadline)
        # The node info comes with the first full check.
        wait_for("gpudoctor_node_info",
                 lambda: vector_values(query(prom_url, "gpudoctor_node_info")) == [1.0], deadline)
        info = query(prom_url, "gpudoctor_node_info")["data"]["result"][0]["metric"]
        if info.get("gpu_count") != "8" or "H100" not in info.get("gpu_model", ""):
            failures.append(f"gpudoctor_node_info labels: {info}")
        ups = vector_values(query(prom_url, "gpudoctor_gpu_up"))
        if ups != [1.0] * 8:
            failures.append(f"gpudoctor_gpu_up: {ups}")

        # The rules loaded: every alert of the file, evaluated without error.
        _, _, body = http_get(prom_url + "/api/v1/rules")
        groups = json.loads(body)["data"]["groups"]
        loaded = {r["name"]: r for g in groups for r in g["rules"]}
        with open(RULES) as f:
            want = set(re.findall(r"^\s*- alert: (\S+)", f.read(), re.M))
        if set(loaded) != want:
            failures.append(f"rules loaded {sorted(loaded)}, the file has {sorted(want)}")

        def evaluated():
            rules = {r["name"]: r for g in json.loads(http_get(prom_url + "/api/v1/rules")[2])
                     ["data"]["groups"] for r in g["rules"]}
            return all(r.get("health") == "ok" for r in rules.values()) or \
                {n: (r.get("health"), r.get("lastError")) for n, r in rules.items()
                 if r.get("health") != "ok"}

        wait_for("every rule evaluated with health ok", evaluated, deadline)
        _, _, body = http_get(prom_url + "/api/v1/alerts")
        firing = [a["labels"]["alertname"] for a in json.loads(body)["data"]["alerts"]]
        gpu_alerts = [a for a in firing if a.startswith("Gpu") and a not in
                      ("GpuDoctorCheckFailing", "GpuDoctorCheckWarning")]
        if gpu_alerts:
            failures.append(f"alerts on the healthy machine: {gpu_alerts}")

        # Every dashboard expression is valid PromQL here.
        subs = {"$job": ".*", "$node": ".*", "$gpu": ".*", "$__rate_interval": "1m"}
        exprs = dashboard_exprs()
        for title, expr in exprs:
            for k, v in subs.items():
                expr = expr.replace(k, v)
            resp = query(prom_url, expr)
            if resp.get("status") != "success":
                failures.append(f"dashboard panel {title!r}: {expr}: {resp.get('error')}")
        print(f"ok: up, 8 GPUs, node info, {len(loaded)} rules, {len(exprs)} dashboard queries")
    except AssertionError as e:
        failures.append(str(e))
    finally:
        stop(prom, "prometheus", failures)
        stop(serve, "gpudoctor serve", failures, expect_zero=True)
        if failures:
            for name in ("serve.err", "prometheus.log"):
                path = os.path.join(tmp, name)
                if os.path.exists(path):
                    with open(path) as f:
                        print(f"--- {name} (last 2000 characters)\n{f.read()[-2000:]}",
                              file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
