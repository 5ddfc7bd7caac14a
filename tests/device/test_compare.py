"""tests/device/compare.py and scripts/device-check.sh without a GPU: the
"ours" side is a snapshot the real gpudoctor binary takes through the fake
NVML/CUDA libraries (tests/fakes) and recorded trees (tests/roots); the
nvidia-smi side is the sample outputs in tests/device/samples/, whose values
are the fakes'.

Run by ctest (test device_compare, CMakeLists.txt), which sets GD_BINARY,
GD_FAKES_DIR and GD_SOURCE_DIR. By hand, from the repository root:

    /usr/bin/python3 -m pytest -q tests/device
"""
import copy
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("GD_BINARY") or os.path.join(SRC, "build", "gpudoctor")
FAKES = os.environ.get("GD_FAKES_DIR") or os.path.join(SRC, "build", "fakes")
SAMPLES = os.path.join(HERE, "samples")
sys.path.insert(0, HERE)

import compare  # noqa: E402

# Under ctest GD_BINARY is set and must exist; by hand, no build is a skip.
pytestmark = pytest.mark.skipif(not os.access(BINARY, os.X_OK) and "GD_BINARY" not in os.environ,
                                reason="no gpudoctor binary at %s" % BINARY)


def sample(name):
    return os.path.join(SAMPLES, name)


