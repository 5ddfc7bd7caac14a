#!/usr/bin/env python3
"""CPU per scrape and resident memory of `gpudoctor serve`, side by side
with Debian's prometheus-node-exporter measured in this same script.

gpudoctor serves the 8-GPU fake node (tests/roots/hgx-8xh100 with the fake
NVML and CUDA answering from tests/fakes/scenarios/hgx-8xh100.json), live:
its sampler child keeps the fake NVML loaded and samples every --interval.
Both exporters are scraped SCRAPES times over one keep-alive connection,
as Prometheus does. CPU is the exporter process's utime+stime
(/proc/PID/stat) across the scrapes, divided by their number; the cost of
gpudoctor's background sampling over the same wall time is measured
separately (an idle stretch of equal length) and subtracted, so the figure
is what one scrape costs. The sampler child is a separate process; its CPU
and memory are printed on their own line.

Goals (issue 5): at most 1 ms CPU per scrape and under 10 MB resident.

usage: bench/serve_scrape.py [BUILD_DIR] [SCRAPES]     (default build, 1000)
       bench/serve_scrape.py --real [SCRAPES] [--save DIR]
         --real: this machine's NVML (a GPU machine), no fakes; --save keeps
         every scrape body as DIR/scrape-NNN.prom for `promtool check metrics`.
         The binaries come from $GD_BIN_DIR when set (scripts/device-check.sh).
"""
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def rss_kib(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE_KIB


def rss_by_file_kib(pid):
    """Resident KiB per mapped file ([heap], [stack], [anon] for the rest),
    from /proc/PID/smaps, largest first: where the resident memory is."""
    out, name = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if not parts[0].endswith(":"):  # a mapping's first line: range perms offset dev inode [path]
                name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
            elif parts[0] == "Rss:":
                out[name] = out.get(name, 0) + int(parts[1])
    return sorted(out.items(), key=lambda kv: -kv[1])


def memory_kib(pid):
    """(Pss, private) from smaps_rollup: RSS counts every shared-library page
    the process touched in full; Pss shares them out among the processes
    mapping them; private pages are this process's alone."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                out[parts[0].rstrip(":")] = int(parts[1])
    return out.get("Pss", 0), out.get("Private_Clean", 0) + out.get("Private_Dirty", 0)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc, timeout_s=20):
    """The port from gpudoctor serve's one stderr line."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if "listening on http" in line:
            return int(line.rsplit(":", 1)[1].strip().rstrip("/"))
    sys.exit("gpudoctor serve did not start: " + (proc.stderr.read() or "no output"))


def wait_http(port, path, timeout_s=10):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit(f"127.0.0.1:{port}{path} did not answer")


def scrape(port, n, save_dir=None):
    """n scrapes over one keep-alive connection; returns bytes of the last."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = b""
    for i in range(n):
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"scrape {i}: HTTP {r.status}")
        if save_dir:
            with open(os.path.join(save_dir, f"scrape-{i:03d}.prom"), "wb") as f:
                f.write(body)
    conn.close()
    return body


def measure(pid, port, n, save_dir=None):
    scrape(port, 20)  # warm-up: first-touch pages, caches
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    body = scrape(port, n, save_dir)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0
    return cpu, wall, body


def idle_cpu(pid, wall):
    cpu0 = cpu_seconds(pid)
    time.sleep(wall)
    return cpu_seconds(pid) - cpu0


def gpudoctor_cmd(build, real, port):
    gd = os.path.join(build, "gpudoctor")
    cmd = [gd, "serve", "--listen", f"127.0.0.1:{port}", "--interval", "1s",
           "--check-interval", "1h", "--no-history"]
    env = {"PATH": "/usr/bin:/bin"}
    if os.environ.get("LD_LIBRARY_PATH"):  # staged libraries (scripts/device-check.sh)
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    if not real:
        fakes = os.path.join(build, "fakes")
        cmd += ["--root", os.path.join(SRC, "tests/roots/hgx-8xh100"),
                "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
                "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
        env["GPUDOCTOR_FAKE_SCENARIO"] = os.path.join(SRC, "tests/fakes/scenarios/hgx-8xh100.json")
    return cmd, env


def report(name, cpu, wall, n, body, rss, idle=None):
    per = (cpu - (idle or 0)) / n * 1000
    series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    extra = f", background {idle * 1000:.1f} ms CPU subtracted" if idle is not None else ""
    print(f"{name:28} {per:6.3f} ms CPU/scrape  {rss / 1024:6.1f} MiB RSS  "
          f"{len(body) / 1024:6.1f} KiB  {series:4d} series  ({n} scrapes in {wall:.2f} s{extra})")
    return per


def main():
    args = sys.argv[1:]
    real = "--real" in args
    save_dir = None
    if "--save" in args:
        save_dir = args[args.index("--save") + 1]
        os.makedirs(save_dir, exist_ok=True)
        del args[args.index("--save"):args.index("--save") + 2]
    args = [a for a in args if a != "--real"]
    default_build = os.environ.get("GD_BIN_DIR") or os.path.join(SRC, "build")
    build = os.path.abspath(default_build if real or not args else args.pop(0))
    n = int(args[0]) if args else (200 if real else 1000)

    port = free_port()
    cmd, env = gpudoctor_cmd(build, real, 0)
    gd = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    node = None
    try:
        port = wait_listening(gd)
        wait_http(port, "/metrics")
        time.sleep(2.5)  # a sample or two in: the scrape renders live values
        cpu, wall, body = measure(gd.pid, port, n, save_dir)
        idle = idle_cpu(gd.pid, wall)
        print(f"gpudoctor serve, {'this machine' if real else '8 fake GPUs'}, "
              f"sampling every 1 s; {n} scrapes each:")
        gd_per = report("gpudoctor serve", cpu, wall, n, body, rss_kib(gd.pid), idle)
        pss, private = memory_kib(gd.pid)
        print(f"{'':28} Pss {pss / 1024:.1f} MiB, private {private / 1024:.1f} MiB")
        by_file = rss_by_file_kib(gd.pid)
        top = ", ".join(f"{name} {kib / 1024:.1f}" for name, kib in by_file[:8])
        rest = sum(kib for _, kib in by_file[8:])
        print(f"{'':28} resident MiB by file: {top}, the rest {rest / 1024:.1f}")
        for child in children(gd.pid):
            print(f"{'  its NVML sampler child':28} {cpu_seconds(child) * 1000:6.1f} ms CPU in all  "
                  f"{rss_kib(child) / 1024:6.1f} MiB RSS (a separate process)")

        exe = shutil.which("prometheus-node-exporter")
        if exe is None:
            print("prometheus-node-exporter: not installed, no baseline")
            return 0
        nport = free_port()
        node = subprocess.Popen([exe, f"--web.listen-address=127.0.0.1:{nport}",
                                 "--no-collector.systemd"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_http(nport, "/metrics")
        ncpu, nwall, nbody = measure(node.pid, nport, n)
        node_per = report("prometheus-node-exporter", ncpu, nwall, n, nbody, rss_kib(node.pid))
        pss, private = memory_kib(node.pid)
        print(f"{'':28} Pss {pss / 1024:.1f} MiB, private {private / 1024:.1f} MiB")
        if node_per > 0:
            print(f"ratio: gpudoctor serve costs {gd_per / node_per:.2f}x node-exporter's CPU per "
                  f"scrape, {rss_kib(gd.pid) / rss_kib(node.pid):.2f}x its RSS")
        print("goals: <= 1 ms CPU/scrape, < 10 MB RSS")
    finally:
        for p in (gd, node):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
