#!/usr/bin/env python3
"""Property tests over every fixture the tests have: each invariant holds for
every machine we can stage or replay, not only for the ones a golden names.

Fixtures (each gives a snapshot and the `check --json` report of it, both
from the real binary: `snapshot -o` then `check --from`):
- every e2e scenario (tests/scenarios/*.json: a recorded root with a fake
  NVML/CUDA scenario, environment and limits, or a recorded snapshot), run
  as tests/e2e/run.py runs it;
- every fake scenario (tests/fakes/scenarios) and recorded root (tests/roots)
  no e2e scenario uses: the fake over the root of the same name (else the
  root its name starts with, else ws-4x4090); a root without a fake of its
  name runs with no NVIDIA libraries at all;
- every recorded snapshot (tests/snapshots/*.json, tests/diff/nodes/*.json);
- every real record (tests/device/recorded/*/device-check/snapshot.json) and
  its derived fault snapshots (faults/derived/*.snapshot.json).

Invariants: each tests/invariants/inv_*.py exports
    check(name, snapshot: dict, report: dict) -> list[str]   (violations)
and may export
    extra(ctx) -> list[str]
for properties that need runs of their own (ctx: see Context below).

usage: run.py GPUDOCTOR FAKES_DIR [-k NAME]   (-k keeps fixtures whose name contains NAME)
"""
import concurrent.futures
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
SRC = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
from harness import take_k  # noqa: E402

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
WORKERS = max(2, min(8, (os.cpu_count() or 2) * 2))


class Fixture:
    """A live probe (argv + env + preexec, run as `snapshot -o`) or a snapshot file."""

    def __init__(self, name, snapshot=None, argv=None, env=None, preexec=None):
        self.name, self.snapshot, self.argv, self.env, self.preexec = \
            name, snapshot, argv, env, preexec


class Context:
    """What extra() gets: the binary, the fakes, and a runner for live probes."""

    def __init__(self, gd, fakes, pool):
        self.gd, self.fakes, self.pool, self.src = gd, fakes, pool, SRC

    def fake_args(self):
        return ["--nvml-lib", os.path.join(self.fakes, "libnvidia-ml.so.1"),
                "--cuda-lib", os.path.join(self.fakes, "libcuda.so.1"),
                "--cudart-lib", os.path.join(self.fakes, "libcudart.so.13")]

    def probe(self, root, fake=None, libs="fake"):
        """(snapshot, report, error) of a live run over a root directory."""
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        if fake:
            env["GPUDOCTOR_FAKE_SCENARIO"] = os.path.join(SRC, "tests", "fakes", "scenarios",
                                                          fake + ".json")
        argv = [self.gd, "check", "--root", root]
        if libs == "fake":
            argv += self.fake_args()
        else:
            argv += ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                     "--cuda-lib", "/nonexistent/libcuda.so.1",
                     "--cudart-lib", "/nonexistent/libcudart.so"]
        return materialize(self.gd, Fixture(root, argv=argv, env=env))


