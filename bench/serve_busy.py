#!/usr/bin/env python3
"""What `gpudoctor serve`'s periodic check does to a busy node's GPUs.

The node is tests/roots/hgx-8xh100 (8 x H100) with the fake NVML/CUDA of
tests/fakes/scenarios/hgx-8xh100.json. Two runs of the same daemon, in this
script, each for CYCLES full checks (--check-interval 0.5s, NVML sampling
every 0.5 s, no history, no diag helper):
  - idle (the baseline): no process on any GPU: the full CUDA probe, a
    context on each GPU each check;
  - busy: a Slurm job's process (pid 4711, its slurmstepd and slurmd in the
    tree's /proc) on all 8 GPUs with 94 % of the memory, EXCLUSIVE_PROCESS.
For each: the contexts the fake libcuda was asked for (its
GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG), the GPU memory those contexts would take
at the fake's context_reserve_bytes (a figure of the fake, not a measured
one: docs/check.md), the CPU of the daemon and every child it ran
(RUSAGE_CHILDREN after it exits) per check, and the verdict.

usage: bench/serve_busy.py [BUILD_DIR] [CYCLES]   (default build, 20)
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 20
GD = os.path.join(BUILD, "gpudoctor")
FAKES = os.path.join(BUILD, "fakes")
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


def add_proc(root, pid, comm, cgroup, cmdline=None, uid=1000):
    d = os.path.join(root, "proc", str(pid))
    os.makedirs(d, exist_ok=True)
    files = {"comm": comm + "\n",
             "status": f"Name:\t{comm}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n",
             "stat": f"{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 "
                     "0 0\n",
             "cgroup": f"0::{cgroup}\n",
             "cmdline": (cmdline or comm) + "\0"}
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def machine(tmp, busy):
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(SRC, "tests", "roots", "hgx-8xh100"), root, symlinks=True)
    with open(os.path.join(SRC, "tests", "fakes", "scenarios", "hgx-8xh100.json")) as f:
        sc = json.load(f)
    if busy:
        add_proc(root, 4711, "python", "/system.slice/slurmstepd.scope/job_4711/step_batch/user/task_0")
        add_proc(root, 812, "slurmstepd", "/system.slice/slurmstepd.scope/job_4711/slurm",
                 cmdline="slurmstepd: [4711.batch]", uid=0)
        add_proc(root, 90, "slurmd", "/system.slice/slurmd.service", uid=0)
        default_total = sc.get("gpu_defaults", {}).get("memory_total_bytes", 80 << 30)
        for g in sc["gpus"]:
            used = g.get("memory_total_bytes", default_total) * 94 // 100
            g.update(memory_used_bytes=used, compute_mode=3,
                     processes=[{"pid": 4711, "used_memory_bytes": used}])
    path = os.path.join(tmp, "scenario.json")
    with open(path, "w") as f:
        json.dump(sc, f)
    return root, path, sc.get("context_reserve_bytes", 300 << 20)


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def run(busy):
    with tempfile.TemporaryDirectory() as tmp:
        root, scenario, reserve = machine(tmp, busy)
        log = os.path.join(tmp, "contexts.log")
        env = {"PATH": "/usr/bin:/bin", "GPUDOCTOR_FAKE_SCENARIO": scenario,
               "GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG": log}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.Popen([GD, "serve", "--listen", "127.0.0.1:0", "--interval", "0.5",
                              "--check-interval", "0.5", "--no-history", "--diag-helper", "none",
                              "--root", root, "--nvml-lib", f"{FAKES}/libnvidia-ml.so.1",
                              "--cuda-lib", f"{FAKES}/libcuda.so.1",
                              "--cudart-lib", f"{FAKES}/libcudart.so.13"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = int(LISTENING.search(p.stderr.readline()).group(1))
        end = time.monotonic() + 60 + CYCLES * 5
        while metric(get(port, "/metrics"), "gpudoctor_check_runs_total") < CYCLES:
            if time.monotonic() > end:
                raise SystemExit("serve did not finish its checks in time")
            time.sleep(0.1)
        metrics = get(port, "/metrics")
        checks = metric(metrics, "gpudoctor_check_runs_total")
        verdict = next((line.split("{")[1].split('"')[1] for line in metrics.splitlines()
                        if line.startswith("gpudoctor_verdict{") and line.endswith(" 1")), "?")
        p.terminate()
        p.wait(timeout=30)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        asked = open(log).read().splitlines() if os.path.exists(log) else []
        return {"checks": checks, "contexts": len(asked), "reserve": reserve, "cpu_s": cpu_s,
                "verdict": verdict}


def main():
    idle, busy = run(False), run(True)
    print(f"gpudoctor serve on the 8-GPU fake node, at least {CYCLES} full checks each")
    for name, r in (("idle (baseline)", idle), ("busy: a job on all 8 GPUs", busy)):
        per = r["contexts"] / r["checks"]
        print(f"  {name:28} {r['checks']:.0f} checks, {r['contexts']} contexts "
              f"({per:.1f} per check; at the fake's {r['reserve'] >> 20} MiB each: "
              f"{per * r['reserve'] / 2**20:.0f} MiB of GPU memory per check), "
              f"CPU {1000 * r['cpu_s'] / r['checks']:.1f} ms per check, verdict {r['verdict']}")
    ratio = (busy["cpu_s"] / busy["checks"]) / (idle["cpu_s"] / idle["checks"])
    print(f"  busy / idle: contexts {busy['contexts']} / {idle['contexts']}, "
          f"CPU per check {ratio:.2f}x")


if __name__ == "__main__":
    main()
