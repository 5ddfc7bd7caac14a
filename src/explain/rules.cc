// Signal -> candidate causes. Transcribed from docs/nvidia-facts.md
// §3 (CUDA codes at init, 2026-12), §4.1 (NVML codes), §6.3
// (container toolkit) and §10 (quick triage map); the order of each list is
// the order of likelihood those sections give. What the text cannot decide,
// `gpudoctor check` on the machine can: every candidate's help (help.cc)
// says which reading tells it apart.
//
// Every code has a row: a code without one of its own takes its family's
// (kCudaFamilies below, from what the CUDA Driver API reference says each
// code means), so no error code in a text is left without a finding.
#include <algorithm>
#include <cstdlib>

#include "catalog/components.h"
#include "explain/error_codes.h"
#include "explain/parse.h"
#include "explain/ranking.h"

namespace gd {
namespace {

struct Row {
  const char* signal;
  std::vector<const char*> ids;
};

// clang-format off
const std::vector<Row> kRules = {
  // §3 code 2 / §10 "CUDA 2 at init": host VA limits first, then a full GPU.
  {"cuda:2",   {"memory.address-space-limit", "memory.held-by-other-process"}},
  // §3 code 3: driver state, missing device nodes, fork after init.
  {"cuda:3",   {"devnodes.missing", "devnodes.permission", "driver.not-loaded", "cuda.fork-after-init"}},
  {"cuda:34",  {"cuda.stub-library"}},                                         // §3, §10
  {"cuda:35",  {"driver.too-old-for-cuda", "driver.not-loaded"}},              // §3, §10
  // §3 "Other points": PyTorch says "Found no NVIDIA driver" when the driver
  // version is 0: no driver at all, or none mounted into the container (§6.3).
  // "found version 11040": a driver answered; it is too old (§5.1).
  {"cuda:35-old-driver", {"driver.too-old-for-cuda"}},
  {"cuda:35-no-driver", {"driver.not-loaded", "container.no-gpus", "container.capabilities"}},
  {"cuda:no-libcuda",   {"driver.not-loaded", "container.capabilities"}},
  {"cuda:46",  {"compute-mode.exclusive"}},                                    // §3
  // §3 code 100: CUDA_VISIBLE_DEVICES empty or its first entry invalid, a
  // container given no GPU, every GPU failed. An invalid entry first: the
  // corpus's prior (docs/explain.md "Priors").
  {"cuda:100", {"visible-devices.invalid", "visible-devices.hides-all", "container.no-gpus", "mig.no-instances", "devnodes.missing"}},
  {"cuda:304", {"devnodes.permission", "cgroup.device-denied", "devnodes.rootless-denied", "devnodes.selinux-denied"}},  // §3, §7.6
  // §3, §10; the fabric chain behind 802 (docs/fabric.md), its usual breaks first.
  {"cuda:802", {"fabric-manager.not-running", "fabric-manager.version-mismatch", "fabric.ib-modules-missing"}},
  {"cuda:803", {"cuda.compat-mismatch", "driver.library-mismatch", "container.driver-mismatch"}},  // §3, §10
  {"cuda:804", {"cuda.compat-unsupported"}},                                   // §3, §10
  {"cuda:805", {"mps.unreachable"}}, {"cuda:806", {"mps.unreachable"}},        // §3 805-812
  {"cuda:807", {"mps.unreachable"}}, {"cuda:808", {"mps.unreachable"}},
  // §3 code 999 / §10: UVM broken after a suspend, UVM missing, a GPU in a
  // bad state. The suspend first: the corpus's prior (docs/explain.md "Priors").
  {"cuda:999", {"driver.after-suspend", "uvm.missing", "uvm.hmm", "gpu.fallen-off-bus"}},
  // An allocation that failed after CUDA started: other processes hold the
  // memory, or the program's own allocations filled it; the message's
  // "Process N has ..." and "this process has ..." decide (weights.cc).
  {"cuda-alloc", {"memory.held-by-other-process", "memory.own-process-oom"}},
  // PyTorch's "this process has X GiB memory in use" near the GPU's total:
  // the program's own allocations (the caching allocator's message).
  {"oom-own-process", {"memory.own-process-oom"}},
  // nvidia-smi's ERR! in a GPU's row: NVML could not read it (facts §4.1:
  // NVML_ERROR_GPU_IS_LOST, _UNKNOWN): a GPU fault, the kernel log says which.
  {"smi-err", {"gpu.error-state", "gpu.fallen-off-bus"}},
  // NCCL's watchdog ended a collective that never finished: a rank that
  // stopped or the network between them (NCCL's troubleshooting guide);
  // over PCIe only, P2P stopped on the way (facts §12.2).
  {"nccl-watchdog", {"nccl.peer-failed", "p2p.blocked"}},
  // PyTorch's is_available() is cudaGetDeviceCount() > 0 (facts §3 "Other
  // points"): §10's rows for no driver, hidden GPUs and a driver too old.
  {"torch-not-available", {"driver.not-loaded", "visible-devices.hides-all", "container.no-gpus", "driver.too-old-for-cuda"}},
  // Codes after CUDA started that still name a cause (§3): an uncorrectable
  // ECC error (with Xid 48/94/95), PTX from a toolkit newer than the driver.
  {"cuda:214", {"ecc.uncorrectable", "gpu.reset-required"}},
  {"cuda:218", {"driver.too-old-for-cuda"}},
  {"cuda:222", {"driver.too-old-for-cuda"}},
  // §3 code 101 (invalid device ordinal): a device number past the visible
  // ones, from a launcher starting a process per GPU or a fixed cuda:N.
  {"cuda:101", {"visible-devices.ordinal-out-of-range", "visible-devices.invalid"}},
  // The phrase table (catalog/error_phrases.cc), each row from a thread.
  {"container:no-driver",   {"container.no-gpus", "container.capabilities", "driver.not-loaded"}},
  {"container:no-nvml",     {"container.runtime-not-configured", "container.no-gpus"}},
  {"container:no-nvidia-runtime", {"container.runtime-not-configured"}},        // §6.3
  {"driver:too-old",        {"driver.too-old-for-cuda"}},                      // §5.1
  {"container:rpc-timeout", {"persistence-mode.off"}},
  {"nccl:shm",              {"container.shm-too-small"}},                      // §12.1
  {"uvm-node-missing",      {"uvm.missing"}},                                  // §7.5
  // §10 row 1: a module that will not load: Secure Boot or another failure,
  // nouveau holding the GPU, a GPU this branch does not support.
  {"installer:load-failed", {"driver.module-load-failed", "driver.nouveau", "driver.gpu-unsupported"}},
  {"devnodes-missing",      {"devnodes.missing", "driver.not-loaded"}},        // §7.5
  {"mig-none",              {"mig.no-instances"}},                             // §4.3
  {"nouveau",               {"driver.nouveau"}},                               // §10 row 1
  {"driver-proc-missing",   {"driver.not-loaded", "container.no-gpus"}},       // §2
  // §13: WSL 1 has no GPU; under WSL 2 a CUDA or NVML failure is the
  // Windows driver's side: no GPU shared, its libraries missing or hidden.
  {"wsl1-kernel",           {"wsl.no-gpu-support"}},
  {"wsl",                   {"wsl.no-gpu-support", "wsl.libs-missing", "wsl.libs-shadowed"}},
  {"container:driver-libs-in-image", {"container.driver-mismatch"}},           // §6.3
  {"nccl:p2p-hang",         {"p2p.blocked"}},                                  // §12.2
  // NVLS buffers that fail to set up on an NVSwitch node (docs/fabric.md, link 4).
  {"nccl-nvls",             {"fabric-manager.restarted-without-reset"}},
  // A `docker run` that asked for no GPU (explain/parse_hints.cc).
  {"container-no-gpu-flag", {"container.no-gpus"}},
  // §10 row 1-2: no module: Secure Boot / probe failure, nouveau, unsupported GPU.
  {"nvml:9",   {"driver.not-loaded", "driver.nouveau", "driver.module-load-failed", "driver.gpu-unsupported"}},
  // §4.1, §7.6: the nodes' mode bits, a rootless container's lost group,
  // SELinux: each refuses the open NVML makes.
  {"nvml:4",   {"devnodes.permission", "devnodes.rootless-denied", "devnodes.selinux-denied"}},
  {"devnodes-permission", {"devnodes.permission", "devnodes.rootless-denied", "devnodes.selinux-denied"}},
  {"selinux-denial",      {"devnodes.selinux-denied"}},                        // §7.6
  // §7.6: a rootless runtime's hook may neither load modules nor make nodes.
  {"rootless-hook",       {"uvm.missing", "devnodes.missing"}},
  {"nvml:12",  {"driver.not-loaded"}},                                         // §4.1
  {"nvml:15",  {"gpu.fallen-off-bus"}},                                        // §4.1, §10
  {"nvml:16",  {"gpu.reset-required"}},                                        // §4.1
  {"nvml:17",  {"cgroup.device-denied"}},                                      // §4.1
  {"nvml:18",  {"driver.library-mismatch", "container.driver-mismatch"}},      // §4.1, §10
  // §4.1: the library is too old for the call; at init, a libnvidia-ml older
  // than the driver (stale links after an upgrade).
  {"nvml:13",  {"driver.library-mismatch"}},
  // NVML_ERROR_UNKNOWN at init: device nodes the process may not open (in a
  // container, the device cgroup), or a GPU in a bad state (§4.1 codes 4, 17).
  {"nvml:999", {"cgroup.device-denied", "devnodes.permission", "gpu.fallen-off-bus"}},
  {"nvml-handle:15",  {"gpu.fallen-off-bus"}},
  {"nvml-handle:999", {"gpu.fallen-off-bus", "gpu.reset-required"}},
  {"nvml:no-devices", {"driver.module-load-failed", "driver.gpu-unsupported", "container.no-gpus"}},
  {"nvml:crash", {"nvml.init-failed"}},
  {"nvidia-smi-missing", {"container.no-gpus", "container.capabilities", "driver.not-loaded"}},
  // §6.3: nvidia-container-cli dlopens libnvidia-ml.so.1 through the loader
  // cache: the driver's user-space libraries missing, or not in the cache.
  {"container:lib-missing", {"driver.libraries-missing", "driver.not-loaded"}},
  {"container:driver-error", {"driver.not-loaded"}},                           // §6.3
  {"container:requirement", {"driver.too-old-for-cuda"}},                      // §6.3 NVIDIA_REQUIRE_CUDA
  {"libcuda:missing-symbol", {"driver.too-old-for-cuda"}},                     // §5.2 entry points
  // §6.3: the device plugin advertises no GPU when the runtime it runs
  // under gives it no NVML (not the default runtime), or the node has no driver.
  // The device plugin is what advertises them: most often it runs without
  // NVML because the runtime is not the NVIDIA one (§6.3), else it is not
  // running or not registered on the node.
  {"k8s:no-gpus",           {"container.runtime-not-configured", "k8s.device-plugin", "driver.not-loaded"}},
  {"k8s:plugin-unregistered", {"k8s.device-plugin"}},
  // The program's own build and libraries (catalog/error_phrases.cc cites
  // each wording's thread): the machine may be fine.
  {"framework:no-cuda",     {"program.framework-without-cuda"}},
  {"library:cuda-mismatch", {"program.cuda-library-mismatch"}},
  // §5.2: the driver ships libcuda.so.1; a program that opens "libcuda.so"
  // needs the development link, or its own lookup is wrong.
  {"libcuda-unversioned",   {"program.api-error", "driver.libraries-missing"}},
  // §2 / §10: kernel log lines.
  {"nvrm:api-mismatch",   {"driver.library-mismatch", "container.driver-mismatch"}},
  {"nvrm:gpu-unsupported",          {"driver.gpu-unsupported"}},
  {"nvrm:open-module-unsupported",  {"driver.gpu-unsupported"}},
  {"nvrm:rm-init-failed",           {"driver.module-load-failed"}},
  {"nvrm:gsp-init-failed",          {"driver.module-load-failed"}},
  {"nvrm:probe-failed",             {"driver.module-load-failed"}},
  {"nvrm:unknown-symbol",           {"driver.module-load-failed"}},
  {"nvrm:no-devices",               {"driver.module-load-failed", "driver.gpu-unsupported"}},
  {"nvrm:probe-not-called",         {"driver.nouveau", "driver.module-load-failed"}},
  {"module-signature:rejected",     {"driver.module-load-failed"}},
  {"kernel:nouveau",      {"driver.nouveau"}},
  // §2.2: the fabric manager's own lines when it does not start.
  {"fabric-manager:version-mismatch",  {"fabric-manager.version-mismatch"}},
  {"fabric-manager:topology-mismatch", {"fabric.switch-missing"}},
  // systemd's word that the unit failed (systemctl status, journalctl): why is elsewhere.
  {"fabric-manager:unit-failed",       {"fabric-manager.not-running", "fabric-manager.version-mismatch"}},
  // The NVLink5 start script and NVLSM on a missing ib_umad (docs/fabric.md).
  {"fabric-manager:ib-umad-missing",   {"fabric.ib-modules-missing"}},
  {"fabric-manager:umad-init-failed",  {"fabric.ib-modules-missing"}},
};

// clang-format on

// A range of CUDA codes that share their causes. Source: the CUDA Driver
// API reference (cuda.h 13.0 comments on each CUresult, "Error Handling"),
// the runtime's equivalents in driver_types.h, and for the hardware rows the
// Xid catalog (docs/nvidia-facts.md §1.3: Xid 48/63/64/94/95 come with ECC
// errors, Xid 74 with NVLink errors).
struct Family {
  int first, last;
  std::vector<const char*> ids;
  const char* source;
};

// clang-format off
const std::vector<Family> kCudaFamilies = {
  // "the requested device function does not exist or is not compiled for
  // the proper device architecture" (98), an image not for this GPU (200, 209).
  {98, 98,   {"cuda.arch-not-in-build", "program.api-error"}, "cuda.h: CUDA_ERROR_INVALID_IMAGE / runtime cudaErrorInvalidDeviceFunction"},
  {200, 200, {"cuda.arch-not-in-build", "program.api-error"}, "cuda.h: CUDA_ERROR_INVALID_IMAGE"},
  {209, 209, {"cuda.arch-not-in-build"}, "cuda.h: CUDA_ERROR_NO_BINARY_FOR_GPU"},
  // "a named symbol was not found": at start, a libcuda without an entry
  // point the runtime asks for, older than it (facts §5.2).
  {500, 500, {"driver.too-old-for-cuda", "program.api-error"}, "cuda.h: CUDA_ERROR_NOT_FOUND; facts §5.2"},
  // "an exclusive-thread device already in use by a different thread".
  {216, 216, {"compute-mode.exclusive"}, "cuda.h: CUDA_ERROR_CONTEXT_ALREADY_IN_USE; facts §3 (46)"},
  // "peer access is not supported across the given devices".
  {217, 217, {"p2p.blocked", "program.api-error"}, "cuda.h: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED; facts §12.2"},
  {220, 220, {"gpu.reset-required"}, "cuda.h: CUDA_ERROR_NVLINK_UNCORRECTABLE; facts §1.3 (Xid 74)"},
  // "the PTX JIT compiler library was not found": the driver's
  // libnvidia-ptxjitcompiler, which the container toolkit mounts with compute.
  {221, 221, {"container.capabilities", "driver.libraries-missing"}, "cuda.h: CUDA_ERROR_JIT_COMPILER_NOT_FOUND; facts §6.3"},
  {226, 226, {"ecc.uncorrectable", "gpu.reset-required"}, "cuda.h: CUDA_ERROR_CONTAINED; facts §1.3 (Xid 94/95)"},
  // Faults while a kernel ran: the program's own bug first (an out-of-bounds
  // access shows as Xid 13/31/43 beside it), then a hardware error (Xid 48/94/95).
  {700, 700, {"program.kernel-fault", "ecc.uncorrectable"}, "cuda.h: CUDA_ERROR_ILLEGAL_ADDRESS; facts §1.3"},
  {702, 702, {"program.kernel-fault"}, "cuda.h: CUDA_ERROR_LAUNCH_TIMEOUT (the display watchdog)"},
  {710, 710, {"program.kernel-fault"}, "cuda.h: CUDA_ERROR_ASSERT"},
  {714, 719, {"program.kernel-fault", "ecc.uncorrectable"}, "cuda.h: CUDA_ERROR_HARDWARE_STACK_ERROR .. CUDA_ERROR_LAUNCH_FAILED; facts §1.3"},
  {721, 721, {"program.kernel-fault"}, "cuda.h: CUDA_ERROR_TENSOR_MEMORY_LEAK"},
  {805, 812, {"mps.unreachable"}, "cuda.h: CUDA_ERROR_MPS_*; facts §3 805-812"},
};

// NCCL's results (nccl.h). A system error is most often /dev/shm or a
// peer gone (facts §12.1; PyTorch's c10d: "It can be also caused by
// unexpected exit of a remote peer"); a remote error is a peer or the network.
const std::vector<Row> kNcclRules = {
  {"nccl:1", {"nccl.failed"}},
  {"nccl:2", {"container.shm-too-small", "nccl.peer-failed", "nccl.failed"}},
  {"nccl:3", {"nccl.failed"}},
  {"nccl:4", {"program.api-error"}},
  {"nccl:5", {"program.api-error"}},
  {"nccl:6", {"nccl.peer-failed"}},
  {"nccl:7", {"program.api-error"}},
};
// clang-format on

std::vector<std::string> strings(const std::vector<const char*>& v) { return {v.begin(), v.end()}; }

// "cuda:700" -> 700 in *code; false for a key of another shape.
bool code_key(const std::string& key, std::string_view prefix, int* code) {
  if (!key.starts_with(prefix) || key.size() == prefix.size()) return false;
  std::string_view digits = std::string_view(key).substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
  *code = std::atoi(std::string(digits).c_str());
  return true;
}

}  // namespace

Rule rule_for(const std::string& signal) {
  for (const auto* table : {&kRules, &kNcclRules}) {
    for (const Row& r : *table) {
      if (signal == r.signal) return {strings(r.ids), "the facts' order"};
    }
  }
  // A component named in words: its own list (catalog/components.cc cites each).
  if (signal.starts_with(kComponentKindPrefix)) {
    if (const Component* c =
            find_component(std::string_view(signal).substr(kComponentKindPrefix.size()))) {
      return {strings(c->ids), c->source};
    }
    return {};
  }
  int code = 0;
  if (code_key(signal, "cuda:", &code)) {
    for (const Family& f : kCudaFamilies) {
      if (code >= f.first && code <= f.last) return {strings(f.ids), f.source};
    }
    // The rest is the calling program's: a bad argument, handle or state.
    return {{"program.api-error"}, "cuda.h: the code's own description"};
  }
  if (code_key(signal, "nvml:", &code) || code_key(signal, "nvml-handle:", &code)) {
    return {{"program.api-error"}, "nvml.h: the code's own description"};
  }
  return {};
}

std::vector<std::string> rule_ids() {
  std::vector<std::string> ids;
  auto add = [&](const std::vector<const char*>& v) {
    for (const char* id : v) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
    }
  };
  for (const Row& r : kRules) add(r.ids);
  for (const Row& r : kNcclRules) add(r.ids);
  for (const Family& f : kCudaFamilies) add(f.ids);
  for (const Component& c : components()) add(c.ids);
  add({"program.api-error"});
  return ids;
}

}  // namespace gd
