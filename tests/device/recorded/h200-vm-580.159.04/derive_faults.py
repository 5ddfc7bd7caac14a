#!/usr/bin/env python3
"""Derives one snapshot per staged fault of this real-machine record.

The record's faults/NAME.json are `gpudoctor check --json` reports, not
snapshots: the faults were staged on the H200 after the one snapshot of the
healthy machine (device-check/snapshot.json) was taken. Each fault's snapshot
is that base snapshot changed by what the fault's own report shows, and by
nothing else:

- the GPU's UUID and memory size from the report's gpus[] (the faults ran on
  a later boot of the VM, with another UUID);
- environment variables quoted in the evidence (CUDA_VISIBLE_DEVICES="3",
  LD_LIBRARY_PATH=...);
- the CUDA probe's runs: the library loaded ("libcuda.so.1 loaded from ...",
  "cuInit(0) (LIB): CUDA_ERROR_X (N)"), cuInit's and cudaGetDeviceCount's
  return codes, and the clean run's outcome ("CUDA's clean run (...): cuInit
  succeeded" / "clean run (...): also fails");
- the memory other processes hold ("memory used B bytes", "pid P uses B bytes");
- the cuda probe's status and detail from the report's probes[].

faults/faults.json lists the faults, where each derived snapshot goes and the
cause `check --from` must rank first (tests/device/recorded_test.py).

    derive_faults.py            rewrite faults/derived/*.snapshot.json
    derive_faults.py --check    exit 1 when a derived file is stale
"""
import copy
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAULTS = os.path.join(HERE, "faults")
DERIVED = os.path.join(FAULTS, "derived")
BASE = os.path.join(HERE, "device-check", "snapshot.json")

# cuda_errors.cc's names for the codes these faults produce.
CU_RC = {"CUDA_ERROR_NO_DEVICE": 100, "CUDA_ERROR_STUB_LIBRARY": 34,
         "CUDA_ERROR_OUT_OF_MEMORY": 2}


