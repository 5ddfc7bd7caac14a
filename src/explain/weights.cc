// What else in the text speaks for (+) or against (-) a candidate cause,
// as a table: (ids, evidence, weight, reason). The reason is what
// ranked_by shows; each cites the fact it rests on (docs/nvidia-facts.md)
// or, where the size of a weight was set by the corpus, the tune half
// (tests/cases, docs/explain.md "How a ranking is reached").
//
// Sizes: a candidate's place in a rule's order (rules.cc) decides ties, and
// one rule's lists run 2-5 long, so +2 lifts a cause over any other of one
// signal and -2 drops it under them; +3 where the evidence all but decides
// (a user namespace for a denied node); +1 and -1 only nudge.
#include <algorithm>
#include <set>

#include "checks/check.h"
#include "explain/ranking.h"

namespace gd {
namespace {

enum class Evidence {
  kCapabilitiesLackCompute,  // NVIDIA_DRIVER_CAPABILITIES set, without compute
  kCapabilitiesHaveCompute,  // ... with compute (or all)
  kInContainer,              // a container prompt, docker run, /.dockerenv, kubectl
  kSmiListsGpus,             // nvidia-smi answered and listed GPUs
  kSmiShowsDriverOnly,       // nvidia-smi named the driver's version, listed none
  kNoGpuFlag,                // a docker/podman run without --gpus
  kNgcBanner,           // NGC's "driver ... was detected and compatibility mode is unavailable"
  kResume,              // the kernel log's resume from suspend
  kUvmLoaded,           // lsmod lists nvidia_uvm
  kUvmNodeMissing,      // /dev/nvidia-uvm or nvidia_uvm said missing
  kWsl,                 // a WSL kernel or path
  kNoDriverProcOnHost,  // /proc/driver/nvidia missing, no container in sight
  kNoDriverProcInContainer,  // ... inside a container
  kDevnodesMissing,          // /dev/nvidia* said missing
  kDevnodesPermission,       // permission denied on /dev/nvidia*
  kRootless,                 // a rootless runtime (a user namespace)
  kNouveau,                  // nouveau named
  kMigNone,                  // "No MIG devices found"
  kMigEnabled,               // nvidia-smi: MIG mode Enabled
  kExclusiveMode,            // nvidia-smi: compute mode E. Process
  kGpuMemoryFull,            // nvidia-smi: a GPU 90 % full or more
  kOwnProcessHoldsMemory,    // PyTorch's OOM: this process holds it
  kOthersHoldMemory,         // PyTorch's OOM: PyTorch holds next to nothing, a process is listed
  kCudaDidNotStart,          // a code that says CUDA did not start
  kNvlsFailed,               // NCCL's transport/nvls.cc reporting a CUDA failure
};

// "@linux-driver": the ids of the checks that read the Linux driver's own
// traces (registry.cc's kLinuxDriver).
struct Weight {
  std::vector<const char*> ids;
  Evidence evidence;
  int weight;
  const char* reason;
};

// clang-format off
const std::vector<Weight> kWeights = {
  {{"container.capabilities"}, Evidence::kCapabilitiesLackCompute, +2, "NVIDIA_DRIVER_CAPABILITIES lacks compute, which CUDA needs (facts §6.3)"},
  {{"container.capabilities"}, Evidence::kCapabilitiesHaveCompute, -1, "NVIDIA_DRIVER_CAPABILITIES includes compute (facts §6.3)"},
  {{"container.no-gpus", "container.driver-mismatch", "cgroup.device-denied"}, Evidence::kInContainer, +1,
   "the text comes from a container (these causes exist only there)"},
  {{"container.no-gpus"}, Evidence::kSmiListsGpus, -2, "nvidia-smi lists GPUs, so GPUs were passed in"},
  {{"container.no-gpus"}, Evidence::kNoGpuFlag, +2, "the container was started without --gpus (facts §6.3)"},
  {{"driver.not-loaded", "devnodes.missing"}, Evidence::kSmiListsGpus, -2,
   "nvidia-smi lists GPUs, so the driver and its device nodes are there"},
  {{"driver.not-loaded"}, Evidence::kSmiShowsDriverOnly, -2,
   "nvidia-smi shows the driver's version, which only a loaded driver answers"},
  // The banner says the module is older than the image needs; an 804 beside
  // it is only why forward compatibility could not bridge that (facts §5.3).
  {{"driver.too-old-for-cuda"}, Evidence::kNgcBanner, +2, "the NGC image's banner says the driver is older than it needs (facts §5.3)"},
  {{"driver.after-suspend"}, Evidence::kResume, +2, "the kernel log shows a resume from suspend (facts §3, 999)"},
  {{"uvm.missing"}, Evidence::kUvmLoaded, -2, "lsmod lists nvidia_uvm"},
  {{"uvm.missing"}, Evidence::kUvmNodeMissing, +2, "/dev/nvidia-uvm or nvidia_uvm is said missing (facts §7.5)"},
  // Under WSL no Linux module, /dev/nvidia* or nvidia_uvm is meant to exist.
  {{"@linux-driver"}, Evidence::kWsl, -2, "WSL: the Windows driver serves the GPU; no Linux kernel module runs there (facts §13)"},
  // No /proc/driver/nvidia: no module here, so nothing that needs one loaded
  // (UVM, a suspend) comes first; in a container, none was passed in (§2).
  {{"driver.not-loaded"}, Evidence::kNoDriverProcOnHost, +2, "/proc/driver/nvidia does not exist: no NVIDIA module is loaded (facts §2)"},
  {{"container.no-gpus"}, Evidence::kNoDriverProcInContainer, +2, "/proc/driver/nvidia does not exist in the container: no GPU was passed in (facts §2, §6.3)"},
  {{"devnodes.missing"}, Evidence::kDevnodesMissing, +2, "/dev/nvidia* are said missing (facts §7.5)"},
  {{"devnodes.permission"}, Evidence::kDevnodesPermission, +2, "permission denied on /dev/nvidia* (facts §7.5)"},
  // In a user namespace the nodes' owner is unmapped: their group no longer
  // admits the user, whatever ls showed on the host.
  {{"devnodes.rootless-denied"}, Evidence::kRootless, +3, "a rootless container: the nodes' group is unmapped there (facts §7.6)"},
  {{"driver.nouveau"}, Evidence::kNouveau, +2, "nouveau is named (facts §10 row 1)"},
  {{"mig.no-instances"}, Evidence::kMigNone, +2, "\"No MIG devices found\" (facts §4.3)"},
  {{"mig.no-instances"}, Evidence::kMigEnabled, +1, "nvidia-smi shows MIG mode Enabled (facts §4.3)"},
  {{"compute-mode.exclusive"}, Evidence::kExclusiveMode, +2, "nvidia-smi shows compute mode E. Process (facts §3, 46)"},
  {{"memory.held-by-other-process"}, Evidence::kGpuMemoryFull, +2, "nvidia-smi shows a GPU 90 % full or more"},
  {{"memory.held-by-other-process"}, Evidence::kOwnProcessHoldsMemory, -2,
   "the OOM message says this process itself holds the GPU's memory"},
  {{"memory.own-process-oom"}, Evidence::kOthersHoldMemory, -2,
   "the OOM message says PyTorch holds next to nothing of the GPU's memory, and lists a process that does"},
  // NCCL's maintainers on NVLS buffers that fail to set up (NVIDIA/nccl#1488,
  // #976): the fabric manager was restarted without a GPU reset; the CUDA
  // code inside that line is NVLS's symptom, not a cause of its own.
  {{"fabric-manager.restarted-without-reset"}, Evidence::kNvlsFailed, +2,
   "NCCL's NVLS setup failed, which a fabric manager restart without a GPU reset causes (docs/fabric.md)"},
  // A CUDA that never started explains the calls that fail after; the
  // program is suspected only when CUDA did start.
  {{"program.api-error", "program.kernel-fault"}, Evidence::kCudaDidNotStart, -2,
   "CUDA did not start, and a later call's failure follows from that (facts §3)"},
};
// clang-format on

const std::set<std::string>& linux_driver_ids() {
  static const std::set<std::string> kIds = [] {
    std::set<std::string> ids;
    for (const CheckEntry& c : all_checks()) {
      if (c.linux_driver) ids.insert(c.ids.begin(), c.ids.end());
    }
    return ids;
  }();
  return kIds;
}

bool applies(const Weight& w, const std::string& id) {
  return std::any_of(w.ids.begin(), w.ids.end(), [&](const char* x) {
    return id == x || (std::string_view(x) == "@linux-driver" && linux_driver_ids().count(id) != 0);
  });
}

bool smi_lists_gpus(const Snapshot& s) {
  return s.nvml.attempted && s.nvml.init_rc == 0 && !s.nvml.gpus.empty();
}

std::string gpu_name(const NvmlGpu& g) {
  return "nvidia-smi GPU " + std::to_string(g.index) +
         (g.pci_bus_id.ok() ? " (" + g.pci_bus_id.value + ")" : "");
}

// The lines that show the evidence; empty when it does not hold.
std::vector<std::string> shown(Evidence e, const Snapshot& s) {
  auto lines = [&](std::initializer_list<const char*> kinds) {
    return reported_lines(s, kinds, -1);
  };
  auto gpus = [&](auto pred, const std::string& what) {
    std::vector<std::string> out;
    for (const auto& g : s.nvml.gpus) {
      if (pred(g)) out.push_back(gpu_name(g) + ": " + what);
    }
    return out;
  };
  const bool container = has_reported(s, "container-hint");
  auto caps = s.env.vars.find("NVIDIA_DRIVER_CAPABILITIES");
  switch (e) {
    case Evidence::kCapabilitiesLackCompute:
    case Evidence::kCapabilitiesHaveCompute: {
      if (caps == s.env.vars.end()) return {};
      const std::string& v = caps->second;
      bool compute = v.find("compute") != std::string::npos || v.find("all") != std::string::npos;
      if (compute != (e == Evidence::kCapabilitiesHaveCompute)) return {};
      return {"NVIDIA_DRIVER_CAPABILITIES=" + v +
              (compute ? " includes compute" : " lacks compute, which CUDA needs")};
    }
    case Evidence::kInContainer:
      return lines({"container-hint"});
    case Evidence::kSmiListsGpus:
      if (!smi_lists_gpus(s)) return {};
      return {"nvidia-smi lists " + std::to_string(s.nvml.gpus.size()) + " GPU(s)"};
    case Evidence::kSmiShowsDriverOnly:
      if (smi_lists_gpus(s) || !s.nvml.driver_version.ok() || s.nvml.driver_version.value.empty()) {
        return {};
      }
      return {"nvidia-smi shows driver " + s.nvml.driver_version.value};
    case Evidence::kNoGpuFlag:
      return lines({"container-no-gpu-flag"});
    case Evidence::kNgcBanner:
      return lines({"ngc-banner"});
    case Evidence::kResume:
      return lines({"resume"});
    case Evidence::kUvmLoaded:
      return lines({"uvm-loaded"});
    case Evidence::kUvmNodeMissing:
      return lines({"uvm-node-missing"});
    case Evidence::kWsl:
      return lines({"wsl1-kernel", "wsl-hint"});
    case Evidence::kNoDriverProcOnHost:
      return container ? std::vector<std::string>{} : lines({"driver-proc-missing"});
    case Evidence::kNoDriverProcInContainer:
      return container ? lines({"driver-proc-missing"}) : std::vector<std::string>{};
    case Evidence::kDevnodesMissing:
      return lines({"devnodes-missing"});
    case Evidence::kDevnodesPermission:
      return lines({"devnodes-permission"});
    case Evidence::kRootless:
      return lines({"rootless-hint"});
    case Evidence::kNouveau:
      return lines({"nouveau"});
    case Evidence::kMigNone:
      return lines({"mig-none"});
    case Evidence::kMigEnabled:
      return gpus(
          [](const NvmlGpu& g) { return g.mig_mode_current.ok() && g.mig_mode_current.value == 1; },
          "MIG mode Enabled");
    case Evidence::kExclusiveMode:
      return gpus([](const NvmlGpu& g) { return g.compute_mode.ok() && g.compute_mode.value == 3; },
                  "compute mode E. Process");
    case Evidence::kGpuMemoryFull: {
      std::vector<std::string> out;
      for (const auto& g : s.nvml.gpus) {
        if (!g.memory_total_bytes.ok() || !g.memory_used_bytes.ok() ||
            g.memory_total_bytes.value == 0) {
          continue;
        }
        double share = static_cast<double>(g.memory_used_bytes.value) /
                       static_cast<double>(g.memory_total_bytes.value);
        if (share < 0.9) continue;
        out.push_back(gpu_name(g) + ": " + std::to_string(g.memory_used_bytes.value >> 20) +
                      " of " + std::to_string(g.memory_total_bytes.value >> 20) + " MiB in use");
      }
      return out;
    }
    case Evidence::kOwnProcessHoldsMemory:
      return lines({"oom-own-process"});
    case Evidence::kOthersHoldMemory:
      return lines({"oom-other-process"});
    case Evidence::kNvlsFailed:
      return lines({"nccl-nvls"});
    case Evidence::kCudaDidNotStart: {
      for (const auto& r : s.cuda.runs) {
        if (r.label == "user" && (r.cudart_rc > 0 || r.init_rc > 0)) {
          return lines({"cuda-runtime", "cuda-driver"});
        }
      }
      return {};
    }
  }
  return {};
}

}  // namespace

int weigh(const Snapshot& s, const std::string& id, std::vector<std::string>* lines,
          std::vector<std::string>* reasons) {
  int sum = 0;
  for (const Weight& w : kWeights) {
    if (!applies(w, id)) continue;
    std::vector<std::string> seen = shown(w.evidence, s);
    if (seen.empty()) continue;
    sum += w.weight;
    reasons->push_back((w.weight > 0 ? "+" : "") + std::to_string(w.weight) + ": " + w.reason);
    for (auto& l : seen) {
      if (std::find(lines->begin(), lines->end(), l) == lines->end())
        lines->push_back(std::move(l));
    }
  }
  return sum;
}

}  // namespace gd
