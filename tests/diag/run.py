#!/usr/bin/env python3
"""End-to-end tests of `gpudoctor diag` (docs/diag.md), run as a user runs it:
the real gpudoctor binary, a recorded 8 x H100 HGX node (--from, the
snapshot tests/diff/make_nodes.py records over tests/roots/hgx-8xh100 and
the fake NVML), and tests/fakes/fake_diag_helper.py standing in for the
CUDA helper gpudoctor-diag (--helper). The fake answers what a scenario
file ($GPUDOCTOR_FAKE_DIAG) tells it:

    {"lines": [helper JSON lines], "then": "done"|"hang"|"crash"|"exit:N",
     "delay_ms": N, "args_to": FILE}

The scenarios are built here from one healthy run of the helper protocol
(gpu/README.md) with one thing changed each: a GEMM that computed wrong, a
memory test that found a bad word, one slow GPU, a hang, a crash. What is
checked: the exit code (0/1/2, 3 without an answer, 64 usage), the finding
ids and the GPUs they name, the text's figures, P2P matrix, NCCL table and
scaling line, the --json document (gpudoctor.report/v1 with diag.run and
diag.figures), the history row, and the helper's command line (--gpus,
--plant-fault). Whole text outputs are compared with tests/diag/golden/
(`--update` rewrites them; review the diff).

One test runs on the machine itself rather than a snapshot: the recorded
tree tests/roots/hgx-8xh100 with the fake NVML and CUDA (FAKES_DIR), so the
NVML sampler runs beside the helper and its samples reach the report.

usage: run.py GPUDOCTOR [FAKES_DIR] [--update] [-k NAME] [--sanitized] [--no-cuda]

--sanitized: an ASan build (slower; nothing is skipped).
--no-cuda: gpudoctor was built without CUDA: also test its one-line refusal.
"""
import copy
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import golden  # noqa: E402  (tests/golden.py)
import harness  # noqa: E402  (tests/harness.py)
from harness import Skip  # noqa: E402

GOLDEN = os.path.join(HERE, "golden")
FAKE_HELPER = os.path.join(SRC, "tests", "fakes", "fake_diag_helper.py")
# 8 x H100 80GB HBM3 (device 0x2330), NVLink over NVSwitch, PCIe gen5 x16.
SNAPSHOT = os.path.join(SRC, "tests", "diff", "nodes", "gpu-node-01.json")
BUSES = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
         "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]
CPUS = {b: "0-55,112-167" if i < 4 else "56-111,168-223" for i, b in enumerate(BUSES)}

GD = None
FAKES = None
UPDATE = False
SANITIZED = False
NO_CUDA = False
FAILURES = []  # golden differences, reported per test



def expect(cond, what, proc=None):
    if not cond:
        extra = ""
        if proc is not None:
            extra = (f"\n  exit {proc.returncode}\n  stdout: {proc.stdout[-4000:]!r}"
                     f"\n  stderr: {proc.stderr[-2000:]!r}")
        raise AssertionError(what + extra)


# --- the helper's answer ---------------------------------------------------------

GIB = 1 << 30
MIB = 1 << 20


