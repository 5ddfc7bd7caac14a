// persistence-mode.off: without persistence mode the driver tears a GPU down
// when its last client exits, so every CUDA start re-initializes it: slow,
// and racy when many processes start at once on a multi-GPU machine.
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_persistence(const Snapshot& s, const Config&) {
  constexpr const char* kId = "persistence-mode.off";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so persistence mode is unknown");
  }
  std::vector<std::string> off;
  size_t known = 0;
  for (const auto& g : s.nvml.gpus) {
    if (!g.persistence_mode.ok() || !g.pci_bus_id.ok()) continue;
    ++known;
    if (g.persistence_mode.value == 0) off.push_back(g.pci_bus_id.value);
  }
  if (known == 0) return not_applicable(kId, "NVML reported no GPU's persistence mode");
  const ServiceInfo* daemon = find_service(s, "nvidia-persistenced");
  std::string daemon_line = "nvidia-persistenced: not found";
  if (daemon != nullptr) {
    std::vector<std::string> pids;
    for (int p : daemon->pids) pids.push_back(std::to_string(p));
    daemon_line =
        fmt::format("nvidia-persistenced: {}{}", daemon->running ? "running" : "not running",
                    pids.empty() ? "" : " (pid " + join(pids, ", ") + ")");
  }
  if (off.empty()) {
    Finding f = make_finding(
        kId, Severity::kOk,
        fmt::format("persistence mode is on for {} GPU{}", known, known == 1 ? "" : "s"));
    f.evidence.push_back(daemon_line);
    return {f};
  }
  bool multi = s.nvml.gpus.size() > 1;
  Finding f = make_finding(
      kId, multi ? Severity::kWarn : Severity::kInfo,
      fmt::format("persistence mode is off on {} of {} GPU{}: each CUDA start re-initializes "
                  "{} (slow{})",
                  off.size(), known, known == 1 ? "" : "s", off.size() == 1 ? "it" : "them",
                  multi ? ", and racy when several processes start at once" : ""));
  f.gpus = off;
  for (const auto& bdf : off) f.evidence.push_back(bdf + ": persistence mode = 0 (off)");
  f.evidence.push_back(daemon_line);
  f.remedy = {
      "sudo systemctl enable --now nvidia-persistenced   # keeps the GPUs initialized, across "
      "reboots",
      "sudo nvidia-smi -pm 1   # immediate, until the next reboot",
  };
  return {f};
}

}  // namespace gd