def load_module(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# tests/e2e/run.py, for scenario_command: the scenarios run as the goldens run them.
e2e = load_module(os.path.join(TESTS, "e2e", "run.py"))


def invariant_modules():
    return [load_module(p) for p in sorted(glob.glob(os.path.join(HERE, "inv_*.py")))]


def fixtures(gd, fakes, tmp):
    out = []
    used_fakes, used_roots = set(), set()
    for path in sorted(glob.glob(os.path.join(SRC, "tests", "scenarios", "*.json"))):
        name = os.path.basename(path)[:-5]
        with open(path) as f:
            sc = json.load(f)
        used_fakes.add(sc.get("fake"))
        used_roots.add(sc.get("root"))
        if sc.get("libs") == "stub" and not os.path.exists(
                os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")):
            continue
        if "snapshot" in sc:
            out.append(Fixture("scenario:" + name,
                               snapshot=os.path.join(SRC, "tests", "snapshots", sc["snapshot"])))
            continue
        d = os.path.join(tmp, name)
        os.makedirs(d)
        argv, env, preexec = e2e.scenario_command(gd, fakes, sc, d)
        out.append(Fixture("scenario:" + name, argv=argv, env=env, preexec=preexec))
    roots = sorted(r for r in os.listdir(os.path.join(SRC, "tests", "roots"))
                   if os.path.isdir(os.path.join(SRC, "tests", "roots", r)))
    fake_names = sorted(os.path.basename(p)[:-5] for p in
                        glob.glob(os.path.join(SRC, "tests", "fakes", "scenarios", "*.json")))
    ctx = Context(gd, fakes, None)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    for fake in fake_names:
        if fake in used_fakes:
            continue
        with open(os.path.join(SRC, "tests", "fakes", "scenarios", fake + ".json")) as f:
            machine = json.load(f).get("machine", "")
        # The fake over the tree of its own machine; a fake of a machine no
        # tree records (nvml-health's lab box, for the unit tests) would pair
        # its GPUs with another machine's bus and driver: no fixture.
        root = machine if machine in roots else fake if fake in roots else None
        if root is None:
            continue
        out.append(Fixture(f"fake:{fake}@{root}", argv=[gd, "check", "--root", os.path.join(
            SRC, "tests", "roots", root)] + ctx.fake_args(), env=dict(
                env, GPUDOCTOR_FAKE_SCENARIO=os.path.join(SRC, "tests", "fakes", "scenarios",
                                                          fake + ".json"))))
    for root in roots:
        if root in used_roots:
            continue
        argv = [gd, "check", "--root", os.path.join(SRC, "tests", "roots", root)]
        e = dict(env)
        if root in fake_names:
            argv += ctx.fake_args()
            e["GPUDOCTOR_FAKE_SCENARIO"] = os.path.join(SRC, "tests", "fakes", "scenarios",
                                                        root + ".json")
        else:
            argv += ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                     "--cuda-lib", "/nonexistent/libcuda.so.1",
                     "--cudart-lib", "/nonexistent/libcudart.so"]
        out.append(Fixture("root:" + root, argv=argv, env=e))
    for pattern, kind in (("tests/snapshots/*.json", "snapshot"),
                          ("tests/diff/nodes/*.json", "diff-node"),
                          ("tests/device/recorded/*/device-check/snapshot.json", "record"),
                          ("tests/device/recorded/*/faults/derived/*.snapshot.json",
                           "record-fault")):
        for path in sorted(glob.glob(os.path.join(SRC, pattern))):
            rel = os.path.relpath(path, SRC)
            out.append(Fixture(f"{kind}:{rel}", snapshot=path))
    return out


def materialize(gd, fx):
    """(snapshot dict, report dict, error string or None) for one fixture."""
    try:
        return run_fixture(gd, fx)
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        return None, None, f"{type(e).__name__}: {e}"


def run_fixture(gd, fx):
    with tempfile.TemporaryDirectory(prefix="gd-inv-") as tmp:
        snap_path = fx.snapshot
        if snap_path is None:
            snap_path = os.path.join(tmp, "snap.json")
            p = subprocess.run([fx.argv[0], "snapshot", "-o", snap_path] + fx.argv[2:],
                               env=fx.env, preexec_fn=fx.preexec, capture_output=True,
                               text=True, timeout=60)
            if p.returncode != 0:
                return None, None, f"snapshot exited {p.returncode}: {p.stderr.strip()}"
        p = subprocess.run([gd, "check", "--from", snap_path, "--json"], capture_output=True,
                           text=True, timeout=60, env={"PATH": "/usr/bin:/bin",
                                                        "LANG": "C.UTF-8"})
        if p.returncode not in (0, 1, 2):
            return None, None, f"check --from exited {p.returncode}: {p.stderr.strip()}"
        with open(snap_path, encoding="utf-8") as f:
            snapshot = json.load(f)
        return snapshot, json.loads(p.stdout), None


def main():
    args = sys.argv[1:]
    only = take_k(args)
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    gd, fakes = os.path.abspath(args[0]), os.path.abspath(args[1])
    mods = invariant_modules()
    start = time.monotonic()
    violations = []  # (invariant, fixture, text)
    with tempfile.TemporaryDirectory(prefix="gd-inv-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        fxs = [f for f in fixtures(gd, fakes, tmp) if only is None or only in f.name]
        results = list(pool.map(lambda fx: (fx, materialize(gd, fx)), fxs))
        for fx, (snapshot, report, err) in results:
            if err:
                violations.append(("harness", fx.name, err))
                continue
            for mod in mods:
                try:
                    found = mod.check(fx.name, snapshot, report)
                except Exception as e:  # noqa: BLE001 - an invariant's own bug is a failure too
                    found = [f"invariant raised {type(e).__name__}: {e}"]
                violations += [(mod.__name__, fx.name, v) for v in found]
        if only is None:
            ctx = Context(gd, fakes, pool)
            for mod in mods:
                if hasattr(mod, "extra"):
                    try:
                        found = mod.extra(ctx)
                    except Exception as e:  # noqa: BLE001
                        found = [f"extra() raised {type(e).__name__}: {e}"]
                    violations += [(mod.__name__, "extra", v) for v in found]
    by_inv = {}
    for inv, name, text in violations:
        by_inv.setdefault(inv, []).append(f"  {name}: {text}")
    for inv in sorted(by_inv):
        print(f"{inv}: {len(by_inv[inv])} violation(s)")
        print("\n".join(by_inv[inv]))
    print(f"invariants: {len(fxs)} fixtures x {len(mods)} invariants "
          f"({', '.join(m.__name__ for m in mods)}), {len(violations)} violation(s), "
          f"{time.monotonic() - start:.1f} s")
    return 1 if violations or not fxs else 0


if __name__ == "__main__":
    sys.exit(main())
