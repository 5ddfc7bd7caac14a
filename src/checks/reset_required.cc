// gpu.reset-required: the kernel log shows an error after which the GPU
// must be reset before reuse (an Xid whose catalog action is a GPU reset:
// uncorrectable ECC 48/95, row-remap failure 64, GSP timeouts 119/120, ...),
// or Xid 154 says the GPU's recovery action now is a reset (facts §1.6);
// or NVML says so: a call returned NVML_ERROR_RESET_REQUIRED (16), or a row
// remap or page retirement waits for a reset (facts §4.3). Either source
// alone decides (explain may have only the log; a live machine may deny the
// log), so the check is n/a only when neither could be read. Kernel-log
// reasons and RESET_REQUIRED fail; a pending memory repair is as severe as
// the config's [ecc] pending (warn by default: the driver fences the bad
// memory off until then).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "catalog/cuda_errors.h"
#include "catalog/xid.h"
#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "kernlog/decode.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_reset_required(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "gpu.reset-required";
  bool log_read = kernel_log_read(s);
  bool nvml = nvml_answered(s);
  bool nvml_init_reset =
      s.nvml.attempted && s.nvml.child_error.empty() && s.nvml.init_rc == kNvmlResetRequired;
  if (!log_read && !nvml && !nvml_init_reset) {
    return not_applicable(kId, "The kernel log could not be read (see kernel-log.unreadable) and " +
                                   nvml_unavailable_reason(s) + ".");
  }
  // Per GPU: the evidence that it needs a reset, and the latest Xid 154.
  std::map<std::string, std::vector<std::string>> need;
  std::map<std::string, const KernelEvent*> last_154;
  for (const KernelEvent* e : events_of(s, "xid")) {
    if (!log_read || !in_window(*e, c)) continue;
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
    int action = xid154_recovery_action(e->message);
    if (action == 1 || action == 4) {
      need[gpu].push_back(event_evidence(s, *e));
    } else if (action == 0) {
      need.erase(gpu);
    }
  }
  std::map<std::string, Severity> severity;
  for (const auto& [gpu, lines] : need) severity[gpu] = Severity::kFail;

  // NVML's present state: no Xid 154 clears it.
  if (nvml_init_reset) {
    need[""].push_back("nvmlInit_v2 returned " + nvml_error(kNvmlResetRequired));
    severity[""] = Severity::kFail;
  }
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (!nvml) break;
    std::string bdf = finding_bdf(g);
    for (const auto& [function, rc] : gpu_call_codes(g)) {
      if (rc != kNvmlResetRequired) continue;
      need[bdf].push_back(
          fmt::format("{}: {} returned {}", gpu_label(g), function, nvml_error(rc)));
      severity[bdf] = Severity::kFail;
      break;
    }
    if (g.handle_rc != 0) continue;
    const NvmlHealth& h = g.health;
    Severity pending = to_severity(thresholds_for(c, gpu_name(g)).pending);
    auto add_pending = [&](const std::string& line) {
      need[bdf].push_back(line);
      severity[bdf] = worse(severity.count(bdf) != 0 ? severity[bdf] : Severity::kOk, pending);
    };
    if (h.remap_pending.ok() && h.remap_pending.value != 0) {
      add_pending(gpu_label(g) + ": a row remap is pending; the reset activates it (NVML)");
    }
    if (h.retired_pages_pending.ok() && h.retired_pages_pending.value != 0) {
      add_pending(gpu_label(g) + ": a page retirement is pending; the reset retires it (NVML)");
    }
  }
  if (need.empty()) {
    if (log_read && nvml)
      return all_ok(kId, "No GPU needs a reset according to the kernel log and NVML.");
    if (log_read) return all_ok(kId, "No GPU needs a reset according to the kernel log.");
    return all_ok(kId,
                  "No GPU needs a reset according to NVML (the kernel log could not be read, so "
                  "Xid events are unknown).");
  }

  Severity worst = Severity::kOk;
  for (const auto& [gpu, sev] : severity) worst = worse(worst, sev);
  Finding f = make_finding(
      kId, worst,
      worst == Severity::kFail
          ? std::to_string(need.size()) + " GPU(s) need a reset before they can be trusted again."
          : std::to_string(need.size()) +
                " GPU(s) should be reset to activate a pending memory repair.");
  for (const auto& [gpu, lines] : need) {
    if (!gpu.empty()) f.gpus.push_back(gpu);
    f.evidence.insert(f.evidence.end(), lines.begin(), lines.end());
  }
  std::string ids = join_skip_leading_empty(f.gpus, ",");
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
