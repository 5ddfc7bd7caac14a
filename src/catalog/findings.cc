// Finding ids from shared/DESIGN.md "Stable interfaces" (first catalog,
// 2026-12), extended with nvml.*, advice.* and the diag ids (issue 6). Ids are never renamed.
#include "catalog/findings.h"

namespace gd {

namespace {
// What a machine without a working kernel driver also shows.
const std::vector<std::string_view> kNoDriver = {
    "driver.not-loaded", "driver.module-load-failed", "devnodes.missing",
    "uvm.missing",       "container.driver-mismatch", "persistence-mode.off"};
// What a container without GPUs also shows.
// The Xid a lost GPU logs, and the AER storm that comes with it.
const std::vector<std::string_view> kFallenOff = {"xid.79", "pcie.errors"};
// Xids whose catalog action is a GPU reset (catalog/xid.cc): the reset is the fix.
const std::vector<std::string_view> kNeedsReset = {
    "xid.46",  "xid.48",  "xid.62",  "xid.95",  "xid.109", "xid.110", "xid.119", "xid.120",
    "xid.136", "xid.140", "xid.143", "xid.150", "xid.154", "xid.155", "xid.156", "xid.158"};
const std::vector<std::string_view> kNoDevices = {"devnodes.missing", "uvm.missing",
                                                  "visible-devices.hides-all"};
// ACS redirect with a translating IOMMU slows or stops peer traffic, and
// NCCL's rings with it.
const std::vector<std::string_view> kP2pBroken = {"p2p.slow", "nccl.slow"};
// The fabric chain: a broken link makes every later one fail too.
const std::vector<std::string_view> kFabricState = {"fabric.not-registered", "fabric.degraded"};
const std::vector<std::string_view> kFmBroken = {"fabric.not-registered", "fabric.degraded",
                                                 "fabric.nvlsm-not-running",
                                                 "fabric-manager.not-running"};
const std::vector<std::string_view> kFmMissing = {
    "fabric.not-registered", "fabric.degraded", "fabric.nvlsm-not-running",
    "fabric-manager.not-running", "fabric-manager.not-enabled"};
const std::vector<std::string_view> kNvlsm = {"fabric.not-registered", "fabric.degraded",
                                              "fabric-manager.not-running",
                                              "fabric-manager.restarted-without-reset"};
const std::vector<std::string_view> kIbMissing = {
    "fabric.nvlsm-not-running", "fabric-manager.not-running", "fabric.not-registered",
    "fabric.degraded", "fabric-manager.restarted-without-reset"};
const std::vector<std::string_view> kSwitchMissing = {
    "fabric-manager.not-running", "fabric-manager.restarted-without-reset", "fabric.not-registered",
    "fabric.degraded", "gpu.missing"};
}  // namespace

const std::vector<CatalogEntry>& finding_catalog() {
  // clang-format off
  static const std::vector<CatalogEntry> kCatalog = {
      // id                              title                                                     rank symptom
      {"container.no-gpus",            "inside a container that was given no GPUs",                  10, false, kNoDevices},
      {"container.driver-not-injected", "the container's runtime brought in no NVIDIA driver library", 10, false},
      {"container.runtime-not-configured", "Docker has no NVIDIA runtime for --gpus",            9, false},
      {"container.proc-hidepid",       "/proc's hidepid hides containers from the toolkit's hook",   9, false},
      {"container.no-cgroups",         "the toolkit's no-cgroups = true leaves rootful containers without GPU access", 9, false},
      {"container.cdi-stale",          "a CDI spec names paths or GPUs this machine no longer has",  9, false},
      {"container.gpu-interposer-missing", "a preloaded GPU-sharing layer cannot be loaded",        27, false},
      {"container.unknown-device",     "the container asks for a GPU the host does not have",        15, false},
      // WSL: the Windows driver serves the GPU; without its support CUDA has no device.
      {"wsl.no-gpu-support",           "this WSL gives Linux no GPU",                                 8, false, kNoDriver},
      {"wsl.libs-missing",             "the Windows driver's libraries are missing from WSL",       16, false},
      {"wsl.libs-shadowed",            "a Linux NVIDIA driver inside WSL shadows the Windows one",  19, false},
      {"driver.nouveau",               "nouveau is bound to the GPUs",                               11, false, kNoDriver},
      {"driver.gpu-unsupported",       "this driver branch does not support the GPU",                12, false, kNoDriver},
      {"driver.module-load-failed",    "the NVIDIA kernel module failed to load",                    13, false, kNoDriver},
      {"driver.module-missing-for-kernel", "no NVIDIA kernel module is built for the running kernel", 13, false, kNoDriver},
      {"driver.not-loaded",            "no NVIDIA kernel driver is loaded",                          14, false, kNoDriver},
      {"driver.library-mismatch",      "kernel module and user-space driver versions differ",        18, false},
      {"container.driver-mismatch",    "container driver libraries do not match the host module",    17, false, {"driver.library-mismatch"}},
      {"cuda.stub-library",            "the toolkit's stub libcuda is loaded",                       20, false},
      {"cuda.compat-unsupported",      "CUDA forward-compat package on a GPU that lacks support",    22, false},
      {"cuda.compat-mismatch",         "forward-compat package and system driver disagree",          23, false},
      {"driver.too-old-for-cuda",      "the CUDA runtime in use needs a newer driver",               24, false},
      {"container.capabilities",       "NVIDIA_DRIVER_CAPABILITIES lacks what is needed",            26, false},
      {"cgroup.device-denied",         "the device cgroup denies the GPU nodes",                     28, false},
      {"driver.known-regression",      "the driver is a build with a known regression",              35, false},
      {"container.rootless-cgroups",   "a rootless runtime's NVIDIA hook may not set device cgroups", 25, false},
      {"devnodes.rootless-denied",     "a rootless container's user namespace cannot open the nodes", 27, false},
      {"devnodes.selinux-denied",      "a security module refuses the NVIDIA device nodes",          29, false},
      {"devnodes.missing",             "NVIDIA device nodes are missing",                            30, false},
      {"devnodes.permission",          "this user may not open the NVIDIA device nodes",             31, false},
      {"uvm.missing",                  "nvidia_uvm is not loaded or /dev/nvidia-uvm is absent",      32, false},
      {"uvm.hmm",                      "nvidia_uvm HMM support fails on this kernel",                33, false},
      {"driver.after-suspend",         "CUDA broken since a suspend/resume",                         34, false},
      {"gpu.fallen-off-bus",           "a GPU has fallen off the bus",                               36, false, kFallenOff},
      {"gpu.reset-required",           "a GPU needs a reset",                                        37, false, kNeedsReset},
      // A rejected first entry (or a repeat) is why no device is left: the entry is the cause.
      {"visible-devices.invalid",      "CUDA_VISIBLE_DEVICES has an entry CUDA rejects",             39, false, {"visible-devices.hides-all"}},
      {"visible-devices.hides-all",    "CUDA_VISIBLE_DEVICES leaves no device visible",              40, false},
      {"visible-devices.ordinal-out-of-range", "a job asks for a GPU beyond those visible",         41, false},
      {"memory.address-space-limit",   "an address-space limit is too small for CUDA",               42, false},
      {"mps.unreachable",              "the MPS control daemon cannot be reached",                   44, false},
      // An orphan is why a GPU is full or its exclusive mode taken.
      {"process.orphan",               "a process holds a GPU after its job ended",                  43, false, {"memory.held-by-other-process", "compute-mode.exclusive"}},
      {"compute-mode.exclusive",       "exclusive-process mode and the GPU is taken",                45, false},
      {"mig.no-instances",             "MIG enabled but no instance created or visible",             46, false},
      {"memory.held-by-other-process", "other processes hold most of a GPU's memory",                47, false},
      {"cuda.fork-after-init",         "CUDA initialized before fork",                               48, false},
      // The fabric-readiness chain (docs/fabric.md), one rank per link in
      // order: the first broken link is named, the later ones follow from it.
      {"fabric.switch-missing",        "NVSwitches the NVLink fabric needs are missing",             49, false, kSwitchMissing},
      {"fabric.ib-modules-missing",    "mlx5_ib or ib_umad is not loaded on an NVLink5 system",      50, false, kIbMissing},
      {"fabric.nvlsm-not-running",     "NVLSM, the NVLink subnet manager, is not running",           51, false, kNvlsm},
      {"fabric-manager.not-installed", "NVSwitch system without a fabric manager installed",        52, false, kFmMissing},
      {"fabric-manager.version-mismatch", "the fabric manager's version differs from the driver's", 53, false, kFmBroken},
      {"fabric-manager.not-running",   "NVSwitch system without a running fabric manager",           54, false, kFmBroken},
      {"fabric-manager.restarted-without-reset", "the fabric manager was restarted without a GPU reset", 55, false, kFabricState},
      {"fabric.imex-channels-missing", "a multi-node NVLink node has no IMEX channel",               56, false},
      {"fabric.not-registered",        "GPUs have not joined the NVLink fabric",                     57, false},
      {"fabric.degraded",              "the NVLink fabric is unhealthy or degraded",                 57, false},
      {"nvml.init-hang",               "NVML did not answer within the deadline",                    58, true},
      {"nvml.init-failed",             "NVML cannot start",                                          59, true},
      {"cuda.init-hang",               "CUDA did not answer within the deadline",                    60, true},
      {"cuda.init-failed",             "CUDA cannot start",                                          61, true},
      {"gpu.missing",                  "fewer GPUs usable than the PCI bus shows",                   62, true},
      {"device-order.mismatch",        "CUDA's default GPU order differs from nvidia-smi's",         70, false},
      {"persistence-mode.off",         "persistence mode is off",                                    72, false},
      // A container host's latent fault: GPUs lost by running containers later, not now.
      {"devnodes.char-links-missing",  "NVIDIA nodes lack the /dev/char links runc needs",           73, false},
      {"fabric-manager.not-enabled",   "the fabric manager will not start at boot",                  73, false},
      {"container.shm-too-small",      "/dev/shm is smaller than NCCL needs",                        74, false},
      {"container.gpu-interposer",     "a GPU-sharing layer caps what CUDA sees here",               69, false},
      {"pcie.link-degraded",           "a GPU's PCIe link is below its maximum",                     80, false},
      {"pcie.errors",                  "AER errors on a GPU's link",                                 81, false},
      {"cuda.arch-not-in-build",       "the program has no GPU code for this GPU's architecture",   81, false},
      {"p2p.blocked",                  "PCIe settings break peer-to-peer",                           82, false, kP2pBroken},
      {"thermal.high",                 "a GPU runs hot",                                             83, false},
      {"power.throttled",              "a GPU is power throttled",                                   84, false},
      {"clocks.throttled",             "a GPU's clocks are throttled",                               85, false},
      {"ecc.uncorrectable",            "uncorrectable ECC errors",                                   86, false, {"memory.test-failed"}},
      {"ecc.rows-pending",             "row remapping pending",                                      87, false},
      {"kernel-log.unreadable",        "the kernel log cannot be read",                              90, false},
      // Named by explain from a text alone (explain/rules.cc): causes no
      // check on the machine decides, and the text's own unattributed error.
      {"k8s.device-plugin",            "the NVIDIA device plugin advertises no GPU on the node",     10, false},
      {"driver.libraries-missing",     "the driver's user-space libraries are missing or not in the loader cache", 15, false},
      {"gpu.error-state",              "nvidia-smi cannot read a GPU (ERR!)",                        38, false},
      {"memory.own-process-oom",       "the program's own allocations filled the GPU",               64, false},
      {"nccl.peer-failed",             "a peer rank or the network failed an NCCL collective",       65, false},
      {"nccl.failed",                  "an NCCL call failed on a CUDA or system call",               66, false},
      {"program.kernel-fault",         "a GPU kernel of the program faulted",                        67, false},
      {"program.framework-without-cuda", "the framework was built without CUDA, or without this CUDA version", 21, false},
      {"program.cuda-library-mismatch", "a CUDA library the program loads is missing or of another version", 25, false},
      {"program.api-error",            "a CUDA, NVML or NCCL call failed for the program's own reason", 68, false},
      {"explain.unattributed",         "the text shows an error explain cannot attribute",           99, true},
      // gpudoctor diag (issue 6): what the active tests measured. An
      // incomplete run is a symptom of whatever stopped the GPU.
      {"diag.incomplete",              "the active diagnostics did not run to the end",              63, true},
      {"memory.test-failed",           "the GPU memory test found failing addresses",                91, false},
      {"compute.mismatch",             "a GPU computed or copied wrong results",                     92, false},
      {"perf.compute-slow",            "a GPU computes slower than a healthy one",                   93, false},
      {"perf.memory-bandwidth-slow",   "a GPU's memory bandwidth is below a healthy one's",          94, false},
      {"perf.pcie-slow",               "host<->GPU copies are slower than the PCIe link carries",    98, false},
      {"p2p.slow",                     "peer-to-peer between GPUs is slow or not possible",          99, false},
      {"nccl.slow",                    "NCCL all-reduce or multi-GPU scaling is slow",              100, false},
      {"xid.NN",                       "a decoded Xid event",                                        88, false},
      {"advice.device-order",          "what CUDA_DEVICE_ORDER=PCI_BUS_ID does here",                95, false},
      {"advice.nvml-based-check",      "what PYTORCH_NVML_BASED_CUDA_CHECK=1 does here",             96, false},
      {"advice.visible-devices",       "what CUDA_VISIBLE_DEVICES does here",                        97, false},
  };
  // clang-format on
  return kCatalog;
}

const CatalogEntry* find_catalog_entry(std::string_view id) {
  if (id.substr(0, 4) == "xid.") id = "xid.NN";
  for (const auto& e : finding_catalog()) {
    if (id == e.id) return &e;
  }
  return nullptr;
}

}  // namespace gd
