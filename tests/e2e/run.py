#!/usr/bin/env python3
"""Golden end-to-end tests: gpudoctor check, run as a user would run it, on
every scenario in tests/scenarios/*.json.

A scenario is a recorded machine tree (tests/roots/<root>), a fake NVML/CUDA
scenario (tests/fakes/scenarios/<fake>.json, read by the fake libraries in
build/fakes/), the environment and limits the job runs with, and what must
come out: the exit code and the finding ranked first. The text and JSON
reports are compared with tests/e2e/golden/<name>.{txt,json}; `--update`
rewrites the goldens (review the diff before committing).

Each scenario also checks that `snapshot` + `check --from` gives the same
report as the live run.

A scenario with an "explain" field (the error text a user of that machine
would paste) also runs `gpudoctor explain` on that text: its first finding
must be "explain_first" when given (rare: the text alone honestly points
elsewhere; the scenario says why), else "expect_first"; the reports are
compared with golden/explain-<name>.{txt,json}.

usage: run.py GPUDOCTOR FAKES_DIR [--update] [--only NAME] [--sanitized] [--explain-only]

--explain-only runs (and with --update rewrites) only the explain part.
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import golden  # noqa: E402  (tests/golden.py)
SRC = os.path.dirname(os.path.dirname(HERE))
SCENARIOS = os.path.join(SRC, "tests", "scenarios")
GOLDEN = os.path.join(HERE, "golden")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def normalize_text(text, subs):
    lines = text.splitlines()
    if lines and lines[0].startswith("gpudoctor "):
        lines[0] = "gpudoctor <version> · host <host> · <time>"
    out = "\n".join(lines) + "\n"
    for old, new in subs:
        out = out.replace(old, new)
    # How long a killed child ran depends on the machine's load, not on gpudoctor.
    return re.sub(r"timeout after [0-9.]+ s", "timeout after <T> s", out)


def normalize_json(doc, subs):
    doc = json.loads(doc)
    for key in ("host", "taken_at", "tool_version"):
        if key in doc:
            doc[key] = "<" + key + ">"
    for p in doc.get("probes", []):
        p["duration_ms"] = 0
    return normalize_text(json.dumps(doc, indent=2, ensure_ascii=False), subs)


def scenario_command(gd, fakes, sc, tmp):
    """argv, env and preexec for one scenario."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if "snapshot" in sc:
        # A recorded snapshot, for conditions a root tree and fakes cannot
        # stage on a CI machine (another user's permissions, a resume).
        return [gd, "check", "--from", os.path.join(SRC, "tests", "snapshots", sc["snapshot"])], \
            env, None
    argv = [gd, "check", "--root", os.path.join(SRC, "tests", "roots", sc["root"])]
    if sc.get("fake"):
        env["GPUDOCTOR_FAKE_SCENARIO"] = os.path.join(SRC, "tests", "fakes", "scenarios",
                                                      sc["fake"] + ".json")
    libs = sc.get("libs", "fake")
    if libs == "fake":
        argv += ["--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cuda-lib", os.path.join(fakes, "libcuda.so.1"),
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    elif libs == "stub":
        # The CUDA toolkit's real stub, reached as users reach it: through
        # LD_LIBRARY_PATH under the name libcuda.so.1.
        stub_dir = os.path.join(tmp, "toolkit", "lib64", "stubs")
        os.makedirs(stub_dir, exist_ok=True)
        link = os.path.join(stub_dir, "libcuda.so.1")
        if not os.path.exists(link):
            os.symlink(os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so"), link)
        env["LD_LIBRARY_PATH"] = stub_dir + ":/opt/extra/lib"
        argv += ["--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    elif libs == "compat":
        # A forward-compat package: a libcuda under .../cuda-X.Y/compat/
        # put first on LD_LIBRARY_PATH. Copied, not linked, so the loaded
        # path is the compat one.
        compat_dir = os.path.join(tmp, "usr", "local", "cuda-12.8", "compat")
        os.makedirs(compat_dir, exist_ok=True)
        shutil.copy(os.path.join(fakes, "libcuda.so.1"), compat_dir)
        env["LD_LIBRARY_PATH"] = compat_dir
        argv += ["--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    elif libs == "linux-driver":
        # A Linux driver's libcuda found by the loader (its own library
        # folder on LD_LIBRARY_PATH), as one installed inside WSL is found
        # before /usr/lib/wsl/lib.
        lib_dir = os.path.join(tmp, "usr", "lib", "x86_64-linux-gnu")
        os.makedirs(lib_dir, exist_ok=True)
        shutil.copy(os.path.join(fakes, "libcuda.so.1"), lib_dir)
        env["LD_LIBRARY_PATH"] = lib_dir
        argv += ["--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    elif libs == "no-cuda":
        # NVML but no libcuda: a container started with
        # NVIDIA_DRIVER_CAPABILITIES=utility gets nvidia-smi, not libcuda.
        argv += ["--nvml-lib", os.path.join(fakes, "libnvidia-ml.so.1"),
                 "--cuda-lib", "/nonexistent/libcuda.so.1",
                 "--cudart-lib", os.path.join(fakes, "libcudart.so.13")]
    elif libs == "none":
        argv += ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                 "--cuda-lib", "/nonexistent/libcuda.so.1",
                 "--cudart-lib", "/nonexistent/libcudart.so"]
    env.update({k: v.replace("<SRC>", SRC) for k, v in sc.get("env", {}).items()})
    argv += sc.get("args", [])
    limit_kb = sc.get("ulimit_v_kb")

    def preexec():
        if limit_kb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_kb * 1024, limit_kb * 1024))

    return argv, env, preexec


def run(argv, env, preexec, timeout=60):
    return subprocess.run(argv, env=env, preexec_fn=preexec, capture_output=True, text=True,
                          timeout=timeout)


def compare(name, kind, actual, update, failures):
    golden.compare(GOLDEN, name, kind, actual, update, failures)


def check_explain(gd, name, sc, update, failures):
    text = sc["explain"]
    if isinstance(text, list):
        text = "\n".join(text) + "\n"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    argv = [gd, "explain", "-"]
    out = subprocess.run(argv, env=env, input=text, capture_output=True, text=True, timeout=60)
    js = subprocess.run(argv + ["--json"], env=env, input=text, capture_output=True, text=True,
                        timeout=60)
    try:
        report = json.loads(js.stdout)
    except json.JSONDecodeError:
        failures.append(f"{name}: explain --json is not JSON (exit {js.returncode}): {js.stderr}")
        return
    first = report["findings"][0]["id"] if report["findings"] else None
    want = sc.get("explain_first", sc["expect_first"])
    if first != want:
        failures.append(f"{name}: explain's first finding {first}, expected {want}")
    compare("explain-" + name, "txt", normalize_text(out.stdout, []), update, failures)
    compare("explain-" + name, "json", normalize_json(js.stdout, []), update, failures)


def check_scenario(gd, fakes, name, sc, update, failures, time_scale):
    with tempfile.TemporaryDirectory() as tmp:
        argv, env, preexec = scenario_command(gd, fakes, sc, tmp)
        subs = [(tmp, "<TMP>"), (fakes, "<FAKES>"), (SRC, "<SRC>"),
                (os.path.realpath(CUDA_HOME), "<CUDA_HOME>")]
        start = time.monotonic()
        text = run(argv, env, preexec)
        elapsed = time.monotonic() - start
        limit = sc.get("max_seconds", 0) * time_scale
        if limit and elapsed > limit:
            failures.append(f"{name}: took {elapsed:.2f} s, more than {limit} s")
        js = run(argv + ["--json"], env, preexec)
        if text.returncode != sc["expect_exit"]:
            failures.append(f"{name}: exit {text.returncode}, expected {sc['expect_exit']}\n"
                            f"{text.stdout}{text.stderr}")
            return
        report = json.loads(js.stdout)
        first = report["findings"][0]["id"] if report["findings"] else None
        if first != sc["expect_first"]:
            failures.append(f"{name}: first finding {first}, expected {sc['expect_first']}")
        for fid in sc.get("expect_ids", []):
            if not any(f["id"] == fid and f["severity"] in ("fail", "warn")
                       for f in report["findings"]):
                failures.append(f"{name}: expected a failing or warning {fid}")
        compare(name, "txt", normalize_text(text.stdout, subs), update, failures)
        compare(name, "json", normalize_json(js.stdout, subs), update, failures)

        if "snapshot" in sc:
            return
        # snapshot + check --from must give the live report.
        snap = os.path.join(tmp, "snap.json")
        s = run([argv[0], "snapshot", "-o", snap] + argv[2:], env, preexec)
        if s.returncode != 0:
            failures.append(f"{name}: snapshot exited {s.returncode}: {s.stderr}")
            return
        replay = run([argv[0], "check", "--from", snap, "--json"], env, None)
        if normalize_json(replay.stdout, subs) != normalize_json(js.stdout, subs):
            failures.append(f"{name}: check --from differs from the live check")
        if replay.returncode != text.returncode:
            failures.append(f"{name}: check --from exited {replay.returncode}")


def main():
    args = sys.argv[1:]
    update = "--update" in args
    sanitized = "--sanitized" in args
    # A sanitized binary starts and runs its children several times slower;
    # the plain build holds the scenarios to the times the docs promise.
    time_scale = 3 if sanitized else 1
    explain_only = "--explain-only" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    positional = [a for a in args if not a.startswith("--") and a != only]
    gd, fakes = os.path.abspath(positional[0]), os.path.abspath(positional[1])
    failures, ran, skipped = [], 0, 0
    for fname in sorted(os.listdir(SCENARIOS)):
        if not fname.endswith(".json"):
            continue
        name = fname[:-5]
        if only and name != only:
            continue
        with open(os.path.join(SCENARIOS, fname)) as f:
            sc = json.load(f)
        if sanitized and sc.get("ulimit_v_kb"):
            # ASan reserves terabytes of shadow memory and cannot start
            # under ulimit -v; the plain build runs this scenario.
            skipped += 1
            continue
        if sc.get("libs") == "stub" and not os.path.exists(
                os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")):
            skipped += 1
            continue
        before = len(failures)
        if not explain_only:
            check_scenario(gd, fakes, name, sc, update, failures, time_scale)
        if "explain" in sc:
            check_explain(gd, name, sc, update, failures)
        ran += 1
        print(("ok   " if len(failures) == before else "FAIL ") + name)
    for f in failures:
        print(f, file=sys.stderr)
    failed = set(f.split(':')[0].removeprefix("explain-") for f in failures)
    print(f"e2e: {ran - len(failed)} passed, {len(failed)} failed, {skipped} skipped")
    sys.exit(1 if failures or ran == 0 else 0)


if __name__ == "__main__":
    main()
