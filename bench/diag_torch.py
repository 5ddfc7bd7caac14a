#!/usr/bin/env python3
"""The baseline of bench/diag_gpu.sh: the machine's own PyTorch doing the same
GEMMs and copies that `gpudoctor diag --level 2` measures, with the same
metric names as gpudoctor's figures, so bench/diag_compare.py can put them
side by side.

  gemm.bf16, gemm.fp16   torch.matmul on m=n=k=8192 random inputs (FP32
                         accumulate: PyTorch's default for half dtypes)
  gemm.tf32              fp32 inputs, torch.backends.cuda.matmul.allow_tf32=True
                         (fp32_precision="tf32" where PyTorch has it, 2.9+)
  gemm.fp32              fp32 inputs, allow_tf32=False (fp32_precision="ieee")
      FLOP/s = 2*m*n*k * products / the CUDA-event time of the timed batches,
      after a warm-up; batches are timed until --gemm-seconds have passed.
  pcie.h2d, pcie.d2h     256 MiB pinned host tensor <-> device tensor,
                         dst.copy_(src, non_blocking=True), bytes/s
  memory.bandwidth       1 GiB device tensor y.copy_(x), counting read and
                         write (2 x bytes / time), as gpudoctor counts d2d

usage: bench/diag_torch.py [--out FILE] [--gemm-seconds S] [--copy-seconds S]
                           [--size N] [--dtypes bf16,fp16,tf32,fp32]
                           [--h2d-bytes B] [--d2d-bytes B] [--device N]

Output (stdout, and --out FILE):
  {"schema": "gpudoctor.bench-torch/v1", "available": true,
   "torch": "2.11.0+cu130", "cuda": "13.0", "device": {"name": "NVIDIA H200",
   "bus_id": "0000:17:00.0", ...}, "settings": {...},
   "metrics": [{"metric": "gemm.bf16", "value": 7.8e14, "unit": "FLOP/s",
                "iterations": 1230, "seconds": 10.1, ...}, ...]}
Without PyTorch (or without a GPU it can use): {"available": false,
"error": "no PyTorch: ..."} and exit 2. Usage errors exit 64.

Everything that touches torch is in measure(); the rest is pure and is
tested without a GPU (tests/device/test_diag_bench.py).
"""
import argparse
import json
import sys
import time

SCHEMA = "gpudoctor.bench-torch/v1"
DTYPES = ("bf16", "fp16", "tf32", "fp32")
MIB = 1 << 20


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    p = _Parser(prog="diag_torch.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="also write the JSON here")
    p.add_argument("--gemm-seconds", type=float, default=10.0,
                   help="timed length of each GEMM dtype (default 10)")
    p.add_argument("--copy-seconds", type=float, default=5.0,
                   help="timed length of each copy direction (default 5)")
    p.add_argument("--warmup-seconds", type=float, default=1.0,
                   help="untimed work before each measurement (default 1)")
    p.add_argument("--size", type=int, default=8192, help="m = n = k (default 8192)")
    p.add_argument("--dtypes", default=",".join(DTYPES),
                   help="comma-separated subset of bf16,fp16,tf32,fp32")
    p.add_argument("--h2d-bytes", type=int, default=256 * MIB,
                   help="host<->device copy size (default 256 MiB)")
    p.add_argument("--d2d-bytes", type=int, default=1024 * MIB,
                   help="device copy size (default 1 GiB)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    dtypes = [d.strip() for d in a.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        raise UsageError("--dtypes: unknown %s (known: %s)" % (",".join(bad) or "(none)",
                                                            ",".join(DTYPES)))
    a.dtypes = dtypes
    for name in ("gemm_seconds", "copy_seconds", "size", "h2d_bytes", "d2d_bytes"):
        if getattr(a, name) <= 0:
            raise UsageError("--%s must be positive" % name.replace("_", "-"))
    if a.warmup_seconds < 0:
        raise UsageError("--warmup-seconds must not be negative")
    return a


