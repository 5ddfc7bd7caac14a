#!/usr/bin/env python3
""""A running job is sacred" end to end: gpudoctor's commands, run as a user
runs them over recorded trees and the fake libraries, never open a CUDA
context on a GPU a job uses, nor where NVML could not tell (shared/DESIGN.md,
docs/check.md "What each command does to the GPUs").

The fake libcuda appends "<pid> <bus_id> <rc>" to $GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG
for every context asked for (tests/fakes/scenario.h); each test counts there:
  - check/snapshot on a busy GPU (exclusive, memory-held): none on it, one per
    other GPU per CUDA run, and the snapshot's CUDA devices and the report's
    cuda.init-failed evidence say why it was skipped;
  - an idle machine (ws-4x4090, hgx-8xh100): exactly one per GPU per run;
  - NVML crashing or hanging: none at all, and CUDA's own answer (cuInit, the
    device count) still there;
  - topo (also --verify): none.

usage: run.py GPUDOCTOR FAKES_DIR [-k NAME]
"""
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
SRC = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
from harness import run_tests, take_k  # noqa: E402

ARGS = sys.argv[1:]
ONLY = take_k(ARGS)
GD, FAKES = ARGS[0], ARGS[1]


def run(tmp, command, fake, root="ws-4x4090", args=(), env_extra=None):
    """Runs `gpudoctor COMMAND` over a recorded root with the fakes and a fresh
    context log; returns (completed process, log lines as (pid, bus, rc))."""
    log = os.path.join(tmp, "contexts-%s-%d.log" % (command, time.monotonic_ns()))
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(SRC, "tests", "fakes", "scenarios",
                                                   fake + ".json"),
           "GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG": log}
    env.update(env_extra or {})
    argv = [GD, command, "--root", os.path.join(SRC, "tests", "roots", root),
            "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
            "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")] + list(args)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    lines = []
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                pid, bus, rc = line.split()
                lines.append((pid, bus, rc))
    return p, lines


def snapshot(tmp, fake, root="ws-4x4090", args=()):
    p, lines = run(tmp, "snapshot", fake, root, args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), lines


def devices(run_):
    return {d["pci_bus_id"]: d for d in run_["devices"]}


def context_runs(snap):
    """The CUDA runs that got as far as the devices (each may open contexts)."""
    return [r for r in snap["cuda"]["runs"] if r.get("devices")]


def assert_one_per_gpu_per_run(lines, snap, skipped=()):
    """Every non-skipped GPU of every CUDA run got exactly one context, in
    that run's process; a skipped one none."""
    per_pid = collections.Counter((pid, bus) for pid, bus, _ in lines)
    assert all(n == 1 for n in per_pid.values()), per_pid
    per_bus = collections.Counter(bus for _, bus, _ in lines)
    runs = context_runs(snap)
    want = collections.Counter()
    for r in runs:
        for bus in devices(r):
            if bus not in skipped:
                want[bus] += 1
    assert per_bus == want, (per_bus, want)
    assert len({pid for pid, _, _ in lines}) == len(runs), (lines, len(runs))


def finding(report, fid):
    for f in report["findings"]:
        if f["id"] == fid:
            return f
    raise AssertionError("no finding " + fid)


def busy_case(tmp, fake, pid):
    snap, lines = snapshot(tmp, fake)
    busy = "0000:01:00.0"
    assert not [l for l in lines if l[1] == busy], lines
    assert_one_per_gpu_per_run(lines, snap, skipped={busy})
    for r in context_runs(snap):
        d = devices(r)
        assert d[busy]["ctx_rc"] == -1, d[busy]
        assert d[busy]["ctx_skipped"].startswith("busy: 1 process (pid %d" % pid), d[busy]
        for bus, dev in d.items():
            if bus != busy:
                assert dev["ctx_rc"] == 0 and dev["ctx_skipped"] == "", dev
    # The live check: the same count, and the report says why.
    p, lines = run(tmp, "check", fake, args=["--json"])
    assert p.returncode in (0, 1, 2), p.stderr
    assert not [l for l in lines if l[1] == busy], lines
    assert len(lines) == 3 * len(context_runs(snap)), lines
    f = finding(json.loads(p.stdout), "cuda.init-failed")
    assert any(e.startswith(busy) and "no context opened: busy: 1 process (pid %d" % pid in e
               for e in f["evidence"]), f


def test_exclusive_gpu_a_job_holds_gets_no_context(tmp):
    busy_case(tmp, "exclusive", 4242)


def test_memory_held_gpu_gets_no_context(tmp):
    busy_case(tmp, "memory-held", 31337)


def test_idle_machine_gets_one_context_per_gpu_per_run(tmp):
    for fake, root, gpus in (("ws-4x4090", "ws-4x4090", 4), ("hgx-8xh100", "hgx-8xh100", 8)):
        snap, lines = snapshot(tmp, fake, root)
        assert len(lines) == gpus * len(context_runs(snap)), lines
        assert all(rc == "0" for _, _, rc in lines), lines
        assert_one_per_gpu_per_run(lines, snap)
        p, lines = run(tmp, "check", fake, root)
        assert len(lines) == gpus * len(context_runs(snap)), lines


def test_a_crashing_nvml_means_no_context_and_cuda_still_answers(tmp):
    snap, lines = snapshot(tmp, "nvml-crash")
    assert lines == [], lines
    user = snap["cuda"]["runs"][0]
    assert user["init_rc"] == 0 and user["device_count"] == 4, user
    for d in user["devices"]:
        assert d["ctx_skipped"].startswith("NVML did not answer (the NVML child crashed"), d


def test_a_hanging_nvml_means_no_context_and_cuda_still_answers(tmp):
    start = time.monotonic()
    snap, lines = snapshot(tmp, "nvml-hang", args=["--deadline", "1.5"])
    took = time.monotonic() - start
    assert lines == [], lines
    assert took < 4, took
    user = snap["cuda"]["runs"][0]
    assert user["child_error"] == "", user["child_error"]
    assert user["init_rc"] == 0 and user["device_count"] == 4, user
    assert user["cudart_rc"] == 0, user
    for d in user["devices"]:
        assert d["ctx_skipped"] == ("NVML did not answer within 0.9 s: whether it is busy is "
                                    "unknown"), d
    p, lines = run(tmp, "check", "nvml-hang", args=["--deadline", "1.5", "--json"])
    assert lines == [], lines
    assert finding(json.loads(p.stdout), "cuda.init-failed")["severity"] == "ok", p.stdout


def test_topo_opens_no_context(tmp):
    for args in (["--json"], ["--verify", "--json"]):
        p, lines = run(tmp, "topo", "ws-4x4090", args=args)
        assert p.returncode == 0, p.stderr
        assert lines == [], (args, lines)
        # CUDA did run (its order was observed, not predicted): a context
        # there would have been logged.
        assert json.loads(p.stdout)["cuda_order"]["default_observed"] is True, p.stdout


if __name__ == "__main__":
    sys.exit(run_tests(globals(), ONLY, tmp_prefix="gd-contexts-"))
