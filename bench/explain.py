#!/usr/bin/env python3
"""explain on a 1 MiB paste: `gpudoctor explain --json < F` against `grep -c CUDA F`.

The paste is every symptom of the corpus (tests/cases/*.json: real error text
from public threads) shuffled with a fixed seed and repeated until it reaches
--size bytes (default 1 MiB): tracebacks, nvidia-smi tables, kernel logs,
container errors, all of explain's parsers at work on every line. Then the
best of --runs (default 10) wall times of both commands over the same file,
each writing to a pipe, the page cache warm.

Prints both times, the ratio explain/grep and whether the goal holds: explain
under 50 ms on the 1 MiB paste.

Usage: bench/explain.py [GPUDOCTOR] [--size BYTES] [--runs N]
GPUDOCTOR defaults to build/gpudoctor. Exit 0 when the goal holds, 2 when not,
1 when explain fails.
"""
import argparse
import glob
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOAL_S = 0.050


def paste(size, seed):
    texts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "cases", "*.json"))):
        with open(path) as f:
            texts.append(json.load(f)["symptom"])
    rng = random.Random(seed)
    out, n = [], 0
    while n < size:
        rng.shuffle(texts)
        for t in texts:
            out.append(t + "\n")
            n += len(t.encode()) + 1
            if n >= size:
                break
    return "".join(out).encode()[:size]


def best(cmd, path, runs):
    times = []
    for _ in range(runs):
        with open(path, "rb") as stdin:
            t0 = time.perf_counter()
            p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            times.append(time.perf_counter() - t0)
        # explain: 0-2 a verdict, 3 nothing recognized; grep -c: 0 found, 1 none
        if p.returncode not in (0, 1, 2, 3):
            sys.stderr.write("%s failed (%d): %s\n" % (cmd[0], p.returncode, p.stderr[-500:]))
            sys.exit(1)
    return min(times), p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpudoctor", nargs="?", default=os.path.join(ROOT, "build", "gpudoctor"))
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    data = paste(a.size, a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "paste.txt")
        with open(path, "wb") as f:
            f.write(data)
        best(["cat", path], path, 1)  # page cache
        t_explain, out = best([a.gpudoctor, "explain", "--json", "-"], path, a.runs)
        t_grep, _ = best(["grep", "-c", "CUDA", path], path, a.runs)
    doc = json.loads(out)
    said = [f["id"] for f in doc["findings"] if f["severity"] in ("fail", "warn", "info")]
    print("machine: %s, %d CPUs" % (platform.machine(), os.cpu_count()))
    print("paste: %d bytes, %d lines (corpus symptoms, seed %d)"
          % (len(data), data.count(b"\n"), a.seed))
    print("explain --json: %.1f ms (best of %d), %d findings that say something"
          % (t_explain * 1e3, a.runs, len(said)))
    print("grep -c CUDA:   %.1f ms (best of %d)" % (t_grep * 1e3, a.runs))
    print("ratio explain/grep: %.1f" % (t_explain / t_grep))
    ok = t_explain < GOAL_S
    print("goal (under %.0f ms): %s" % (GOAL_S * 1e3, "holds" if ok else "MISSED"))
    sys.exit(0 if ok else 2)


if __name__ == "__main__":
    main()
