#!/usr/bin/env python3
"""libgpudoctor as a user gets it: `cmake --install` into a temporary prefix,
then, from the installed files only:

- tests/lib/abi_test.c built as C (and as C++, for the header's extern "C")
  with `cc $(pkg-config --cflags --libs gpudoctor)`, run against the fakes;
  the library finds the gpudoctor binary next to itself (<prefix>/bin);
- `nm -D --defined-only` of the library lists the C ABI and nothing else;
- the installed Python module imports and finds the installed library on
  its own (no $GPUDOCTOR_LIB).

usage: install_test.py BUILD_DIR CC [PYTHON_WITH_THE_MODULE]
Environment: GD_FAKES_DIR (build/fakes); GD_SOURCE_DIR, GD_CMAKE (optional).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("GD_SOURCE_DIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
EXPORTS = {"gpudoctor_abi_version", "gpudoctor_version", "gpudoctor_preflight",
           "gpudoctor_cuda_available", "gpudoctor_free"}

failures = []


def run(argv, env=None, **kw):
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode != 0:
        failures.append(f"{' '.join(argv)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def clean_env(**extra):
    """The environment without anything pointing into the build tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUDOCTOR_LIB", "GPUDOCTOR_EXE", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PATH"] = "/usr/bin:/bin"
    env.update(extra)
    return env


def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    build, cc = sys.argv[1], sys.argv[2]
    python = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else sys.executable
    fakes = os.environ["GD_FAKES_DIR"]
    with tempfile.TemporaryDirectory(prefix="gd-install-") as prefix:
        run([os.environ.get("GD_CMAKE", "cmake"), "--install", build, "--prefix", prefix])
        if failures:
            return report()
        libs = glob.glob(os.path.join(prefix, "**", "libgpudoctor.so.0"), recursive=True)
        pcs = glob.glob(os.path.join(prefix, "**", "pkgconfig", "gpudoctor.pc"), recursive=True)
        mods = glob.glob(os.path.join(prefix, "**", "gpudoctor", "__init__.py"), recursive=True)
        for what, found in (("libgpudoctor.so.0", libs), ("gpudoctor.pc", pcs),
                            ("gpudoctor/__init__.py", mods)):
            if len(found) != 1:
                failures.append(f"installed {what}: expected one, found {found}")
        for path in ("bin/gpudoctor", "include/gpudoctor/gpudoctor.h"):
            if not os.path.isfile(os.path.join(prefix, path)):
                failures.append(f"not installed: {path}")
        if failures:
            return report()
        libdir = os.path.dirname(libs[0])
        if not os.path.islink(os.path.join(libdir, "libgpudoctor.so")):
            failures.append("no development symlink libgpudoctor.so")

        # Header + .pc + library: a C program built from what pkg-config says.
        env = clean_env(PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
        flags = run(["pkg-config", "--cflags", "--libs", "gpudoctor"], env=env).stdout.split()
        if any(prefix not in f for f in flags if f.startswith(("-I", "-L"))):
            failures.append(f"pkg-config flags do not point into the prefix: {flags}")
        exe = os.path.join(prefix, "abi_test")
        test_c = os.path.join(SRC, "tests", "lib", "abi_test.c")
        run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", test_c, "-o", exe] + flags,
            env=env)
        cxx = shutil.which("c++") or shutil.which("g++")
        if cxx:
            run([cxx, "-x", "c++", "-std=c++17", "-Wall", "-Werror", test_c, "-o", exe + "-cxx"]
                + flags, env=env)
        root = os.path.join(SRC, "tests", "roots", "ws-4x4090")
        cuda_opts = {"cuda_lib": os.path.join(fakes, "libcuda.so.1"),
                     "cudart_lib": os.path.join(fakes, "libcudart.so.13")}
        opts = dict(cuda_opts, root=root, nvml_lib=os.path.join(fakes, "libnvidia-ml.so.1"))
        scenario = os.path.join(SRC, "tests", "fakes", "scenarios", "ws-4x4090.json")
        run_env = clean_env(LD_LIBRARY_PATH=libdir, GPUDOCTOR_FAKE_SCENARIO=scenario)
        for binary in (exe, exe + "-cxx"):
            if os.path.exists(binary):
                r = run([binary, json.dumps(opts), json.dumps(cuda_opts)], env=run_env)
                if "abi_test: ok" not in r.stdout:
                    failures.append(f"{binary}: {r.stdout}{r.stderr}")

        # Nothing but the C ABI leaves the library.
        symbols = exported_symbols(libs[0])
        if symbols != EXPORTS:
            failures.append(f"exported symbols: extra {sorted(symbols - EXPORTS)[:20]}, "
                            f"missing {sorted(EXPORTS - symbols)}")

        # The installed Python module finds the installed library by itself.
        code = ("import gpudoctor, json, sys; "
                "print(json.dumps([gpudoctor.library_path(), "
                "gpudoctor.cuda_available(**json.loads(sys.argv[1]))]))")
        r = run([python, "-c", code, json.dumps(cuda_opts)],
                env=clean_env(PYTHONPATH=os.path.dirname(os.path.dirname(mods[0])),
                              GPUDOCTOR_FAKE_SCENARIO=scenario, PYTHONDONTWRITEBYTECODE="1"))
        if r.returncode == 0:
            lib_path, available = json.loads(r.stdout.splitlines()[-1])
            if not os.path.realpath(lib_path).startswith(os.path.realpath(prefix)):
                failures.append(f"installed module loaded {lib_path}, not the installed library")
            if available is not True:
                failures.append("installed module: cuda_available() is not True on a healthy fake")
    return report()


def report():
    for f in failures:
        print("FAIL", f)
    if not failures:
        print("lib_install: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
