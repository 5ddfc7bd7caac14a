#!/usr/bin/env python3
"""Whole-process speed of `gpudoctor check` on an 8-GPU fake node.

The node is tests/roots/hgx-8xh100 (8 x H100 + 4 NVSwitches) with the fake
NVML, CUDA and CUDA runtime answering from tests/fakes/scenarios/hgx-8xh100.json.
Runs the check RUNS times and prints the median wall time, the share of it
spent in each probe (from the report's probes[]), and ratios against two
baselines run in this same script:
  - `gpudoctor --version`: starting the process and nothing else;
  - `gpudoctor check --from SNAPSHOT`: the checks and the report on the same
    node's snapshot, with no probing.
Goal (issue 2): median under 50 ms.

It shows that the NVML and CUDA children overlap: one more check runs under
`strace -f -ttt -e trace=execve,exit_group` (when strace is installed), and
each child's span, from its execve to its exit, is printed against the
process's own.

It also times what a job pays for the wrapper and the topology map on the
same node, against `/bin/true` started directly (the baseline of a job
launch):
  - `gpudoctor run --require 8 --exclude-unhealthy --bind-cpus -- /bin/true`
  - `gpudoctor topo` (NVML only: alike GPUs need no CUDA run), `topo --verify`
    (one CUDA run) and `topo --from` the snapshot, against `check --from` it;
  - `gpudoctor topo` on the 4-GPU workstation whose GPUs differ while cuInit
    hangs (tests/fakes/scenarios/cuda-hang.json): the goal is under 2 s.

usage: bench/check_8gpu.py [BUILD_DIR] [RUNS]   (default build, 30)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
GD = os.path.join(BUILD, "gpudoctor")
FAKES = os.path.join(BUILD, "fakes")
ENV = {"PATH": "/usr/bin:/bin",
       "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests/fakes/scenarios/hgx-8xh100.json")}
PROBE_ARGS = ["--root", os.path.join(SRC, "tests/roots/hgx-8xh100"),
              "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
              "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
              "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]


def timed(argv):
    start = time.perf_counter()
    out = subprocess.run(argv, env=ENV, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000, out


def median_ms(argv):
    return statistics.median(timed(argv)[0] for _ in range(RUNS))


def child_spans(argv):
    """[(name, start_ms, end_ms)] of the process and its probe children, from
    the process's execve, under strace; None without strace."""
    if not shutil.which("strace"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        subprocess.run(["strace", "-f", "-ttt", "-qq", "-e", "trace=execve,exit_group",
                        "-o", trace] + argv, env=ENV, capture_output=True, check=True)
        started, ended, names = {}, {}, {}
        with open(trace) as f:
            for line in f:
                pid, stamp, rest = line.split(None, 2)
                t = float(stamp) * 1000
                if rest.startswith("execve(") and pid not in started:
                    started[pid] = t
                    names[pid] = ("NVML child" if "__probe-nvml" in rest else
                                  "CUDA child" if "__probe-cuda" in rest else
                                  "gpudoctor check" if not names else "other")
                elif rest.startswith("exit_group("):
                    ended[pid] = t
    t0 = min(started.values())
    return [(names[p], started[p] - t0, ended.get(p, started[p]) - t0)
            for p in sorted(started, key=started.get) if names[p] != "other"]


def main():
    walls, probe_ms = [], {}
    for _ in range(RUNS):
        ms, out = timed([GD, "check", "--json"] + PROBE_ARGS)
        report = json.loads(out.stdout)
        if len(report["gpus"]) != 8:
            sys.exit(f"expected 8 GPUs, got {len(report['gpus'])}: is the build current?")
        walls.append(ms)
        for p in report["probes"]:
            probe_ms.setdefault(p["name"], []).append(p["duration_ms"])
    check = statistics.median(walls)

    with tempfile.TemporaryDirectory() as tmp:
        snap = os.path.join(tmp, "node.json")
        subprocess.run([GD, "snapshot", "-o", snap] + PROBE_ARGS, env=ENV, check=True)
        from_snapshot = median_ms([GD, "check", "--from", snap])
        topo_from = median_ms([GD, "topo", "--from", snap])
    version = median_ms([GD, "--version"])
    true_ms = median_ms(["/bin/true"])
    run_ms = median_ms([GD, "run", "--require", "8", "--exclude-unhealthy", "--bind-cpus"] +
                       PROBE_ARGS + ["--", "/bin/true"])
    topo_ms = median_ms([GD, "topo"] + PROBE_ARGS)
    topo_verify = median_ms([GD, "topo", "--verify"] + PROBE_ARGS)
    hang_args = [GD, "topo", "--root", os.path.join(SRC, "tests/roots/ws-4x4090")] + PROBE_ARGS[2:]
    hang_env = dict(ENV, GPUDOCTOR_FAKE_SCENARIO=os.path.join(
        SRC, "tests/fakes/scenarios/cuda-hang.json"))
    start = time.perf_counter()
    subprocess.run(hang_args, env=hang_env, capture_output=True, check=True)
    topo_hang = (time.perf_counter() - start) * 1000
    spans = child_spans([GD, "check", "--json"] + PROBE_ARGS)

    print(f"gpudoctor check, 8-GPU fake node, whole process, {RUNS} runs")
    print(f"  median {check:.1f} ms (min {min(walls):.1f}, max {max(walls):.1f}); goal < 50 ms: "
          f"{'met' if check < 50 else 'NOT met'}")
    print("  share of the median per probe (median of each probe's own duration;")
    print("  the NVML and CUDA children run at the same time, so their shares overlap):")
    for name, values in probe_ms.items():
        m = statistics.median(values)
        print(f"    {name:<10} {m:7.2f} ms  {100 * m / check:5.1f} %")
    print("  baselines in this script:")
    print(f"    gpudoctor --version          {version:6.1f} ms   check = {check / version:4.1f}x")
    print(f"    gpudoctor check --from snap  {from_snapshot:6.1f} ms   check = "
          f"{check / from_snapshot:4.1f}x")
    print("  a job's start, against /bin/true started directly "
          f"({true_ms:.1f} ms):")
    print(f"    gpudoctor run ... -- /bin/true {run_ms:6.1f} ms   = {run_ms / true_ms:5.1f}x, "
          f"+{run_ms - true_ms:.1f} ms per job")
    print(f"    gpudoctor topo               {topo_ms:6.1f} ms   = check x {topo_ms / check:4.2f}")
    print(f"    gpudoctor topo --verify      {topo_verify:6.1f} ms   = check x "
          f"{topo_verify / check:4.2f}")
    print(f"    gpudoctor topo --from snap   {topo_from:6.1f} ms   = check --from x "
          f"{topo_from / from_snapshot:4.2f}")
    print(f"    gpudoctor topo, hung cuInit, GPUs that differ (one run) {topo_hang:6.0f} ms; "
          f"goal < 2000 ms: {'met' if topo_hang < 2000 else 'NOT met'}")
    if spans is None:
        print("  children's overlap: strace is not installed")
        return
    print("  the probe children's spans in one check under strace (ms from its execve;")
    print("  strace slows every system call, so only the overlap is meant):")
    for name, begin, end in spans:
        print(f"    {name:<16} {begin:7.1f} .. {end:7.1f}  ({end - begin:6.1f} ms)")
    kids = {n: (b, e) for n, b, e in spans if n.endswith("child")}
    if "NVML child" in kids and "CUDA child" in kids:
        (a0, a1), (b0, b1) = kids["NVML child"], kids["CUDA child"]
        both = max(0.0, min(a1, b1) - max(a0, b0))
        print(f"    the two children ran at the same time for {both:.1f} ms of "
              f"{(a1 - a0) + (b1 - b0):.1f} ms together")


if __name__ == "__main__":
    main()
