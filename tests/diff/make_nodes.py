#!/usr/bin/env python3
"""Writes the fleet of snapshots under tests/diff/nodes/ that `gpudoctor diff`
is tested on (tests/diff/run.py).

Six HGX H100 nodes that should be identical, each recorded by the real
binary (`gpudoctor snapshot`) on the recorded tree tests/roots/hgx-8xh100
with the fake NVML and CUDA (tests/fakes/scenarios/hgx-8xh100.json), the
way tests/e2e/run.py runs check. Four of them drift, each in one way a
fleet really drifts, staged in the inputs rather than edited into the JSON:

    gpu-node-01  as built
    gpu-node-02  driver upgraded to 550.90.07 (module, libraries, fabric manager)
    gpu-node-03  GPU 0000:5d:00.0 flashed with another VBIOS
    gpu-node-04  fabric manager stopped (cuInit: 802)
    gpu-node-05  CUDA_VISIBLE_DEVICES=0,1,2,3 left in a profile
    gpu-node-06  as built

What varies from run to run is normalized: hostname, time, the staged root
and fake-library paths, durations, the CUDA probe's own address space.

    tests/diff/make_nodes.py GPUDOCTOR FAKES_DIR           rewrite the nodes
    tests/diff/make_nodes.py GPUDOCTOR FAKES_DIR --check   exit 1 if one differs
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
ROOTS = os.path.join(SRC, "tests", "roots")
FAKE_SCENARIOS = os.path.join(SRC, "tests", "fakes", "scenarios")
NODES = os.path.join(HERE, "nodes")

DRIVER = "550.54.15"
NEW_DRIVER = "550.90.07"
# The VBIOS tests/roots/hgx-8xh100 shows in /proc/driver/nvidia/gpus/*/information;
# the fake NVML is told the same so both sources agree.
VBIOS = "96.00.74.00.0D"
ODD_VBIOS = "96.00.74.00.1A"
ODD_GPU = "0000:5d:00.0"


def base_scenario():
    with open(os.path.join(FAKE_SCENARIOS, "hgx-8xh100.json")) as f:
        sc = json.load(f)
    sc["gpu_defaults"]["vbios_version"] = VBIOS
    return sc


def replace_in_tree(root, old, new, only=None):
    """Replaces text in every text file under root (or the files in `only`)."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            if only is not None and os.path.relpath(path, root) not in only:
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except UnicodeDecodeError:
                continue  # PCI config space and the like
            if old in text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text.replace(old, new))


def stage(tmp, name, root, change_root=None, change_scenario=None, env=None):
    """A root tree, a fake scenario file and an environment for one node."""
    root_dir = os.path.join(ROOTS, root)
    if change_root:
        copy = os.path.join(tmp, name, "root")
        shutil.copytree(root_dir, copy, symlinks=True)
        change_root(copy)
        root_dir = copy
    sc = base_scenario()
    if change_scenario:
        change_scenario(sc)
    sc_path = os.path.join(tmp, name + "-scenario.json")
    with open(sc_path, "w") as f:
        json.dump(sc, f, indent=1)
    return root_dir, sc_path, env or {}


def upgrade_root(root):
    replace_in_tree(root, DRIVER, NEW_DRIVER)


def upgrade_scenario(sc):
    sc["driver_version"] = NEW_DRIVER


def flash_root(root):
    replace_in_tree(root, VBIOS, ODD_VBIOS,
                    only={f"proc/driver/nvidia/gpus/{ODD_GPU}/information"})


def flash_scenario(sc):
    for g in sc["gpus"]:
        if g["bus_id"] == ODD_GPU:
            g["vbios_version"] = ODD_VBIOS


def fm_stopped_scenario(sc):
    # As tests/fakes/scenarios/hgx-8xh100-no-fm.json: fabric registration
    # never started, cuInit answers 802.
    sc["gpu_defaults"]["fabric"]["state"] = 1
    sc.setdefault("errors", {})["cuInit"] = 802


NODE_SPECS = [
    ("gpu-node-01", dict(root="hgx-8xh100")),
    ("gpu-node-02", dict(root="hgx-8xh100", change_root=upgrade_root,
                         change_scenario=upgrade_scenario)),
    ("gpu-node-03", dict(root="hgx-8xh100", change_root=flash_root,
                         change_scenario=flash_scenario)),
    ("gpu-node-04", dict(root="hgx-8xh100-no-fm", change_scenario=fm_stopped_scenario)),
    ("gpu-node-05", dict(root="hgx-8xh100", env={"CUDA_VISIBLE_DEVICES": "0,1,2,3"})),
    ("gpu-node-06", dict(root="hgx-8xh100")),
]


def zero_durations(doc):
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "duration_ms":
                doc[k] = 0
            else:
                zero_durations(v)
    elif isinstance(doc, list):
        for v in doc:
            zero_durations(v)


def zero_vm_usage(doc):
    """The CUDA probe's own VmSize/VmData differ with the build (a sanitizer's
    shadow) and the C library: none of the compared fields."""
    for run in doc.get("cuda", {}).get("runs", []):
        for k in ("vm_start", "vm_init", "vm_context"):
            if k in run:
                run[k] = {"size_bytes": 0, "data_bytes": 0}


def record(gd, fakes, tmp, index, name, spec):
    root, sc_path, extra_env = stage(tmp, name, **spec)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "GPUDOCTOR_FAKE_SCENARIO": sc_path}
    env.update(extra_env)
    argv = [gd, "snapshot", "--root", root,
            "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
            "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"{name}: gpudoctor snapshot exited {out.returncode}: {out.stderr}")
    text = out.stdout
    # Paths of this run: the staged root and the fake libraries, as they
    # would read on a node.
    text = text.replace(root + "/", "/").replace(root, "/")
    text = text.replace(fakes, "/usr/lib/x86_64-linux-gnu")
    doc = json.loads(text)
    doc["hostname"] = name
    doc["taken_at"] = f"2026-12-01T10:00:{index:02d}Z"
    doc["tool_version"] = "0.1.0"
    doc["root"] = "/"
    zero_durations(doc)
    zero_vm_usage(doc)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    positional = [a for a in args if not a.startswith("--")]
    if len(positional) != 2:
        sys.exit(__doc__)
    gd, fakes = os.path.abspath(positional[0]), os.path.abspath(positional[1])
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, spec) in enumerate(NODE_SPECS, 1):
            text = record(gd, fakes, tmp, i, name, spec)
            path = os.path.join(NODES, name + ".json")
            if check:
                try:
                    with open(path) as f:
                        if f.read() != text:
                            stale.append(name)
                except FileNotFoundError:
                    stale.append(name)
                continue
            os.makedirs(NODES, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("tests/diff/nodes out of date (run tests/diff/make_nodes.py GPUDOCTOR FAKES_DIR): "
              + ", ".join(stale), file=sys.stderr)
        sys.exit(1)
    print("nodes " + ("up to date" if check else "written") + f": {len(NODE_SPECS)}")


if __name__ == "__main__":
    main()
