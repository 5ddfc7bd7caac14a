// Helpers shared by the health checks (thermal.high, power.throttled,
// clocks.throttled, ecc.uncorrectable, ecc.rows-pending, gpu.reset-required):
// how an NVML reading went, GPU labels, clock-event reasons, and folding
// per-GPU verdicts into one finding. Pure functions over the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checks/check.h"

namespace gd {

// NVML return codes the health checks tell apart (facts §4.1).
inline constexpr int kNvmlNotSupported = 3;
inline constexpr int kNvmlFunctionNotFound = 13;
inline constexpr int kNvmlGpuLost = 15;
inline constexpr int kNvmlResetRequired = 16;

// How one reading went: a value; not applicable to this GPU (NOT_SUPPORTED,
// a driver without the function, never asked); or an error that leaves
// its health unknown (GPU_IS_LOST, RESET_REQUIRED, NO_PERMISSION, ...).
enum class Reading { kValue, kNotApplicable, kError };
Reading classify_rc(int rc);

// The return code that decides a GPU's reading: the handle's when the GPU
// could not be opened, else the value's own.
template <class T>
int reading_rc(const NvmlGpu& g, const NvmlValue<T>& v) {
  return g.handle_rc != 0 ? g.handle_rc : v.rc;
}
template <class T>
Reading classify(const NvmlGpu& g, const NvmlValue<T>& v) {
  return classify_rc(reading_rc(g, v));
}

// The GPU's PCI bus id, else "NVML GPU 3" (a lost GPU may not tell it).
std::string gpu_bdf(const NvmlGpu& g);
// The PCI bus id for Finding::gpus; "" when NVML could not tell it.
inline std::string finding_bdf(const NvmlGpu& g) {
  return g.pci_bus_id.ok() ? g.pci_bus_id.value : std::string();
}
// "GPU 0000:41:00.0 (NVIDIA GeForce RTX 4090)" or "GPU 0000:41:00.0".
std::string gpu_label(const NvmlGpu& g);
// The NVML name when known, "" otherwise (for thresholds_for).
std::string gpu_name(const NvmlGpu& g);

// "GPU 0000:41:00.0 (...): nvmlDeviceGetTemperature returned
// NVML_ERROR_GPU_IS_LOST (15), so its temperature is unknown"
std::string unreadable_line(const NvmlGpu& g, const char* function, int rc, const char* what);

// Every NVML call recorded for a GPU, by the exported function's name, with
// its return code (the handle first): to find the call that said
// RESET_REQUIRED.
std::vector<std::pair<const char*, int>> gpu_call_codes(const NvmlGpu& g);

// Clock-event reason bits (facts §4.5).
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonAppClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClock = 0x100;
// "0x48 (HW slowdown, HW thermal slowdown)"; "0x0 (none: full clocks)".
std::string reasons_text(uint64_t bits);

// A command for each GPU: "sudo nvidia-smi -i 0000:41:00.0 -pl <watts>" for
// one, "for g in 0000:41:00.0 0000:61:00.0; do sudo nvidia-smi -i $g -pl
// <watts>; done" for several. `command` has {} where the bus id goes.
std::string per_gpu_command(const std::vector<std::string>& bdfs, const std::string& command);

// "450.0 W" from milliwatts.
std::string watts(uint32_t mw);

Severity to_severity(ConfigSeverity s);

// Collects per-GPU verdicts of one check into its single finding: the worst
// severity, the GPUs at info or worse, and their evidence lines in order.
struct HealthTally {
  Severity worst = Severity::kOk;
  std::vector<std::string> gpus;      // bus ids at info or worse
  std::vector<std::string> evidence;  // lines of GPUs at info or worse
  std::vector<std::string> ok_lines;  // lines of healthy GPUs (for the ok finding)
  size_t judged = 0;                  // GPUs with a reading (value or error)
  int unopened = 0;                   // GPUs NVML could not open (note_unopened)
  std::vector<std::string> unopened_gpus;
  // bdf: finding_bdf(g) ("" leaves Finding::gpus alone).
  void add(Severity s, const std::string& bdf, std::string line);
  // Finding::gpus: the GPUs at info or worse, then the unopened ones.
  std::vector<std::string> all_gpus() const;
};

// A GPU NVML could not open (handle_rc != 0) has no readings to judge. The
// health checks do not call it healthy: a lost GPU (GPU_IS_LOST) is left to
// gpu.fallen-off-bus alone, so one lost GPU does not read as five health
// problems; any other code (NO_PERMISSION, ...) is noted as info ("GPU
// 0000:41:00.0: not checked: ... returned NVML_ERROR_NO_PERMISSION (4)").
// True when the GPU was skipped or noted.
bool note_unopened(const NvmlGpu& g, HealthTally* t);
// The remedy line for unreadable or unopened GPUs.
inline constexpr const char* kUnreadableRemedy =
    "A GPU NVML cannot read is lost or needs a reset: see gpu.fallen-off-bus and "
    "gpu.reset-required.";
// ", 1 not opened by NVML" style summary part; "" when none.
std::string unopened_part(const HealthTally& t);
// The finding of a tally: its worst severity, the summary parts (empty ones
// dropped) joined by "; " plus the unopened part, its GPUs and evidence.
Finding tally_finding(const char* id, const HealthTally& t, std::vector<std::string> parts);

}  // namespace gd