def fake_args(machine):
    return ["--root", os.path.join(SRC, "tests", "roots", machine),
            "--nvml-lib", os.path.join(FAKES, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1")]


def gpudoctor(scenario, machine, *args):
    env = dict(os.environ,
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    scenario + ".json"))
    out = subprocess.run([BINARY] + list(args) + fake_args(machine), env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


def first_gpus(snapshot, n):
    """The snapshot cut to its first n GPUs, as the samples hold n GPUs."""
    s = copy.deepcopy(snapshot)
    s["nvml"]["gpus"] = s["nvml"]["gpus"][:n]
    s["nvml"]["device_count"]["value"] = n
    return s


@pytest.fixture(scope="module")
def hgx(tmp_path_factory):
    d = tmp_path_factory.mktemp("hgx")
    gpudoctor("hgx-8xh100", "hgx-8xh100", "snapshot", "-o", str(d / "full.json"))
    full = json.loads((d / "full.json").read_text())
    (d / "topo.json").write_text(gpudoctor("hgx-8xh100", "hgx-8xh100", "topo", "--json"))
    return {"dir": d, "snapshot": first_gpus(full, 2), "full": full}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    d = tmp_path_factory.mktemp("ws")
    gpudoctor("ws-4x4090", "ws-4x4090", "snapshot", "-o", str(d / "full.json"))
    full = json.loads((d / "full.json").read_text())
    (d / "topo.json").write_text(gpudoctor("ws-4x4090", "ws-4x4090", "topo", "--json"))
    return {"dir": d, "snapshot": first_gpus(full, 2), "full": full}


def run(tmp_path, snapshot, *args):
    """compare.main over a snapshot dict; returns (exit status, rows by (gpu, field))."""
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(snapshot))
    summary = tmp_path / "summary.json"
    rc = compare.main(["--snapshot", str(snap), "--summary", str(summary)] + list(args))
    data = json.loads(summary.read_text())
    return rc, {(r["gpu"], r["field"]): r for r in data["rows"]}, data


def hgx_args(**over):
    args = {"--smi-xml": sample("hgx-h100-r550.xml"),
            "--smi-csv": sample("hgx-h100-query.csv"),
            "--smi-remap-csv": sample("hgx-h100-remapped-rows.csv"),
            "--smi-nvlink": sample("hgx-h100-nvlink-s.txt"),
            "--smi-nvlink-remote": sample("hgx-h100-nvlink-R.txt")}
    args.update(over)
    out = []
    for k, v in args.items():
        if v is not None:
            out += [k, v]
    return out


def health(snapshot, gpu, field):
    return snapshot["nvml"]["gpus"][gpu]["health"][field]


GPU0 = "0000:18:00.0"


# ------------------------------------------------------------- matching values

def test_hgx_sample_agrees_with_the_fake_snapshot(tmp_path, hgx):
    rc, rows, data = run(tmp_path, hgx["snapshot"], *hgx_args())
    diffs = [r for r in rows.values() if r["status"] == "DIFF"]
    assert diffs == [] and rc == 0
    assert data["diff"] == 0 and data["ok"] > 90
    for field in ("temperature_c", "memory_temperature_c", "temp_slowdown_c", "temp_shutdown_c",
                  "power_usage_mw", "power_limit_mw", "sm_clock_mhz", "mem_clock_mhz",
                  "clock_event_reasons", "ecc_mode_current", "ecc_uncorrected_volatile",
                  "ecc_corrected_aggregate", "retired_pages_sbe", "remapped_rows_correctable",
                  "remap_pending", "remap_failure", "pcie_link_gen", "pcie_link_width_max",
                  "pcie_replay_count", "persistence_mode", "compute_mode", "mig_mode_current",
                  "pstate", "fan_speed_pct", "uuid", "pci_device_id", "nvlink_active",
                  "nvlink_remote"):
        assert rows[(GPU0, field)]["status"] == "ok", rows[(GPU0, field)]


def test_pre530_geforce_layout_agrees(tmp_path, ws):
    rc, rows, _ = run(tmp_path, ws["snapshot"], "--smi-xml", sample("ws-4090-pre530.xml"))
    assert [r for r in rows.values() if r["status"] == "DIFF"] == [] and rc == 0
    g = "0000:01:00.0"
    # power_readings/enforced_power_limit, clocks_throttle_reasons, 16x widths
    assert rows[(g, "power_limit_mw")]["status"] == "ok"
    assert rows[(g, "clock_event_reasons")]["source"] == "xml"
    assert rows[(g, "clock_event_reasons")]["status"] == "ok"
    assert rows[(g, "pcie_link_gen")]["ours"] == "1"
    # N/A in nvidia-smi, rc 3 in ours: ECC, memory temperature, MIG, row remapping
    for field in ("ecc_mode_current", "ecc_corrected_volatile", "memory_temperature_c",
                  "temp_mem_max_c", "mig_mode_current", "remap_pending",
                  "remapped_rows_correctable"):
        assert rows[(g, field)]["status"] == "ok", rows[(g, field)]
        assert rows[(g, field)]["ours"].startswith("rc=3")
    # no <fabric> in this layout: a skip, not a DIFF
    assert rows[(g, "fabric_state")]["status"] == "skip"


# ------------------------------------------------------------- differences

def test_a_changed_static_value_is_a_diff(tmp_path, hgx):
    snap = copy.deepcopy(hgx["snapshot"])
    health(snap, 0, "power_limit_mw")["value"] = 650000
    snap["nvml"]["gpus"][1]["uuid"]["value"] = "GPU-something-else"
    rc, rows, _ = run(tmp_path, snap, *hgx_args())
    assert rc == 1
    assert rows[(GPU0, "power_limit_mw")]["status"] == "DIFF"
    assert rows[(GPU0, "power_limit_mw")]["ours"] == "650000"
    assert rows[(GPU0, "power_limit_mw")]["smi"] == "700.00 W"
    assert rows[("0000:2a:00.0", "uuid")]["status"] == "DIFF"
    assert rows[("0000:2a:00.0", "power_limit_mw")]["status"] == "ok"


@pytest.mark.parametrize("field,value,status", [
    ("temperature_c", 33, "ok"),       # smi 31 C, ±3
    ("temperature_c", 35, "DIFF"),
    ("power_usage_mw", 80000, "ok"),   # smi 69.87 W, ±20 %
    ("power_usage_mw", 90000, "DIFF"),
    ("sm_clock_mhz", 390, "ok"),       # smi 345 MHz, ±15 % (at least 30 MHz)
    ("sm_clock_mhz", 1980, "DIFF"),
    ("utilization_gpu_pct", 10, "ok"),
    ("utilization_gpu_pct", 60, "DIFF"),
    ("pcie_link_width", 8, "DIFF"),    # x16 trained down to x8 is not noise
    ("remap_pending", 1, "DIFF"),
    ("ecc_uncorrected_volatile", 2, "DIFF"),
    ("clock_event_reasons", 0x5, "DIFF"),   # idle + sw power cap vs idle
    ("clock_event_reasons", 0x1 | 0x200, "ok"),  # bits nvidia-smi does not name
])
def test_tolerance(tmp_path, hgx, field, value, status):
    snap = copy.deepcopy(hgx["snapshot"])
    health(snap, 0, field)["value"] = value
    _, rows, _ = run(tmp_path, snap, *hgx_args())
    assert rows[(GPU0, field)]["status"] == status, rows[(GPU0, field)]


def test_moving_value_between_two_reads(tmp_path, hgx):
    # nvidia-smi read 31 C before our snapshot and 45 C after: 40 C lies between.
    after = tmp_path / "after.xml"
    after.write_text(open(sample("hgx-h100-r550.xml")).read().replace(
        "<gpu_temp>31 C</gpu_temp>", "<gpu_temp>45 C</gpu_temp>"))
    snap = copy.deepcopy(hgx["snapshot"])
    health(snap, 0, "temperature_c")["value"] = 40
    _, rows, _ = run(tmp_path, snap, "--smi-xml", sample("hgx-h100-r550.xml"),
                     "--smi-xml", str(after))
    assert rows[(GPU0, "temperature_c")]["status"] == "ok"
    assert "moved 31..45" in rows[(GPU0, "temperature_c")]["note"]
    _, rows, _ = run(tmp_path, snap, "--smi-xml", sample("hgx-h100-r550.xml"))
    assert rows[(GPU0, "temperature_c")]["status"] == "DIFF"


def test_not_supported_against_na(tmp_path, hgx):
    snap = copy.deepcopy(hgx["snapshot"])
    # rc 3 where nvidia-smi has a number: DIFF
    health(snap, 0, "memory_temperature_c").update(rc=3, value=0)
    # a number where nvidia-smi says N/A: DIFF
    health(snap, 0, "retired_pages_sbe").update(rc=0, value=0)
    # another error code against N/A: still "both unavailable", with a note
    health(snap, 1, "fan_speed_pct").update(rc=999, value=0)
    _, rows, _ = run(tmp_path, snap, "--smi-xml", sample("hgx-h100-r550.xml"))
    assert rows[(GPU0, "memory_temperature_c")]["status"] == "DIFF"
    assert rows[(GPU0, "retired_pages_sbe")]["status"] == "DIFF"
    assert rows[(GPU0, "retired_pages_sbe")]["note"] == "ours has a value, nvidia-smi says N/A"
    assert rows[(GPU0, "fan_speed_pct")]["status"] == "ok"
    fan = rows[("0000:2a:00.0", "fan_speed_pct")]
    assert fan["status"] == "ok" and "rc=999" in fan["note"]


def test_remapped_rows_na_block_and_tlimit_thresholds(tmp_path, hgx):
    text = open(sample("hgx-h100-r550.xml")).read()
    start = text.index("<remapped_rows>")
    end = text.index("</remapped_rows>") + len("</remapped_rows>")
    text = text[:start] + "<remapped_rows>N/A</remapped_rows>" + text[end:]
    # R555+ on some boards: thresholds relative to T.Limit, no absolute °C
    text = text.replace("<gpu_temp_slow_threshold>90 C</gpu_temp_slow_threshold>",
                        "<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>")
    xml = tmp_path / "na.xml"
    xml.write_text(text)
    _, rows, _ = run(tmp_path, hgx["snapshot"], "--smi-xml", str(xml))
    r = rows[(GPU0, "remap_pending")]
    assert r["status"] == "DIFF" and r["smi"] == "N/A"  # ours has 0, nvidia-smi N/A
    slow = rows[(GPU0, "temp_slowdown_c")]
    assert slow["status"] == "skip" and "T.Limit" in slow["note"]


def test_ecc_from_xml_parts_when_no_csv(tmp_path, hgx):
    text = open(sample("hgx-h100-r550.xml")).read().replace(
        "<dram_uncorrectable>0</dram_uncorrectable>",
        "<dram_uncorrectable>2</dram_uncorrectable>", 1)
    xml = tmp_path / "ecc.xml"
    xml.write_text(text)
    snap = copy.deepcopy(hgx["snapshot"])
    health(snap, 0, "ecc_uncorrected_volatile")["value"] = 2
    _, rows, _ = run(tmp_path, snap, "--smi-xml", str(xml))
    r = rows[(GPU0, "ecc_uncorrected_volatile")]
    assert r["status"] == "ok" and "sum of" in r["note"] and r["source"] == "xml"


def test_gpu_on_one_side_only(tmp_path, hgx):
    rc, rows, _ = run(tmp_path, hgx["full"], "--smi-xml", sample("hgx-h100-r550.xml"))
    assert rc == 1
    assert rows[("0000:db:00.0", "present")]["status"] == "DIFF"
    assert rows[("machine", "device_count")]["status"] == "DIFF"


# ------------------------------------------------------------- NVLink

def test_nvlink_inactive_link_is_a_diff(tmp_path, hgx):
    text = open(sample("hgx-h100-nvlink-s.txt")).read().replace(
        "Link 17: 26.562 GB/s", "Link 17: <inactive>", 1)
    f = tmp_path / "nvlink.txt"
    f.write_text(text)
    _, rows, _ = run(tmp_path, hgx["snapshot"], *hgx_args(**{"--smi-nvlink": str(f)}))
    assert rows[(GPU0, "nvlink_active")]["status"] == "DIFF"
    assert rows[("0000:2a:00.0", "nvlink_active")]["status"] == "ok"


def test_nvlink_remote_mismatch(tmp_path, hgx):
    text = open(sample("hgx-h100-nvlink-R.txt")).read().replace(
        "Link 0: Remote Device 00000000:05:00.0", "Link 0: Remote Device 00000000:06:00.0", 1)
    f = tmp_path / "remote.txt"
    f.write_text(text)
    _, rows, _ = run(tmp_path, hgx["snapshot"], *hgx_args(**{"--smi-nvlink-remote": str(f)}))
    r = rows[(GPU0, "nvlink_remote")]
    assert r["status"] == "DIFF" and "link 0" in r["note"]


# ------------------------------------------------------------- topology

def test_topo_matrix_equal(tmp_path, hgx):
    rc, rows, _ = run(tmp_path, hgx["full"], "--topo-json", str(hgx["dir"] / "topo.json"),
                      "--smi-topo", sample("hgx-h100-topo-m.txt"))
    assert rc == 0
    assert rows[("topo", "path GPU0-GPU7")]["ours"] == "NV18"
    assert rows[("topo", "GPU4 cpu_affinity")]["status"] == "ok"
    assert rows[("topo", "GPU4 numa_affinity")]["smi"] == "1"
    assert rows[("topo", "gpu_count")]["ours"] == "8"


def test_topo_space_aligned_copy(tmp_path, ws):
    rc, rows, _ = run(tmp_path, ws["full"], "--topo-json", str(ws["dir"] / "topo.json"),
                      "--smi-topo", sample("ws-4090-topo-m.txt"))
    assert rc == 0
    assert rows[("topo", "path GPU0-GPU1")]["ours"] == "NODE"
    assert rows[("topo", "path GPU1-GPU2")]["ours"] == "SYS"


def test_topo_matrix_different(tmp_path, ws):
    text = open(sample("ws-4090-topo-m.txt")).read()
    text = text.replace("GPU0     X      NODE", "GPU0     X      PHB ", 1)
    text = text.replace("16-31,48-63     1\nGPU3", "16-31,48-64     1\nGPU3", 1)
    f = tmp_path / "topo.txt"
    f.write_text(text)
    rc, rows, _ = run(tmp_path, ws["full"], "--topo-json", str(ws["dir"] / "topo.json"),
                      "--smi-topo", str(f))
    assert rc == 1
    assert rows[("topo", "path GPU0-GPU1")]["status"] == "DIFF"
    assert rows[("topo", "path GPU0-GPU1")]["smi"] == "PHB"
    assert rows[("topo", "GPU2 cpu_affinity")]["status"] == "DIFF"
    assert rows[("topo", "GPU3 cpu_affinity")]["status"] == "ok"


def test_parse_topo_empty_affinity_and_ansi():
    # Real shape: an empty CPU Affinity cell, the extra cell before GPU NUMA ID.
    text = ("\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
            "GPU0\t X \tNV18\tPIX\t\t0\t\tN/A\n"
            "GPU1\tNV18\t X \tNODE\t1\t1\t\tN/A\n"
            "NIC0\tPIX\tNODE\t X \t\t\t\t\n")
    t = compare.parse_smi_topo(text)
    assert t["gpus"] == ["GPU0", "GPU1"]
    assert t["matrix"]["GPU0"] == {"GPU0": "X", "GPU1": "NV18"}
    assert t["cpu"] == {"GPU0": "", "GPU1": "1"}
    assert t["numa"] == {"GPU0": "0", "GPU1": "1"}
    with pytest.raises(ValueError):
        compare.parse_smi_topo("no matrix here\n")


# ------------------------------------------------------------- small parsers, CLI

def test_parsers():
    assert compare.norm_bus_id("00000000:2A:00.0") == "0000:2a:00.0"
    assert compare.norm_bus_id("0000:2a:00.0") == "0000:2a:00.0"
    assert compare.cpu_set("0-2,8") == {0, 1, 2, 8}
    assert compare.cpu_set("N/A") is None
    assert compare.number("-5 C") == -5.0 and compare.number("16x") == 16.0
    assert compare.is_na("[Not Supported]") and compare.is_na("N/A") and not compare.is_na("0")
    assert compare.csv_fields()[:2] == ["index", "pci.bus_id"]
    assert "clocks_event_reasons.active" in compare.csv_fields()


def test_python_rows_are_merged_and_count(tmp_path, hgx):
    py = tmp_path / "py.json"
    py.write_text(json.dumps({"info": {"executable": "/usr/bin/python3"}, "rows": [
        {"field": "torch.cuda.is_available()", "status": "DIFF", "ours": "True", "smi": "False",
         "note": ""}]}))
    rc, rows, _ = run(tmp_path, hgx["snapshot"], "--python", str(py))
    assert rc == 1
    assert rows[("python /usr/bin/python3", "torch.cuda.is_available()")]["status"] == "DIFF"


def test_unreadable_inputs(tmp_path):
    assert compare.main(["--snapshot", str(tmp_path / "missing.json")]) == 2
    snap = tmp_path / "s.json"
    snap.write_text("{}")
    bad = tmp_path / "bad.xml"
    bad.write_text("<html/>")
    summary = tmp_path / "sum.json"
    assert compare.main(["--snapshot", str(snap), "--smi-xml", str(bad),
                         "--summary", str(summary)]) == 1
    rows = json.loads(summary.read_text())["rows"]
    assert rows[0]["field"] == "input" and "not nvidia-smi" in rows[0]["note"]


# ------------------------------------------------------------- the scripts

def test_python_check_against_the_fakes(tmp_path):
    out = tmp_path / "py.json"
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"),
               GPUDOCTOR_LIB=os.path.join(os.path.dirname(BINARY), "libgpudoctor.so.0"),
               GPUDOCTOR_EXE=BINARY,
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    "ws-4x4090.json"))
    p = subprocess.run([sys.executable, os.path.join(HERE, "python_check.py"), "--out", str(out),
                        "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
                        "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")],
                       env=env, capture_output=True, text=True, timeout=120)
    rows = {r["field"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["cuda_available()"]["ours"] == "True", p.stdout + p.stderr
    assert rows["no CUDA/NVML library mapped after cuda_available()"]["status"] == "ok"
    assert rows["no /dev/nvidia* descriptor open after cuda_available()"]["status"] == "ok"


def test_python_check_with_a_stand_in_torch(tmp_path):
    """A stand-in torch module that loads the fake libcuda the way PyTorch
    loads the real one: the comparison rows and the positive control."""
    pkg = tmp_path / "torch"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "__version__ = 'stand-in'\n"
        "from . import cuda\n"
        "class _T:\n"
        "    def __init__(self, n): self.n = n\n"
        "    def sum(self): return float(self.n)\n"
        "def ones(n, device=None):\n"
        "    cuda.init()\n"
        "    return _T(n)\n")
    (pkg / "cuda" / "__init__.py").write_text(
        "import ctypes, os\n"
        "_lib = None\n"
        "def init():\n"
        "    global _lib\n"
        "    _lib = _lib or ctypes.CDLL(os.environ['STANDIN_LIBCUDA'])\n"
        "def is_available():\n"
        "    init()\n"
        "    return True\n"
        "def device_count():\n"
        "    return int(os.environ.get('STANDIN_COUNT', '4'))\n")
    out = tmp_path / "py.json"
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([os.path.join(SRC, "python"), str(tmp_path)]),
               GPUDOCTOR_LIB=os.path.join(os.path.dirname(BINARY), "libgpudoctor.so.0"),
               GPUDOCTOR_EXE=BINARY, STANDIN_LIBCUDA=os.path.join(FAKES, "libcuda.so.1"),
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    "ws-4x4090.json"))
    args = [sys.executable, os.path.join(HERE, "python_check.py"), "--out", str(out),
            "--cuda-lib", os.path.join(FAKES, "libcuda.so.1"),
            "--cudart-lib", os.path.join(FAKES, "libcudart.so.13")]
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    rows = {r["field"]: r for r in json.loads(out.read_text())["rows"]}
    assert p.returncode == 0, p.stdout + p.stderr
    assert rows["torch.cuda.is_available()"]["status"] == "ok"
    assert rows["torch.cuda.device_count()"]["status"] == "ok"
    assert rows["fork child initializes CUDA"]["status"] == "ok"
    assert rows["positive control: libcuda mapped after torch"]["status"] == "ok"
    # PyTorch sees another number of GPUs: a DIFF and exit 1
    p = subprocess.run(args, env=dict(env, STANDIN_COUNT="3"), capture_output=True, text=True,
                       timeout=120)
    rows = {r["field"]: r for r in json.loads(out.read_text())["rows"]}
    assert p.returncode == 1
    assert rows["torch.cuda.device_count()"]["status"] == "DIFF"


