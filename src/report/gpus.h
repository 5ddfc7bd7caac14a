// One row per GPU, joining what the PCI bus, NVML and CUDA said about it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

struct GpuRow {
  std::string bus_id;  // "0000:17:00.0"
  std::string name;
  std::string uuid;
  std::optional<int> nvml_index;  // = nvidia-smi's index
  std::optional<int> cuda_index;  // in the user's environment, when CUDA started
  std::optional<uint64_t> memory_total_bytes;
  std::string driver;  // bound kernel driver, "" unbound or unknown
};

// In PCI bus order; GPUs only NVML or CUDA knows (not on the recorded bus)
// are appended.
std::vector<GpuRow> gpu_rows(const Snapshot& s);

}  // namespace gd
