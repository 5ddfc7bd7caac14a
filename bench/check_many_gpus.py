#!/usr/bin/env python3
"""`gpudoctor check --from` on snapshots of 1,000 to 8,000 GPUs (issue 20:
10,000 GPUs took 12.6 s, quadratic). Each size is the recorded 4 x RTX 4090
workstation (tests/snapshots/ws-4x4090.json) with its GPU replicated under
distinct bus ids and UUIDs. Prints wall time and peak RSS per size, the time
per GPU, and the baseline in the same run: Python's json.load of the same
file (the parse alone). Linear: the time per GPU stays flat.

usage: check_many_gpus.py GPUDOCTOR [SIZES...]"""
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make(n, path):
    with open(os.path.join(SRC, "tests", "snapshots", "ws-4x4090.json")) as f:
        s = json.load(f)
    g0 = s["nvml"]["gpus"][0]
    p0 = next(p for p in s["pci"] if p["kind"] == "gpu")
    gpus, pcis = [], []
    for i in range(n):
        bus = f"{i // 65536:04x}:{(i // 256) % 256:02x}:{(i % 256) // 8:02x}.{i % 8}"
        g = copy.deepcopy(g0)
        g["index"] = i
        g["pci_bus_id"]["value"] = bus
        g["uuid"]["value"] = f"GPU-{i:08x}-0000-0000-0000-000000000000"
        g["minor_number"]["value"] = i
        gpus.append(g)
        p = copy.deepcopy(p0)
        p["bdf"] = bus
        pcis.append(p)
    s["nvml"]["gpus"], s["pci"] = gpus, pcis
    s["nvml"]["device_count"]["value"] = n
    s["nvml"]["topology"] = []
    for r in s["cuda"]["runs"]:
        devs = []
        for i in range(n):
            d = copy.deepcopy(r["devices"][0])
            d.update(ordinal=i, pci_bus_id=gpus[i]["pci_bus_id"]["value"],
                     uuid=gpus[i]["uuid"]["value"])
            devs.append(d)
        r["devices"], r["device_count"] = devs, n
    with open(path, "w") as f:
        json.dump(s, f)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gd = sys.argv[1]
    sizes = [int(a) for a in sys.argv[2:]] or [1000, 2000, 4000, 8000]
    print(f"{'GPUs':>6} {'check s':>8} {'ms/GPU':>7} {'peak MiB':>9} {'json.load s':>12} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"g{n}.json")
            make(n, path)
            t0 = time.monotonic()
            with open(path) as f:
                json.load(f)
            base = time.monotonic() - t0
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.monotonic()
            p = subprocess.run([gd, "check", "--from", path], stdout=subprocess.DEVNULL)
            took = time.monotonic() - t0
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            assert p.returncode in (0, 1, 2), p.returncode
            print(f"{n:>6} {took:>8.2f} {1000 * took / n:>7.3f} {max(peak, before) / 1024:>9.1f} "
                  f"{base:>12.2f} {took / base:>6.1f}")


if __name__ == "__main__":
    main()
