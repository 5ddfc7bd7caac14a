#!/usr/bin/env python3
"""Real machines as goldens: every record in tests/device/recorded/<machine>/
(scripts/device-check.sh and the staged faults, run on real hardware; its
README says what is in it) is tested the same way:

- replay: `check --from device-check/snapshot.json` has no failing finding
  (the machine was healthy and CUDA had just started on it);
- faults: faults/faults.json lists the staged faults; for each, the snapshot
  derive_faults.py built from the base snapshot and the fault's own report
  (faults/derived/NAME.snapshot.json, kept current: derive_faults.py --check)
  gives the expected cause first in `check --from`, with the expected
  severity, and every also_fail id failing; a healthy row, no failing finding;
- torch: `explain faults/NAME.torch.txt` (PyTorch's own text under the fault)
  ranks the expected cause within the first explain_within findings, or,
  where PyTorch reported no error, fails nothing;
- smi: `explain` of the record's nvidia-smi outputs (the plain table, -q and
  -L) finds each GPU, with the name, bus id and UUID that gpudoctor's own
  snapshot of the machine holds, and fails nothing on this healthy machine
  (the driver and CUDA versions it reads: tests/unit/explain_recorded_test.cc).

A record from a new machine needs only its folder (and, for its faults, a
faults.json and a derive_faults.py of its own).

usage: recorded_test.py GPUDOCTOR [-k NAME]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from harness import Skip, run_tests, take_k  # noqa: E402  (tests/harness.py)

RECORDED = os.path.join(HERE, "recorded")
GD = None  # set by main


def machines():
    return sorted(m for m in os.listdir(RECORDED)
                  if os.path.isfile(os.path.join(RECORDED, m, "device-check", "snapshot.json")))


def gpudoctor(*args, ok_codes=(0, 1, 2)):
    """`gpudoctor ARGS --json` -> the report; fails on a crash or usage error."""
    p = subprocess.run([GD] + list(args) + ["--json"], capture_output=True, text=True,
                       timeout=60, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert p.returncode in ok_codes, f"gpudoctor {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
    return json.loads(p.stdout)


def failing(report):
    return [f"{f['id']}: {f['summary']}" for f in report["findings"] if f["severity"] == "fail"]


def ranked(report):
    """The findings that say something (fail, warn), in the report's order."""
    return [f for f in report["findings"] if f["severity"] in ("fail", "warn")]


