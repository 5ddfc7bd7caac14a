#!/usr/bin/env python3
"""A training job's stand-in for scripts/device-busy.sh: the job gpudoctor must
not disturb (DESIGN.md "A running job is sacred").

On GPU 0 (--device), through PyTorch: two N x N matrices (bf16 where the GPU
has it, else fp16), one warm-up product (cuBLAS takes its workspace then),
then about 90 % of the memory still free held in one torch.empty, then
products in a loop, each waited for (torch.cuda.synchronize), so that an
iteration counts only work the GPU finished. The memory is held, not
touched: what the job needs is that nobody else takes it.

Output, on stdout, one JSON line per --every seconds:
    {"t": 3.0, "wall": 1767000000.1, "iters": 1234, "error": null}
t is seconds since the loop began, wall the Unix time of the line (the
script matches lines to its phases by it), iters the products done so far.
The first line (iters 0) also says what was set up: pid, device, bus_id,
dtype, n, held_bytes, free_bytes, total_bytes. Any exception (a CUDA error,
out of memory) ends the loop with a last line whose "error" is its text.

Ends when the --stop file exists or after --max-s seconds. Exit 0 without an
error, 1 with one, 2 when PyTorch or the GPU is not there.

--stand-in runs the same loop and output with no PyTorch and no GPU (CPU
work): tests/device/test_busy.py runs the script with it.
--stand-in-error-after S makes the stand-in fail after S seconds, as a job
hit by a CUDA error would.
"""
import argparse
import json
import os
import sys
import time


def emit(**fields):
    line = {"t": None, "wall": round(time.time(), 3), "iters": 0, "error": None}
    line.update(fields)
    print(json.dumps(line), flush=True)


def torch_setup(args):
    """The job's state: a step function and what it set up."""
    import torch

    dev = torch.device(args.device)
    torch.cuda.set_device(dev)
    bf16 = torch.cuda.is_bf16_supported()
    dtype = torch.bfloat16 if bf16 else torch.float16
    n = args.n
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    c = torch.empty(n, n, device=dev, dtype=dtype)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize(dev)
    free, total = torch.cuda.mem_get_info(dev)
    hold = torch.empty(int(free * args.mem_frac), dtype=torch.uint8, device=dev)
    torch.cuda.synchronize(dev)
    free_after, _ = torch.cuda.mem_get_info(dev)
    props = torch.cuda.get_device_properties(dev)
    bus_id = None
    if hasattr(props, "pci_bus_id"):
        bus_id = "%04x:%02x:%02x.0" % (getattr(props, "pci_domain_id", 0), props.pci_bus_id,
                                       getattr(props, "pci_device_id", 0))

    def step():
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize(dev)

    info = {"device": props.name, "bus_id": bus_id, "dtype": str(dtype).replace("torch.", ""),
            "n": n, "held_bytes": hold.numel(), "free_bytes": free_after, "total_bytes": total,
            "torch": torch.__version__}
    return step, info, hold


def stand_in_setup(args):
    began = time.monotonic()

    def step():
        if args.stand_in_error_after is not None and \
                time.monotonic() - began >= args.stand_in_error_after:
            raise RuntimeError("CUDA error: an illegal memory access was encountered (stand-in)")
        sum(i * i for i in range(2000))

    return step, {"device": "stand-in (CPU work, no GPU)", "bus_id": None, "dtype": None,
                  "n": None, "held_bytes": 0, "free_bytes": None, "total_bytes": None}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stop", required=True, help="end when this file exists")
    ap.add_argument("--max-s", type=float, default=300.0, help="end after this many seconds")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between lines")
    ap.add_argument("--mem-frac", type=float, default=0.9,
                    help="share of the free memory to hold (after the matrices)")
    ap.add_argument("--n", type=int, default=8192, help="matrix size")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--stand-in", action="store_true", help="CPU work instead of PyTorch")
    ap.add_argument("--stand-in-error-after", type=float, default=None)
    args = ap.parse_args()

    try:
        step, info, _held = stand_in_setup(args) if args.stand_in else torch_setup(args)
    except Exception as e:  # no torch, no GPU, out of memory at setup
        emit(t=0.0, pid=os.getpid(), error="setup: %s: %s" % (type(e).__name__, e))
        return 2
    t0 = time.monotonic()
    emit(t=0.0, pid=os.getpid(), **info)
    iters = 0
    next_line = t0 + args.every
    error = None
    try:
        while True:
            step()
            iters += 1
            now = time.monotonic()
            if now >= next_line:
                emit(t=round(now - t0, 3), iters=iters)
                while next_line <= now:
                    next_line += args.every
                if os.path.exists(args.stop) or now - t0 >= args.max_s:
                    break
    except Exception as e:  # a CUDA error is a RuntimeError; report any
        error = "%s: %s" % (type(e).__name__, str(e).strip()[:500])
    emit(t=round(time.monotonic() - t0, 3), iters=iters, error=error, last=True)
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main())
