"""bench/diag_gpu.sh, bench/diag_torch.py and bench/diag_compare.py without a
GPU: the comparison over sample reports (tests/device/samples/diag-h200-*.json,
torch-h200.json), diag_torch.py's pure parts and its measuring code against a
stand-in torch, the timer, and diag_gpu.sh end to end with a stand-in
`gpudoctor` (canned reports), a stand-in `nvidia-smi` and no PyTorch; the
search for the helper's cuBLAS/NCCL and `device-check.sh --stage` with small
ELF files built here by cc. Needs no build dir.

    python3 -m pytest -q tests/device/test_diag_bench.py
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
SAMPLES = os.path.join(HERE, "samples")
BENCH = os.path.join(SRC, "bench")
sys.path.insert(0, BENCH)

import diag_compare  # noqa: E402
import diag_torch  # noqa: E402

BUS = "0000:17:00.0"
CC = shutil.which("cc") or shutil.which("gcc")


def sample(name):
    return os.path.join(SAMPLES, name)


def load(name):
    with open(sample(name)) as f:
        return json.load(f)


def dump(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def compare(tmp_path, *args):
    """diag_compare.py as a process: (exit status, stdout, stderr, --json rows)."""
    out = tmp_path / "cmp.json"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "diag_compare.py"), "--json",
                        str(out)] + list(args), capture_output=True, text=True, timeout=60)
    data = json.loads(out.read_text()) if p.returncode == 0 else None
    return p.returncode, p.stdout, p.stderr, data


def rows_by_metric(data):
    return {r["metric"]: r for r in data["rows"]}


# ------------------------------------------------------------------ comparison

def test_ratios_and_goals_over_the_samples(tmp_path):
    rc, out, err, data = compare(tmp_path, "--diag", sample("diag-h200-l2.json"),
                                 "--torch", sample("torch-h200.json"))
    assert rc == 0, err
    rows = rows_by_metric(data)
    assert list(rows) == ["gemm.bf16", "gemm.fp16", "gemm.tf32", "gemm.fp32",
                          "memory.bandwidth", "pcie.h2d", "pcie.d2h"]
    assert rows["gemm.bf16"]["ratio"] == pytest.approx(7.41e14 / 7.88e14)
    assert rows["gemm.bf16"]["met"] is False  # 0.940 < 0.95
    assert rows["gemm.fp16"]["met"] is True   # 0.962
    assert rows["gemm.tf32"]["goal"] == 0.95
    assert rows["memory.bandwidth"]["ratio"] == pytest.approx(4.15 / 4.30)
    assert rows["memory.bandwidth"]["met"] is True and rows["memory.bandwidth"]["goal"] == 0.90
    assert rows["pcie.h2d"]["met"] is True    # 0.909 >= 0.90
    assert rows["pcie.d2h"]["met"] is False   # 0.873
    line = next(l for l in out.splitlines() if l.startswith("gemm.bf16"))
    assert "741.0 TFLOP/s" in line and "788.0 TFLOP/s" in line and "0.940" in line
    assert line.split()[-1] == "NO"
    assert next(l for l in out.splitlines() if l.startswith("pcie.h2d")).split()[-1] == "yes"
    assert "goals met: 5 of 7 compared" in out
    assert "PyTorch 2.11.0+cu130 on NVIDIA H200 (0000:17:00.0)" in out


def test_a_goal_exactly_met_is_met(tmp_path):
    torch = load("torch-h200.json")
    for m in torch["metrics"]:
        if m["metric"] == "gemm.bf16":
            m["value"] = 7.41e14 / 0.95
    rc, _, err, data = compare(tmp_path, "--diag", sample("diag-h200-l2.json"),
                               "--torch", dump(tmp_path, "t.json", torch))
    assert rc == 0, err
    assert rows_by_metric(data)["gemm.bf16"]["met"] is True


def test_the_gpu_pytorch_measured_is_the_one_compared(tmp_path):
    report = load("diag-h200-l2.json")
    other = copy.deepcopy(report["diag"]["figures"][3])  # gemm.bf16
    assert other["metric"] == "gemm.bf16"
    other.update(bus_id="0000:2a:00.0", value=7.8e14)
    report["diag"]["figures"].insert(0, other)
    torch = load("torch-h200.json")
    rc, _, _, data = compare(tmp_path, "--diag", dump(tmp_path, "r.json", report),
                             "--torch", dump(tmp_path, "t.json", torch))
    row = rows_by_metric(data)["gemm.bf16"]
    assert rc == 0 and row["bus_id"] == BUS and row["gpudoctor"] == 7.41e14
    torch["device"]["bus_id"] = "0000:2a:00.0"
    rc, _, _, data = compare(tmp_path, "--diag", dump(tmp_path, "r.json", report),
                             "--torch", dump(tmp_path, "t.json", torch))
    assert rows_by_metric(data)["gemm.bf16"]["gpudoctor"] == 7.8e14


def test_run_results_stand_in_for_missing_figures(tmp_path):
    report = load("diag-h200-l2.json")
    report["diag"]["figures"] = []
    rc, _, err, data = compare(tmp_path, "--diag", dump(tmp_path, "r.json", report),
                               "--torch", sample("torch-h200.json"))
    assert rc == 0, err
    rows = rows_by_metric(data)
    assert rows["gemm.fp16"]["gpudoctor"] == 7.6e14
    # the sustained copies, not level 1's 64 MiB ones listed before them
    assert rows["pcie.h2d"]["gpudoctor"] == 5.0e10
    assert rows["memory.bandwidth"]["gpudoctor"] == 4.15e12


def test_without_pytorch_the_figures_stand_alone(tmp_path):
    rc, out, err, data = compare(tmp_path, "--diag", sample("diag-h200-l2.json"), "--torch",
                                 dump(tmp_path, "t.json", diag_torch.unavailable(
                                     "no PyTorch: No module named 'torch'")))
    assert rc == 0, err
    assert all(r["ratio"] is None and r["met"] is None for r in data["rows"])
    assert rows_by_metric(data)["gemm.bf16"]["gpudoctor"] == 7.41e14
    assert "PyTorch side skipped: no PyTorch: No module named 'torch'" in out
    assert "goals met: 0 of 0 compared; 7 not compared" in out


def test_skip_reasons_are_printed(tmp_path):
    rc, out, err, _ = compare(tmp_path, "--skip", "diag=gpudoctor-diag needs libnccl.so.2",
                              "--skip", "torch=no PyTorch", "--skip", "fault-gemm=no time left")
    assert rc == 0, err
    assert "gpudoctor diag not run: gpudoctor-diag needs libnccl.so.2" in out
    assert "PyTorch side skipped: no PyTorch" in out
    assert "gemm    not run     no time left" in out


@pytest.mark.parametrize("content,why", [
    ("{not json", "not JSON"),
    ("[1, 2]", "the report is not an object"),
    ('{"findings": []}', '"diag" is not an object'),
    ('{"diag": {"figures": {}}}', '"diag.figures" is not a list'),
    ('{"diag": {"figures": [{"metric": "gemm.bf16", "value": "fast"}]}}',
     'diag.figures[0] has no string "metric" and number "value"'),
    ('{"diag": {"run": {"gemms": 3}}}', "diag.run.gemms is not a list"),
])
def test_a_malformed_report_is_one_line_and_non_zero(tmp_path, content, why):
    path = dump(tmp_path, "bad.json", content)
    rc, out, err, _ = compare(tmp_path, "--diag", path, "--torch", sample("torch-h200.json"))
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("diag_compare.py: " + path) and why in err
    assert out == ""


def test_malformed_torch_fault_and_timing_inputs(tmp_path):
    diag = sample("diag-h200-l2.json")
    torch = load("torch-h200.json")
    bad_schema = dict(torch, schema="other")
    rc, _, err, _ = compare(tmp_path, "--diag", diag, "--torch", dump(tmp_path, "t.json",
                                                                       bad_schema))
    assert rc == 2 and "schema" in err
    bad_value = copy.deepcopy(torch)
    bad_value["metrics"][0]["value"] = "7e14"
    rc, _, err, _ = compare(tmp_path, "--torch", dump(tmp_path, "t.json", bad_value))
    assert rc == 2 and "metrics[0]" in err
    bad_findings = load("diag-h200-fault-gemm.json")
    bad_findings["findings"][0] = {"id": 3}
    rc, _, err, _ = compare(tmp_path, "--fault", "gemm=" + dump(tmp_path, "f.json", bad_findings))
    assert rc == 2 and "findings[0]" in err
    rc, _, err, _ = compare(tmp_path, "--timing", dump(tmp_path, "tm.json", '{"rows": 1}'))
    assert rc == 2 and '"rows" is not a list' in err
    rc, _, err, _ = compare(tmp_path, "--diag", str(tmp_path / "absent.json"))
    assert rc == 2 and err.count("\n") == 1
    rc, _, err, _ = compare(tmp_path, "--fault", "cpu=" + diag)
    assert rc == 64 and err.count("\n") == 1


# ------------------------------------------------------------------ planted faults

def fault(tmp_path, kind, report):
    rc, out, err, data = compare(tmp_path, "--fault", "%s=%s" % (
        kind, dump(tmp_path, "f.json", report) if isinstance(report, dict) else report))
    assert rc == 0, err
    return data["faults"][kind], out


def test_planted_faults_caught(tmp_path):
    f, out = fault(tmp_path, "gemm", sample("diag-h200-fault-gemm.json"))
    assert f["caught"] and "compute.mismatch at fail; 1 mismatching element" in f["detail"]
    assert "gemm    caught " in out
    f, out = fault(tmp_path, "memory", sample("diag-h200-fault-memory.json"))
    assert f["caught"] and "1 failing address 0x800000001000 (pattern random" in f["detail"]
    assert "memory  caught " in out


def test_a_clean_report_does_not_count_as_a_caught_fault(tmp_path):
    f, out = fault(tmp_path, "gemm", sample("diag-h200-l2.json"))
    assert not f["caught"] and f["detail"] == "compute.mismatch at ok, not at fail"
    assert "gemm    NOT caught" in out
    report = load("diag-h200-l2.json")
    report["findings"] = [x for x in report["findings"] if x["id"] != "memory.test-failed"]
    report["findings"].append({"id": "diag.incomplete", "severity": "fail"})
    f, _ = fault(tmp_path, "memory", report)
    assert not f["caught"]
    assert f["detail"] == "memory.test-failed not reported (failing findings: diag.incomplete)"


def test_the_memory_fault_must_be_one_address(tmp_path):
    report = load("diag-h200-fault-memory.json")
    mt = report["diag"]["run"]["memtests"][0]
    # the same word seen by a second pattern is still one address
    mt["failures"].append(dict(mt["failures"][0], pattern="walking-ones"))
    mt["errors"] = 2
    f, _ = fault(tmp_path, "memory", report)
    assert f["caught"] and "pattern random/walking-ones; 2 failing word" in f["detail"]
    # a second address is not the planted fault
    mt["failures"].append(dict(mt["failures"][0], offset=8192, address=0x800000002000))
    f, _ = fault(tmp_path, "memory", report)
    assert not f["caught"]
    assert "2 failing address(es) (0x800000001000, 0x800000002000), planted 1" in f["detail"]
    mt["failures"] = []
    f, _ = fault(tmp_path, "memory", report)
    assert not f["caught"] and "0 failing address(es) (none listed)" in f["detail"]


# ------------------------------------------------------------------ --save

def test_save_writes_the_whole_summary(tmp_path):
    timing = {"rows": [{"name": "gpudoctor check", "wall_ms": [30, 31, 32], "median_ms": 31.0,
                        "exit_codes": [0, 0, 0], "ratio_vs_check": 1.0},
                       {"name": "nvidia-smi -q", "wall_ms": [93, 93, 93], "median_ms": 93.0,
                        "exit_codes": [0, 0, 0], "ratio_vs_check": 3.0},
                       {"name": "torch", "skipped": "no PyTorch"}]}
    machine = tmp_path / "machine.txt"
    machine.write_text("gpus: GPU 0: NVIDIA H200\n")
    save = tmp_path / "diag_gpu.txt"
    rc, out, err, _ = compare(tmp_path, "--diag", sample("diag-h200-l2.json"),
                              "--torch", sample("torch-h200.json"),
                              "--fault", "gemm=" + sample("diag-h200-fault-gemm.json"),
                              "--fault", "memory=" + sample("diag-h200-fault-memory.json"),
                              "--timing", dump(tmp_path, "timing.json", timing),
                              "--machine", str(machine), "--save", str(save))
    assert rc == 0, err
    text = save.read_text()
    assert text.startswith("# bench/diag_gpu.sh")
    assert "gpus: GPU 0: NVIDIA H200" in text
    assert "goals met: 5 of 7 compared" in text
    assert "gemm    caught" in text and "memory  caught" in text
    nv = next(l for l in text.splitlines() if "nvidia-smi -q" in l).split()
    assert nv[-3:] == ["3", "93.0", "3.00x"]
    assert "skipped: no PyTorch" in text
    # what was printed is what was saved, less the machine lines
    for line in out.splitlines():
        assert line in text


# ------------------------------------------------------------------ diag_torch.py, pure parts

def test_torch_arguments():
    a = diag_torch.parse_args([])
    assert (a.size, a.dtypes, a.h2d_bytes, a.d2d_bytes) == (8192, ["bf16", "fp16", "tf32", "fp32"],
                                                          256 << 20, 1 << 30)
    a = diag_torch.parse_args(["--dtypes", "tf32, bf16", "--gemm-seconds", "2.5"])
    assert a.dtypes == ["tf32", "bf16"] and a.gemm_seconds == 2.5
    for bad in (["--dtypes", "int8"], ["--dtypes", ","], ["--size", "0"],
                ["--copy-seconds", "-1"], ["--warmup-seconds", "-1"], ["--bogus"]):
        with pytest.raises(diag_torch.UsageError):
            diag_torch.parse_args(bad)


def test_torch_usage_error_exit(capsys):
    assert diag_torch.main(["--dtypes", "int8"]) == 64
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown int8" in err


def test_torch_result_formatting():
    args = diag_torch.parse_args(["--dtypes", "bf16,fp32", "--size", "1024"])
    raw = {"torch": "2.11.0", "cuda": "13.0", "device": {"bus_id": BUS},
           "gemm": {"bf16": {"iterations": 1000, "seconds": 0.5},
                    "fp32": {"iterations": 0, "seconds": 0.0, "error": "not supported"},
                    "fp16": {"iterations": 5, "seconds": 1.0}},  # not asked for: left out
           "copy": {"h2d": {"bytes": 1 << 28, "copies": 100, "seconds": 2.0},
                    "d2d": {"bytes": 1 << 30, "copies": 100, "seconds": 0.05}}}
    doc = diag_torch.format_result(raw, args)
    assert doc["schema"] == "gpudoctor.bench-torch/v1" and doc["available"] is True
    m = {r["metric"]: r for r in doc["metrics"]}
    assert list(m) == ["gemm.bf16", "gemm.fp32", "pcie.h2d", "memory.bandwidth"]
    assert m["gemm.bf16"]["value"] == pytest.approx(2 * 1024 ** 3 * 1000 / 0.5)
    assert m["gemm.fp32"]["value"] is None and m["gemm.fp32"]["error"] == "not supported"
    assert m["pcie.h2d"]["value"] == pytest.approx((1 << 28) * 100 / 2.0)
    # a device copy counts read and write
    assert m["memory.bandwidth"]["value"] == pytest.approx(2 * (1 << 30) * 100 / 0.05)
    # and diag_compare reads it
    ok, _, dev, values = diag_compare.torch_values(json.loads(json.dumps(doc)), "x")
    assert ok and dev["bus_id"] == BUS and "gemm.fp32" not in values


def no_torch_dir(tmp_path):
    d = tmp_path / "notorch"
    d.mkdir(exist_ok=True)
    (d / "torch.py").write_text("raise ImportError('stand-in: no torch here')\n")
    return str(d)


def test_torch_missing_is_said_and_exit_2(tmp_path):
    out = tmp_path / "t.json"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "diag_torch.py"), "--out", str(out)],
                       env=dict(os.environ, PYTHONPATH=no_torch_dir(tmp_path)),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    doc = json.loads(out.read_text())
    assert doc["available"] is False and doc["error"] == "no PyTorch: stand-in: no torch here"


STAND_IN_TORCH = '''
"""Just enough of torch for diag_torch.measure(): kernels are no-ops, CUDA
events read the wall clock, every call is logged."""
import time
__version__ = "stand-in"
calls = []
bfloat16, float16, float32, uint8 = "bf16", "fp16", "fp32", "u8"
class version:
    cuda = "13.0"
class _Matmul:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
class backends:
    class cuda:
        matmul = _Matmul
class device:
    def __init__(self, kind, index):
        self.kind, self.index = kind, index
class Generator:
    def __init__(self, device=None): pass
    def manual_seed(self, seed): pass
class Tensor:
    def __init__(self, n, dtype, where):
        self.n, self.dtype, self.where = n, dtype, where
    def to(self, dtype):
        return Tensor(self.n, dtype, self.where)
    def fill_(self, v):
        return self
    def copy_(self, src, non_blocking=False):
        calls.append(("copy", src.where, self.where, non_blocking))
        time.sleep(0.001)
        return self
def randn(*shape, device=None, generator=None):
    return Tensor(shape, float32, "cuda")
def empty(*shape, device=None, dtype=None, pin_memory=False):
    return Tensor(shape, dtype, "cuda" if device is not None else
                  ("pinned" if pin_memory else "pageable"))
def empty_like(t):
    return Tensor(t.n, t.dtype, t.where)
def matmul(a, b, out=None):
    calls.append(("matmul", a.dtype, backends.cuda.matmul.allow_tf32, out is not None))
    time.sleep(0.001)
    return out
class _Props:
    name = "Stand-in H200"
    pci_domain_id, pci_bus_id, pci_device_id = 0, 0x17, 0
    multi_processor_count = 132
    total_memory = 150754820096
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def set_device(d): pass
    @staticmethod
    def get_device_properties(d): return _Props()
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def empty_cache(): pass
    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing
            self.t = None
        def record(self):
            self.t = time.perf_counter()
        def synchronize(self): pass
        def elapsed_time(self, other):
            return (other.t - self.t) * 1000.0
'''


def test_torch_measuring_code_against_a_stand_in(tmp_path, monkeypatch):
    d = tmp_path / "standin"
    d.mkdir()
    (d / "torch.py").write_text(STAND_IN_TORCH)
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop("torch", None)
    import torch  # the stand-in
    try:
        args = diag_torch.parse_args(["--gemm-seconds", "0.05", "--copy-seconds", "0.05",
                                      "--warmup-seconds", "0.02"])
        doc = diag_torch.format_result(diag_torch.measure(args, torch), args)
    finally:
        sys.modules.pop("torch", None)
    assert doc["device"]["bus_id"] == BUS and doc["device"]["name"] == "Stand-in H200"
    m = {r["metric"]: r for r in doc["metrics"]}
    assert list(m) == ["gemm.bf16", "gemm.fp16", "gemm.tf32", "gemm.fp32", "pcie.h2d",
                       "pcie.d2h", "memory.bandwidth"]
    for r in m.values():
        assert r["value"] > 0 and r["seconds"] >= 0.04, r
    # each dtype ran with the TF32 switch as documented, into a preallocated output
    seen = {(dt, tf32) for kind, dt, tf32, out in torch.calls if kind == "matmul" and out}
    assert ("fp32", True) in seen and ("fp32", False) in seen
    assert torch.backends.cuda.matmul.allow_tf32 is False  # restored
    copies = {(src, dst, nb) for kind, src, dst, nb in torch.calls if kind == "copy"}
    assert copies == {("pinned", "cuda", True), ("cuda", "pinned", True), ("cuda", "cuda", False)}
    assert m["gemm.tf32"]["switch"] == "allow_tf32=True"
    assert m["gemm.fp32"]["switch"] == "allow_tf32=False" and "switch" not in m["gemm.bf16"]


def test_torch_tf32_switch_prefers_the_new_api():
    class Matmul:
        allow_tf32 = False
        fp32_precision = "none"

    class T:
        class backends:
            class cuda:
                matmul = Matmul
    assert diag_torch.set_tf32(T, True) == "fp32_precision=tf32"
    assert diag_torch.set_tf32(T, False) == "fp32_precision=ieee"
    assert Matmul.allow_tf32 is False  # the old switch left alone
    del Matmul.fp32_precision
    assert diag_torch.set_tf32(T, True) == "allow_tf32=True" and Matmul.allow_tf32 is True


# ------------------------------------------------------------------ the timer

def stand_ins(tmp_path, gd_body=None):
    """A bin dir with a stand-in nvidia-smi; a gpudoctor dir with a stand-in
    gpudoctor answering from the sample reports and logging its calls."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    smi = bindir / "nvidia-smi"
    smi.write_text('#!/bin/sh\ncase "$*" in\n  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-0000)" ;;\n'
                   '  -q) echo "==============NVSMI LOG=============="; echo "Attached GPUs : 1" ;;\n'
                   '  *) echo "stand-in nvidia-smi $*" ;;\nesac\n')
    smi.chmod(0o755)
    gddir = tmp_path / "gd"
    gddir.mkdir(exist_ok=True)
    gd = gddir / "gpudoctor"
    gd.write_text(gd_body or """#!/bin/sh
S=%s
echo "$* | LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >> "$GD_FAKE_LOG"
case "$*" in
  --version) echo "gpudoctor stand-in" ;;
  check) echo "gpudoctor check: ok"; exit 1 ;;
  *"--plant-fault gemm"*) cat $S/diag-h200-fault-gemm.json; exit 2 ;;
  *"--plant-fault memory"*) cat $S/diag-h200-fault-memory.json; exit 2 ;;
  diag*) cat $S/diag-h200-l2.json ;;
  *) echo "stand-in: unknown $*" >&2; exit 64 ;;
esac
""" % SAMPLES)
    gd.chmod(0o755)
    return str(bindir), str(gddir)