class Evidence:
    """Every evidence line of a report, with the regex helpers below."""

    def __init__(self, report):
        self.report = report
        self.lines = [e for f in report.get("findings", []) for e in f.get("evidence", [])]

    def first(self, pattern):
        rx = re.compile(pattern)
        for line in self.lines:
            m = rx.search(line)
            if m:
                return m
        return None


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def replace_strings(node, old, new):
    if isinstance(node, dict):
        return {k: replace_strings(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [replace_strings(v, old, new) for v in node]
    if isinstance(node, str):
        return node.replace(old, new)
    return node


def same_gpu_as_report(snap, report):
    """The base GPU's UUID becomes the one the fault report names."""
    gpus = report.get("gpus") or []
    if not gpus:
        return snap
    old = snap["nvml"]["gpus"][0]["uuid"]["value"]
    snap = replace_strings(snap, old, gpus[0]["uuid"])
    if gpus[0].get("memory_total_bytes"):
        snap["nvml"]["gpus"][0]["memory_total_bytes"]["value"] = gpus[0]["memory_total_bytes"]
    return snap


def set_env(snap, ev):
    m = ev.first(r'^CUDA_VISIBLE_DEVICES="(.*)"$')
    if m:
        snap["env"]["vars"]["CUDA_VISIBLE_DEVICES"] = m.group(1)
    m = ev.first(r"^LD_LIBRARY_PATH=(.*)$")
    if m:
        snap["env"]["vars"]["LD_LIBRARY_PATH"] = m.group(1)


def failed_run(healthy, init_rc, cudart_rc, library=None, label="user"):
    run = copy.deepcopy(healthy)
    run.update(label=label, init_rc=init_rc, device_count_rc=-1, device_count=0, devices=[],
               cudart_rc=cudart_rc, cudart_device_count=0, env_changes={})
    if library:
        run["library_loaded"] = library
    if init_rc == CU_RC["CUDA_ERROR_STUB_LIBRARY"]:
        # Every entry point of the toolkit's stub returns 34, this one too.
        run.update(driver_version_rc=init_rc, driver_version=0)
    return run


def set_cuda(snap, ev):
    """The user's run (and the clean one the probe adds after a failure)."""
    m = ev.first(r"cuInit returned (CUDA_ERROR_\w+) \((\d+)\)") or \
        ev.first(r"^cuInit\(0\) \(([^)]*)\): (CUDA_ERROR_\w+) \((\d+)\)")
    if not m:
        return  # CUDA started: the base runs stand
    init_rc = int(m.groups()[-1])
    lib_m = ev.first(r"^cuInit\(0\) \(([^)]*)\): CUDA_ERROR_")
    library = lib_m.group(1) if lib_m else None
    rt = ev.first(r"\[cudaError\w+\]$")
    rt_rc = ev.first(r"^cudaGetDeviceCount \([^)]*\): Error (\d+):")
    cudart_rc = int(rt_rc.group(1)) if rt_rc else init_rc
    assert rt is None or rt_rc is not None
    healthy = snap["cuda"]["runs"][0]
    user = failed_run(healthy, init_rc, cudart_rc, library)
    runs = [user]
    changes = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    if "CUDA_VISIBLE_DEVICES" in snap["env"]["vars"]:
        changes["CUDA_VISIBLE_DEVICES"] = ""  # "" = unset
    if ev.first(r"^CUDA's clean run \([^)]*\): cuInit succeeded"):
        clean = copy.deepcopy(healthy)
        clean.update(label="clean", env_changes=changes)
    elif ev.first(r"^clean run \([^)]*\): also fails"):
        clean = failed_run(healthy, init_rc, cudart_rc, library, label="clean")
        clean["env_changes"] = changes
    else:
        raise SystemExit("no clean run outcome in the evidence")
    runs.append(clean)
    snap["cuda"]["runs"] = runs


def set_memory_held(snap, ev):
    m = ev.first(r"^memory used (\d+) bytes")
    if not m:
        return
    gpu = snap["nvml"]["gpus"][0]
    used = int(m.group(1))
    total = gpu["memory_total_bytes"]["value"]
    gpu["memory_used_bytes"]["value"] = used
    gpu["memory_free_bytes"]["value"] = total - used
    procs = []
    rx = re.compile(r"^pid (\d+)(?: \(([^)]*)\))? uses (\d+) bytes")
    for line in ev.lines:
        p = rx.match(line)
        if p:
            procs.append({"pid": int(p.group(1)), "used_memory_bytes": int(p.group(3))})
            if p.group(2):
                snap["processes"].append({"comm": p.group(2), "pid": int(p.group(1))})
    gpu["processes"]["value"] = procs


# ADDRESS SPACE: the `ulimit -v` sweep (faults.json "address_space"). Bash's
# `ulimit -v N` sets the soft and the hard limit, so no child may lift it. The
# CUDA probe's VmSize is this machine's measurement of a bare process (README,
# "address space CUDA takes"): 22 MiB at start, 12,562 MiB after cuInit,
# 13,281 MiB after a context. Under a limit below what cuInit takes, cuInit and
# cudaGetDeviceCount fail with out of memory (README: "1-8 GiB: FAIL"; PyTorch
# "Error 2: out of memory" at 4 and 8 GiB) and the probe measured only its start.
MIB = 1 << 20
VM_START = {"size_bytes": 22 * MIB, "data_bytes": 0}
VM_INIT = {"size_bytes": 12562 * MIB, "data_bytes": 0}
VM_CONTEXT = {"size_bytes": 13281 * MIB, "data_bytes": 0}


def set_address_space(snap, row):
    limit = row["ulimit_v_kb"] * 1024
    snap["limits"].update(rlimit_as_bytes=limit, rlimit_as_hard_bytes=limit)
    runs = snap["cuda"]["runs"]
    if limit < VM_INIT["size_bytes"]:
        oom = CU_RC["CUDA_ERROR_OUT_OF_MEMORY"]
        healthy = runs[0]
        clean = failed_run(healthy, oom, oom, label="clean")
        clean["env_changes"] = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        runs[:] = [failed_run(healthy, oom, oom), clean]
        for r in runs:
            r.update(vm_start=VM_START, vm_init={"size_bytes": 0, "data_bytes": 0},
                     vm_context={"size_bytes": 0, "data_bytes": 0})
        for p in snap["probes"]:
            if p["name"] == "cuda":
                p["status"] = "failed"
                p["detail"] = ("cuInit returned CUDA_ERROR_OUT_OF_MEMORY (2): out of memory; "
                               "clean environment: cuInit returned CUDA_ERROR_OUT_OF_MEMORY (2): "
                               "out of memory")
    else:
        for r in runs:
            r.update(vm_start=VM_START, vm_init=VM_INIT, vm_context=VM_CONTEXT)
    for r in runs:
        r["rlimit_as_bytes"] = limit


def set_probes(snap, report):
    """The cuda probe's status and detail as the fault run recorded them."""
    theirs = {p["name"]: p for p in report.get("probes", [])}
    for p in snap["probes"]:
        if p["name"] == "cuda" and "cuda" in theirs:
            p["status"] = theirs["cuda"]["status"]
            p["detail"] = theirs["cuda"]["detail"]


def derive(base, report):
    snap = same_gpu_as_report(copy.deepcopy(base), report)
    ev = Evidence(report)
    set_env(snap, ev)
    set_cuda(snap, ev)
    set_memory_held(snap, ev)
    set_probes(snap, report)
    snap["taken_at"] = report.get("taken_at") or snap["taken_at"]
    return snap


def manifest():
    return load(os.path.join(FAULTS, "faults.json"))


def all_faults(man):
    """Every fault row, the address-space rows included."""
    return man["faults"] + man["address_space"]["faults"]


def outputs():
    base = load(BASE)
    out = {}
    for row in all_faults(manifest()):
        report = load(os.path.join(FAULTS, row["report"]))
        snap = derive(base, report)
        if "ulimit_v_kb" in row:
            set_address_space(snap, row)
        out[os.path.join(FAULTS, row["snapshot"])] = json.dumps(snap, indent=2,
                                                                sort_keys=True) + "\n"
    return out


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in sorted(outputs().items()):
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if check:
            stale.append(path)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote", os.path.relpath(path, HERE))
    if stale:
        print("stale (run derive_faults.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
