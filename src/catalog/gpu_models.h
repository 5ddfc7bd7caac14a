// NVIDIA GPU models by PCI device id: architecture, compute capability, and
// whether CUDA forward compatibility (cuda-compat) is supported on them.
#pragma once

#include <cstdint>

namespace gd {

enum class GpuArch {
  kUnknown,
  kKepler,
  kMaxwell,
  kPascal,
  kVolta,
  kTuring,
  kAmpere,
  kAda,
  kHopper,
  kBlackwell,
  kRubin,
};

const char* arch_name(GpuArch a);  // "Ada", "unknown"
// nvmlDeviceGetArchitecture value (2 Kepler ... 10 Blackwell, 13 Rubin).
GpuArch arch_from_nvml(int nvml_arch);
// From the CUDA compute capability (3.x Kepler ... 12.x Blackwell).
GpuArch arch_from_cc(int cc_major, int cc_minor);

enum class Support { kYes, kNo, kUnknown };

struct GpuModel {
  uint16_t device_id;  // PCI device id, vendor 0x10de
  const char* name;    // as nvmlDeviceGetName says it
  const char* chip;    // "AD102"
  GpuArch arch;
  int cc_major;
  int cc_minor;
  bool datacenter;  // data-center product (vs GeForce / workstation)
  // CUDA forward compatibility: data-center GPUs only (and select
  // NGC-Server-Ready RTX SKUs, not transcribed: kUnknown).
  Support forward_compat;
  // Needs the open kernel module (Grace Hopper, Blackwell).
  bool requires_open_module;
};

// nullptr for a device id not in the table.
const GpuModel* find_gpu_model(uint16_t device_id);

}  // namespace gd