def healthy_lines(level=2, buses=BUSES, seed=1):
    """What gpudoctor-diag says on a healthy HGX H100 node (gpu/README.md)."""
    out = [{"type": "hello", "schema": "gpudoctor.diag-helper/v1", "cuda_runtime": 13000,
            "cuda_driver": 12040, "cublas": 130100, "nccl": 22809}]
    for i, bus in enumerate(buses):
        out.append({"type": "device", "gpu": bus, "cuda_index": i,
                    "name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0,
                    "multiprocessors": 132, "memory_bytes": 85520809984,
                    "free_bytes": 84962967552, "clock_khz": 1980000, "mem_clock_khz": 2619000,
                    "mem_bus_width_bits": 5120})
    for i, bus in enumerate(buses):
        jitter = 1 + (i % 3 - 1) * 0.004  # peers differ a little, as real ones do
        for test, ms in (("context", 180.0), ("kernel", 1.1)):
            out.append({"type": "start", "test": test, "gpu": bus})
            out.append({"type": "result", "test": test, "gpu": bus, "status": "pass",
                        "duration_ms": ms})
        copies = (("h2d", 55.2e9), ("d2h", 53.1e9), ("d2d", 2.95e12))
        if level >= 2:
            out.append({"type": "start", "test": "memtest", "gpu": bus})
            out.append({"type": "result", "test": "memtest", "gpu": bus, "status": "pass",
                        "bytes": 75 * GIB, "passes": 2,
                        "patterns": ["address", "walking-ones", "walking-zeros", "random"],
                        "seed": seed, "errors": 0, "failures": [], "duration_ms": 20000.0})
        for direction, bw in copies:
            out.append({"type": "start", "test": "copy", "gpu": bus})
            out.append({"type": "result", "test": "copy", "gpu": bus, "direction": direction,
                        "status": "pass", "bytes": 256 * MIB if level >= 2 else 64 * MIB,
                        "bytes_per_s": bw * jitter, "verified": True, "mismatches": 0,
                        "duration_ms": 20000.0 if level >= 2 else 5.0})
        if level >= 2:
            for dtype, flops in (("bf16", 7.2e14), ("fp16", 7.3e14), ("tf32", 3.8e14),
                                 ("fp32", 5.0e13)):
                out.append({"type": "start", "test": "gemm", "gpu": bus})
                out.append({"type": "result", "test": "gemm", "gpu": bus, "dtype": dtype,
                            "status": "pass", "m": 8192, "n": 8192, "k": 8192,
                            "iterations": 400, "flops_per_s": flops * jitter, "checked": 200,
                            "mismatches": 0, "max_rel_error": 0.0009,
                            "duration_ms": 20000.0})
    if level >= 3:
        for i, src in enumerate(buses):
            for j, dst in enumerate(buses):
                if src == dst:
                    continue
                out.append({"type": "start", "test": "p2p", "src": src, "dst": dst})
                out.append({"type": "result", "test": "p2p", "src": src, "dst": dst,
                            "status": "pass", "access": True,
                            "bytes_per_s": 3.7e11 + 1e9 * ((i + j) % 3),
                            "latency_us": 2.1, "verified": True, "mismatches": 0})
        n = len(buses)
        points = []
        for size, t_us in ((1 * MIB, 30.0), (16 * MIB, 110.0), (256 * MIB, 1200.0),
                           (1 * GIB, 4600.0)):
            algbw = size / (t_us * 1e-6)
            points.append({"bytes": size, "time_us": t_us, "algbw_bytes_per_s": algbw,
                           "busbw_bytes_per_s": algbw * 2 * (n - 1) / n})
        out.append({"type": "start", "test": "nccl"})
        out.append({"type": "result", "test": "nccl", "gpus": list(buses), "status": "pass",
                    "nccl_version": 22809, "mismatches": 0, "points": points})
        out.append({"type": "start", "test": "scaling"})
        speedup = n * 0.94
        out.append({"type": "result", "test": "scaling", "gpus": list(buses),
                    "status": "pass", "one_gpu_step_ms": 10.2,
                    "all_gpu_step_ms": 10.2 * n / speedup,
                    "per_gpu_compute_ms": [10.2 + 0.05 * (k % 2) for k in range(n)],
                    "gradient_bytes": 256 * MIB, "speedup": speedup, "efficiency": 0.94})
    return out


def find_result(lines, **match):
    for line in lines:
        if line.get("type") == "result" and all(line.get(k) == v for k, v in match.items()):
            return line
    raise KeyError(match)


def cut_before(lines, **match):
    """The lines up to and including the start line of the result `match`
    names: a helper that stopped in that test."""
    target = find_result(lines, **match)
    i = lines.index(target)
    assert lines[i - 1]["type"] == "start"
    return lines[:i]


