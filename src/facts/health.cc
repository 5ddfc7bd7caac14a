#include "facts/health.h"

#include <fmt/format.h>

#include "catalog/cuda_errors.h"
#include "util/text.h"

namespace gd {

Reading classify_rc(int rc) {
  if (rc == 0) return Reading::kValue;
  if (rc == -1 || rc == kNvmlNotSupported || rc == kNvmlFunctionNotFound) {
    return Reading::kNotApplicable;
  }
  return Reading::kError;
}

bool nvml_gpu_down(const NvmlGpu& g) {
  if (g.handle_rc != 0) return true;
  const NvmlHealth& h = g.health;
  for (int rc : {g.pci_bus_id.rc, g.memory_used_bytes.rc, h.temperature_c.rc, h.power_usage_mw.rc,
                 h.sm_clock_mhz.rc, h.utilization_gpu_pct.rc}) {
    if (rc == kNvmlGpuLost) return true;
  }
  return false;
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

namespace {

const std::pair<uint64_t, const char*> kReasonNames[] = {
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

}  // namespace

std::vector<std::string> reason_names(uint64_t bits) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : kReasonNames) {
    if ((bits & bit) != 0) out.emplace_back(name);
  }
  return out;
}

std::string reasons_text(uint64_t bits) {
  if (bits == 0) return "0x0 (none: full clocks)";
  uint64_t known = 0;
  for (const auto& [bit, name] : kReasonNames) known |= bit;
  std::string names = join(reason_names(bits), ", ");
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

}  // namespace gd
