#!/usr/bin/env python3
"""Records the snapshots the docs' examples read (tests/docs/snapshots/), so that
docs/topo.md and docs/env.md show a real 4-GPU workstation without one.

Each is `gpudoctor snapshot` on a recorded machine tree (tests/roots/) with the fake NVML and
CUDA (build/fakes/) driven by a scenario (tests/fakes/scenarios/), as tests/e2e/run.py stages
them. What would differ from one recording to the next is then fixed: the host name, the
time, and the directory the fakes were built in (shown as the system library directory), so
re-recording changes no example unless gpudoctor's probes changed. Run it after such a change,
then `python3 tests/docs/examples.py build/gpudoctor --update`, and review both diffs.

usage: record_snapshots.py GPUDOCTOR FAKES_DIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "snapshots")

# name: (machine tree under tests/roots, fake scenario under tests/fakes/scenarios)
SNAPSHOTS = {
    # The healthy workstation whose CUDA order is not its PCI order (docs/topo.md).
    "ws-4x4090": ("ws-4x4090", "ws-4x4090"),
    # The same workstation after GPU 0000:61:00.0 fell off the bus (docs/env.md).
    "ws-4x4090-gpu-lost": ("ws-4x4090", "gpu-lost"),
}
HOSTNAME = "ws-4090"
TAKEN_AT = "2026-12-02T14:38:29Z"
LIBDIR = "/usr/lib/x86_64-linux-gnu"


def record(gd, fakes, name, tree, scenario):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "GPUDOCTOR_FAKE_SCENARIO": os.path.join(ROOT, "tests", "fakes", "scenarios",
                                                   scenario + ".json")}
    argv = [gd, "snapshot", "--root", os.path.join("tests", "roots", tree),
            "--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
            "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
            "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    p = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"{name}: gpudoctor snapshot exited {p.returncode}: {p.stderr.strip()}")
    text = p.stdout.replace(fakes.rstrip("/"), LIBDIR)
    snap = json.loads(text)
    snap["hostname"] = HOSTNAME
    snap["taken_at"] = TAKEN_AT
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(snap, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    gd, fakes = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    os.makedirs(OUT, exist_ok=True)
    for name, (tree, scenario) in SNAPSHOTS.items():
        record(gd, fakes, name, tree, scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