def scenario(tmp, name, lines, then="done", delay_ms=0):
    """Writes the fake's scenario; returns (path, args file)."""
    args_to = os.path.join(tmp, name + ".args")
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"lines": lines, "then": then, "delay_ms": delay_ms, "args_to": args_to}, f)
    return path, args_to


def gd(args, scenario_path=None, timeout=120, **extra_env):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
    env.update(extra_env)
    if scenario_path:
        env["GPUDOCTOR_FAKE_DIAG"] = scenario_path
    if SANITIZED:
        timeout *= 3
    return subprocess.run([GD] + args, env=env, capture_output=True, text=True, timeout=timeout)


def diag(tmp, name, lines, extra=(), then="done", delay_ms=0, history=False, **env):
    """gpudoctor diag on the recorded node with the fake helper answering `lines`."""
    path, args_to = scenario(tmp, name, lines, then, delay_ms)
    hist = ["--history", os.path.join(tmp, name + ".db")] if history else ["--no-history"]
    p = gd(["diag", "--from", SNAPSHOT, "--helper", FAKE_HELPER] + hist + list(extra), path,
           **env)
    p.args_file = args_to
    return p


def run_json(tmp, name, lines, extra=(), then="done"):
    p = diag(tmp, name, lines, list(extra) + ["--json"], then)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"--json is not JSON: {e}\n  exit {p.returncode}\n"
                             f"  stdout: {p.stdout[:2000]!r}\n  stderr: {p.stderr!r}")
    return p, doc


def findings(doc, severity=None):
    return [f for f in doc["findings"] if severity is None or f["severity"] == severity]


def finding(doc, fid, proc=None):
    hits = [f for f in doc["findings"] if f["id"] == fid]
    expect(hits, f"no finding {fid}; have {[(f['id'], f['severity']) for f in doc['findings']]}",
           proc)
    return hits[0]


def normalize(text):
    text = re.sub(r"ran \d+(\.\d+)? s", "ran N s", text)
    text = text.replace(SRC, "<src>")
    return text


def compare(name, text):
    failures = []
    golden.compare(GOLDEN, name, "txt", normalize(text), UPDATE, failures)
    if failures:
        raise AssertionError("\n".join(failures))


def need_fake():
    if not os.path.exists(FAKE_HELPER):
        raise Skip(f"no {FAKE_HELPER} yet")


# --- the tests --------------------------------------------------------------------

def test_healthy_level2(tmp):
    need_fake()
    p = diag(tmp, "healthy2", healthy_lines(2), ["--level", "2"])
    expect(p.returncode == 0, "a healthy level-2 run exits 0", p)
    expect("gpudoctor diag: level 2 on 8 GPUs, about" in p.stderr,
           "stderr says what runs and about how long", p)
    # Then a progress line per test as it finished (not a terminal: no
    # "running" line), in the helper's order.
    progress = p.stderr.strip().splitlines()[1:]
    expect(all(re.match(r"  (pass|fail|error|skip) +\S", l) for l in progress),
           "every other stderr line is a finished test", p)
    expect(len(progress) == 8 * 10, "a progress line per test: 10 tests on each of 8 GPUs", p)
    expect(progress[0].startswith("  pass  context 0000:18:00.0 ("), "context first", p)
    out = p.stdout
    expect(out.startswith("gpudoctor diag · level 2 · 8 GPUs"), "the header names level and GPUs", p)
    for bus in BUSES:
        expect(f"· {bus} · NVIDIA H100 80GB HBM3" in out, f"a section for {bus}", p)
    for metric in ("gemm.bf16", "gemm.tf32", "gemm.fp16", "gemm.fp32", "memory.bandwidth",
                   "pcie.h2d", "pcie.d2h"):
        expect(re.search(rf"^  {re.escape(metric)} +\d", out, re.M),
               f"a figure row for {metric}", p)
    expect("720.0 TFLOP/s" in out or "717.1 TFLOP/s" in out or "722.9 TFLOP/s" in out,
           "GEMM in TFLOP/s", p)
    expect("55.2 GB/s" in out, "host copies in GB/s", p)
    expect("memtest: 75 GiB, 2 passes" in out, "the memory test's extent", p)
    expect("Verdict: OK" in out, "verdict OK", p)
    compare("healthy-level2", out)