def test_timer_rows_and_ratios(tmp_path):
    bindir, gddir = stand_ins(tmp_path)
    out = tmp_path / "timing.json"
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
               GD_FAKE_LOG=str(tmp_path / "log"))
    p = subprocess.run([sys.executable, os.path.join(BENCH, "diag_compare.py"), "timing",
                        "--gpudoctor", os.path.join(gddir, "gpudoctor"), "--gd-ld", "/opt/x",
                        "--runs", "3", "--slow-runs", "2", "--no-torch", "no PyTorch: test",
                        "--out", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    rows = {r["name"]: r for r in doc["rows"]}
    check = rows["gpudoctor check"]
    assert len(check["wall_ms"]) == 3 and check["exit_codes"] == [1, 1, 1]
    assert check["ratio_vs_check"] == 1.0
    smi = rows["nvidia-smi -q"]
    assert len(smi["wall_ms"]) == 3 and smi["stdout_last"] == "Attached GPUs : 1"
    assert smi["ratio_vs_check"] == pytest.approx(smi["median_ms"] / check["median_ms"])
    torch_rows = [r for n, r in rows.items() if "torch" in n or "PYTORCH" in n]
    assert len(torch_rows) == 3 and all(r["skipped"] == "no PyTorch: test" for r in torch_rows)
    # 1 untimed + 3 timed, each with the library path given for gpudoctor alone
    log = (tmp_path / "log").read_text().splitlines()
    assert log == ["check | LD_LIBRARY_PATH=/opt/x" +
                   (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH")
                    else "")] * 4
    assert "x check" in p.stdout and "skipped: no PyTorch: test" in p.stdout


def test_timer_without_gpudoctor_or_nvidia_smi(tmp_path):
    out = tmp_path / "timing.json"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "diag_compare.py"), "timing",
                        "--smi", str(tmp_path / "no-such-smi"), "--gd-missing", "none here",
                        "--runs", "1", "--slow-runs", "1", "--python", sys.executable,
                        "--out", str(out)],
                       env=dict(os.environ, PYTHONPATH=no_torch_dir(tmp_path)),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["gpudoctor check"]["skipped"] == "none here"
    assert rows["nvidia-smi -q"]["skipped"].startswith("no ")
    # torch was not declared missing: it runs, fails (exit 1), has no ratio
    r = rows['python3 -c "import torch"']
    assert r["exit_codes"] == [1] and r["ratio_vs_check"] is None


