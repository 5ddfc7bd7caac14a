"""scripts/device-busy.sh without a GPU: the job is busy_job.py's stand-in
(CPU work, the same JSON lines), gpudoctor runs against the fake libraries on
the 4x4090 tree with a process holding GPU 0 (memory-held.json), Slurm is
tests/docs/scontrol, and nvidia-smi a stand-in that counts every gpudoctor
process of this test as a 500 MiB context on GPU 0 (a gpudoctor that opened
one, as the real nvidia-smi would show it). Asserted: every step ran and its
exit is recorded, the summary's figures exist and agree with the files they
come from, the job saw no error (and one it saw is reported). No timing
threshold: rates are only checked against their own inputs."""
import csv
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("GD_BINARY") or os.path.join(SRC, "build", "gpudoctor")
FAKES = os.environ.get("GD_FAKES_DIR") or os.path.join(SRC, "build", "fakes")

pytestmark = pytest.mark.skipif(not os.access(BINARY, os.X_OK) and "GD_BINARY" not in os.environ,
                                reason="no gpudoctor binary at %s" % BINARY)

GPU0 = "0000:01:00.0"  # the tree's GPU 0 (nvidia-smi's index 0), CUDA's device 2
BASE_MIB = 1000
CONTEXT_MIB = 500

# A process "on GPU 0" is a gpudoctor* process carrying this test run's mark
# in its environment (so that other gpudoctor processes on this machine do
# not count).
STAND_IN_SMI = r"""#!/bin/sh
n=0
apps=""
for d in /proc/[0-9]*; do
  { read -r c < "$d/comm"; } 2> /dev/null || continue
  case $c in gpudoctor*) ;; *) continue ;; esac
  { tr '\0' '\n' < "$d/environ"; } 2> /dev/null | grep -qx "BUSY_TEST_MARK=$BUSY_TEST_MARK" || continue
  n=$((n + 1))
  apps="$apps${d#/proc/}, $c, %(ctx)d
"
done
case "$*" in
  *--query-gpu=memory.used*) echo $((%(base)d + %(ctx)d * n)) ;;
  *--query-compute-apps=*) printf '%%s' "$apps" ;;
  *) echo "stand-in nvidia-smi $*" ;;
esac
""" % {"base": BASE_MIB, "ctx": CONTEXT_MIB}


def run_busy(tmp, **over):
    out = tmp / "out"
    bindir = tmp / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text(STAND_IN_SMI)
    smi.chmod(0o755)
    env = dict(os.environ, OUT=str(out), GD_BIN_DIR=os.path.dirname(BINARY),
               BUSY_TEST_MARK=str(tmp), GD_NVIDIA_SMI=str(smi),
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    "memory-held.json"),
               GD_ARGS=" ".join(["--root", os.path.join(SRC, "tests", "roots", "ws-4x4090"),
                                 "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
                                 "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
                                 "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]),
               GD_JOB_CMD="%s %s --stand-in --every 0.25" % (
                   sys.executable, os.path.join(HERE, "busy_job.py")),
               GD_BUSY_ALONE_S="2", GD_BUSY_SERVE_RUNS="3",
               GD_SCONTROL=os.path.join(SRC, "tests", "docs", "scontrol"),
               GD_SLURM_ARGS="--slurm-node gpu07")
    env.update(over)
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-busy.sh")], env=env,
                       capture_output=True, text=True, timeout=200)
    d = out / "busy"
    summary = json.loads((d / "summary.json").read_text()) if (d / "summary.json").exists() else None
    return p, d, summary


def tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    p, d, s = run_busy(tmp_path_factory.mktemp("busy"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert s is not None, p.stdout
    return d, s


STEPS = ["check-json-1", "snapshot-1", "check-json-2", "snapshot-2", "check-json-3", "snapshot-3",
         "check-slurm", "serve-wait", "serve"]
EXIT_OF = {"ok": "0", "info": "0", "warn": "1", "fail": "2"}


def test_every_step_ran(busy):
    d, s = busy
    rows = tsv(d / "steps.tsv")
    assert [r["step"] for r in rows] == STEPS
    for r in rows:
        assert r["exit"].isdigit(), r  # ran, not skipped
        assert float(r["start"]) <= float(r["end"]), r
    assert [r["name"] for r in s["steps"]] == STEPS
    for c in s["checks"]:
        assert c["verdict"] in EXIT_OF, c
        assert c["exit"] == EXIT_OF[c["verdict"]], c
        assert json.loads((d / (c["name"] + ".json")).read_text())["verdict"] == c["verdict"]
    assert s["verdicts"] == dict({c["name"]: c["verdict"] for c in s["checks"]},
                                 serve=s["serve"]["verdict"])
    assert s["slurm"]["exit"] == "0" and s["slurm"]["skipped"] is None
    assert "gpu07" in s["slurm"]["output"]


def test_serve_ran_its_checks(busy):
    d, s = busy
    serve = s["serve"]
    assert serve["exit"] == "0"  # stopped cleanly by SIGTERM
    assert serve["wait_exit"] == "0"
    assert serve["check_runs_total"] >= 3
    assert serve["verdict"] in EXIT_OF and serve["verdict"] in serve["verdicts_seen"]
    assert sorted(serve["gpu_healthy"]) == ["0", "1", "2", "3"]
    assert set(serve["gpu_healthy"].values()) <= {0, 1}
    assert serve["scrapes"] == len(tsv(d / "serve-scrapes.tsv")) >= 1
    metrics = (d / "serve-metrics.txt").read_text()
    assert "gpudoctor_check_runs_total %d" % serve["check_runs_total"] in metrics


def test_job_ran_without_error(busy):
    d, s = busy
    job = s["job"]
    assert job["ready"] and job["exit"] == 0 and job["errors"] == []
    assert isinstance(job["pid"], int)
    lines = [json.loads(x) for x in (d / "job.jsonl").read_text().splitlines()]
    assert all(set(j) >= {"t", "iters", "error"} for j in lines)
    assert [j["iters"] for j in lines] == sorted(j["iters"] for j in lines)
    assert lines[-1]["error"] is None and lines[-1]["last"]
    assert job["iters"] == lines[-1]["iters"] > 0


def test_rates_come_from_the_job_lines(busy):
    d, s = busy
    lines = [json.loads(x) for x in (d / "job.jsonl").read_text().splitlines()]
    phases = {r["phase"]: (float(r["start"]), float(r["end"])) for r in tsv(d / "phases.tsv")}
    assert list(phases) == ["idle", "alone", "during"]
    assert phases["idle"][1] <= phases["alone"][0] < phases["alone"][1] <= phases["during"][0]
    for name in ("alone", "during"):
        start, end = phases[name]
        inside = [j for j in lines if start <= j["wall"] <= end]
        assert s[name]["job_lines"] == len(inside) >= 2, name
        want = (inside[-1]["iters"] - inside[0]["iters"]) / (inside[-1]["wall"] - inside[0]["wall"])
        assert s[name]["iters_per_s"] == pytest.approx(want, rel=1e-3), name
        assert s[name]["iters_per_s"] > 0
    assert s["ratio"] == pytest.approx(s["during"]["iters_per_s"] / s["alone"]["iters_per_s"],
                                       rel=1e-3)


def test_memory_and_processes_seen_by_nvidia_smi(busy):
    d, s = busy
    mem = s["memory"]
    samples = [(float(r["wall"]), float(r["mib"])) for r in tsv(d / "mem.tsv")]
    phases = {r["phase"]: (float(r["start"]), float(r["end"])) for r in tsv(d / "phases.tsv")}

    def peak(name):
        a, b = phases[name]
        return max(v for t, v in samples if a <= t <= b)

    assert mem["samples"] == len(samples)
    # No gpudoctor runs while the job is alone: the stand-in's base.
    assert mem["alone_max_mib"] == peak("alone") == BASE_MIB
    assert mem["during_max_mib"] == peak("during")
    assert mem["max_extra_mib"] == mem["during_max_mib"] - mem["alone_max_mib"]
    # serve runs through serve-wait: each of its processes is a "context".
    wait = next(r for r in s["steps"] if r["name"] == "serve-wait")
    assert wait["max_extra_mib"] >= CONTEXT_MIB and wait["max_extra_mib"] % CONTEXT_MIB == 0
    assert mem["max_extra_mib"] >= wait["max_extra_mib"]
    assert wait["other_pids"], wait
    procs = s["gpudoctor_processes_during"]
    assert procs and set(wait["other_pids"]) <= set(procs), (procs, wait)
    assert all(p["name"].startswith("gpudoctor") and p["max_mib"] == CONTEXT_MIB
               for p in procs.values()), procs
    assert s["other_processes_alone"] == {}
    assert str(s["job"]["pid"]) not in s["other_processes_during"]


def test_snapshots_say_which_contexts_were_opened(busy):
    d, s = busy
    assert [x["file"] for x in s["snapshots"]] == ["snapshot-%d.json" % i for i in (1, 2, 3)]
    reasons = set()
    for snap in s["snapshots"]:
        raw = json.loads((d / snap["file"]).read_text())
        assert snap["gpu0_bus_id"] == GPU0
        assert snap["gpu0_nvml_pids"] == [31337]  # memory-held.json's holder
        assert snap["job_pid_listed"] is False  # the fake NVML lists its own
        assert len(snap["cuda_runs"]) == len(raw["cuda"]["runs"]) >= 1
        for run in snap["cuda_runs"]:
            dev = next(x for x in next(r for r in raw["cuda"]["runs"]
                                       if r["label"] == run["label"])["devices"]
                       if x["ordinal"] == run["gpu0_ordinal"])
            assert dev["pci_bus_id"] == GPU0
            assert (run["ctx_rc"], run["ctx_skipped"]) == (dev["ctx_rc"], dev["ctx_skipped"])
            if run["ctx_skipped"]:  # skipped means not asked
                assert run["ctx_rc"] == -1, run
                reasons.add(run["ctx_skipped"])
        assert snap["contexts_asked_on_gpu0"] == sum(1 for r in snap["cuda_runs"]
                                                     if r["ctx_rc"] != -1)
    assert s["ctx_skipped_gpu0"] == sorted(reasons)
    assert s["contexts_asked_on_gpu0"] == sum(x["contexts_asked_on_gpu0"] for x in s["snapshots"])


def test_summary_tsv_holds_the_figures(busy):
    d, s = busy
    rows = {r["field"]: r["value"] for r in tsv(d / "summary.tsv")}
    assert float(rows["iters_per_s_alone"]) == s["alone"]["iters_per_s"]
    assert float(rows["iters_per_s_during"]) == s["during"]["iters_per_s"]
    assert float(rows["ratio_during_alone"]) == s["ratio"]
    assert rows["job_exit"] == "0" and rows["job_errors"] == ""
    assert float(rows["gpu_mem_max_extra_mib"]) == s["memory"]["max_extra_mib"]
    for name in STEPS:
        assert rows["step:" + name].startswith("exit "), name
    assert rows["slurm"] == "exit 0"


def test_a_job_error_is_reported(tmp_path):
    # The job fails after 1 s as a CUDA error would end it; no scontrol, no
    # nvidia-smi: those are recorded as such.
    p, d, s = run_busy(tmp_path, GD_JOB_CMD="%s %s --stand-in --every 0.25 --stand-in-error-after 1"
                       % (sys.executable, os.path.join(HERE, "busy_job.py")),
                       GD_BUSY_SERVE_RUNS="1", GD_SCONTROL="none", GD_NVIDIA_SMI="none")
    assert p.returncode == 1, p.stdout + p.stderr
    assert s["job"]["exit"] == 1
    assert len(s["job"]["errors"]) == 1 and "illegal memory access" in s["job"]["errors"][0]
    assert s["slurm"] == {"exit": None, "skipped": "skipped: no scontrol"}
    assert s["memory"]["source"] == "none: no nvidia-smi" and s["memory"]["max_extra_mib"] is None
    assert s["serve"]["exit"] == "0"
    steps = [r["step"] for r in tsv(d / "steps.tsv")]
    assert steps == [x for x in STEPS if x != "check-slurm"]


def test_no_job_without_torch(tmp_path):
    # No PyTorch and no stand-in: gpudoctor's steps still run; the run says
    # the job never ran and exits 1.
    env_over = dict(GD_TORCH_PY="", GD_BUSY_SERVE_RUNS="1", GD_SCONTROL="none",
                    GD_NVIDIA_SMI="none")
    env_over["GD_JOB_CMD"] = ""
    p, d, s = run_busy(tmp_path, **env_over)
    assert p.returncode == 1, p.stdout + p.stderr
    assert s["job"]["skipped"].startswith("no job")
    assert s["alone"]["iters_per_s"] is None and s["ratio"] is None
    assert [c["exit"] for c in s["checks"]] == [EXIT_OF[c["verdict"]] for c in s["checks"]]


# A stand-in PyTorch with what busy_job.py calls: 80 GiB of which 1 GiB is
# used, every allocation counted, and a product that fails from the Nth on
# (STANDIN_FAIL_AT) as a CUDA error would.
FAKE_TORCH = r'''
import os
__version__ = "0.0-stand-in"
bfloat16, float16, uint8 = "torch.bfloat16", "torch.float16", "torch.uint8"
SIZE = {bfloat16: 2, float16: 2, uint8: 1}


class device:
    def __init__(self, name):
        self.name = name


class Tensor:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype
        self._n = 1
        for s in shape:
            self._n *= s
        cuda.used += self._n * SIZE[dtype]

    def numel(self):
        return self._n


class _Props:
    name = "Stand-in H200"
    pci_domain_id, pci_bus_id, pci_device_id = 0, 0x18, 0


class cuda:
    total = 80 << 30
    used = 1 << 30
    products = 0

    @staticmethod
    def set_device(d):
        pass

    @staticmethod
    def is_bf16_supported():
        return os.environ.get("STANDIN_BF16", "1") == "1"

    @staticmethod
    def synchronize(d=None):
        pass

    @staticmethod
    def mem_get_info(d=None):
        return cuda.total - cuda.used, cuda.total

    @staticmethod
    def get_device_properties(d):
        return _Props()


def randn(*shape, device=None, dtype=None):
    return Tensor(shape, dtype)


def empty(*shape, device=None, dtype=None):
    return Tensor(shape, dtype)


def matmul(a, b, out=None):
    cuda.products += 1
    fail_at = int(os.environ.get("STANDIN_FAIL_AT", "0"))
    if fail_at and cuda.products >= fail_at:
        raise RuntimeError("CUDA error: an illegal memory access was encountered\n"
                           "CUDA kernel errors might be asynchronously reported")
    return out
'''


def run_job(tmp_path, *args, **env_over):
    (tmp_path / "torch.py").write_text(FAKE_TORCH)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), **env_over)
    p = subprocess.run([sys.executable, os.path.join(HERE, "busy_job.py"),
                        "--stop", str(tmp_path / "stop"), "--every", "0.2"] + list(args),
                       env=env, capture_output=True, text=True, timeout=60)
    return p, [json.loads(x) for x in p.stdout.splitlines()]


