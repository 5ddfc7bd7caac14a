"""The checks tests/packages/wheel_test.sh runs with the virtual environment's
python, where the `gpudoctor` wheel is installed: the module as a user of the
wheel gets it, against the fake NVML/CUDA (build/fakes) and the recorded
machine trees (tests/roots), as tests/python stages them.

    wheel_check.py found SOURCE_DIR FAKES_DIR LIBRARY VERSION
        the module comes from the venv, finds LIBRARY on its own, and
        preflight() and cuda_status() answer right;
    wheel_check.py missing VENV
        neither binary nor library to be found: one clear error, naming
        what was looked for;
    wheel_check.py no-binary
        the library (GPUDOCTOR_LIB) but no gpudoctor binary: the library's
        error, naming GPUDOCTOR_EXE.

Exits non-zero with the reason on any wrong answer.
"""
import importlib.metadata
import os
import resource
import sys

import gpudoctor


def check(ok, what):
    if not ok:
        sys.exit(f"wheel_check: FAIL: {what}")


def found(src, fakes, library, version):
    venv = os.path.realpath(sys.prefix)
    check(sys.prefix != sys.base_prefix, f"not in a virtual environment: {sys.prefix}")
    check(os.path.realpath(gpudoctor.__file__).startswith(venv + os.sep),
          f"gpudoctor imported from {gpudoctor.__file__}, not from the venv {venv}")
    meta = importlib.metadata.version("gpudoctor")
    check(meta == version, f"the wheel's version {meta} is not CMakeLists.txt's {version}")
    check(gpudoctor.version() == version,
          f"the library's version {gpudoctor.version()} is not the wheel's {version}")
    check(os.path.realpath(gpudoctor.library_path()) == os.path.realpath(library),
          f"loaded {gpudoctor.library_path()}, not {library}")

    def scenario(name):
        os.environ["GPUDOCTOR_FAKE_SCENARIO"] = os.path.join(
            src, "tests", "fakes", "scenarios", name + ".json")

    cuda = {"cuda_lib": os.path.join(fakes, "libcuda.so.1"),
            "cudart_lib": os.path.join(fakes, "libcudart.so.13")}
    libs = dict(cuda, nvml_lib=os.path.join(fakes, "libnvidia-ml.so.1"))
    roots = os.path.join(src, "tests", "roots")

    scenario("ws-4x4090")
    report = gpudoctor.preflight(root=os.path.join(roots, "ws-4x4090"), **libs)
    check(report.get("schema") == "gpudoctor.report/v1", f"schema {report.get('schema')}")
    check(report["verdict"] == "ok", f"healthy machine: verdict {report['verdict']}")
    check(len(report["gpus"]) == 4, f"healthy machine: {len(report['gpus'])} GPUs, not 4")
    status = gpudoctor.cuda_status(**cuda)
    check(status["available"] is True and status["device_count"] == 4 and status["error"] == "",
          f"healthy machine: cuda_status {status}")

    # ulimit -v 32 GiB: cuInit fails out of memory; the root cause ranks first.
    scenario("ws-4x4090-ulimit")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (32 << 30, hard))
    try:
        status = gpudoctor.cuda_status(**cuda)
        try:
            gpudoctor.preflight(root=os.path.join(roots, "ws-4x4090-ulimit"), **libs)
            check(False, "preflight() under ulimit -v 32 GiB raised nothing")
        except gpudoctor.Unhealthy as e:
            check(e.ids[:1] == ["memory.address-space-limit"] and "cuda.init-failed" in e.ids,
                  f"preflight() under ulimit -v 32 GiB: causes {e.ids}")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    check(status["available"] is False and "CUDA_ERROR_OUT_OF_MEMORY" in status["init_error"],
          f"cuda_status() under ulimit -v 32 GiB: {status}")


def raises_gpudoctor_error(call):
    try:
        call()
    except gpudoctor.GpudoctorError as e:
        return str(e)
    check(False, f"{call.__name__}() raised no GpudoctorError")
    return ""


def missing(venv):
    package = os.path.dirname(os.path.abspath(gpudoctor.__file__))
    check(os.path.realpath(package).startswith(os.path.realpath(venv) + os.sep),
          f"gpudoctor imported from {package}, not from the venv {venv}")
    for call in (gpudoctor.preflight, gpudoctor.cuda_status):
        message = raises_gpudoctor_error(call)
        check("\n" not in message, f"{call.__name__}(): the error is not one line: {message!r}")
        for part in ("cannot load libgpudoctor", "libgpudoctor.so.0", package,
                     "no gpudoctor binary on PATH", "system loader", "GPUDOCTOR_LIB"):
            check(part in message, f"{call.__name__}(): {part!r} not in the error: {message}")


def no_binary():
    for call in (gpudoctor.preflight, gpudoctor.cuda_status):
        message = raises_gpudoctor_error(call)
        for part in ("no gpudoctor binary found", "GPUDOCTOR_EXE"):
            check(part in message, f"{call.__name__}(): {part!r} not in the error: {message}")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"found": found, "missing": missing, "no-binary": no_binary}[mode](*args)
    print(f"wheel_check: {mode}: ok")