# ------------------------------------------------------------------ diag_gpu.sh end to end

def diag_gpu(tmp_path, keep_raw=True, script=os.path.join(BENCH, "diag_gpu.sh"), **env_over):
    bindir, gddir = stand_ins(tmp_path)
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), GD_BIN_DIR=gddir, PYTHON=sys.executable,
               PATH=bindir + os.pathsep + os.environ["PATH"],
               PYTHONPATH=no_torch_dir(tmp_path), GD_FAKE_LOG=str(tmp_path / "gd.log"),
               TIMING_RUNS="2", TIMING_SLOW_RUNS="1", DIAG_KEEP_RAW="1" if keep_raw else "0")
    env.update(env_over)
    p = subprocess.run(["bash", script], env=env,
                       capture_output=True, text=True, timeout=240)
    log = (tmp_path / "gd.log").read_text() if (tmp_path / "gd.log").exists() else ""
    return p, out, log


def test_diag_gpu_end_to_end_without_pytorch(tmp_path):
    p, out, log = diag_gpu(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    raw = out / "raw"
    for f in ("machine.txt", "steps.tsv", "timing.json", "timing.txt", "diag-l2.json",
              "fault-gemm.json", "fault-memory.json", "compare.txt", "compare.json"):
        assert (raw / f).exists(), f
    assert not (raw / "torch.json").exists()
    summary = (out / "diag_gpu.txt").read_text()
    assert "no PyTorch: %s -c 'import torch' failed" % sys.executable in summary
    bf16 = next(l for l in summary.splitlines() if l.startswith("gemm.bf16")).split()
    assert bf16[1:3] == ["741.0", "TFLOP/s"] and bf16[3:] == ["n/a", "n/a", ">=0.95", "n/a"]
    assert "gemm    caught" in summary and "memory  caught" in summary
    assert "gpus: GPU 0: NVIDIA H200" in summary  # machine.txt, through the stand-in
    timing = {r["name"]: r for r in json.loads((raw / "timing.json").read_text())["rows"]}
    assert len(timing["gpudoctor check"]["wall_ms"]) == 2
    assert len(timing["nvidia-smi -q"]["wall_ms"]) == 2
    assert timing['python3 -c "import torch"']["skipped"].startswith("no PyTorch")
    # the exact diag command lines, verdict exit codes notwithstanding
    calls = [l.split(" | ")[0] for l in log.splitlines() if l.startswith("diag")]
    assert calls == ["diag --level 2 --duration 20 --json --no-history",
                     "diag --level 2 --duration 5 --json --no-history --plant-fault gemm",
                     "diag --level 2 --duration 5 --json --no-history --plant-fault memory"]
    steps = (raw / "steps.tsv").read_text()
    assert "\nfault-gemm\t2\t" in steps and "\ndiag-l2\t0\t" in steps
    assert "copy to bench/diag_gpu.txt" in p.stdout
    assert (out / "diag-gpu.log").exists() and (out / "diag-raw.tar.gz").exists()


def test_diag_gpu_packs_for_the_trip_back(tmp_path):
    p, out, _ = diag_gpu(tmp_path, keep_raw=False, TIMING_RUNS="1")
    assert p.returncode == 0, p.stdout + p.stderr
    # the device tool returns at most 8 files
    assert sorted(os.listdir(out)) == ["diag-gpu.log", "diag-raw.tar.gz", "diag_gpu.txt"]
    with tarfile.open(out / "diag-raw.tar.gz") as t:
        names = set(t.getnames())
    assert {"raw/diag-l2.json", "raw/timing.json", "raw/compare.txt",
            "raw/steps.tsv"} <= names


def test_diag_gpu_without_gpudoctor(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    # A copy of bench/ alone, so that no build-device/ or build/ beside it
    # holds a gpudoctor.
    repo = tmp_path / "repo"
    shutil.copytree(BENCH, repo / "bench", ignore=shutil.ignore_patterns("*.txt", "__pycache__"))
    p, out, _ = diag_gpu(tmp_path, GD_BIN_DIR=str(empty), TIMING_RUNS="1",
                         script=str(repo / "bench" / "diag_gpu.sh"))
    assert "diag_gpu: no runnable gpudoctor" in p.stdout
    assert p.returncode == 3, p.stdout
    summary = (out / "diag_gpu.txt").read_text()
    assert "gpudoctor diag not run: no runnable gpudoctor" in summary
    assert "gemm    not run     no runnable gpudoctor" in summary
    assert "nvidia-smi -q" in summary and "skipped: no runnable gpudoctor" in summary


# ------------------------------------------------------------------ the helper's libraries

def build_elf(tmp_path, lib_name, rpath=False):
    """A stub shared library lib_name in tmp/stub/ and tmp/gd-helper/
    gpudoctor-diag linked against it (with a RUNPATH to it when rpath)."""
    stub = tmp_path / "stub"
    stub.mkdir(exist_ok=True)
    (tmp_path / "stub.c").write_text("int gd_stub(void) { return 7; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(stub / lib_name), "-Wl,-soname," + lib_name,
                    str(tmp_path / "stub.c")], check=True)
    (tmp_path / "main.c").write_text("int gd_stub(void);\nint main(void) { return gd_stub() - 7; }\n")
    out = tmp_path / "helper-build"
    out.mkdir(exist_ok=True)
    cmd = [CC, "-o", str(out / "gpudoctor-diag"), str(tmp_path / "main.c"), str(stub / lib_name)]
    if rpath:
        cmd.append("-Wl,-rpath," + str(stub))
    subprocess.run(cmd, check=True)
    return str(stub), str(out / "gpudoctor-diag")


needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
STUB = "libgdtest-cublas.so.13"  # a name no loader path here holds


@needs_cc
def test_the_helpers_libraries_found_in_lib_dirs(tmp_path):
    stub, helper = build_elf(tmp_path, STUB)
    _, gddir = stand_ins(tmp_path)
    shutil.copy(helper, gddir)
    p, out, log = diag_gpu(tmp_path, DIAG_LIB_DIRS="/nonexistent " + stub, TIMING_RUNS="1")
    assert p.returncode == 0, p.stdout + p.stderr
    diag_lines = [l for l in log.splitlines() if l.startswith("diag")]
    assert len(diag_lines) == 3
    for line in diag_lines:
        assert "--helper %s/gpudoctor-diag" % gddir in line
        assert ("LD_LIBRARY_PATH=" + stub) in line
    # the library path is for the diag runs alone, not for `gpudoctor check`
    assert all(stub not in l for l in log.splitlines() if l.startswith("check"))
    summary = (out / "diag_gpu.txt").read_text()
    assert "its libraries from: '%s'" % stub in summary
    assert "helper --help: ok" in summary  # it loads with that path


@needs_cc
def test_the_helpers_libraries_found_in_rounds(tmp_path):
    # The helper needs STUB, which needs a second library in another
    # directory: ldd names the second only once the first is found.
    stub, helper = build_elf(tmp_path, STUB)
    second = tmp_path / "second"
    second.mkdir()
    (tmp_path / "lt.c").write_text("int gd_lt(void) { return 0; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(second / "libgdtest-cublasLt.so.13"),
                    "-Wl,-soname,libgdtest-cublasLt.so.13", str(tmp_path / "lt.c")], check=True)
    (tmp_path / "stub2.c").write_text("int gd_lt(void);\nint gd_stub(void) { return 7 + gd_lt(); }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", os.path.join(stub, STUB), "-Wl,-soname," + STUB,
                    str(tmp_path / "stub2.c"), str(second / "libgdtest-cublasLt.so.13")],
                   check=True)
    _, gddir = stand_ins(tmp_path)
    shutil.copy(helper, gddir)
    p, out, log = diag_gpu(tmp_path, DIAG_LIB_DIRS="%s %s" % (stub, second), TIMING_RUNS="1")
    assert p.returncode == 0, p.stdout + p.stderr
    summary = (out / "diag_gpu.txt").read_text()
    assert "its libraries from: '%s:%s'" % (stub, second) in summary
    assert "helper --help: ok" in summary
    # the second nowhere: named as the one missing
    p, out, log = diag_gpu(tmp_path, DIAG_LIB_DIRS=stub, TIMING_RUNS="1")
    assert "diag_gpu: gpudoctor-diag needs libgdtest-cublasLt.so.13: not on this machine" in p.stdout


