#!/usr/bin/env python3
"""History growth under a flapping GPU (issue 33, item 5).

A GPU lost and back every STEP seconds makes every check's report differ
from the one before. Before schema 3 each such report kept its whole JSON
(about 45 kB on an 8-GPU node); now it keeps the change from the last
report stored whole (a JSON Patch), with a whole one at least hourly.

The reports are real: `gpudoctor check --json` on the hgx-8xh100 root with
the fake NVML and CUDA, RUNS times healthy and RUNS times with GPU
0000:5d:00.0 lost (the fake scenario's "lost"), so their measured values
differ from run to run as a node's do. `history_writer flap` then writes
HOURS of them, alternating every STEP seconds, through the real store, twice
in this run:

  baseline  every changed report whole (`--whole`: schema 2's way);
  deltas    the store as it is.

It prints each file's size, bytes per day and the 30-day retention that
projects to (--retention's default), and the ratio. docs/history.md cites
the last run (bench/history_flap.txt).

usage: bench/history_flap.py [BUILD_DIR] [--hours H] [--step S] [--runs N]"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
BUS = "0000:5d:00.0"


def reports_json(build, tmp, runs):
    """RUNS report JSONs of the healthy node and RUNS with BUS lost: paths."""
    root = os.path.join(SRC, "tests", "roots", "hgx-8xh100")
    fakes = os.path.join(build, "fakes")
    with open(os.path.join(SRC, "tests", "fakes", "scenarios", "hgx-8xh100.json")) as f:
        healthy = json.load(f)
    lost = json.loads(json.dumps(healthy))
    next(g for g in lost["gpus"] if g["bus_id"] == BUS)["lost"] = True
    out = []
    for name, scenario in (("ok", healthy), ("lost", lost)):
        path = os.path.join(tmp, f"scenario-{name}.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        for i in range(runs):
            r = subprocess.run(
                [os.path.join(build, "gpudoctor"), "check", "--json", "--root", root,
                 "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")],
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                     "GPUDOCTOR_FAKE_SCENARIO": path},
                capture_output=True, text=True, timeout=60)
            if r.returncode not in (0, 1, 2) or not r.stdout.startswith("{"):
                sys.exit(f"gpudoctor check ({name}) failed: {r.returncode} {r.stderr[-500:]}")
            report = json.loads(r.stdout)
            failing = [f for f in report["findings"]
                       if f["severity"] == "fail" and BUS in f.get("gpus", [])]
            if (name == "lost") != bool(failing):
                sys.exit(f"the {name} report does not look {name}: {[f['id'] for f in failing]}")
            p = os.path.join(tmp, f"report-{name}-{i}.json")
            with open(p, "w") as f:
                f.write(r.stdout)
            out.append(p)
    return out


def write(build, db, hours, step, whole, jsons):
    t0 = time.monotonic()
    cmd = [os.path.join(build, "history_writer"), "flap", db, str(hours), str(step), BUS]
    r = subprocess.run(cmd + (["--whole"] if whole else []) + jsons, capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"history_writer flap failed: {r.stderr}")
    secs = time.monotonic() - t0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        n, whole_n, patch_n, json_b, patch_b = c.execute(
            "SELECT count(*), count(report_json), count(report_patch), "
            "coalesce(sum(length(report_json)), 0), coalesce(sum(length(report_patch)), 0) "
            "FROM reports").fetchone()
    size = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
    return {"reports": n, "whole": whole_n, "patches": patch_n, "json_bytes": json_b,
            "patch_bytes": patch_b, "file_bytes": size, "seconds": secs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(SRC, "build"))
    ap.add_argument("--hours", type=float, default=6)
    ap.add_argument("--step", type=float, default=3, help="seconds between lost and back")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    # tmpfs where there is one: the store fsyncs every commit, and the
    # figure is the file's size, not the disk's speed.
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="gd-history-flap-", dir=base)
    try:
        jsons = reports_json(build, tmp, a.runs)
        sizes = sorted(os.path.getsize(p) for p in jsons)
        print(f"reports: {len(jsons)} real `gpudoctor check --json` answers (hgx-8xh100 fake, "
              f"{BUS} lost in half), {sizes[0]}-{sizes[-1]} bytes each")
        print(f"scenario: lost and back every {a.step:g} s for {a.hours:g} h "
              f"({int(a.hours * 3600 / a.step)} reports, each differing from the one before)")
        res = {}
        for name, whole in (("baseline", True), ("deltas", False)):
            db = os.path.join(tmp, f"{name}.db")
            res[name] = r = write(build, db, a.hours, a.step, whole, jsons)
            per_day = r["file_bytes"] * 24 / a.hours
            r["per_day"] = per_day
            print(f"{name:9} {r['reports']} reports: {r['whole']} whole "
                  f"({r['json_bytes'] / 1e6:.1f} MB), {r['patches']} as changes "
                  f"({r['patch_bytes'] / 1e6:.2f} MB, {r['patch_bytes'] / max(r['patches'], 1):.0f}"
                  f" bytes each); file {r['file_bytes'] / 1e6:.1f} MB = "
                  f"{per_day / 1e6:.1f} MB/day, {per_day * 30 / 1e9:.2f} GB per 30 days "
                  f"(written in {r['seconds']:.1f} s)")
        ratio = res["baseline"]["per_day"] / max(res["deltas"]["per_day"], 1)
        print(f"deltas: {ratio:.1f}x smaller than the baseline")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
