// gpu.reset-required: the kernel log shows an error after which the GPU
// must be reset before reuse (an Xid whose catalog action is a GPU reset:
// uncorrectable ECC 48/95, row-remap failure 64, GSP timeouts 119/120, ...),
// or Xid 154 says the GPU's recovery action now is a reset (facts §1.6).
#include <algorithm>
#include <cstdlib>
#include <map>

#include "catalog/xid.h"
#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"

namespace gd {

namespace {

// Xid 154: "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1
// (GPU Reset Required)": the value after "to 0x".
int recovery_action(const std::string& message) {
  size_t to = message.rfind("to 0x");
  if (to == std::string::npos) return -1;
  return static_cast<int>(std::strtol(message.c_str() + to + 5, nullptr, 16));
}

}  // namespace

std::vector<Finding> check_reset_required(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "gpu.reset-required";
  if (!kernel_log_read(s)) {
    return not_applicable(kId, "The kernel log could not be read (see kernel-log.unreadable).");
  }
  // Per GPU: the evidence that it needs a reset, and the latest Xid 154.
  std::map<std::string, std::vector<std::string>> need;
  std::map<std::string, const KernelEvent*> last_154;
  for (const KernelEvent* e : events_of(s, "xid")) {
    if (!in_window(*e, c)) continue;
    if (e->code == 154) {
      const KernelEvent*& prev = last_154[e->gpu];
      if (prev == nullptr || (e->age_s && prev->age_s && *e->age_s < *prev->age_s)) prev = e;
      continue;
    }
    const XidInfo* x = find_xid(e->code);
    if (x != nullptr && x->action == XidAction::kResetGpu) {
      need[e->gpu].push_back(event_evidence(s, *e) + " (Xid " + std::to_string(e->code) + ": " +
                             x->meaning + ")");
    }
  }
  // Xid 154 states the action the driver now wants: 1 reset, 4 drain and
  // reset; 0 (none) means a reset already happened.
  for (const auto& [gpu, e] : last_154) {
    int action = recovery_action(e->message);
    if (action == 1 || action == 4) {
      need[gpu].push_back(event_evidence(s, *e));
    } else if (action == 0) {
      need.erase(gpu);
    }
  }
  if (need.empty()) return all_ok(kId, "No GPU needs a reset according to the kernel log.");

  Finding f = make_finding(
      kId, Severity::kFail,
      std::to_string(need.size()) + " GPU(s) need a reset before they can be trusted again.");
  for (const auto& [gpu, lines] : need) {
    if (!gpu.empty()) f.gpus.push_back(gpu);
    f.evidence.insert(f.evidence.end(), lines.begin(), lines.end());
  }
  std::string ids;
  for (const std::string& g : f.gpus) ids += (ids.empty() ? "" : ",") + g;
  f.remedy = {
      "Stop the jobs on the GPU(s) (nvidia-smi shows their processes), then reset: sudo "
      "nvidia-smi -r -i " +
          (ids.empty() ? std::string("<gpu>") : ids),
      "If the reset fails or the GPU is behind an NVSwitch/NVLink fabric that forbids a "
      "single-GPU reset, drain and reboot the node.",
      "Repeated uncorrectable memory errors on one GPU are an RMA case."};
  return {f};
}

}  // namespace gd