@needs_cc
def test_the_helpers_libraries_found_in_a_wheel(tmp_path):
    stub, helper = build_elf(tmp_path, STUB)
    site = tmp_path / "site"
    wheel_lib = site / "nvidia" / "cu13" / "lib"
    wheel_lib.mkdir(parents=True)
    shutil.copy(os.path.join(stub, STUB), wheel_lib)
    _, gddir = stand_ins(tmp_path)
    shutil.copy(helper, gddir)
    p, out, log = diag_gpu(tmp_path, TIMING_RUNS="1",
                           PYTHONPATH=os.pathsep.join([no_torch_dir(tmp_path), str(site)]))
    assert p.returncode == 0, p.stdout + p.stderr
    diag_lines = [l for l in log.splitlines() if l.startswith("diag")]
    assert len(diag_lines) == 3 and all(str(wheel_lib) in l for l in diag_lines)


@needs_cc
def test_the_helpers_libraries_missing(tmp_path):
    _, helper = build_elf(tmp_path, STUB)
    _, gddir = stand_ins(tmp_path)
    shutil.copy(helper, gddir)
    p, out, log = diag_gpu(tmp_path, TIMING_RUNS="1")
    assert p.returncode == 0, p.stdout + p.stderr
    said = [l for l in p.stdout.splitlines() if STUB in l]
    assert said[0] == ("diag_gpu: gpudoctor-diag needs %s: not on this machine (no loader path, "
                       "no CUDA toolkit, no nvidia-cublas/nvidia-nccl wheel in %s's "
                       "site-packages); diag runs skipped" % (STUB, sys.executable))
    assert not [l for l in log.splitlines() if l.startswith("diag")]
    summary = (out / "diag_gpu.txt").read_text()
    assert "gpudoctor diag not run: gpudoctor-diag needs " + STUB in summary
    assert "helper --help" not in summary
    assert "memory  not run     gpudoctor-diag needs" in summary
    # the timing still ran, gpudoctor check included
    timing = json.loads((out / "raw" / "timing.json").read_text())
    assert len(timing["rows"][0]["wall_ms"]) == 1


