"""Invariant (a): when CUDA started with the user's environment, no cause of a
failed CUDA start FAILs (shared/DESIGN.md "Truth on real machines"). It may
warn when the job could still differ, and say how.

"Started": the probe's run labelled "user" has cuInit == 0, at least one
device, a context on every device (ctx_rc == 0), no child error, and, where
a CUDA runtime was loaded, cudaGetDeviceCount == 0 (a runtime newer than the
driver fails there while cuInit succeeds). A device the probe opened no
context on (ctx_skipped: a job's GPU) leaves the start unproven, so such a
run does not count as started here.
"""

# Causes of a failed CUDA start as a whole: each names why cuInit, the
# runtime or the first context cannot work. src/catalog/findings.cc has the
# full catalog; the ids left out are health (thermal, ecc, pcie, xid...),
# advice, diag results, NVML's own start (nvml.*), cuda.fork-after-init
# (a later use, not the start) and the per-GPU causes below.
CUDA_START_CAUSES = [
    "driver.not-loaded",
    "driver.library-mismatch",
    "driver.too-old-for-cuda",
    "driver.after-suspend",
    "cuda.stub-library",
    "cuda.compat-unsupported",
    "cuda.compat-mismatch",
    "cuda.init-failed",
    "cuda.init-hang",
    "uvm.missing",
    "uvm.hmm",
    "devnodes.missing",
    "devnodes.permission",
    "fabric-manager.not-running",
    "visible-devices.invalid",
    "visible-devices.hides-all",
    "memory.address-space-limit",
    "memory.held-by-other-process",
    "compute-mode.exclusive",
    "mps.unreachable",
    "container.no-gpus",
    "container.capabilities",
    "container.driver-mismatch",
    "container.runtime-not-configured",
    "container.unknown-device",
    "cgroup.device-denied",
    "mig.no-instances",
]

# Causes that take single GPUs away from CUDA (one GPU unbound, held by
# nouveau, unsupported, MIG without instances, one device node missing or
# denied): CUDA may start on the others, so these may still fail when CUDA
# saw fewer GPUs than the PCI bus has.
PER_GPU_CAUSES = {
    "driver.nouveau",
    "driver.module-load-failed",
    "driver.gpu-unsupported",
    "devnodes.missing",
    "devnodes.permission",
    "mig.no-instances",
    "cgroup.device-denied",
    "container.no-gpus",
    "gpu.missing",
}


def user_run(snapshot):
    for run in (snapshot.get("cuda") or {}).get("runs") or []:
        if run.get("label") == "user":
            return run
    return None


def cuda_started(run):
    if run is None or run.get("child_error"):
        return False
    devices = run.get("devices") or []
    if run.get("init_rc") != 0 or not devices:
        return False
    if any(d.get("ctx_rc") != 0 for d in devices):
        return False
    return run.get("cudart_rc", -1) in (-1, 0)


def pci_gpu_count(snapshot):
    return sum(1 for d in snapshot.get("pci") or [] if d.get("kind") == "gpu")


def check(name, snapshot, report):
    run = user_run(snapshot)
    if not cuda_started(run):
        return []
    all_gpus = len(run["devices"]) >= pci_gpu_count(snapshot)
    out = []
    for f in report.get("findings", []):
        if f["severity"] != "fail":
            continue
        if f["id"] in CUDA_START_CAUSES and (f["id"] not in PER_GPU_CAUSES or all_gpus):
            out.append(f"{f['id']} fails although CUDA started with the user's environment "
                       f"(cuInit 0, {len(run['devices'])} device(s), every context created): "
                       f"{f['summary']}")
        elif f["id"] in PER_GPU_CAUSES and all_gpus:
            out.append(f"{f['id']} fails although CUDA started on all "
                       f"{len(run['devices'])} GPU(s): {f['summary']}")
    return out