def fake_smi(tmp_path, body):
    d = tmp_path / "bin"
    d.mkdir()
    f = d / "nvidia-smi"
    f.write_text("#!/bin/sh\nS=%s\n%s\n" % (SAMPLES, body))
    f.chmod(0o755)
    return str(d)


FAKE_SMI = """case "$*" in
  "-q -x") cat $S/hgx-h100-r550.xml ;;
  --query-gpu=*) cat $S/hgx-h100-query.csv ;;
  --query-remapped-rows=*) cat $S/hgx-h100-remapped-rows.csv ;;
  "topo -m") cat $S/hgx-h100-topo-m.txt ;;
  "nvlink -s") cat $S/hgx-h100-nvlink-s.txt ;;
  "nvlink -R") cat $S/hgx-h100-nvlink-R.txt ;;
  *) echo "stand-in nvidia-smi $*" ;;
esac"""


def device_check(tmp_path, smi_body, **env_over):
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), GD_BIN_DIR=os.path.dirname(BINARY),
               PATH=fake_smi(tmp_path, smi_body) + os.pathsep + os.environ.get("PATH", ""),
               GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                    "hgx-8xh100.json"),
               GD_ARGS=" ".join(fake_args("hgx-8xh100")),
               GD_LOG_ARGS="--root " + os.path.join(SRC, "tests", "roots", "hgx-8xh100"),
               GD_PY_ARGS="--cuda-lib %s --cudart-lib %s" % (
                   os.path.join(FAKES, "libcuda.so.1"), os.path.join(FAKES, "libcudart.so.13")))
    env.update(env_over)
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-check.sh")], env=env,
                       capture_output=True, text=True, timeout=200)
    return p, out