# ------------------------------------------------------------------ staging

@needs_cc
def test_stage_takes_the_helper_but_not_cublas(tmp_path):
    # libcublas.so.13 here is the stub, found through the helper's RUNPATH
    # as the real one is through /usr/local/cuda/lib.
    stub, helper = build_elf(tmp_path, "libcublas.so.13", rpath=True)
    src = tmp_path / "build"
    src.mkdir()
    (tmp_path / "prog.c").write_text("int main(void) { return 0; }\n")
    for name in ("gpudoctor", "gpudoctor-serve"):
        subprocess.run([CC, "-o", str(src / name), str(tmp_path / "prog.c")], check=True)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(src / "libgpudoctor.so.0"),
                    str(tmp_path / "stub.c")], check=True)
    shutil.copy(helper, src)
    dst = tmp_path / "staged"
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-check.sh"), "--stage",
                        str(src)], env=dict(os.environ, GD_STAGE_DIR=str(dst)),
                       capture_output=True, text=True, timeout=60, cwd=SRC)
    assert p.returncode == 0, p.stdout + p.stderr
    assert os.access(dst / "gpudoctor-diag", os.X_OK)
    assert not (dst / "lib" / "libcublas.so.13").exists()
    assert not (dst / ".not-staged").exists()
    staged = (dst / "STAGED").read_text()
    assert "gpudoctor-diag: staged; needs from the GPU machine: libcublas.so.13 (0 MiB)" in staged
    # without a helper in the build, STAGED says so
    os.remove(src / "gpudoctor-diag")
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-check.sh"), "--stage",
                        str(src)], env=dict(os.environ, GD_STAGE_DIR=str(dst)),
                       capture_output=True, text=True, timeout=60, cwd=SRC)
    assert p.returncode == 0 and not (dst / "gpudoctor-diag").exists()
    assert "gpudoctor-diag: not in %s" % src in (dst / "STAGED").read_text()


