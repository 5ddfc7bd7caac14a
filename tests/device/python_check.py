#!/usr/bin/env python3
"""The gpudoctor Python module under a GPU machine's own python3, against
PyTorch on the same machine.

  1. gpudoctor.cuda_available() / cuda_status() (the module from python/,
     the library from $GPUDOCTOR_LIB, the binary from $GPUDOCTOR_EXE);
  2. proof it did not initialize CUDA in this process: no libcuda,
     libcudart or libnvidia-ml in /proc/self/maps and no /dev/nvidia* file
     descriptor open, before and after the call;
  3. a fork()ed child then initializes CUDA through PyTorch (what a data
     loader worker does): it must work, since the parent never touched CUDA;
  4. torch.cuda.is_available() and torch.cuda.device_count() in this process
     against cuda_status()'s answer; afterwards libcuda must be mapped (the
     positive control: the check in 2 can see a CUDA library when there is one).

Without PyTorch the torch rows are skips with the reason. Writes rows in
tests/device/compare.py's form ({"field", "status", "ours", "smi", "note"};
"smi" holds PyTorch's side) to --out as JSON and prints them. Exit 0, or 1
when a row is a DIFF.

Options --cuda-lib/--cudart-lib pass through to cuda_available() (the unit
test runs this against the fake libraries); --no-fork skips step 3.
"""
import argparse
import json
import os
import sys
import time

DRIVER_LIBS = ("libcuda.so", "libcudart.so", "libnvidia-ml.so")


def mapped_driver_libs():
    """Paths of CUDA/NVML libraries mapped into this process."""
    hits = set()
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6:
                path = parts[5].strip()
                if any(lib in os.path.basename(path) for lib in DRIVER_LIBS):
                    hits.add(path)
    return sorted(hits)


def nvidia_fds():
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.startswith("/dev/nvidia"):
            out.append("%s -> %s" % (fd, target))
    return out


def row(rows, field, status, ours, theirs, note=""):
    rows.append({"field": field, "status": status, "ours": str(ours), "smi": str(theirs),
                 "note": note, "source": "python"})


