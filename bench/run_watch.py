#!/usr/bin/env python3
"""What `gpudoctor run --watch` costs a job (docs/run.md "Watching the job").

Two measurements on the 8-GPU fake node (tests/roots/hgx-8xh100, a copy so
its kernel log can be followed, and the fake NVML answering from
tests/fakes/scenarios/hgx-8xh100.json):

1. CPU per hour of watching: a job that only sleeps runs under
   `run --watch` at the default --watch-interval (5s) and at 1s. The CPU of
   the watcher (gpudoctor's own process, its follower and sampler threads)
   and of its NVML sampler child is read from /proc/PID/stat between the
   moment the job starts and its end, and scaled to an hour.
2. The job's throughput: a CPU-bound job (a Python loop counting for a fixed
   time) runs under plain `gpudoctor run` (which execs it: nothing stays)
   and under `run --watch --watch-interval 1s`, alternately, ROUNDS times
   each; the baseline is the plain run in this same script. Printed: the
   median iterations of each and their ratio.

usage: bench/run_watch.py [BUILD_DIR] [CPU_SECONDS] [JOB_SECONDS] [ROUNDS]
       (default build, 60, 15, 5)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of one process, in seconds; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(d))
    return out


def sampler_of(pid):
    for c in children(pid):
        try:
            with open(f"/proc/{c}/cmdline", "rb") as f:
                if b"__probe-nvml-sampler" in f.read():
                    return c
        except OSError:
            pass
    return None


class Node:
    def __init__(self, build, tmp):
        self.root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(SRC, "tests", "roots", "hgx-8xh100"), self.root,
                        symlinks=True)
        fakes = os.path.join(build, "fakes")
        self.gd = os.path.join(build, "gpudoctor")
        self.probe = ["--root", self.root, "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                      "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
                      "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                    "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests", "fakes", "scenarios",
                                                            "hgx-8xh100.json")}

    def popen(self, opts, cmd, **kw):
        return subprocess.Popen([self.gd, "run"] + opts + self.probe + ["--"] + cmd, env=self.env,
                                **kw)


def watch_cpu_per_hour(node, interval, seconds):
    """CPU seconds per hour of the watcher and of its sampler child."""
    p = node.popen(["--watch", "--watch-interval", interval],
                   ["sh", "-c", f"echo started; sleep {seconds}"], stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, text=True)
    p.stdout.readline()  # the job runs: the check before it is over
    time.sleep(1)  # the sampler child has started and sampled once
    sampler = sampler_of(p.pid)
    t0, own0, smp0 = time.monotonic(), cpu_s(p.pid), cpu_s(sampler) if sampler else 0
    own1 = smp1 = None
    while p.poll() is None:
        own, smp = cpu_s(p.pid), cpu_s(sampler) if sampler else 0
        if own is not None and smp is not None:
            own1, smp1, t1 = own, smp, time.monotonic()
        time.sleep(0.5)
    hours = (t1 - t0) / 3600
    return (own1 - own0) / hours, (smp1 - smp0) / hours


LOOP = ("import time\nend = time.monotonic() + {s}\nn = 0\n"
        "while time.monotonic() < end:\n    n += 1\nprint(n)\n")


def throughput(node, opts, seconds):
    p = node.popen(opts, [sys.executable, "-c", LOOP.format(s=seconds)], stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, text=True)
    out, _ = p.communicate(timeout=seconds + 60)
    return int(out.strip().splitlines()[-1])


def main():
    args = sys.argv[1:]
    build = os.path.abspath(args[0] if args else os.path.join(SRC, "build"))
    cpu_seconds = int(args[1]) if len(args) > 1 else 60
    seconds = int(args[2]) if len(args) > 2 else 15
    rounds = int(args[3]) if len(args) > 3 else 5
    with tempfile.TemporaryDirectory() as tmp:
        node = Node(build, tmp)
        print(f"# bench/run_watch.py: gpudoctor run --watch on the 8-GPU fake node, "
              f"{os.cpu_count()} CPUs")
        print(f"\nCPU of watching a job that sleeps {cpu_seconds} s, scaled to an hour:")
        for interval in ("5s", "1s"):
            own, smp = watch_cpu_per_hour(node, interval, cpu_seconds)
            print(f"  --watch-interval {interval}: watcher {own:.1f} s/h, sampler child "
                  f"{smp:.1f} s/h, together {own + smp:.1f} CPU s per hour "
                  f"({(own + smp) / 36:.3f} % of one CPU)")
        print(f"\nA CPU-bound job's iterations in {seconds} s, {rounds} rounds each, alternating "
              "(baseline: plain `gpudoctor run`, which execs the job):")
        plain, watched = [], []
        for _ in range(rounds):
            plain.append(throughput(node, [], seconds))
            watched.append(throughput(node, ["--watch", "--watch-interval", "1s"], seconds))
        mp, mw = statistics.median(plain), statistics.median(watched)
        print(f"  plain run:                      median {mp:,} iterations  {plain}")
        print(f"  run --watch --watch-interval 1s: median {mw:,} iterations  {watched}")
        print(f"  ratio watched/plain: {mw / mp:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