# ------------------------------------------------------------------ the real report's shape

BINARY = os.environ.get("GD_BINARY") or os.path.join(SRC, "build", "gpudoctor")
FAKES = os.environ.get("GD_FAKES_DIR") or os.path.join(SRC, "build", "fakes")

FAKE_HELPER = r'''#!/usr/bin/env python3
"""gpudoctor-diag's answer (gpu/README.md), canned: H200-like figures; a
--plant-fault makes the bf16 GEMM or the memory test fail as the real one would."""
import json, sys
args = sys.argv[1:]
gpus = [args[i + 1].split("@")[0] for i, a in enumerate(args) if a == "--gpu"]
fault = args[args.index("--plant-fault") + 1] if "--plant-fault" in args else ""
def say(d):
    print(json.dumps(d), flush=True)
say({"type": "hello", "schema": "gpudoctor.diag-helper/v1", "cuda_runtime": 13000,
     "cuda_driver": 13000, "cublas": 130100, "nccl": 22809})
for g in gpus:
    say({"type": "device", "gpu": g, "cuda_index": 0, "name": "NVIDIA H100 80GB HBM3",
         "cc_major": 9, "cc_minor": 0, "multiprocessors": 132, "memory_bytes": 85899345920,
         "free_bytes": 85000000000, "clock_khz": 1980000, "mem_clock_khz": 2619000,
         "mem_bus_width_bits": 5120})
    say({"type": "result", "test": "context", "gpu": g, "status": "pass", "duration_ms": 200})
    for d, bps in (("h2d", 5.0e10), ("d2h", 4.8e10), ("d2d", 2.9e12)):
        say({"type": "result", "test": "copy", "gpu": g, "direction": d, "status": "pass",
             "bytes": 268435456, "bytes_per_s": bps, "verified": True, "mismatches": 0,
             "duration_ms": 1000})
    bad = fault == "memory"
    say({"type": "result", "test": "memtest", "gpu": g, "status": "fail" if bad else "pass",
         "bytes": 80000000000, "passes": 2, "patterns": ["address", "random"], "seed": 1,
         "errors": 1 if bad else 0, "duration_ms": 1000,
         "failures": [{"offset": 4096, "address": 140737488359424, "expected": 1,
                       "actual": 3, "pattern": "random"}] if bad else []})
    for dt, f in (("fp32", 5.1e13), ("tf32", 4.0e14), ("fp16", 7.6e14), ("bf16", 7.41e14)):
        bad = fault == "gemm" and dt == "bf16"
        say({"type": "result", "test": "gemm", "gpu": g, "dtype": dt,
             "status": "fail" if bad else "pass", "m": 8192, "n": 8192, "k": 8192,
             "iterations": 400, "flops_per_s": f, "checked": 200, "mismatches": 1 if bad else 0,
             "max_rel_error": 0.0009, "duration_ms": 1000})
say({"type": "done"})
'''


