"""scripts/device-faults.sh without a GPU: the fault cases staged against the
fake libraries on the H200 VM's tree, whose fake libcuda reserves the address
space measured on the real H200 (12,540 MiB at cuInit, 719 MiB more for a
context: tests/fakes/scenarios/h200-vm.json). The `ulimit -v` sweep therefore
runs through real limits, a real mmap refused by them and the CUDA probe's
real VmSize measurement, and must give the verdicts the real record gives:
FAIL at 4-8 GiB, WARN at 16,000,000 KiB, OK from 24 GiB (docs/check.md)."""
import csv
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("GD_BINARY") or os.path.join(SRC, "build", "gpudoctor")
FAKES = os.environ.get("GD_FAKES_DIR") or os.path.join(SRC, "build", "fakes")

pytestmark = pytest.mark.skipif(not os.access(BINARY, os.X_OK) and "GD_BINARY" not in os.environ,
                                reason="no gpudoctor binary at %s" % BINARY)


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults")
    # The tree without its recorded /proc/self/limits, so that the limits
    # the script sets are the ones the probe reads, as on a live machine.
    root = out / "h200-vm"
    shutil.copytree(os.path.join(SRC, "tests", "roots", "h200-vm"), root, symlinks=True)
    os.remove(root / "proc" / "self" / "limits")
    env = dict(os.environ, OUT=str(out), GD_BIN_DIR=os.path.dirname(BINARY), GD_TORCH_PY="",
               GD_STUB="none",
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    "h200-vm.json"),
               GD_ARGS=" ".join(["--root", str(root),
                                 "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
                                 "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
                                 "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]))
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-faults.sh")], env=env,
                       capture_output=True, text=True, timeout=200)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(out / "faults" / "summary.tsv") as f:
        rows = {r["case"]: r for r in csv.DictReader(f, delimiter="\t")}
    return out / "faults", rows


def load(d, name):
    with open(d / name) as f:
        return json.load(f)


@pytest.mark.parametrize("case,verdict,address_space", [
    ("ulimit-4g", "fail", "fail"),
    ("ulimit-8g", "fail", "fail"),
    ("ulimit16g", "warn", "warn"),
    ("ulimit-24g", "ok", "ok"),
    ("ulimit-32g", "ok", "ok"),
])
def test_ulimit_sweep(faults, case, verdict, address_space):
    d, rows = faults
    row = rows[case]
    # A healthy machine's verdict is ok, or info for the notes every machine gets.
    assert row["verdict"] == verdict or (verdict, row["verdict"]) == ("ok", "info"), row
    assert row["address_space"] == address_space, row
    if verdict != "ok":
        assert row["first"] == "memory.address-space-limit", row


def test_sweep_measures_what_the_fake_driver_reserved(faults):
    d, _ = faults
    snap = load(d, "ulimit16g.snapshot.json")
    user = snap["cuda"]["runs"][0]
    assert user["rlimit_as_bytes"] == 16000000 * 1024
    took = user["vm_context"]["size_bytes"] - user["vm_start"]["size_bytes"]
    # h200-vm.json: 13149143040 + 753926144 bytes reserved by cuInit and the context.
    assert 13149143040 + 753926144 <= took < 13149143040 + 753926144 + (256 << 20)
    finding = next(f for f in load(d, "ulimit16g.json")["findings"]
                   if f["id"] == "memory.address-space-limit")
    assert "PyTorch" in finding["summary"]
    assert [c["met"] for c in finding["comparisons"]] == [True, False]


def test_soft_limit_is_proven_by_a_raised_run(faults):
    d, rows = faults
    assert rows["ulimit-soft-8g"]["address_space"] == "fail"
    runs = {r["label"]: r for r in load(d, "ulimit-soft-8g.snapshot.json")["cuda"]["runs"]}
    assert runs["user"]["init_rc"] == 2
    assert runs["raised-limit"]["init_rc"] == 0
    assert runs["raised-limit"]["rlimit_as_bytes"] is None  # lifted to the hard limit: none
    finding = next(f for f in load(d, "ulimit-soft-8g.json")["findings"]
                   if f["id"] == "memory.address-space-limit")
    assert "with the limit raised, CUDA started" in finding["summary"]


def test_visible_devices_and_healthy_cases(faults):
    _, rows = faults
    assert rows["base"]["verdict"] in ("ok", "info")
    assert rows["base2"]["verdict"] in ("ok", "info")
    assert rows["cvd-uuid"]["verdict"] in ("ok", "info")
    assert rows["cvd-invalid"]["first"].startswith("visible-devices."), rows["cvd-invalid"]
    assert rows["cvd-empty"]["first"] == "visible-devices.hides-all", rows["cvd-empty"]
    assert rows["stub"]["torch_exit"] == "skipped"
