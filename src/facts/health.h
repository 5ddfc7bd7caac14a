// What the NVML health readings say, for the health checks, diag and the
// status page: how a reading went, GPU labels, clock-event reasons. Pure
// functions over the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "snapshot/snapshot.h"

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

// NVML cannot answer for this GPU: no handle, or a reading that says the
// GPU is gone (GPU_IS_LOST, Xid 79).
bool nvml_gpu_down(const NvmlGpu& g);

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
// The bits' names in bit order: {"HW slowdown", "HW thermal slowdown"}
// (unknown bits left out).
std::vector<std::string> reason_names(uint64_t bits);
// The reasons that slow a busy GPU: not idle, and not the application or
// display clock settings, which are choices rather than events.
inline constexpr uint64_t kSlowingReasons =
    ~(kReasonGpuIdle | kReasonAppClocks | kReasonDisplayClock);
// "0x48 (HW slowdown, HW thermal slowdown)"; "0x0 (none: full clocks)".
std::string reasons_text(uint64_t bits);

// A command for each GPU: "sudo nvidia-smi -i 0000:41:00.0 -pl <watts>" for
// one, "for g in 0000:41:00.0 0000:61:00.0; do sudo nvidia-smi -i $g -pl
// <watts>; done" for several. `command` has {} where the bus id goes.
std::string per_gpu_command(const std::vector<std::string>& bdfs, const std::string& command);

// "450.0 W" from milliwatts.
std::string watts(uint32_t mw);

}  // namespace gd