def test_device_check_end_to_end(tmp_path):
    p, out = device_check(tmp_path, FAKE_SMI)
    for f in ("snapshot.json", "smi-q-x.before.xml", "smi-q-x.after.xml", "smi-query.csv",
              "smi-topo-m.txt", "check.json", "topo.json", "topo.txt", "logs.json",
              "python-1.json", "compare.txt", "compare.json", "steps.tsv", "machine.txt"):
        assert (out / f).exists(), f
    summary = json.loads((out / "compare.json").read_text())
    # The samples hold 2 of the fake's 8 GPUs: those 2 agree, the other 6
    # are "present" on our side only, which makes the run fail as it should.
    diffs = {(r["gpu"], r["field"]) for r in summary["rows"] if r["status"] == "DIFF"}
    assert ("0000:18:00.0", "temperature_c") not in diffs
    assert ("0000:db:00.0", "present") in diffs
    assert {f for _, f in diffs} <= {"present", "device_count", "nvlink_active"}
    assert p.returncode == 1, p.stdout + p.stderr
    assert "compare.py -> exit 1" in p.stdout


def test_device_check_never_hangs(tmp_path):
    # nvidia-smi hangs on every call: each step is cut at its timeout
    p, out = device_check(tmp_path, "sleep 100", GD_STEP_TIMEOUT_S="1", GD_BUDGET_S="60")
    steps = (out / "steps.tsv").read_text()
    assert "smi-q-x-before\t124\t" in steps
    assert p.returncode == 4, p.stdout
    assert "nvidia-smi -q -x gave no output" in p.stdout


