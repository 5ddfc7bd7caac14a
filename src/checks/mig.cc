// mig.no-instances: with MIG mode on, CUDA sees a GPU only through its MIG
// instances; a MIG GPU without any is invisible to CUDA although nvidia-smi
// lists it. A mode change waits for a GPU reset (pending != current).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/runtime.h"

namespace gd {
namespace {

constexpr const char* kId = "mig.no-instances";

// A CUDA run that enumerated every visible device of the machine.
const CudaRun* full_run(const Snapshot& s) {
  const CudaRun* cl = clean_cuda_run(s);
  if (cl != nullptr && run_succeeded(*cl)) return cl;
  const CudaRun* u = user_cuda_run(s);
  if (u != nullptr && run_succeeded(*u) && env_var(s, "CUDA_VISIBLE_DEVICES") == nullptr) return u;
  return nullptr;
}

Finding gpu_finding(const Snapshot& s, const NvmlGpu& g, bool* problem) {
  const std::string& bdf = g.pci_bus_id.value;
  int cur = g.mig_mode_current.value;
  bool pending_differs = g.mig_mode_pending.ok() && g.mig_mode_pending.value != cur;
  std::vector<std::string> ev;
  ev.push_back(fmt::format(
      "GPU {} ({}): MIG mode current = {}, pending = {}", g.index, bdf, cur,
      g.mig_mode_pending.ok() ? std::to_string(g.mig_mode_pending.value) : std::string("unknown")));
  bool none = false;
  if (cur == 1) {
    if (g.mig_instance_count.ok()) {
      ev.push_back(fmt::format("MIG devices on it (NVML): {}", g.mig_instance_count.value));
      none = g.mig_instance_count.value == 0;
    }
    // CUDA enumerates at most one MIG instance per process, so a MIG GPU
    // missing from a run proves nothing; a run with no device at all does.
    if (const CudaRun* r = full_run(s)) {
      ev.push_back(fmt::format("CUDA's {} run: {} device{} in all", r->label, r->device_count,
                               r->device_count == 1 ? "" : "s"));
      if (!g.mig_instance_count.ok()) none = r->device_count == 0;
    }
  }
  Finding f;
  f.gpus = {bdf};
  if (none) {
    f = make_finding(kId, Severity::kFail,
                     fmt::format("GPU {} ({}) has MIG mode on but no MIG instance, so CUDA cannot "
                                 "use it",
                                 g.index, bdf));
    f.remedy = {
        fmt::format("sudo nvidia-smi mig -i {} -lgip   # the GPU instance profiles it offers",
                    g.index),
        fmt::format("sudo nvidia-smi mig -i {} -cgi <profile> -C   # create a GPU instance and "
                    "its compute instance (profile name or id from the list)",
                    g.index),
        fmt::format("or turn MIG off: sudo nvidia-smi -i {} -mig 0", g.index),
    };
  } else if (pending_differs) {
    f = make_finding(kId, Severity::kWarn,
                     fmt::format("GPU {} ({}) has a MIG mode change to {} waiting for a GPU reset",
                                 g.index, bdf, g.mig_mode_pending.value ? "on" : "off"));
  } else {
    f = make_finding(kId, Severity::kOk, "");
  }
  if (pending_differs) {
    f.remedy.push_back(
        fmt::format("sudo nvidia-smi -i {} -r   # reset the GPU (no process may use "
                    "it) so the pending MIG mode applies; or reboot",
                    g.index));
  }
  f.gpus = {bdf};
  f.evidence = ev;
  *problem = none || pending_differs;
  return f;
}

}  // namespace

std::vector<Finding> check_mig(const Snapshot& s, const Config&) {
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so MIG modes are unknown");
  }
  std::vector<Finding> out;
  std::vector<std::string> fine;
  bool any_supported = false;
  bool any_enabled = false;
  for (const auto& g : s.nvml.gpus) {
    if (!g.mig_mode_current.ok() || !g.pci_bus_id.ok()) continue;
    any_supported = true;
    if (g.mig_mode_current.value == 1 ||
        (g.mig_mode_pending.ok() && g.mig_mode_pending.value == 1)) {
      any_enabled = true;
    }
    bool problem = false;
    Finding f = gpu_finding(s, g, &problem);
    if (problem) {
      out.push_back(std::move(f));
    } else {
      fine.insert(fine.end(), f.evidence.begin(), f.evidence.end());
    }
  }
  if (!out.empty()) return out;
  if (!any_supported) return not_applicable(kId, "no GPU here supports MIG");
  if (!any_enabled) return not_applicable(kId, "MIG mode is off on every GPU");
  Finding f = make_finding(kId, Severity::kOk, "every MIG-enabled GPU has MIG instances");
  f.evidence = fine;
  return {f};
}

}  // namespace gd
