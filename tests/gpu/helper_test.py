#!/usr/bin/env python3
"""Tests of the compiled CUDA helper (gpudoctor-diag, gpu/README.md) on a
machine without a GPU: what it must answer when there is no driver, when
only the toolkit's stub libcuda is there (the runtime's own error codes: 35
insufficient driver, 34 stub library), and on usage errors.

- no driver: the hello line (schema, versions of the runtime, cuBLAS and
  NCCL it links), an error line with test "init" naming the CUDA error, the
  done line, exit 2 (no GPU could be opened).
- stub driver: the same with cudaErrorStubLibrary.
- usage: exit 64 with one line "gpudoctor-diag: ..." on stderr and nothing
  on stdout; --help exits 0; every valid form gets past parsing.

usage: helper_test.py GPUDOCTOR_DIAG [-k NAME]
Exit 77 when every selected test was skipped (ctest SKIP_RETURN_CODE).
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402  (tests/harness.py)
from harness import Skip  # noqa: E402

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
EXIT_USAGE = 64
EXIT_NO_GPU = 2
SCHEMA = "gpudoctor.diag-helper/v1"

HELPER = None



def expect(cond, what, proc=None):
    if not cond:
        extra = ""
        if proc is not None:
            extra = f"\n  exit {proc.returncode}\n  stdout: {proc.stdout!r}\n  stderr: {proc.stderr!r}"
        raise AssertionError(what + extra)


def helper(args, env=None, timeout=60):
    base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    base.update(env or {})
    return subprocess.run([HELPER] + args, env=base, capture_output=True, text=True,
                          timeout=timeout)


def lines(proc):
    """stdout as JSON objects, one a line; each must have a "type"."""
    out = []
    for raw in proc.stdout.splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            raise AssertionError(f"not a JSON line: {raw!r}")
        expect(isinstance(obj, dict) and isinstance(obj.get("type"), str),
               f"a line without a type: {raw!r}")
        out.append(obj)
    return out


def a_driver_is_installed():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def stub_dir(tmp):
    """A directory holding the toolkit's stub libcuda as libcuda.so.1."""
    for cand in (os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so"),
                 "/usr/local/cuda/lib64/stubs/libcuda.so"):
        if os.path.exists(cand):
            os.symlink(cand, os.path.join(tmp, "libcuda.so.1"))
            return tmp
    raise Skip(f"no CUDA toolkit stub libcuda under {CUDA_HOME}")


def check_init_failure(proc, error_name):
    objs = lines(proc)
    expect(proc.returncode == EXIT_NO_GPU, "no GPU could be opened: exit 2", proc)
    expect(len(objs) == 3, "hello, error, done and nothing else", proc)
    hello, err, done = objs
    expect(hello["type"] == "hello" and hello.get("schema") == SCHEMA, "hello first", proc)
    for key in ("cuda_runtime", "cublas", "nccl"):
        expect(isinstance(hello.get(key), int) and hello[key] > 0,
               f"hello.{key} is the linked library's version", proc)
    expect(hello["cuda_runtime"] >= 11000, "runtime version as 1000*major+10*minor", proc)
    expect(hello["nccl"] >= 20000, "NCCL version as ncclGetVersion gives it (22809)", proc)
    expect(hello["cublas"] >= 110000, "cuBLAS major*10000+minor*100+patch", proc)
    expect(isinstance(hello.get("cuda_driver"), int), "hello.cuda_driver (0 without driver)", proc)
    expect(err["type"] == "error" and err.get("test") == "init", "an init error line", proc)
    expect(err.get("message", "").startswith("cudaGetDeviceCount: ") and
           f"({error_name})" in err["message"],
           f"the init error names the call and {error_name}", proc)
    expect(done == {"type": "done"}, "done last", proc)


# --- no driver, stub driver ------------------------------------------------

def test_no_driver():
    if a_driver_is_installed():
        raise Skip("a libcuda.so.1 is installed here: the no-driver case cannot be made")
    p = helper(["--level", "1", "--gpu", "0000:17:00.0"])
    check_init_failure(p, "cudaErrorInsufficientDriver")
    expect(p.stderr == "", "nothing on stderr", p)


