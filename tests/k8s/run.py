#!/usr/bin/env python3
"""End-to-end tests of the Kubernetes sinks through the real binary
(docs/kubernetes.md): `gpudoctor check --format npd` and `gpudoctor labels`
on every recorded snapshot (tests/snapshots/*.json) and on a few live
scenarios through the fake NVML/CUDA (tests/scenarios/, staged as
tests/e2e/run.py stages them). Outputs are compared with
tests/k8s/golden/<name>.{npd,labels}; `--update` rewrites them.

Also: the NPD exit code agrees with check's verdict (fail -> 1, else 0) and
its line fits NPD's 80 bytes; every label is valid; `labels --nfd-dir`
writes DIR/gpudoctor atomically (mode 0644, no temp file left, replaces the
old file) and fails cleanly on a missing directory; `--expiry` writes NFD's
expiry directive; bad flags exit 64.

usage: run.py GPUDOCTOR FAKES_DIR [--update]
"""
import datetime
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # it imports tests/e2e/run.py: leave no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "e2e"))
import golden  # noqa: E402  (tests/golden.py)
import run as e2e  # noqa: E402  (tests/e2e/run.py: scenario_command)

SRC = os.path.dirname(TESTS)
GOLDEN = os.path.join(HERE, "golden")
SNAPSHOTS = os.path.join(SRC, "tests", "snapshots")
SCENARIOS = os.path.join(SRC, "tests", "scenarios")
# Live scenarios: healthy 8 GPUs, a lost GPU, Xid 79, a warning, a hang.
LIVE = ["hgx-healthy", "xid79", "gpu-lost", "hot-gpu", "nvml-hang", "ws-4x4090-healthy"]
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def run(argv, env=None, preexec=None):
    return subprocess.run(argv, env=env or ENV, preexec_fn=preexec, capture_output=True,
                          text=True, timeout=120)


def normalize_labels(text):
    return re.sub(r"^# host .*$", "# host <host>", text, flags=re.M)


def check_label_file(name, text, failures):
    seen = set()
    for line in text.splitlines():
        if line.startswith("#"):
            if line.startswith("# +") and not line.startswith("# +expiry-time="):
                failures.append(f"{name}: unexpected directive {line!r}")
            continue
        key, eq, value = line.partition("=")
        short = key.rpartition("/")[2]
        if not eq or not key.startswith("gpudoctor.io/") or not LABEL_VALUE.match(short) \
                or not LABEL_VALUE.match(value) or not value or len(value) > 63:
            failures.append(f"{name}: invalid label line {line!r}")
        if key in seen:
            failures.append(f"{name}: label {key} twice")
        seen.add(key)
    for required in ("gpudoctor.io/gpu.count", "gpudoctor.io/health"):
        if required not in seen:
            failures.append(f"{name}: no {required}")


def check_case(gd, name, base_argv, env, preexec, update, failures):
    """base_argv: [gd, <placeholder command>, options...]."""
    opts = base_argv[2:]
    chk = run([gd, "check", "--json"] + opts, env, preexec)
    try:
        verdict = json.loads(chk.stdout)["verdict"]
    except (json.JSONDecodeError, KeyError):
        failures.append(f"{name}: check --json gave no report: {chk.stderr}")
        return
    npd = run([gd, "check", "--format", "npd"] + opts, env, preexec)
    line = npd.stdout.rstrip("\n")
    want = 1 if verdict == "fail" else 0
    if npd.returncode != want:
        failures.append(f"{name}: npd exit {npd.returncode} for verdict {verdict}, want {want}")
    if "\n" in line or len(line.encode()) > 80 or not line.startswith("gpudoctor: "):
        failures.append(f"{name}: npd output not one line within 80 bytes: {npd.stdout!r}")
    golden.compare(GOLDEN, name, "npd", f"exit {npd.returncode}\n{npd.stdout}", update, failures)

    lab = run([gd, "labels"] + opts, env, preexec)
    if lab.returncode != 0:
        failures.append(f"{name}: labels exit {lab.returncode}: {lab.stderr}")
        return
    check_label_file(name, lab.stdout, failures)
    if f"gpudoctor.io/health={verdict}\n" not in lab.stdout:
        failures.append(f"{name}: labels do not carry the verdict {verdict}")
    golden.compare(GOLDEN, name, "labels", normalize_labels(lab.stdout), update, failures)