def real_diag_or_skip():
    if not os.access(BINARY, os.X_OK):
        pytest.skip("no gpudoctor binary at %s" % BINARY)
    p = subprocess.run([BINARY, "diag", "--help"], capture_output=True, text=True, timeout=30)
    if "--no-history" not in p.stdout:
        pytest.skip("this gpudoctor has no diag command yet")


def test_the_real_reports_are_read_right(tmp_path):
    """gpudoctor diag itself, on the fake 8-GPU node (GPU 0), running a
    canned helper: diag_compare.py must read its report and judge its faults
    as it does the samples, so the samples' shape cannot drift from the real one."""
    real_diag_or_skip()
    helper = tmp_path / "gpudoctor-diag"
    helper.write_text(FAKE_HELPER)
    helper.chmod(0o755)
    env = dict(os.environ, GPUDOCTOR_FAKE_SCENARIO=os.path.join(
        SRC, "tests", "fakes", "scenarios", "hgx-8xh100.json"))
    reports = {}
    for name, extra in (("l2", []), ("gemm", ["--plant-fault", "gemm"]),
                        ("memory", ["--plant-fault", "memory"])):
        p = subprocess.run([BINARY, "diag", "--level", "2", "--duration", "1", "--json",
                            "--no-history", "--helper", str(helper), "--gpus", "0"] + extra +
                           ["--root", os.path.join(SRC, "tests", "roots", "hgx-8xh100"),
                            "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
                            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1")],
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 1, 2), p.stderr
        reports[name] = dump(tmp_path, name + ".json", p.stdout)
    torch = load("torch-h200.json")
    torch["device"]["bus_id"] = "0000:18:00.0"
    rc, out, err, data = compare(tmp_path, "--diag", reports["l2"],
                                 "--torch", dump(tmp_path, "t.json", torch),
                                 "--fault", "gemm=" + reports["gemm"],
                                 "--fault", "memory=" + reports["memory"])
    assert rc == 0, err
    rows = rows_by_metric(data)
    assert rows["gemm.bf16"]["gpudoctor"] == 7.41e14 and rows["gemm.bf16"]["bus_id"] == "0000:18:00.0"
    assert rows["pcie.d2h"]["gpudoctor"] == 4.8e10
    assert rows["memory.bandwidth"]["gpudoctor"] == 2.9e12
    assert rows["gemm.bf16"]["expected"] > 0  # the catalog's floor came through
    assert data["faults"]["gemm"]["caught"], data["faults"]["gemm"]
    assert data["faults"]["memory"]["caught"], data["faults"]["memory"]
    assert "0x800000001000" in data["faults"]["memory"]["detail"]
    # and the clean run is no caught fault
    rc, _, _, data = compare(tmp_path, "--fault", "gemm=" + reports["l2"])
    assert rc == 0 and not data["faults"]["gemm"]["caught"]