def test_stub_driver():
    with tempfile.TemporaryDirectory() as tmp:
        d = stub_dir(tmp)
        # All levels and options reach the same init step.
        for args in (["--level", "1", "--gpu", "0000:17:00.0"],
                     ["--level", "3", "--gpu", "17:00.0@0", "--gpu", "0000:65:00.0@0-1",
                      "--duration", "1", "--seed", "7", "--plant-fault", "memory"]):
            p = helper(args, env={"LD_LIBRARY_PATH": d})
            check_init_failure(p, "cudaErrorStubLibrary")


# --- usage -----------------------------------------------------------------

USAGE_ERRORS = [
    ([], "--level is required"),
    (["--level", "1"], "at least one --gpu"),
    (["--level", "4", "--gpu", "0000:17:00.0"], "--level"),
    (["--level", "x", "--gpu", "0000:17:00.0"], "--level"),
    (["--level", "1", "--gpu", "nonsense"], "not a PCI bus id"),
    (["--level", "1", "--gpu", "0000:17:00"], "not a PCI bus id"),
    (["--level", "1", "--gpu", "0000:17:20.0"], "not a PCI bus id"),  # device < 0x20
    (["--level", "1", "--gpu", "0000:17:00.8"], "not a PCI bus id"),  # function < 8
    (["--level", "1", "--gpu", "0000:117:00.0"], "not a PCI bus id"),
    (["--level", "1", "--gpu", "0000:17:00.0@"], "CPU list"),
    (["--level", "1", "--gpu", "0000:17:00.0@0-"], "CPU list"),
    (["--level", "1", "--gpu", "0000:17:00.0@a"], "CPU list"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--gpu", "17:00.0"], "given twice"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--duration", "0"], "--duration"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--duration", "-3"], "--duration"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--duration", "nan"], "--duration"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--duration", "5s"], "--duration"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--seed", "-1"], "--seed"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--seed", "99999999999999999999999"], "--seed"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--plant-fault", "disk"], "--plant-fault"),
    (["--level", "1", "--gpu", "0000:17:00.0", "--frobnicate"], "unknown option"),
    (["--level", "1", "--gpu", "0000:17:00.0", "stray"], "unexpected argument"),
    (["--level", "1", "--gpu"], "needs a value"),
]


def test_usage_errors():
    for args, says in USAGE_ERRORS:
        p = helper(args)
        expect(p.returncode == EXIT_USAGE, f"{args}: a usage error exits 64", p)
        expect(p.stdout == "", f"{args}: nothing on stdout", p)
        expect(p.stderr.startswith("gpudoctor-diag: ") and p.stderr.endswith("\n") and
               p.stderr.count("\n") == 1, f"{args}: one line on stderr", p)
        expect(says in p.stderr, f"{args}: the message says {says!r}", p)


def test_help():
    for flag in ("--help", "-h"):
        p = helper([flag])
        expect(p.returncode == 0, f"{flag} exits 0", p)
        expect(p.stdout.startswith("usage: gpudoctor-diag --level 1|2|3 --gpu BUS[@CPUS]"),
               f"{flag} prints the usage", p)
        expect(p.stderr == "", f"{flag}: nothing on stderr", p)


def test_valid_forms_get_past_parsing():
    # Without a usable driver each valid command line ends at init (exit 2),
    # never at the usage check (64).
    with tempfile.TemporaryDirectory() as tmp:
        d = stub_dir(tmp)
        for args in (["--level=2", "--gpu=0000:17:00.0"],
                     ["--gpu", "0000:B3:1F.7@0-15,32-47", "--level", "3"],
                     ["--level", "2", "--gpu", "10000:01:00.0", "--duration", "0.5"],
                     ["--level", "1", "--gpu", "17:00.0", "--seed", "18446744073709551615",
                      "--plant-fault", "gemm"]):
            p = helper(args, env={"LD_LIBRARY_PATH": d})
            expect(p.returncode == EXIT_NO_GPU and p.stderr == "",
                   f"{args}: valid, so it reaches init", p)


def main():
    global HELPER
    args = sys.argv[1:]
    only = harness.take_k(args)
    if len(args) != 1:
        print(__doc__)
        return 64
    HELPER = os.path.abspath(args[0])
    return harness.run_tests(globals(), only, none_ran=77)


if __name__ == "__main__":
    sys.exit(main())