def test_healthy_level3(tmp):
    need_fake()
    p = diag(tmp, "healthy3", healthy_lines(3), ["--level", "3"])
    expect(p.returncode == 0, "a healthy level-3 run exits 0", p)
    out = p.stdout
    expect("Peer-to-peer bandwidth, GB/s" in out, "the P2P matrix", p)
    expect(re.search(r"^  from\\to +0 +1 +2 +3 +4 +5 +6 +7$", out, re.M),
           "matrix columns are the nvidia-smi indices", p)
    expect(re.search(r"^  0 +- +37\d\.\d", out, re.M), "row 0: itself, then GB/s", p)
    expect("NCCL all-reduce over 8 GPUs (NCCL 2.28.9)" in out, "the NCCL table", p)
    expect(re.search(r"^  1 GiB +4\.60 ms", out, re.M), "a NCCL size row", p)
    expect("efficiency 94.0 %" in out, "the scaling line", p)
    compare("healthy-level3", out)


def test_gemm_mismatch(tmp):
    need_fake()
    lines = healthy_lines(2)
    r = find_result(lines, test="gemm", gpu=BUSES[3], dtype="bf16")
    r.update(status="fail", mismatches=1, max_rel_error=0.5)
    p, doc = run_json(tmp, "gemm-mismatch", lines, ["--level", "2"])
    expect(p.returncode == 2, "silent corruption fails the node (exit 2)", p)
    f = finding(doc, "compute.mismatch", p)
    expect(f["severity"] == "fail", "compute.mismatch is a failure", p)
    expect(f["gpus"] == [BUSES[3]], f"it names {BUSES[3]} only: {f['gpus']}", p)
    expect(doc["findings"][0]["id"] == "compute.mismatch", "ranked first", p)
    t = diag(tmp, "gemm-mismatch-text", lines, ["--level", "2"])
    expect("tests: gemm.bf16 FAIL · passed: context, kernel, copy h2d/d2h/d2d, memtest, gemm fp16/tf32/fp32" in t.stdout, "the text marks the GEMM", t)


def test_memtest_failure(tmp):
    need_fake()
    lines = healthy_lines(2)
    r = find_result(lines, test="memtest", gpu=BUSES[1])
    r.update(status="fail", errors=3, failures=[
        {"offset": 0x12345678, "address": 0x7f3a12345678, "expected": 0x5555555555555555,
         "actual": 0x5555555555555554, "pattern": "walking-ones"}])
    p, doc = run_json(tmp, "memtest", lines, ["--level", "2"])
    expect(p.returncode == 2, "a failing memory word fails the node (exit 2)", p)
    f = finding(doc, "memory.test-failed", p)
    expect(f["severity"] == "fail" and f["gpus"] == [BUSES[1]], f"fail on {BUSES[1]}: {f}", p)
    expect(any("0x7f3a12345678" in e for e in f["evidence"]),
           f"the evidence gives the failing address in hex: {f['evidence']}", p)
    t = diag(tmp, "memtest-text", lines, ["--level", "2"])
    expect("at 0x7f3a12345678 (offset 0x12345678, pattern walking-ones)" in t.stdout,
           "the text lists the failing address", t)
    compare("memtest-failed", t.stdout)