def check_nfd_dir(gd, failures):
    snap = os.path.join(SNAPSHOTS, "ws-4x4090.json")
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "gpudoctor")
        with open(target, "w") as f:
            f.write("gpudoctor.io/health=stale\n")
        os.chmod(target, 0o600)
        old_inode = os.stat(target).st_ino
        r = run([gd, "labels", "--from", snap, "--nfd-dir", tmp, "--expiry", "10m"])
        if r.returncode != 0 or r.stdout:
            failures.append(f"--nfd-dir: exit {r.returncode}, stdout {r.stdout!r}: {r.stderr}")
            return
        if sorted(os.listdir(tmp)) != ["gpudoctor"]:
            failures.append(f"--nfd-dir: leaves {sorted(os.listdir(tmp))}")
        st = os.stat(target)
        if stat.S_IMODE(st.st_mode) != 0o644:
            failures.append(f"--nfd-dir: mode {oct(st.st_mode)}, want 0644 (nfd-worker reads it)")
        if st.st_ino == old_inode:
            failures.append("--nfd-dir: rewrote the file in place instead of renaming over it")
        text = open(target).read()
        if "health=stale" in text:
            failures.append("--nfd-dir: old content survives")
        plain = run([gd, "labels", "--from", snap]).stdout
        lines = [x for x in text.splitlines() if not x.startswith("# +expiry-time=")]
        if lines != plain.splitlines():
            failures.append("--nfd-dir: the file differs from the printed labels")
        m = re.search(r"^# \+expiry-time=(\S+)$", text, re.M)
        first_label = min((i for i, x in enumerate(text.splitlines()) if not x.startswith("#")),
                          default=-1)
        if not m or text.splitlines().index(m.group(0)) > first_label:
            failures.append("--expiry: no expiry directive before the labels")
        else:
            at = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=datetime.timezone.utc)
            left = (at - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
            if not 540 <= left <= 600:
                failures.append(f"--expiry 10m: expires in {left:.0f} s")

    missing = os.path.join(tempfile.gettempdir(), "gpudoctor-k8s-no-such-dir", "features.d")
    r = run([gd, "labels", "--from", snap, "--nfd-dir", missing])
    if r.returncode != 3 or not r.stderr.startswith("gpudoctor: labels: ") or \
            r.stderr.count("\n") != 1:
        failures.append(f"--nfd-dir missing: exit {r.returncode}, stderr {r.stderr!r}")
    for bad in (["--expiry", "soon"], ["--expiry", "0s"], ["--log-window", "x"],
                ["--no-such-flag"]):
        r = run([gd, "labels", "--from", snap] + bad)
        if r.returncode != 64:
            failures.append(f"labels {' '.join(bad)}: exit {r.returncode}, want 64")
    r = run([gd, "labels", "--from", "/nonexistent/snap.json"])
    if r.returncode != 3:
        failures.append(f"labels --from missing file: exit {r.returncode}, want 3")
    r = run([gd, "check", "--format", "npd", "--from", "/nonexistent/snap.json"])
    if r.returncode in (0, 1):
        failures.append(f"check --format npd on a missing file: exit {r.returncode}: NPD would "
                        "read a verdict where there is none")


def main():
    args = sys.argv[1:]
    update = "--update" in args
    positional = [a for a in args if not a.startswith("--")]
    gd, fakes = os.path.abspath(positional[0]), os.path.abspath(positional[1])
    failures, ran = [], 0
    for fname in sorted(os.listdir(SNAPSHOTS)):
        if fname.endswith(".json"):
            path = os.path.join(SNAPSHOTS, fname)
            check_case(gd, "snapshot-" + fname[:-5], [gd, "-", "--from", path], None, None,
                       update, failures)
            ran += 1
    for name in LIVE:
        with open(os.path.join(SCENARIOS, name + ".json")) as f:
            sc = json.load(f)
        with tempfile.TemporaryDirectory() as tmp:
            argv, env, preexec = e2e.scenario_command(gd, fakes, sc, tmp)
            check_case(gd, "live-" + name, argv, env, preexec, update, failures)
        ran += 1
    check_nfd_dir(gd, failures)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    print(f"k8s: {ran} cases, {len(failures)} failures" + (" (goldens updated)" if update else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