def gemm_flops(m, n, k):
    """Floating-point operations of one m x k by k x n product."""
    return 2 * m * n * k


def format_result(raw, args):
    """The output document from measure()'s raw timings. Pure.

    raw = {"torch": ..., "cuda": ..., "device": {...}, "settings": {...},
           "gemm": {dtype: {"iterations": int, "seconds": float}},
           "copy": {"h2d"|"d2h"|"d2d": {"bytes": int, "copies": int, "seconds": float}}}
    Seconds are the summed CUDA-event times of the timed batches.
    """
    metrics = []
    flops = gemm_flops(args.size, args.size, args.size)
    for dtype in args.dtypes:
        g = raw.get("gemm", {}).get(dtype)
        if not g:
            continue
        row = {"metric": "gemm." + dtype, "unit": "FLOP/s", "m": args.size, "n": args.size,
               "k": args.size, "iterations": g["iterations"], "seconds": g["seconds"]}
        row["value"] = flops * g["iterations"] / g["seconds"] if g["seconds"] > 0 else None
        for extra in ("error", "switch"):
            if extra in g:
                row[extra] = g[extra]
        metrics.append(row)
    names = {"h2d": "pcie.h2d", "d2h": "pcie.d2h", "d2d": "memory.bandwidth"}
    for direction in ("h2d", "d2h", "d2d"):
        c = raw.get("copy", {}).get(direction)
        if not c:
            continue
        # A device copy reads and writes every byte: count both, as gpudoctor
        # (and NVIDIA's bandwidthTest) do.
        per_copy = c["bytes"] * (2 if direction == "d2d" else 1)
        row = {"metric": names[direction], "unit": "bytes/s", "direction": direction,
               "bytes": c["bytes"], "copies": c["copies"], "seconds": c["seconds"],
               "counted_bytes_per_copy": per_copy}
        row["value"] = per_copy * c["copies"] / c["seconds"] if c["seconds"] > 0 else None
        metrics.append(row)
    return {"schema": SCHEMA, "available": True, "torch": raw.get("torch"),
            "cuda": raw.get("cuda"), "device": raw.get("device", {}),
            "settings": raw.get("settings", {}), "metrics": metrics}


def unavailable(reason):
    return {"schema": SCHEMA, "available": False, "error": reason, "metrics": []}


def bus_id(props):
    """'0000:17:00.0' from torch's device properties, when it has the PCI fields."""
    try:
        return "%04x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
    except AttributeError:
        return ""


def _setting(torch, name):
    """A torch.backends.cuda.matmul switch as JSON can hold it (None: absent)."""
    v = getattr(torch.backends.cuda.matmul, name, None)
    return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)


def set_tf32(torch, on):
    """Lets fp32 matmuls use TF32 tensor cores or not. PyTorch 2.9+ has
    torch.backends.cuda.matmul.fp32_precision ("tf32" / "ieee") and warns
    that allow_tf32 will go; older ones have allow_tf32 alone. Returns the
    setting as it reads back afterwards, for the output."""
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):
        m.fp32_precision = "tf32" if on else "ieee"
        return "fp32_precision=%s" % m.fp32_precision
    m.allow_tf32 = on
    return "allow_tf32=%s" % m.allow_tf32