def test_one_slow_gpu(tmp):
    need_fake()
    lines = healthy_lines(2)
    # Above the datasheet floor (989.4 x 0.50) but far below its seven peers.
    for dtype, flops in (("bf16", 5.6e14), ("fp16", 5.6e14), ("tf32", 2.9e14)):
        find_result(lines, test="gemm", gpu=BUSES[5], dtype=dtype)["flops_per_s"] = flops
    p, doc = run_json(tmp, "slow", lines, ["--level", "2"])
    f = finding(doc, "perf.compute-slow", p)
    expect(f["gpus"] == [BUSES[5]], f"it names the slow GPU only: {f['gpus']}", p)
    expect(p.returncode == 1 and f["severity"] == "warn",
           "an outlier among peers is a warning (exit 1)", p)
    figs = [x for x in doc["diag"]["figures"]
            if x["bus_id"] == BUSES[5] and x["metric"] == "gemm.bf16"]
    expect(figs and "outlier" in figs[0]["judgement"], f"the figure says outlier: {figs}", p)


def test_p2p_slow_and_blocked(tmp):
    need_fake()
    lines = healthy_lines(3, BUSES[:4])
    find_result(lines, test="p2p", src=BUSES[0], dst=BUSES[1])["bytes_per_s"] = 1.2e11
    find_result(lines, test="p2p", src=BUSES[2], dst=BUSES[3]).update(access=False,
                                                                      bytes_per_s=2e10)
    p, doc = run_json(tmp, "p2p", lines, ["--level", "3", "--gpus", "0,1,2,3"])
    f = finding(doc, "p2p.slow", p)
    expect(set(BUSES[:4]) == set(f["gpus"]), f"p2p.slow names the pairs' GPUs: {f['gpus']}", p)
    expect(p.returncode == 1 and f["severity"] == "warn", "a slow pair is a warning", p)
    t = diag(tmp, "p2p-text", lines, ["--level", "3", "--gpus", "0,1,2,3"])
    expect(re.search(r"^  0 +- +120\.0\* +37", t.stdout, re.M), "the slow pair is starred", t)
    expect(re.search(r"^  2 +372\.0 +370\.0 +- +x$", t.stdout, re.M),
           "the pair without peer access is an x", t)
    compare("p2p-slow", t.stdout)


def test_verbose(tmp):
    need_fake()
    p = diag(tmp, "verbose", healthy_lines(2, BUSES[:2]), ["--level", "2", "--gpus", "0,1", "-v"])
    expect(p.returncode == 0, "exit 0", p)
    expect("Passed or not applicable" in p.stdout, "-v lists the ok findings", p)
    expect(re.search(r"^    floor: .*989\.4", p.stdout, re.M), "-v gives each floor's basis", p)
    q = diag(tmp, "quiet", healthy_lines(2, BUSES[:2]), ["--level", "2", "--gpus", "0,1"])
    expect("Passed or not applicable" not in q.stdout and "floor:" not in q.stdout,
           "without -v neither", q)