def fork_child_uses_cuda(timeout_s):
    """fork(); the child imports torch and computes on the GPU. Returns
    (ok, detail). The parent waits at most timeout_s."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        msg = ""
        code = 1
        try:
            import torch  # noqa: PLC0415 (imported after fork on purpose)
            torch.cuda.init()
            x = torch.ones(4, device="cuda")
            msg = "sum on cuda = %s" % float(x.sum())
            code = 0
        except BaseException as e:  # report anything, never raise in a forked child
            msg = "%s: %s" % (type(e).__name__, e)
        os.write(w, msg.encode()[:4000])
        os.close(w)
        os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(r)
            return False, "child still running after %ss (killed)" % timeout_s
        time.sleep(0.05)
    detail = os.read(r, 4096).decode(errors="replace")
    os.close(r)
    ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return ok, detail or "exit status %s" % status


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--cuda-lib")
    ap.add_argument("--cudart-lib")
    ap.add_argument("--deadline", type=float, default=20.0)
    ap.add_argument("--no-fork", action="store_true")
    ap.add_argument("--fork-timeout", type=float, default=120.0)
    args = ap.parse_args(argv)

    rows = []
    info = {"python": sys.version.split()[0], "executable": sys.executable,
            "env": {k: os.environ.get(k, "") for k in
                    ("GPUDOCTOR_LIB", "GPUDOCTOR_EXE", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
                     "PYTORCH_NVML_BASED_CUDA_CHECK", "LD_LIBRARY_PATH")}}
    before = mapped_driver_libs()
    row(rows, "driver libs mapped before import", "ok" if not before else "DIFF",
        ", ".join(before) or "none", "none expected")
    try:
        import gpudoctor  # noqa: PLC0415
    except Exception as e:  # the module or its library did not load
        row(rows, "import gpudoctor", "DIFF", "%s: %s" % (type(e).__name__, e), "importable")
        return finish(args, rows, info)
    info["gpudoctor_version"] = gpudoctor.version()
    info["gpudoctor_library"] = gpudoctor.library_path()
    options = {"deadline_s": args.deadline}
    if args.cuda_lib:
        options["cuda_lib"] = args.cuda_lib
    if args.cudart_lib:
        options["cudart_lib"] = args.cudart_lib
    t0 = time.monotonic()
    try:
        available = gpudoctor.cuda_available(**options)
        status = gpudoctor.cuda_status(**options)
    except Exception as e:
        row(rows, "cuda_available()", "DIFF", "%s: %s" % (type(e).__name__, e), "an answer")
        return finish(args, rows, info)
    info["cuda_available_s"] = round(time.monotonic() - t0, 3)
    info["cuda_status"] = status
    row(rows, "cuda_available()", "ok", available, "-",
        "%.2f s for both calls; %s" % (info["cuda_available_s"], status.get("error") or "no error"))
    after = mapped_driver_libs()
    row(rows, "no CUDA/NVML library mapped after cuda_available()",
        "ok" if not after else "DIFF", ", ".join(after) or "none", "none expected",
        "/proc/self/maps")
    fds = nvidia_fds()
    row(rows, "no /dev/nvidia* descriptor open after cuda_available()",
        "ok" if not fds else "DIFF", ", ".join(fds) or "none", "none expected", "/proc/self/fd")

    try:
        import importlib.util  # noqa: PLC0415
        have_torch = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        have_torch = False
    if not have_torch:
        note = "PyTorch is not installed for %s: torch comparison not run" % sys.executable
        for f in ("fork child initializes CUDA", "torch.cuda.is_available()",
                  "torch.cuda.device_count()", "positive control: libcuda mapped after torch"):
            row(rows, f, "skip", "-", "-", note)
        return finish(args, rows, info)

    if args.no_fork:
        row(rows, "fork child initializes CUDA", "skip", "-", "-", "--no-fork")
    elif not available:
        row(rows, "fork child initializes CUDA", "skip", "-", "-", "CUDA not available here")
    else:
        ok, detail = fork_child_uses_cuda(args.fork_timeout)
        row(rows, "fork child initializes CUDA", "ok" if ok else "DIFF", "parent untouched",
            detail, "fork() after cuda_available(), torch in the child")

    try:
        import torch  # noqa: PLC0415
        info["torch"] = getattr(torch, "__version__", "?")
        t_avail = bool(torch.cuda.is_available())
        t_count = int(torch.cuda.device_count())
    except Exception as e:
        row(rows, "torch.cuda.is_available()", "DIFF", available, "%s: %s" % (type(e).__name__, e),
            "importing or asking PyTorch failed")
        return finish(args, rows, info)
    row(rows, "torch.cuda.is_available()", "ok" if t_avail == bool(available) else "DIFF",
        available, t_avail, "gpudoctor.cuda_available() vs PyTorch")
    ours_count = status.get("device_count")
    if not available and not t_avail:
        row(rows, "torch.cuda.device_count()", "ok", ours_count, t_count, "both: no CUDA")
    else:
        row(rows, "torch.cuda.device_count()", "ok" if ours_count == t_count else "DIFF",
            ours_count, t_count, "cuda_status()['device_count'] vs PyTorch")
    mapped = mapped_driver_libs()
    if t_avail:
        row(rows, "positive control: libcuda mapped after torch",
            "ok" if any("libcuda.so" in os.path.basename(m) for m in mapped) else "DIFF",
            ", ".join(mapped) or "none", "libcuda expected",
            "the maps check can see a CUDA library once PyTorch loaded one")
    else:
        row(rows, "positive control: libcuda mapped after torch", "skip",
            ", ".join(mapped) or "none", "-", "PyTorch has no CUDA here")
    return finish(args, rows, info)


def finish(args, rows, info):
    for r in rows:
        print("%-4s  %-55s ours=%s  torch/expected=%s  %s" % (
            r["status"], r["field"], r["ours"], r["smi"], r["note"]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"schema": "gpudoctor.device-python/v1", "info": info, "rows": rows}, f,
                      indent=1, default=str)
            f.write("\n")
    return 1 if any(r["status"] == "DIFF" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