def measure(args, torch):
    """Runs the GEMMs and copies on the GPU; returns format_result()'s raw dict."""
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    props = torch.cuda.get_device_properties(dev)
    size = args.size
    raw = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": {"index": args.device, "name": props.name, "bus_id": bus_id(props),
                      "multiprocessors": props.multi_processor_count,
                      "memory_bytes": props.total_memory},
           "settings": {"size": size, "gemm_seconds": args.gemm_seconds,
                        "copy_seconds": args.copy_seconds,
                        "warmup_seconds": args.warmup_seconds, "seed": args.seed,
                        "inputs": "torch.randn",
                        "fp16_reduced_precision_reduction": _setting(
                            torch, "allow_fp16_reduced_precision_reduction"),
                        "bf16_reduced_precision_reduction": _setting(
                            torch, "allow_bf16_reduced_precision_reduction")},
           "gemm": {}, "copy": {}}

    def timed(fn, seconds):
        """(calls, event seconds): fn in batches, each batch between two CUDA
        events, until `seconds` of wall time; after `warmup_seconds` untimed."""
        batch = 1
        t_end = time.perf_counter() + args.warmup_seconds
        fn()
        torch.cuda.synchronize()
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            torch.cuda.synchronize()
            # batches of about 0.2 s, so the event pairs cost nothing
            if time.perf_counter() - t0 < 0.1:
                batch *= 2
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        calls, ms = 0, 0.0
        t_end = time.perf_counter() + seconds
        while True:
            start.record()
            for _ in range(batch):
                fn()
            stop.record()
            stop.synchronize()
            calls += batch
            ms += start.elapsed_time(stop)
            if time.perf_counter() >= t_end:
                break
        return calls, ms / 1000.0

    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    kinds = {"bf16": (torch.bfloat16, None), "fp16": (torch.float16, None),
             "tf32": (torch.float32, True), "fp32": (torch.float32, False)}
    matmul = torch.backends.cuda.matmul
    saved = ("fp32_precision", matmul.fp32_precision) if hasattr(matmul, "fp32_precision") \
        else ("allow_tf32", matmul.allow_tf32)
    try:
        for dtype in args.dtypes:
            tensor_dtype, tf32 = kinds[dtype]
            switch = set_tf32(torch, tf32) if tf32 is not None else ""
            a = torch.randn(size, size, device=dev, generator=gen).to(tensor_dtype)
            b = torch.randn(size, size, device=dev, generator=gen).to(tensor_dtype)
            c = torch.empty(size, size, device=dev, dtype=tensor_dtype)
            try:
                calls, secs = timed(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c),
                                   args.gemm_seconds)
                raw["gemm"][dtype] = {"iterations": calls, "seconds": secs}
            except RuntimeError as e:  # a dtype this GPU lacks: record, go on
                raw["gemm"][dtype] = {"iterations": 0, "seconds": 0.0,
                                      "error": str(e).splitlines()[0]}
            if switch:
                raw["gemm"][dtype]["switch"] = switch
            del a, b, c
            torch.cuda.empty_cache()
    finally:
        setattr(matmul, saved[0], saved[1])

    n = args.h2d_bytes
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host.fill_(0x5A)
    dbuf = torch.empty(n, dtype=torch.uint8, device=dev)
    calls, secs = timed(lambda d=dbuf, h=host: d.copy_(h, non_blocking=True), args.copy_seconds)
    raw["copy"]["h2d"] = {"bytes": n, "copies": calls, "seconds": secs}
    calls, secs = timed(lambda d=dbuf, h=host: h.copy_(d, non_blocking=True), args.copy_seconds)
    raw["copy"]["d2h"] = {"bytes": n, "copies": calls, "seconds": secs}
    del host, dbuf
    n = args.d2d_bytes
    x = torch.empty(n, dtype=torch.uint8, device=dev).fill_(0x5A)
    y = torch.empty_like(x)
    calls, secs = timed(lambda x=x, y=y: y.copy_(x), args.copy_seconds)
    raw["copy"]["d2d"] = {"bytes": n, "copies": calls, "seconds": secs}
    del x, y
    torch.cuda.empty_cache()
    return raw


def write(doc, out):
    text = json.dumps(doc, indent=1)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


def main(argv):
    try:
        args = parse_args(argv)
    except UsageError as e:
        print("diag_torch.py: %s" % e, file=sys.stderr)
        return 64
    try:
        import torch  # the machine's own
    except Exception as e:  # ImportError, or a broken install raising anything
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        write(unavailable("no PyTorch: %s" % why), args.out)
        return 2
    if not torch.cuda.is_available():
        write(unavailable("PyTorch %s sees no CUDA GPU" % torch.__version__), args.out)
        return 2
    write(format_result(measure(args, torch), args), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