def test_live_with_nvml_samples(tmp):
    need_fake()
    if FAKES is None:
        raise Skip("no FAKES_DIR given")
    path, _ = scenario(tmp, "live", healthy_lines(1, BUSES[:2]), delay_ms=100)
    probe = ["--root", os.path.join(SRC, "tests", "roots", "hgx-8xh100"),
             "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
             "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
             "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]
    fake_nvml = os.path.join(SRC, "tests", "fakes", "scenarios", "hgx-8xh100.json")
    p = gd(["diag", "--helper", FAKE_HELPER, "--no-history", "--gpus", "0,1", "--json"] + probe,
           path, GPUDOCTOR_FAKE_SCENARIO=fake_nvml)
    expect(p.returncode == 0, "a live level-1 run on the fakes exits 0", p)
    doc = json.loads(p.stdout)
    samples = doc["diag"]["run"].get("samples", [])
    sampled = {s["bus_id"] for s in samples}
    expect(sampled == set(BUSES[:2]),
           f"NVML was sampled during the run, on the tested GPUs only: {sorted(sampled)}", p)
    expect(any(s.get("temperature_c") is not None for s in samples), "samples hold values", p)
    expect(len(doc["gpus"]) == 8, "the report's GPUs come from the live probe", p)
    t = gd(["diag", "--helper", FAKE_HELPER, "--no-history", "--gpus", "0,1"] + probe,
           path, GPUDOCTOR_FAKE_SCENARIO=fake_nvml)
    expect(re.search(r"^  under load \(\d+ samples?\): \d+-\d+ °C", t.stdout, re.M),
           "the text gives temperature, power and clocks under load", t)


def test_hang_is_incomplete(tmp):
    need_fake()
    lines = cut_before(healthy_lines(2), test="memtest", gpu=BUSES[2])
    start = time.monotonic()
    p, doc = run_json(tmp, "hang", lines, ["--level", "2", "--helper-deadline", "2"], then="hang")
    took = time.monotonic() - start
    expect(took < 30, f"the deadline ends the run ({took:.1f} s)", p)
    f = finding(doc, "diag.incomplete", p)
    text = " ".join([f["summary"]] + f["evidence"])
    expect("memtest" in text and BUSES[2] in text,
           f"diag.incomplete names the test that hung: {text}", p)
    expect(p.returncode in (1, 2), f"an incomplete run is not ok (exit {p.returncode})", p)
    # What ran before the hang stands.
    ok_gpu = [x for x in doc["diag"]["figures"] if x["bus_id"] == BUSES[0]]
    expect(ok_gpu, "the figures of the GPUs tested before the hang are kept", p)
    expect(doc["diag"]["run"].get("incomplete"), "diag.run.incomplete says why", p)


def test_crash_is_incomplete(tmp):
    need_fake()
    lines = cut_before(healthy_lines(2), test="gemm", gpu=BUSES[0], dtype="tf32")
    p, doc = run_json(tmp, "crash", lines, ["--level", "2"], then="crash")
    f = finding(doc, "diag.incomplete", p)
    text = " ".join([f["summary"]] + f["evidence"])
    expect("gemm" in text, f"diag.incomplete names the test running at the crash: {text}", p)
    expect(p.returncode in (1, 2), f"a crashed run is not ok (exit {p.returncode})", p)


def test_no_answer_exits_3(tmp):
    need_fake()
    p = diag(tmp, "exit1", [], ["--level", "1"], then="exit:1")
    expect(p.returncode == 3, "a helper that said nothing: the tool could not decide", p)
    expect("gave no answer" in p.stderr, "stderr says so", p)
    p = gd(["diag", "--from", SNAPSHOT, "--helper", "/nonexistent/gpudoctor-diag",
            "--no-history"])
    expect(p.returncode == 3, "a helper that cannot start: exit 3", p)


def test_json_document(tmp):
    need_fake()
    p, doc = run_json(tmp, "json", healthy_lines(3), ["--level", "3"])
    expect(p.returncode == 0, "healthy level 3 exits 0", p)
    expect(p.stderr == "", "--json: nothing on stderr", p)
    expect(doc["schema"] == "gpudoctor.report/v1", "gpudoctor.report/v1", p)
    expect(doc["verdict"] == "ok", f"verdict {doc['verdict']}", p)
    for f in doc["findings"]:
        for key in ("id", "severity", "gpus", "summary", "evidence", "remedy"):
            expect(key in f, f"finding {f.get('id')} has {key}", p)
        expect(f.get("check") in (None, "diag"), f"diag findings come from check diag: {f}", p)
    expect(isinstance(doc.get("gpus"), list) and len(doc["gpus"]) == 8, "gpus[] of the node", p)
    run = doc["diag"]["run"]
    expect(run["schema"] == "gpudoctor.diag/v1", f"diag.run schema {run.get('schema')}", p)
    expect(run["level"] == 3, "diag.run.level", p)
    figures = doc["diag"]["figures"]
    expect(isinstance(figures, list) and figures, "diag.figures is a non-empty list", p)
    for x in figures:
        for key in ("bus_id", "metric", "value", "unit", "expected", "peer_median",
                    "judgement"):
            expect(key in x, f"figure {x.get('metric')} has {key}", p)
    metrics = {x["metric"] for x in figures}
    for m in ("gemm.bf16", "memory.bandwidth", "pcie.h2d", "nccl.busbw", "scaling.efficiency"):
        expect(m in metrics, f"figure {m} present (have {sorted(metrics)})", p)
    bf16 = [x for x in figures if x["metric"] == "gemm.bf16" and x["bus_id"] == BUSES[0]][0]
    expect(abs(bf16["value"] - 7.2e14 * 0.996) < 1e9, f"bf16 value in FLOP/s: {bf16}", p)
    expect(bf16["expected"] > 0 and bf16["unit"] == "FLOP/s", f"bf16 has a floor: {bf16}", p)


def test_history(tmp):
    need_fake()
    p = diag(tmp, "hist", healthy_lines(2), ["--level", "2"], history=True)
    expect(p.returncode == 0, "the run with --history exits 0", p)
    db = os.path.join(tmp, "hist.db")
    expect(os.path.exists(db), "the history file is created", p)
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT level, verdict, diag_json FROM diag_runs").fetchall()
    finally:
        con.close()
    expect(len(rows) == 1, f"one diag run stored: {rows}", p)
    level, verdict, text = rows[0]
    expect(level == 2 and verdict == "ok", f"level 2, verdict ok: {rows[0][:2]}", p)
    stored = json.loads(text)
    expect(stored["run"]["schema"] == "gpudoctor.diag/v1" and stored["figures"],
           "the stored JSON is the diag object", p)
    # A history that cannot be written is a note, not a failure.
    path, _ = scenario(tmp, "hist-bad", healthy_lines(1))
    q = gd(["diag", "--from", SNAPSHOT, "--helper", FAKE_HELPER, "--level", "1",
            "--history", "/proc/nonexistent/history.db"], path)
    expect(q.returncode == 0, "an unwritable history does not fail the run", q)
    notes = [ln for ln in q.stderr.splitlines() if "history" in ln]
    expect(len(notes) == 1, f"one stderr note about the history: {q.stderr!r}", q)


def helper_call(p):
    """What the fake helper was given: {"argv": [...], "env": {...}}."""
    with open(p.args_file) as f:
        return json.load(f)


def helper_args(p):
    return helper_call(p)["argv"]


def test_gpus_selection(tmp):
    need_fake()
    p = diag(tmp, "select", healthy_lines(1, [BUSES[1], BUSES[3]]),
             ["--level", "1", "--gpus", "1,5d:00.0", "--seed", "7"],
             CUDA_VISIBLE_DEVICES="3", CUDA_DEVICE_ORDER="FASTEST_FIRST")
    expect(p.returncode == 0, "a selection runs", p)
    call = helper_call(p)
    args = call["argv"]
    expect("CUDA_VISIBLE_DEVICES" not in call["env"]
           and call["env"].get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID",
           f"the helper sees every GPU in PCI order: {call['env']}", p)
    gpus = [args[i + 1] for i, a in enumerate(args) if a == "--gpu"]
    expect(gpus == [f"{BUSES[1]}@{CPUS[BUSES[1]]}", f"{BUSES[3]}@{CPUS[BUSES[3]]}"],
           f"--gpu BUS@CPUS for nvidia-smi index 1 and bus 5d:00.0, in order: {args}", p)
    expect(args[args.index("--level") + 1] == "1", f"--level 1 passed: {args}", p)
    expect(args[args.index("--seed") + 1] == "7", f"--seed passed: {args}", p)
    expect("--plant-fault" not in args, "no fault planted unless asked", p)
    expect("GPU 1 · 0000:2a:00.0" in p.stdout and "GPU 3 · 0000:5d:00.0" in p.stdout
           and BUSES[0] not in p.stdout, "only the selected GPUs are reported", p)
    q = diag(tmp, "plant", healthy_lines(2, [BUSES[0]]),
             ["--level", "2", "--gpus", "0", "--plant-fault", "gemm", "--duration", "5"])
    args = helper_args(q)
    expect(args[args.index("--plant-fault") + 1] == "gemm", f"--plant-fault passed: {args}", q)
    expect(float(args[args.index("--duration") + 1]) == 5, f"--duration passed: {args}", q)


def test_usage_errors(tmp):
    path, _ = scenario(tmp, "usage", healthy_lines(1))
    base = ["diag", "--from", SNAPSHOT, "--helper", FAKE_HELPER, "--no-history"]
    cases = [["--level", "4"], ["--level", "0"], ["--level", "two"], ["--duration", "0"],
             ["--duration", "-5"], ["--duration", "1e9"], ["--plant-fault", "disk"],
             ["--gpus", "9"], ["--gpus", "0000:77:00.0"], ["--gpus", "0,0"],
             ["--history", os.path.join(tmp, "x.db")], ["--no-such-flag"]]
    for extra in cases:
        p = gd(base + extra, path)
        expect(p.returncode == 64, f"{extra}: usage error exits 64", p)
        lines = p.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0].startswith("gpudoctor: "),
               f"{extra}: one line on stderr", p)
        expect(p.stdout == "", f"{extra}: nothing on stdout", p)


