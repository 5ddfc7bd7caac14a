#!/usr/bin/env python3
"""End-to-end tests of `gpudoctor serve`, the real binary on loopback.

Live mode runs as the e2e tests run `check`: a recorded machine tree
(tests/roots/hgx-8xh100, copied so its /dev/kmsg can grow) and the fake
NVML/CUDA libraries driven by tests/fakes/scenarios/hgx-8xh100.json (copied
with a "hang_when_file" fault that a test switches on by creating a file).
`--from` serves a snapshot recorded from the same machine.

What must hold (docs/serve.md): the one "listening on" line; each endpoint
answers; a hung sampler leaves /metrics answering at once with the stale
mark and /healthz at 503, and the sampler recovers when the fault clears;
an Xid appended to the kernel log shows in the counters; SIGTERM ends it
with exit 0 and no child left; usage errors exit 64, a taken port 3; and a
load of concurrent scrapes gets complete, identical answers with flat
memory.

usage: serve_test.py GPUDOCTOR FAKES_DIR [-k NAME] [--sanitized]

--sanitized (ASan build): the load test runs shorter and does not judge
memory (the sanitizer's own allocations dominate).
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402  (tests/harness.py)
from harness import Skip  # noqa: E402
ROOTS = os.path.join(SRC, "tests", "roots")
FAKE_SCENARIOS = os.path.join(SRC, "tests", "fakes", "scenarios")

GD = None
FAKES = None
SANITIZED = False
LISTENING = re.compile(r"^gpudoctor serve: listening on http://127\.0\.0\.1:(\d+)$")



def probe_args(root):
    return ["--root", root,
            "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
            "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]


class Machine:
    """A private copy of the hgx-8xh100 root and fake scenario, with a
    sampler fault switched on by creating `hang_file`."""

    def __init__(self, tmp):
        self.root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(ROOTS, "hgx-8xh100"), self.root, symlinks=True)
        self.hang_file = os.path.join(tmp, "hang")
        with open(os.path.join(FAKE_SCENARIOS, "hgx-8xh100.json")) as f:
            scenario = json.load(f)
        scenario["hang_when_file"] = {"nvmlDeviceGetTemperature": self.hang_file}
        self.scenario = os.path.join(tmp, "scenario.json")
        with open(self.scenario, "w") as f:
            json.dump(scenario, f)
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                    "GPUDOCTOR_FAKE_SCENARIO": self.scenario}

    def args(self):
        return probe_args(self.root)

    def with_lost(self, bus):
        """The scenario as it is, and with GPU `bus` fallen off the bus."""
        with open(self.scenario) as f:
            healthy = json.load(f)
        lost = json.loads(json.dumps(healthy))
        next(g for g in lost["gpus"] if g["bus_id"] == bus)["lost"] = True
        return healthy, lost

    def become(self, scenario):
        """Rewrites the scenario under the daemon, as a reset or re-bind would."""
        with open(self.scenario + ".tmp", "w") as f:
            json.dump(scenario, f)
        os.replace(self.scenario + ".tmp", self.scenario)


class Daemon:
    """`gpudoctor serve ...` started in its own session; stopped (SIGKILL
    if need be) on exit from the with-block."""

    def __init__(self, args, env=None):
        self.proc = subprocess.Popen([GD, "serve", "--listen", "127.0.0.1:0"] + args,
                                     env=env or {"PATH": "/usr/bin:/bin"},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.port = None
        self.stderr_lines = []
        line = self._first_line(timeout=30)
        m = LISTENING.match(line or "")
        if not m:
            self.kill()
            raise AssertionError(f"no listening line, got {line!r}; stderr: {self.rest()}")
        self.port = int(m.group(1))
        self.stderr_lines.append(line)
        # Keep draining stderr so the daemon never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _first_line(self, timeout):
        result = []
        t = threading.Thread(target=lambda: result.append(self.proc.stderr.readline()),
                             daemon=True)
        t.start()
        t.join(timeout)
        return result[0].rstrip("\n") if result else None

    def _read_rest(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip("\n"))

    def rest(self):
        try:
            return self.proc.stderr.read()
        except Exception:  # noqa: BLE001
            return ""

    def get(self, path, timeout=5):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type"), r.read().decode()
        finally:
            c.close()

    def children(self):
        """pids whose parent is the daemon."""
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            if ppid == self.proc.pid:
                out.append(int(d))
        return out

    def sampler_pid(self):
        for pid in self.children():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"__probe-nvml-sampler" in f.read():
                        return pid
            except OSError:
                pass
        return None

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def terminate(self, timeout=10):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def test_a_flapping_gpu_is_held_until_it_stays():
    """Issue 33, item 5: a GPU that comes and goes was admitted again at
    every return. With --flap-returns 2 in a 60 s window, its second return
    is held: unhealthy, named flapping (metrics, status page, one line), not
    admitted while it keeps coming and going, and admitted once it has stayed
    for a whole --flap-hold (docs/serve.md, Flapping)."""
    bus = "0000:5d:00.0"
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        healthy, lost = m.with_lost(bus)
        machine = m.become

        labels = '{gpu="3",bus_id="%s",uuid="GPU-5f2e81a4-7b6c-4d8e-8f10-00000000005d"}' % bus
        with Daemon(m.args() + ["--interval", "0.3", "--check-interval", "0.3", "--no-history",
                                "--diag-helper", "none", "--flap-returns", "2",
                                "--flap-window", "60s", "--flap-hold", "4s"], env=m.env) as d:
            wait_ready(d)

            def value(name):
                return metric_value(d.get("/metrics")[2], name, labels)

            def lose_and_return():
                machine(lost)
                wait_for("unhealthy", lambda: value("gpudoctor_gpu_healthy") == 0, timeout=30)
                machine(healthy)

            lose_and_return()
            wait_for("admitted", lambda: value("gpudoctor_gpu_healthy") == 1, timeout=30)
            assert value("gpudoctor_gpu_flapping") == 0
            lose_and_return()
            wait_for("flapping", lambda: value("gpudoctor_gpu_flapping") == 1, timeout=30)
            assert value("gpudoctor_gpu_healthy") == 0
            assert value("gpudoctor_gpu_flaps_total") == 1
            assert value("gpudoctor_gpu_recovered_total") == 1
            page = d.get("/")[2]
            assert '<span class="badge fail">flapping</span>' in page, page[-3000:]
            assert "flapping: back 2 times within 1m; held 4s without a loss" in page

            # Lost again during the hold: the hold starts over, nothing admitted.
            time.sleep(1.5)
            machine(lost)
            time.sleep(1)
            machine(healthy)
            time.sleep(2.5)  # past the first hold's end (4 s), within the restarted one
            assert value("gpudoctor_gpu_healthy") == 0
            # Stays: admitted after a whole hold without a loss.
            wait_for("healthy after the hold", lambda: value("gpudoctor_gpu_healthy") == 1,
                     timeout=30)
            assert value("gpudoctor_gpu_flapping") == 0
            assert value("gpudoctor_gpu_recovered_total") == 2
            said = [line for line in d.stderr_lines if "flapping" in line]
            assert said == [f"gpudoctor serve: GPU {bus} flapping: back 2 times within 1m; "
                            "held 4s without a loss"], said
            assert d.terminate() == 0


def add_proc(root, pid, comm, cgroup, cmdline=None, uid=1000):
    """A process in the recorded tree's /proc, as the kernel prints it."""
    d = os.path.join(root, "proc", str(pid))
    os.makedirs(d, exist_ok=True)
    files = {
        "comm": comm + "\n",
        "status": f"Name:\t{comm}\nState:\tS (sleeping)\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n",
        "stat": f"{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
                "100 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
        "cgroup": f"0::{cgroup}\n",
        "cmdline": (cmdline or comm) + "\0",
    }
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def test_a_busy_node_is_left_alone_and_an_orphan_is_named():
    """Issue 34: a Slurm job's process on every GPU (94 % of the memory,
    EXCLUSIVE_PROCESS mode) over several check cycles: no context asked for
    (the fake libcuda's log), verdict ok, every GPU healthy. Then the job's
    slurmstepd is gone and its process stays: process.orphan fails and names
    the pid and the job."""
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        job_cgroup = "/system.slice/slurmstepd.scope/job_4711/step_batch/user/task_0"
        add_proc(m.root, 4711, "python", job_cgroup)
        add_proc(m.root, 812, "slurmstepd", "/system.slice/slurmstepd.scope/job_4711/slurm",
                 cmdline="slurmstepd: [4711.batch]", uid=0)
        add_proc(m.root, 90, "slurmd", "/system.slice/slurmd.service", uid=0)
        with open(m.scenario) as f:
            busy = json.load(f)
        total = busy.get("gpu_defaults", {}).get("memory_total_bytes", 80 << 30)
        for g in busy["gpus"]:
            total_g = g.get("memory_total_bytes", total)
            g["memory_used_bytes"] = total_g * 94 // 100
            g["processes"] = [{"pid": 4711, "used_memory_bytes": total_g * 94 // 100}]
            g["compute_mode"] = 3
        m.become(busy)
        log = os.path.join(tmp, "contexts.log")
        env = dict(m.env, GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG=log)
        with Daemon(m.args() + ["--interval", "0.3", "--check-interval", "0.3", "--no-history",
                                "--diag-helper", "none"], env=env) as d:
            wait_ready(d)
            wait_for("4 checks", lambda: (metric_value(d.get("/metrics")[2],
                                                      "gpudoctor_check_runs_total") or 0) >= 4,
                     timeout=60)
            metrics = d.get("/metrics")[2]
            assert metric_value(metrics, "gpudoctor_verdict", '{severity="ok"}') == 1, \
                [line for line in metrics.splitlines() if "finding" in line][:20]
            healthy = [line for line in metrics.splitlines()
                       if line.startswith("gpudoctor_gpu_healthy{")]
            assert len(healthy) == 8 and all(line.endswith(" 1") for line in healthy), healthy
            asked = open(log).read().splitlines() if os.path.exists(log) else []
            assert asked == [], f"contexts asked for on busy GPUs: {asked[:5]}"

            # The job ends; its process does not.
            shutil.rmtree(os.path.join(m.root, "proc", "812"))
            wait_for("process.orphan", lambda: 'gpudoctor_finding{id="process.orphan",'
                     'severity="fail"' in d.get("/metrics")[2], timeout=30)
            report = json.loads(d.get("/report.json")[2])
            orphan = [f for f in report["findings"] if f["id"] == "process.orphan"]
            assert orphan and "pid 4711" in orphan[0]["summary"] and \
                "slurm job 4711" in orphan[0]["summary"], orphan
            assert d.terminate() == 0


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def wait_for(what, predicate, timeout=15, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def wait_ready(d):
    """Healthy and past the first check: /healthz is ok before any check has
    finished (the first check may take seconds on a loaded machine), and
    /report.json answers 503 and /metrics lacks the check series until then."""
    wait_for("/healthz ok", lambda: d.get("/healthz")[0] == 200)
    wait_for("the first check", lambda: d.get("/report.json")[0] == 200, timeout=30)


def metric_value(text, name, labels=""):
    for line in text.splitlines():
        if line.startswith(name + labels + " ") or (not labels and line.startswith(name + " ")):
            return float(line.rsplit(" ", 1)[1])
    return None


def record_snapshot(tmp, machine):
    path = os.path.join(tmp, "snap.json")
    r = subprocess.run([GD, "snapshot", "-o", path] + machine.args(), env=machine.env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return path


# --- tests ------------------------------------------------------------------------


def test_usage_errors():
    with tempfile.TemporaryDirectory() as tmp:
        snap = record_snapshot(tmp, Machine(tmp))
        for args, words in [
            (["--listen", "nonsense"], "--listen"),
            (["--listen", "127.0.0.1:99999"], "--listen"),
            (["--interval", "fast"], "--interval"),
            (["--check-interval", "0s"], "--check-interval"),
            (["--retention", "-1d"], "--retention"),
            (["--history", os.path.join(tmp, "h.db"), "--no-history"], "--no-history"),
            (["--web-config", os.path.join(tmp, "missing.yml")], "web config"),
        ]:
            r = subprocess.run([GD, "serve", "--from", snap] + args, capture_output=True,
                               text=True, timeout=30)
            assert r.returncode == 64, (args, r.returncode, r.stderr)
            lines = r.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("gpudoctor: ") and words in lines[0], \
                (args, r.stderr)
            assert lines[0].count(words) == 1, ("said twice", lines[0])
        r = subprocess.run([GD, "serve", "--from", os.path.join(tmp, "nope.json")],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 3 and r.stderr.startswith("gpudoctor: "), r.stderr
        r = subprocess.run([GD, "serve", "--help"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and "--check-interval" in r.stdout and "Prometheus" in r.stdout
        # The exporter's own binary, started by hand, is `gpudoctor serve`.
        serve_binary = os.path.join(os.path.dirname(GD), "gpudoctor-serve")
        r = subprocess.run([serve_binary, "--help"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and "Usage: gpudoctor serve" in r.stdout, r.stdout[:300]


def test_port_taken_is_exit_3():
    with tempfile.TemporaryDirectory() as tmp:
        snap = record_snapshot(tmp, Machine(tmp))
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            r = subprocess.run([GD, "serve", "--from", snap, "--listen", f"127.0.0.1:{port}"],
                               capture_output=True, text=True, timeout=30)
            assert r.returncode == 3, (r.returncode, r.stderr)
            assert r.stderr.startswith("gpudoctor: ") and str(port) in r.stderr, r.stderr
        finally:
            s.close()


def test_from_snapshot_serves_every_endpoint():
    with tempfile.TemporaryDirectory() as tmp:
        snap = record_snapshot(tmp, Machine(tmp))
        with Daemon(["--from", snap]) as d:
            status, ctype, body = d.get("/metrics")
            assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), (status, ctype)
            assert "gpudoctor_" in body and body.endswith("\n")
            assert metric_value(body, "gpudoctor_sample_stale") == 0, body[:2000]
            status, ctype, body = d.get("/report.json")
            assert status == 200 and ctype.startswith("application/json")
            report = json.loads(body)
            assert report["schema"] == "gpudoctor.report/v1", report
            assert report["verdict"] == "ok", report["verdict"]  # notes never lift it
            assert "silenced" not in report
            assert d.get("/healthz")[:3:2] == (200, "ok\n")
            status, ctype, body = d.get("/")
            assert status == 200 and ctype.startswith("text/html"), (status, ctype)
            assert d.children() == [], "--from starts no child"
            assert d.terminate() == 0
            assert d.stderr_lines == [d.stderr_lines[0]], d.stderr_lines


def test_skip_silences_ids_and_the_report_says_so():
    with tempfile.TemporaryDirectory() as tmp:
        snap = record_snapshot(tmp, Machine(tmp))
        with Daemon(["--from", snap, "--skip", "advice.*,device-order"]) as d:
            report = json.loads(d.get("/report.json")[2])
            assert report["silenced"] == {"only": [], "skip": ["advice.*", "device-order"]}
            ids = {f["id"] for f in report["findings"]}
            assert not any(i.startswith(("advice.", "device-order.")) for i in ids), ids
            assert 'id="advice.' not in d.get("/metrics")[2]
        r = subprocess.run([GD, "serve", "--from", snap, "--skip", "nosuch.*"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 64 and "matches no check" in r.stderr, r


def test_live_mode_samples_checks_and_follows_the_kernel_log():
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        with Daemon(m.args() + ["--no-history", "--interval", "0.3s", "--check-interval", "1s",
                                "--deadline", "2"], env=m.env) as d:
            wait_ready(d)
            status, _, body = d.get("/report.json")
            assert status == 200 and json.loads(body)["schema"] == "gpudoctor.report/v1"
            status, _, metrics = d.get("/metrics")
            assert status == 200 and metric_value(metrics, "gpudoctor_sample_stale") == 0
            sampler = wait_for("the sampler child", d.sampler_pid)
            # The same child serves sample after sample (no nvmlInit per scrape).
            time.sleep(1)
            assert d.sampler_pid() == sampler

            # An Xid logged now is counted by the follower.
            labels = '{bus_id="0000:18:00.0",xid="79"}'
            before = metric_value(metrics, "gpudoctor_xid_events_total", labels) or 0
            with open(os.path.join(m.root, "dev", "kmsg"), "a") as f:
                f.write("4,99990,86000000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
                        "name=<unknown>, GPU has fallen off the bus.\n")
            wait_for("the Xid counter", lambda: (metric_value(
                d.get("/metrics")[2], "gpudoctor_xid_events_total", labels) or 0) == before + 1)
            # Later checks see the event in the log too: the counter stays put.
            time.sleep(2.5)
            assert metric_value(d.get("/metrics")[2], "gpudoctor_xid_events_total",
                                labels) == before + 1

            assert d.terminate() == 0
            wait_for("the sampler child to be gone", lambda: not alive(sampler), timeout=5)
            assert [line for line in d.stderr_lines[1:]] == [], d.stderr_lines


def test_a_hung_sampler_is_killed_and_scrapes_stay_quick():
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        with Daemon(m.args() + ["--no-history", "--interval", "0.3s", "--check-interval", "30s",
                                "--deadline", "1"], env=m.env) as d:
            wait_for("/healthz ok", lambda: d.get("/healthz")[0] == 200)
            first = wait_for("the sampler child", d.sampler_pid)
            open(m.hang_file, "w").close()
            # The sample in flight hangs; /metrics answers at once all along.
            end = time.monotonic() + 3
            slowest = 0
            while time.monotonic() < end:
                t0 = time.monotonic()
                status, _, body = d.get("/metrics", timeout=2)
                slowest = max(slowest, time.monotonic() - t0)
                assert status == 200
                time.sleep(0.05)
            assert slowest < 0.5, f"a scrape took {slowest:.2f} s while the sampler hung"
            body = d.get("/metrics")[2]
            assert metric_value(body, "gpudoctor_sample_stale") == 1, body[:3000]
            # The last good per-GPU values are still served.
            assert "gpudoctor_gpu_temperature_celsius" in body or "temperature" in body
            status, _, why = d.get("/healthz")
            assert status == 503 and "stale" in why and "nvmlDeviceGetTemperature" in why, why
            assert not alive(first), "the hung sampler child was not killed"

            os.unlink(m.hang_file)
            wait_for("recovery", lambda: d.get("/healthz")[0] == 200, timeout=10)
            assert metric_value(d.get("/metrics")[2], "gpudoctor_sample_stale") == 0
            children = d.children()
            assert d.terminate() == 0
            for pid in children:
                wait_for(f"child {pid} to be gone", lambda: not alive(pid), timeout=5)


def test_a_lost_gpu_is_healthy_again_only_after_a_reprobe():
    """GPU 0000:5d:00.0 falls off the bus and comes back (the fake scenario
    rewritten under the daemon, as a reset or re-bind would): it is unhealthy
    from the first check that fails on it, stays so while its re-probe
    fails (the diag helper crashes), and is healthy again, counted once with
    the time it took, after the re-probe passes; the sampler child is
    restarted to open NVML afresh (docs/serve.md, Recovery)."""
    bus = "0000:5d:00.0"
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        healthy, lost = m.with_lost(bus)
        machine = m.become

        # The fake helper's level 1 on the one GPU asked for, or a crash.
        with open(os.path.join(SRC, "tests", "diag", "scenarios", "healthy-2gpu-l1.json")) as f:
            l1 = json.load(f)
        l1["lines"] = [line for line in l1["lines"] if "$GPU1" not in json.dumps(line)]
        diag = os.path.join(tmp, "diag.json")
        args_to = os.path.join(tmp, "diag-args.json")

        def helper(scenario):
            with open(diag + ".tmp", "w") as f:
                json.dump(dict(scenario, args_to=args_to), f)
            os.replace(diag + ".tmp", diag)

        helper({"then": "crash"})
        env = dict(m.env, GPUDOCTOR_FAKE_DIAG=diag)
        fake_helper = os.path.join(SRC, "tests", "fakes", "fake_diag_helper.py")
        labels = '{gpu="3",bus_id="%s",uuid="GPU-5f2e81a4-7b6c-4d8e-8f10-00000000005d"}' % bus
        with Daemon(m.args() + ["--interval", "0.3", "--check-interval", "0.5", "--no-history",
                                "--diag-helper", fake_helper], env=env) as d:
            wait_ready(d)

            def value(name, extra=""):
                body = d.get("/metrics")[2]
                return metric_value(body, name, labels[:-1] + extra + "}" if extra else labels)

            assert value("gpudoctor_gpu_healthy") == 1
            assert value("gpudoctor_gpu_recovered_total") == 0
            restarts = metric_value(d.get("/metrics")[2], "gpudoctor_sampler_restarts_total")

            machine(lost)
            wait_for("unhealthy", lambda: value("gpudoctor_gpu_healthy") == 0, timeout=30)
            assert not os.path.exists(args_to), "no re-probe while the GPU is still lost"

            machine(healthy)  # back on the bus; the helper still crashes
            wait_for("a failed re-probe",
                     lambda: (value("gpudoctor_gpu_reprobes_total", ',result="fail"') or 0) >= 1,
                     timeout=30)
            assert value("gpudoctor_gpu_healthy") == 0
            assert value("gpudoctor_gpu_recovered_total") == 0
            page = d.get("/")[2]
            assert "<table id=recovery>" in page and bus in page, page[-3000:]
            assert "crashed: SIGSEGV" in page
            wait_for("the failure's note", lambda: any(
                f"GPU {bus} still unhealthy: re-probe failed on {bus}: diag level 1" in line
                for line in d.stderr_lines))

            helper(l1)
            wait_for("healthy again", lambda: value("gpudoctor_gpu_healthy") == 1, timeout=30)
            body = d.get("/metrics")[2]
            assert metric_value(body, "gpudoctor_gpu_recovered_total", labels) == 1
            assert metric_value(body, "gpudoctor_gpu_recovery_seconds", labels) > 0
            assert metric_value(body, "gpudoctor_gpu_reprobes_total",
                                labels[:-1] + ',result="pass"}') == 1
            others = [line for line in body.splitlines()
                      if line.startswith("gpudoctor_gpu_recovered_total{") and bus not in line]
            assert len(others) == 7 and all(line.endswith(" 0") for line in others), others
            with open(args_to) as f:
                argv = json.load(f)["argv"]
            assert argv[argv.index("--level") + 1] == "1", argv
            assert [argv[i + 1] for i, a in enumerate(argv) if a == "--gpu"] == [bus], argv
            page = d.get("/")[2]
            assert '<span class="badge ok">healthy</span>' in page and "re-probe passed" in page
            wait_for("the sampler restarted", lambda: metric_value(
                d.get("/metrics")[2], "gpudoctor_sampler_restarts_total") > restarts)
            assert any(f"GPU {bus} healthy again: re-probe passed on {bus}: NVML: answers" in line
                       and "diag level 1: passed" in line for line in d.stderr_lines), \
                d.stderr_lines[-5:]
            assert d.terminate() == 0


def series_of(body):
    """The metric names and labels of an exposition, in order (no values)."""
    return [line.rsplit(" ", 1)[0] for line in body.splitlines() if line and line[0] != "#"]


def test_load_concurrent_scrapes_complete_and_memory_flat():
    seconds = 4 if SANITIZED else 10
    threads = 16
    with tempfile.TemporaryDirectory() as tmp:
        m = Machine(tmp)
        with Daemon(m.args() + ["--no-history", "--interval", "0.5s", "--check-interval", "60s"],
                    env=m.env) as d:
            wait_ready(d)
            reference = d.get("/metrics")[2]
            want = series_of(reference)
            last_family = [line for line in reference.splitlines() if line.startswith("# TYPE")][-1]
            assert want, "no series"
            errors, counts = [], [0] * threads

            def scraper(i, until):
                conn = None
                while time.monotonic() < until and len(errors) < 10:
                    try:
                        if conn is None:
                            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
                        conn.request("GET", "/metrics")
                        r = conn.getresponse()
                        body = r.read().decode()
                        if r.getheader("Connection", "").lower() == "close":
                            conn.close()
                            conn = None
                    except Exception as e:  # noqa: BLE001
                        errors.append(f"thread {i}: {e!r}")
                        conn = None
                        continue
                    if r.status != 200:
                        errors.append(f"thread {i}: status {r.status}")
                    elif not body.endswith("\n") or last_family not in body:
                        errors.append(f"thread {i}: incomplete answer ({len(body)} bytes)")
                    elif series_of(body) != want:
                        errors.append(f"thread {i}: series differ")
                    counts[i] += 1
                if conn is not None:
                    conn.close()

            def load(duration):
                until = time.monotonic() + duration
                ts = [threading.Thread(target=scraper, args=(i, until)) for i in range(threads)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()

            load(2)  # warm-up: every server thread and arena touched
            rss_start = d.rss_kib()
            counts[:] = [0] * threads
            load(seconds)
            rss_end = d.rss_kib()
            total = sum(counts)
            assert not errors, errors[:10]
            assert total > threads * seconds, f"only {total} scrapes in {seconds} s"
            print(f"      {total} scrapes in {seconds} s by {threads} threads; "
                  f"RSS {rss_start} -> {rss_end} KiB")
            if not SANITIZED:
                assert rss_end - rss_start <= 2048, f"RSS grew {rss_start} -> {rss_end} KiB"
            assert d.get("/healthz")[0] == 200
            assert d.terminate() == 0


def main():
    global GD, FAKES, SANITIZED
    args = sys.argv[1:]
    SANITIZED = "--sanitized" in args
    args = [a for a in args if a != "--sanitized"]
    only = harness.take_k(args)
    if len(args) != 2:
        print(__doc__)
        return 64
    GD, FAKES = os.path.abspath(args[0]), os.path.abspath(args[1])
    return harness.run_tests(globals(), only)


if __name__ == "__main__":
    sys.exit(main())