def load_manifest(machine):
    path = os.path.join(RECORDED, machine, "faults", "faults.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        man = json.load(f)
    return man["faults"] + man.get("address_space", {}).get("faults", [])


def check_replay(machine):
    snap = os.path.join(RECORDED, machine, "device-check", "snapshot.json")
    report = gpudoctor("check", "--from", snap)
    assert failing(report) == [], f"{machine}: the healthy record fails: {failing(report)}"


def check_derived_current(machine):
    script = os.path.join(RECORDED, machine, "derive_faults.py")
    if not os.path.exists(script):
        raise Skip(f"{machine} has no derive_faults.py")
    p = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def check_faults(machine):
    rows = load_manifest(machine)
    if rows is None:
        raise Skip(f"{machine} has no faults/faults.json")
    problems = []
    for row in rows:
        snap = os.path.join(RECORDED, machine, "faults", row["snapshot"])
        report = gpudoctor("check", "--from", snap)
        said = ranked(report)
        want = row.get("expect_first")
        note = row.get("expect_note")
        if note is not None:
            notes = [f for f in report["findings"] if f["id"] == note]
            if not notes or any(f["severity"] != "info" for f in notes):
                problems.append(f"{row['name']}: expected {note} as a note (info), got "
                                f"{[f['severity'] for f in notes]}")
        if want is None:
            if failing(report):
                problems.append(f"{row['name']}: healthy, but fails {failing(report)}")
            continue
        first = said[0] if said else None
        if first is None or first["id"] != want:
            problems.append(f"{row['name']}: first finding "
                            f"{first['id'] if first else None}, expected {want} "
                            f"(ranked: {[f['id'] for f in said]})")
        elif first["severity"] != row.get("expect_severity", "fail"):
            problems.append(f"{row['name']}: {want} is {first['severity']}, "
                            f"expected {row.get('expect_severity', 'fail')}")
        for also in row.get("also_fail", []):
            if not any(f["id"] == also and f["severity"] == "fail" for f in said):
                problems.append(f"{row['name']}: expected {also} to fail too")
    assert not problems, "\n".join(problems)


def check_torch(machine):
    rows = [r for r in load_manifest(machine) or [] if r.get("torch")]
    if not rows:
        raise Skip(f"{machine} has no PyTorch texts")
    problems = []
    for row in rows:
        text = os.path.join(RECORDED, machine, "faults", row["torch"])
        # exit 3: explain found nothing it knows in the text (memheld: none)
        report = gpudoctor("explain", text, ok_codes=(0, 1, 2, 3))
        said = ranked(report)
        want = row.get("explain_first")
        if want is None:
            if failing(report):
                problems.append(f"{row['torch']}: no error in the text, but explain fails "
                                f"{failing(report)}")
            continue
        within = row.get("explain_within", 1)
        top = [f["id"] for f in said[:within]]
        if want not in top:
            problems.append(f"{row['torch']}: explain ranks {[f['id'] for f in said]}, "
                            f"expected {want} within the first {within}")
    assert not problems, "\n".join(problems)


def check_smi_explain(machine):
    """explain reads what the machine's own snapshot holds from nvidia-smi's text."""
    dc = os.path.join(RECORDED, machine, "device-check")
    with open(os.path.join(dc, "snapshot.json"), encoding="utf-8") as f:
        snap = json.load(f)
    nvml = snap["nvml"]
    gpus = {g["pci_bus_id"]["value"]: g for g in nvml["gpus"]}
    problems = []
    for name in ("smi.txt", "smi-q.txt", "smi-L.txt"):
        path = os.path.join(dc, name)
        if not os.path.exists(path):
            continue
        report = gpudoctor("explain", path)
        if failing(report):
            problems.append(f"{name}: explain fails on a healthy machine: {failing(report)}")
        if name == "smi-L.txt":
            continue  # -L names no bus id, and the report lists GPUs by theirs
        seen = {g.get("bus_id"): g for g in report["gpus"]}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if set(seen) != set(gpus):
            problems.append(f"{name}: explain saw GPUs {sorted(seen)}, the snapshot "
                            f"{sorted(gpus)}")
        for bus, g in gpus.items():
            mine = seen.get(bus)
            if mine is None:
                continue
            if mine.get("name") != g["name"]["value"]:
                problems.append(f"{name}: GPU {bus} named {mine.get('name')!r}")
            if g["uuid"]["value"] in text and mine.get("uuid") != g["uuid"]["value"]:
                problems.append(f"{name}: GPU {bus} UUID {mine.get('uuid')!r}")
    assert not problems, "\n".join(problems)


def add_tests(ns):
    for m in machines():
        key = m.replace("-", "_").replace(".", "_")
        for what, fn in (("replay", check_replay), ("derived_current", check_derived_current),
                         ("faults", check_faults), ("torch", check_torch),
                         ("smi_explain", check_smi_explain)):
            ns[f"test_{key}_{what}"] = (lambda fn=fn, m=m: fn(m))


def main():
    global GD
    args = sys.argv[1:]
    only = take_k(args)
    if not args:
        print(__doc__, file=sys.stderr)
        return 64
    GD = os.path.abspath(args[0])
    ns = {}
    add_tests(ns)
    if not ns:
        print("no record in " + RECORDED, file=sys.stderr)
        return 1
    return run_tests(ns, only)


if __name__ == "__main__":
    sys.exit(main())
