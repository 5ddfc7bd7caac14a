#include "checks/health_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "catalog/cuda_errors.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

Reading classify_rc(int rc) {
  if (rc == 0) return Reading::kValue;
  if (rc == -1 || rc == kNvmlNotSupported || rc == kNvmlFunctionNotFound) {
    return Reading::kNotApplicable;
  }
  return Reading::kError;
}

std::string gpu_bdf(const NvmlGpu& g) {
  if (g.pci_bus_id.ok() && !g.pci_bus_id.value.empty()) return g.pci_bus_id.value;
  return fmt::format("NVML GPU {}", g.index);
}

std::string gpu_name(const NvmlGpu& g) { return g.name.ok() ? g.name.value : std::string(); }

std::string gpu_label(const NvmlGpu& g) {
  std::string bdf = gpu_bdf(g);
  std::string prefix = g.pci_bus_id.ok() ? "GPU " : "";
  if (g.name.ok() && !g.name.value.empty()) {
    return fmt::format("{}{} ({})", prefix, bdf, g.name.value);
  }
  return prefix + bdf;
}

std::string unreadable_line(const NvmlGpu& g, const char* function, int rc, const char* what) {
  const char* fn = g.handle_rc != 0 ? "nvmlDeviceGetHandleByIndex_v2" : function;
  return fmt::format("{}: {} returned {}, so its {} is unknown", gpu_label(g), fn, nvml_error(rc),
                     what);
}

std::vector<std::pair<const char*, int>> gpu_call_codes(const NvmlGpu& g) {
  const NvmlHealth& h = g.health;
  return {
      {"nvmlDeviceGetHandleByIndex_v2", g.handle_rc},
      {"nvmlDeviceGetName", g.name.rc},
      {"nvmlDeviceGetUUID", g.uuid.rc},
      {"nvmlDeviceGetPciInfo_v3", g.pci_bus_id.rc},
      {"nvmlDeviceGetMinorNumber", g.minor_number.rc},
      {"nvmlDeviceGetMemoryInfo", g.memory_total_bytes.rc},
      {"nvmlDeviceGetPersistenceMode", g.persistence_mode.rc},
      {"nvmlDeviceGetComputeMode", g.compute_mode.rc},
      {"nvmlDeviceGetMigMode", g.mig_mode_current.rc},
      {"nvmlDeviceGetCudaComputeCapability", g.cc_major.rc},
      {"nvmlDeviceGetComputeRunningProcesses_v3", g.processes.rc},
      {"nvmlDeviceGetTemperature", h.temperature_c.rc},
      {"nvmlDeviceGetTemperatureThreshold", h.temp_slowdown_c.rc},
      {"nvmlDeviceGetPowerUsage", h.power_usage_mw.rc},
      {"nvmlDeviceGetEnforcedPowerLimit", h.power_limit_mw.rc},
      {"nvmlDeviceGetClockInfo", h.sm_clock_mhz.rc},
      {"nvmlDeviceGetCurrentClocksEventReasons", h.clock_event_reasons.rc},
      {"nvmlDeviceGetPerformanceState", h.pstate.rc},
      {"nvmlDeviceGetUtilizationRates", h.utilization_gpu_pct.rc},
      {"nvmlDeviceGetEccMode", h.ecc_mode_current.rc},
      {"nvmlDeviceGetTotalEccErrors", h.ecc_uncorrected_volatile.rc},
      {"nvmlDeviceGetRetiredPages", h.retired_pages_dbe.rc},
      {"nvmlDeviceGetRetiredPagesPendingStatus", h.retired_pages_pending.rc},
      {"nvmlDeviceGetRemappedRows", h.remap_pending.rc},
      {"nvmlDeviceGetCurrPcieLinkGeneration", h.pcie_link_gen.rc},
      {"nvmlDeviceGetPcieReplayCounter", h.pcie_replay_count.rc},
      {"nvmlDeviceGetNvLinkState", h.nvlinks.rc},
  };
}

std::string reasons_text(uint64_t bits) {
  if (bits == 0) return "0x0 (none: full clocks)";
  static const std::pair<uint64_t, const char*> kNames[] = {
      {kReasonGpuIdle, "GPU idle"},
      {kReasonAppClocks, "application clocks setting"},
      {kReasonSwPowerCap, "SW power cap"},
      {kReasonHwSlowdown, "HW slowdown"},
      {kReasonSyncBoost, "sync boost"},
      {kReasonSwThermal, "SW thermal slowdown"},
      {kReasonHwThermal, "HW thermal slowdown"},
      {kReasonHwPowerBrake, "HW power brake"},
      {kReasonDisplayClock, "display clock setting"},
  };
  std::string names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((bits & bit) != 0) names += (names.empty() ? "" : ", ") + std::string(name);
  }
  if ((bits & ~known) != 0) {
    names += fmt::format("{}unknown bits 0x{:x}", names.empty() ? "" : ", ", bits & ~known);
  }
  return fmt::format("0x{:x} ({})", bits, names);
}

std::string per_gpu_command(const std::vector<std::string>& bdfs, const std::string& command) {
  if (bdfs.empty()) return fmt::format(fmt::runtime(command), "<bus id>");
  if (bdfs.size() == 1) return fmt::format(fmt::runtime(command), bdfs.front());
  return fmt::format("for g in {}; do {}; done", join(bdfs, " "),
                     fmt::format(fmt::runtime(command), "$g"));
}

std::string watts(uint32_t mw) { return fmt::format("{:.1f} W", mw / 1000.0); }

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