def test_no_gpu_is_exit_3(tmp):
    with open(SNAPSHOT) as f:
        snap = json.load(f)
    snap["pci"] = [d for d in snap["pci"] if d.get("kind") != "gpu"]
    snap["nvml"]["gpus"] = []
    none = os.path.join(tmp, "no-gpu.json")
    with open(none, "w") as f:
        json.dump(snap, f)
    path, _ = scenario(tmp, "none", healthy_lines(1))
    p = gd(["diag", "--from", none, "--helper", FAKE_HELPER, "--no-history"], path)
    expect(p.returncode == 3, "no GPU to test exits 3, not 64", p)
    expect("no NVIDIA GPU found" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
           "one line says why", p)


def test_help(tmp):
    p = gd(["diag", "--help"])
    expect(p.returncode == 0, "--help exits 0", p)
    for word in ("--level", "--gpus", "--duration", "--json", "--history", "Levels:"):
        expect(word in p.stdout, f"--help mentions {word}", p)
    for hidden in ("--helper ", "--plant-fault", "--helper-deadline", "--from"):
        expect(hidden not in p.stdout, f"{hidden} stays hidden", p)


def test_built_without_cuda(tmp):
    if not NO_CUDA:
        raise Skip("gpudoctor was built with CUDA (the refusal is tested in builds without it)")
    p = gd(["diag", "--from", SNAPSHOT, "--no-history"])
    expect(p.returncode == 3, "built without CUDA: exit 3", p)
    expect(p.stderr.startswith("gpudoctor: diag: this gpudoctor was built without CUDA;")
           and len(p.stderr.strip().splitlines()) == 1, "one line saying so", p)


def main():
    global GD, FAKES, UPDATE, SANITIZED, NO_CUDA
    args = sys.argv[1:]
    UPDATE = "--update" in args
    SANITIZED = "--sanitized" in args
    NO_CUDA = "--no-cuda" in args
    args = [a for a in args if a not in ("--update", "--sanitized", "--no-cuda")]
    only = harness.take_k(args)
    if len(args) not in (1, 2):
        print(__doc__)
        return 64
    GD = os.path.abspath(args[0])
    FAKES = os.path.abspath(args[1]) if len(args) == 2 else None
    return harness.run_tests(globals(), only, tmp_prefix="gd-diag-")


if __name__ == "__main__":
    sys.exit(main())