def test_device_check_without_gpudoctor(tmp_path):
    empty = tmp_path / "nobin"
    empty.mkdir()
    p, out = device_check(tmp_path, FAKE_SMI, GD_BIN_DIR=str(empty), GD_BUDGET_S="60")
    # build-device/ or build/ of the checkout may hold one; only check the
    # message when none was found.
    if "no runnable gpudoctor" in p.stdout:
        assert p.returncode == 3
    assert (out / "smi-q-x.before.xml").exists()


def test_stage_needs_a_build(tmp_path):
    p = subprocess.run(["bash", os.path.join(SRC, "scripts", "device-check.sh"), "--stage",
                        str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=SRC)
    assert p.returncode == 3 and "build it first" in p.stderr


# ------------------------------------------------------------- real machines
# Every record in recorded/<machine>/ (scripts/device-check.sh's output on a
# real GPU machine) is a parser fixture: compare.py must read each nvidia-smi
# output there and find gpudoctor's own snapshot of that machine in it.

RECORDED = os.path.join(HERE, "recorded")
MACHINES = sorted(m for m in os.listdir(RECORDED)
                  if os.path.isfile(os.path.join(RECORDED, m, "device-check", "snapshot.json")))
H200 = os.path.join(RECORDED, "h200-vm-580.159.04", "device-check")


def record(machine, name):
    return os.path.join(RECORDED, machine, "device-check", name)


def record_args(machine):
    """compare.py's arguments over everything device-check.sh recorded."""
    args = ["--snapshot", record(machine, "snapshot.json")]
    for flag, name in (("--smi-xml", "smi-q-x.before.xml"), ("--smi-xml", "smi-q-x.after.xml"),
                       ("--smi-csv", "smi-query.csv"), ("--smi-remap-csv", "smi-remapped-rows.csv"),
                       ("--smi-nvlink", "smi-nvlink-s.txt"),
                       ("--smi-nvlink-remote", "smi-nvlink-R.txt"),
                       ("--topo-json", "topo.json"), ("--smi-topo", "smi-topo-m.txt"),
                       ("--python", "python-1.json")):
        if os.path.exists(record(machine, name)):
            args += [flag, record(machine, name)]
    return args


def test_there_is_a_real_record():
    assert "h200-vm-580.159.04" in MACHINES


@pytest.mark.parametrize("machine", MACHINES)
def test_real_record_agrees_with_nvidia_smi(tmp_path, machine):
    summary = tmp_path / "summary.json"
    rc = compare.main(record_args(machine) + ["--summary", str(summary)])
    data = json.loads(summary.read_text())
    diffs = [r for r in data["rows"] if r["status"] == "DIFF"]
    assert diffs == [] and rc == 0
    assert data["ok"] >= 50


@pytest.mark.parametrize("machine", MACHINES)
def test_real_record_parses_as_the_snapshot_says(machine):
    """Each nvidia-smi output of the record, parsed, names the GPUs, driver
    and memory that gpudoctor's snapshot of the same machine holds."""
    snap = json.load(open(record(machine, "snapshot.json")))
    nvml = snap["nvml"]
    ours = {compare.norm_bus_id(g["pci_bus_id"]["value"]): g for g in nvml["gpus"]}
    for name in ("smi-q-x.before.xml", "smi-q-x.after.xml"):
        x = compare.load_xml(record(machine, name))
        assert x["driver_version"] == nvml["driver_version"]["value"]
        cuda = nvml["cuda_driver_version"]["value"]
        assert x["cuda_version"] == "%d.%d" % (cuda // 1000, cuda % 1000 // 10)
        assert int(x["attached_gpus"]) == nvml["device_count"]["value"]
        assert {g["bus"] for g in x["gpus"]} == set(ours)
        for g in x["gpus"]:
            assert g["uuid"] == ours[g["bus"]]["uuid"]["value"]
            assert g["el"].findtext("product_name") == ours[g["bus"]]["name"]["value"]
    csvs = compare.load_csv(record(machine, "smi-query.csv"))
    assert set(csvs) == set(ours)
    for bus, rec in csvs.items():
        assert rec["driver_version"] == nvml["driver_version"]["value"]
        assert rec["uuid"] == ours[bus]["uuid"]["value"]
        # nvidia-smi prints whole MiB
        assert int(rec["memory.total"]) == ours[bus]["memory_total_bytes"]["value"] >> 20
    remap = compare.load_csv(record(machine, "smi-remapped-rows.csv"))
    assert set(remap) == set(ours)
    topo = compare.parse_smi_topo(open(record(machine, "smi-topo-m.txt")).read())
    assert len(topo["gpus"]) == len(ours)


def test_h200_record_values():
    """The H200's own figures, as its nvidia-smi printed them."""
    x = compare.load_xml(os.path.join(H200, "smi-q-x.before.xml"))
    assert (x["driver_version"], x["cuda_version"], x["attached_gpus"]) == \
        ("580.159.04", "13.0", "1")
    [g] = x["gpus"]
    assert g["bus"] == "0000:00:06.0"
    assert g["uuid"] == "GPU-45e11636-eca6-4b14-c5ee-af9440ab3d3d"
    assert compare.xml_text(g["el"], "fb_memory_usage/total") == ("143771 MiB", "")
    # R580 prints thresholds relative to T.Limit, and the event reasons block
    assert g["el"].find("temperature/gpu_temp_slow_tlimit_threshold") is not None
    # nvidia-smi's own two reads disagree on gpu_idle: 0x1 before our
    # snapshot, 0x0 after it (all nine bits known both times)
    assert compare.xml_reasons(g["el"]) == (0x1, 0x1FF, "clocks_event_reasons")
    after = compare.load_xml(os.path.join(H200, "smi-q-x.after.xml"))["gpus"][0]
    assert compare.xml_reasons(after["el"]) == (0x0, 0x1FF, "clocks_event_reasons")
    [(bus, rec)] = compare.load_csv(os.path.join(H200, "smi-query.csv")).items()
    assert bus == "0000:00:06.0"
    assert rec["name"] == "NVIDIA H200" and rec["pci.device_id"] == "0x233510DE"
    assert rec["clocks_event_reasons.active"] == "0x0000000000000000"
    assert rec["fan.speed"] == "[N/A]" and compare.is_na(rec["fan.speed"])
    topo = compare.parse_smi_topo(open(os.path.join(H200, "smi-topo-m.txt")).read())
    assert topo == {"gpus": ["GPU0"], "matrix": {"GPU0": {"GPU0": "X"}},
                    "cpu": {"GPU0": "0-15"}, "numa": {"GPU0": "0"}}
    # NVLink disabled in this VM (NVreg_NvLinkDisable=1): nvidia-smi prints nothing
    assert compare.parse_nvlink(open(os.path.join(H200, "smi-nvlink-s.txt")).read()) == {}


def test_h200_idle_bit_and_vm_numa_agree(tmp_path):
    """The record's two DIFFs, both readings of one state: ours 0x1 (idle)
    against nvidia-smi's 0x0 a moment later, and ours "no NUMA node" (sysfs
    -1 in the VM) against topo -m's 0."""
    summary = tmp_path / "summary.json"
    compare.main(record_args("h200-vm-580.159.04") + ["--summary", str(summary)])
    rows = {(r["gpu"], r["field"]): r for r in json.loads(summary.read_text())["rows"]}
    r = rows[("0000:00:06.0", "clock_event_reasons")]
    assert (r["status"], r["ours"]) == ("ok", "0x1") and "gpu_idle" in r["note"]
    r = rows[("topo", "GPU0 numa_affinity")]
    assert (r["status"], r["ours"], r["smi"]) == ("ok", "null", "0")
    assert "no NUMA node (VM)" in r["note"]


REASONS = next(f for f in compare.FIELDS if f.name == "clock_event_reasons")


@pytest.mark.parametrize("ours,smi,status", [
    (0x1, "0x0000000000000000", "ok"),      # idle bit alone: moved between reads
    (0x0, "0x0000000000000001", "ok"),
    (0x5, "0x0000000000000004", "ok"),      # sw power cap on both, idle differs
    (0x4, "0x0000000000000000", "DIFF"),    # sw power cap is not noise
    (0x1, "0x0000000000000004", "DIFF"),    # idle differs and so does the cap
    (0x41, "0x0000000000000001", "DIFF"),   # hw thermal slowdown
])
def test_clock_events_ignore_the_idle_bit_alone(ours, smi, status):
    r = compare.judge(REASONS, ours, 0, [smi], "csv")
    assert r["status"] == status, r


def test_clock_events_idle_bit_in_the_xml():
    import xml.etree.ElementTree as ET
    el = ET.fromstring(
        "<gpu><clocks_event_reasons>"
        "<clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>"
        "<clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>"
        "</clocks_event_reasons></gpu>")
    ok = compare.judge_reasons(REASONS, 0x1, 0, [{"el": el}], None)
    assert ok["status"] == "ok" and "gpu_idle" in ok["note"]
    diff = compare.judge_reasons(REASONS, 0x4, 0, [{"el": el}], None)
    assert diff["status"] == "DIFF"


def test_numa_null_against_a_real_node_is_a_diff(tmp_path):
    """Only "no node" against 0 is the VM case; null against node 1 is not."""
    topo = json.load(open(os.path.join(H200, "topo.json")))
    text = open(os.path.join(H200, "smi-topo-m.txt")).read().replace("0-15\t0\t", "0-15\t1\t")
    rows = {r["field"]: r for r in compare.compare_topo(topo, text, None)}
    assert rows["GPU0 numa_affinity"]["status"] == "DIFF"
    topo["gpus"][0]["numa_node"] = 1
    rows = {r["field"]: r for r in compare.compare_topo(topo, text, None)}
    assert rows["GPU0 numa_affinity"]["status"] == "ok"
