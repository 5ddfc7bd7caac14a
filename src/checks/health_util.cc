#include "checks/health_util.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/cuda_errors.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

Severity to_severity(ConfigSeverity s) {
  switch (s) {
    case ConfigSeverity::kInfo:
      return Severity::kInfo;
    case ConfigSeverity::kWarn:
      return Severity::kWarn;
    case ConfigSeverity::kFail:
      return Severity::kFail;
  }
  return Severity::kWarn;
}

void HealthTally::add(Severity s, const std::string& bdf, std::string line) {
  worst = worse(worst, s);
  if (s == Severity::kOk || s == Severity::kNotApplicable) {
    ok_lines.push_back(std::move(line));
    return;
  }
  if (!bdf.empty() && std::find(gpus.begin(), gpus.end(), bdf) == gpus.end()) {
    gpus.push_back(bdf);
  }
  evidence.push_back(std::move(line));
}

std::vector<std::string> HealthTally::all_gpus() const {
  std::vector<std::string> out = gpus;
  out.insert(out.end(), unopened_gpus.begin(), unopened_gpus.end());
  return out;
}

bool note_unopened(const NvmlGpu& g, HealthTally* t) {
  constexpr int kGpuIsLost = 15;
  if (g.handle_rc == 0) return false;
  // gpu.fallen-off-bus names a lost GPU already; five notes about it would
  // bury the one finding that matters.
  if (g.handle_rc == kGpuIsLost) return true;
  ++t->judged;
  ++t->unopened;
  t->worst = worse(t->worst, Severity::kInfo);
  if (g.pci_bus_id.ok()) t->unopened_gpus.push_back(g.pci_bus_id.value);
  t->evidence.push_back(fmt::format("{}: not checked: nvmlDeviceGetHandleByIndex_v2 returned {}",
                                    gpu_label(g), nvml_error(g.handle_rc)));
  return true;
}

std::string unopened_part(const HealthTally& t) {
  if (t.unopened == 0) return "";
  return fmt::format("{} GPU{} not checked: NVML could not open {}", t.unopened,
                     t.unopened == 1 ? "" : "s", t.unopened == 1 ? "it" : "them");
}

Finding tally_finding(const char* id, const HealthTally& t, std::vector<std::string> parts) {
  if (t.unopened > 0) parts.push_back(unopened_part(t));
  std::erase_if(parts, [](const std::string& p) { return p.empty(); });
  Finding f = make_finding(id, t.worst, join(parts, "; "));
  f.gpus = t.all_gpus();
  f.evidence = t.evidence;
  return f;
}

}  // namespace gd
