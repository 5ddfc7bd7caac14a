#!/usr/bin/env python3
"""What `gpudoctor diag` costs around its CUDA helper, on the CPU.

`gpudoctor diag` probes the machine, starts gpudoctor-diag as a child with a
deadline, samples NVML beside it, parses its JSON lines, judges every figure,
prints the report and keeps the run in the history. The GPU time is the
helper's; this script measures everything else, without a GPU: the helper
is a stand-in that writes a recorded level-3 answer for 8 x H100 (the one
tests/diag/run.py builds: 8 devices, their copies, memory tests and GEMMs,
56 P2P pairs, NCCL sizes and the scaling step) and exits.

Baseline, in this same script: that stand-in started directly with the same
answer read to the end. The overhead is diag's median wall time minus the
baseline's, for three forms:
  - from the node's snapshot (--from), no history: parsing, judging, report;
  - the same, keeping the run in a fresh history database (SQLite);
  - live on the fake 8-GPU node (tests/roots/hgx-8xh100 with the fake NVML,
    CUDA and CUDA runtime): the probes and the NVML sampler child as well.
Each run's --json report is checked (8 GPUs, no diag finding worse than info, 56 P2P
pairs): a wrong answer fails the script before any time is printed.
Also printed: `gpudoctor check --from` on the same snapshot, the cost of the
checks and the report alone, as a yardstick.

Goal: at most 50 ms of overhead live (a level-1 run on real GPUs takes
seconds: a CUDA context alone is a few hundred ms).

usage: bench/diag_overhead.py [BUILD_DIR] [RUNS]   (default build, 30)
Exit status: 0 goal met, 1 a wrong answer, 2 the goal missed.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "diag"))
import run as diag_e2e  # noqa: E402  (tests/diag/run.py: the recorded helper answer)

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
GD = os.path.join(BUILD, "gpudoctor")
FAKES = os.path.join(BUILD, "fakes")
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent",
       "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests/fakes/scenarios/hgx-8xh100.json")}
PROBE_ARGS = ["--root", os.path.join(SRC, "tests/roots/hgx-8xh100"),
              "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
              "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
              "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]
GOAL_MS = 50


def timed(argv):
    start = time.perf_counter()
    out = subprocess.run(argv, env=ENV, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000, out


def verified(out, what):
    """The run's report must be the healthy one; returns it."""
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{what}: exit {out.returncode}, no JSON report: {out.stderr.strip()[-300:]}")
    bad = [f["id"] for f in doc["findings"]
           if f["check"] == "diag" and f["severity"] not in ("ok", "info", "n/a")]
    pairs = sum(1 for f in doc["diag"]["figures"] if f["metric"].startswith("p2p."))
    if out.returncode != 0 or len(doc["gpus"]) != 8 or bad or pairs != 56:
        sys.exit(f"{what}: wrong answer: exit {out.returncode}, {len(doc['gpus'])} GPUs, "
                 f"{pairs} P2P figures, findings not ok: {bad}")
    return doc


def median_ms(argv, what, check=True):
    walls = []
    for _ in range(RUNS):
        ms, out = timed(argv())
        if check:
            verified(out, what)
        elif out.returncode != 0:
            sys.exit(f"{what}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
        walls.append(ms)
    return statistics.median(walls)


def main():
    with tempfile.TemporaryDirectory(prefix="gd-diag-bench-") as tmp:
        answer = os.path.join(tmp, "answer.jsonl")
        with open(answer, "w") as f:
            for line in diag_e2e.healthy_lines(3, diag_e2e.BUSES):
                f.write(json.dumps(line) + "\n")
            f.write('{"type": "done"}\n')
        helper = os.path.join(tmp, "gpudoctor-diag")
        with open(helper, "w") as f:
            f.write(f"#!/bin/sh\nexec cat {answer}\n")
        os.chmod(helper, 0o755)
        snapshot = diag_e2e.SNAPSHOT
        base = [GD, "diag", "--level", "3", "--helper", helper, "--json"]
        runs = iter(range(10**9))

        baseline = median_ms(lambda: [helper], "the stand-in helper", check=False)
        from_snap = median_ms(lambda: base + ["--from", snapshot, "--no-history"],
                              "diag --from")
        with_history = median_ms(
            lambda: base + ["--from", snapshot, "--history",
                            os.path.join(tmp, f"h{next(runs)}.db")], "diag --from --history")
        live = median_ms(lambda: base + ["--no-history"] + PROBE_ARGS, "diag live")
        check = median_ms(lambda: [GD, "check", "--from", snapshot], "check --from",
                          check=False)
        size = os.path.getsize(answer)

    print(f"gpudoctor diag --level 3 around a stand-in helper, 8 x H100, {RUNS} runs, medians")
    print(f"  helper answer: {size} bytes of JSON lines (8 GPUs, 56 P2P pairs, NCCL, scaling)")
    print(f"  baseline, the stand-in helper alone:      {baseline:6.1f} ms")
    rows = (("diag --from SNAPSHOT --no-history", from_snap),
            ("diag --from SNAPSHOT --history (new db)", with_history),
            ("diag live (probes + NVML sampler)", live))
    for name, ms in rows:
        print(f"  {name + ':':<41} {ms:6.1f} ms, overhead {ms - baseline:6.1f} ms "
              f"({ms / baseline:.1f}x the baseline)")
    print(f"  yardstick, check --from SNAPSHOT:         {check:6.1f} ms")
    overhead = live - baseline
    met = overhead <= GOAL_MS
    print(f"goal: live overhead <= {GOAL_MS} ms: {'met' if met else 'NOT met'} "
          f"({overhead:.1f} ms)")
    return 0 if met else 2


if __name__ == "__main__":
    sys.exit(main())