def test_the_job_through_a_stand_in_torch(tmp_path):
    p, lines = run_job(tmp_path, "--max-s", "0.7")
    assert p.returncode == 0, p.stdout + p.stderr
    first = lines[0]
    # 3 matrices of 8192^2 bf16 are taken first; then 90 % of what is left.
    free = (80 << 30) - (1 << 30) - 3 * 8192 * 8192 * 2
    assert first["held_bytes"] == int(free * 0.9)
    assert first["free_bytes"] == free - int(free * 0.9)
    assert (first["dtype"], first["n"], first["bus_id"]) == ("bfloat16", 8192, "0000:18:00.0")
    assert isinstance(first["pid"], int)
    assert lines[-1]["last"] and lines[-1]["error"] is None
    assert lines[-1]["iters"] > 0
    assert [j["iters"] for j in lines] == sorted(j["iters"] for j in lines)
    # fp16 where bf16 is missing
    p, lines = run_job(tmp_path, "--max-s", "0.3", STANDIN_BF16="0")
    assert lines[0]["dtype"] == "float16"


def test_the_job_reports_a_cuda_error(tmp_path):
    p, lines = run_job(tmp_path, "--max-s", "30", STANDIN_FAIL_AT="1000")
    assert p.returncode == 1
    assert lines[-1]["iters"] == 998  # the warm-up product was the first
    assert lines[-1]["error"].startswith("RuntimeError: CUDA error: an illegal memory access")
    # The stop file ends it too, before --max-s.
    (tmp_path / "stop").write_text("")
    p, lines = run_job(tmp_path, "--max-s", "30")
    assert p.returncode == 0 and lines[-1]["t"] < 30
