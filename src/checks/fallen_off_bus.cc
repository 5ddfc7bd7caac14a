// gpu.fallen-off-bus: a GPU stopped answering on PCIe (Xid 79, or the NVRM
// "GPU has fallen off the bus" forms), or NVML says GPU_IS_LOST now. The
// driver hangs on such a GPU until the node is rebooted.
#include <algorithm>

#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/health.h"

namespace gd {

namespace {

// A lost GPU cannot tell NVML its PCI address; when exactly one GPU of the
// bus is absent from NVML's answers, that is the one.
std::string lone_gpu_missing_from_nvml(const Snapshot& s) {
  std::string missing;
  for (const PciDevice* d : pci_gpus(s)) {
    bool seen = std::any_of(s.nvml.gpus.begin(), s.nvml.gpus.end(), [&](const NvmlGpu& g) {
      return g.pci_bus_id.ok() && g.pci_bus_id.value == d->bdf;
    });
    if (seen) continue;
    if (!missing.empty()) return "";
    missing = d->bdf;
  }
  return missing;
}

}  // namespace

std::vector<Finding> check_fallen_off_bus(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "gpu.fallen-off-bus";
  std::vector<std::string> evidence, gpus, old_evidence;
  int unnamed = 0;  // lost GPUs whose PCI address NVML could not tell
  auto add_gpu = [&](const std::string& bdf) {
    if (bdf.empty()) {
      ++unnamed;
    } else if (std::find(gpus.begin(), gpus.end(), bdf) == gpus.end()) {
      gpus.push_back(bdf);
    }
  };
  for (const KernelEvent& e : s.kernel_log.events) {
    bool lost =
        (e.kind == "xid" && e.code == 79) || (e.kind == "nvrm" && e.type == "fallen-off-bus");
    if (!lost) continue;
    if (in_window(e, c)) {
      evidence.push_back(event_evidence(s, e));
      add_gpu(e.gpu);
    } else {
      old_evidence.push_back(event_evidence(s, e));
    }
  }
  // What NVML says now beats the log's age.
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (g.handle_rc == kNvmlGpuLost || g.uuid.rc == kNvmlGpuLost ||
        g.memory_total_bytes.rc == kNvmlGpuLost) {
      std::string bdf = g.pci_bus_id.ok() ? g.pci_bus_id.value : lone_gpu_missing_from_nvml(s);
      evidence.push_back("NVML: GPU " + std::to_string(g.index) + (bdf.empty() ? "" : " " + bdf) +
                         " answers NVML_ERROR_GPU_IS_LOST now");
      add_gpu(bdf);
    }
  }

  if (evidence.empty()) {
    if (!old_evidence.empty()) {
      Finding f = make_finding(kId, Severity::kInfo,
                               "A GPU fell off the bus earlier in this boot, outside the " +
                                   format_age(c.kernel_log_window_s) +
                                   " window, and NVML does not report it lost now.");
      f.evidence = old_evidence;
      return {f};
    }
    if (!kernel_log_read(s) && !s.nvml.attempted) {
      return not_applicable(kId, "Neither the kernel log nor NVML could be read.");
    }
    return all_ok(kId, "No GPU has fallen off the bus.");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           std::to_string(std::max<size_t>(1, gpus.size() + unnamed)) +
                               " GPU(s) fell off the PCIe bus: the driver cannot reach them "
                               "until the node is rebooted.");
  f.gpus = gpus;
  f.evidence = evidence;
  f.remedy = {
      "Drain the node (Slurm: scontrol update nodename=$(hostname -s) state=drain "
      "reason=\"Xid 79\"), then reboot it: a GPU lost from the bus does not come back otherwise.",
      "Look for the cause before the loss: PCIe AER errors (gpudoctor logs), power and thermal "
      "events, the riser or slot.",
      "If the same GPU falls off again after a reboot, reseat it and check its power cables; "
      "repeated losses are an RMA case."};
  return {f};
}

}  // namespace gd
