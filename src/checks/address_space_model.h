// What this process's address space must hold for CUDA and for a framework
// (memory.address-space-limit): measured by the CUDA probe child where it got
// that far, else estimated from the machine's memory and labelled so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checks/check.h"

namespace gd {

struct AddressSpaceNeed {
  bool measured = false;   // by this snapshot's CUDA probe
  bool estimated = false;  // the GPU + host memory formula (neither measured nor the reference)
  const CudaRun* run = nullptr;  // the run measured: "user" or the raised-limit one
  // VmSize after cuInit and the first context (after cuInit alone when no
  // context was made): what must fit for CUDA to start at all.
  uint64_t cuda_bytes = 0;
  uint64_t cuda_data_bytes = 0;  // VmData at the same moment; 0 unknown
  // cuda_bytes plus the first framework's measured allowance (PyTorch).
  uint64_t framework_bytes = 0;
  std::string framework;              // "PyTorch 2.11.0+cu130"
  std::vector<std::string> evidence;  // how each number was measured or estimated
};

AddressSpaceNeed address_space_need(const Snapshot& s, const Config& c);

// A `ulimit -v` that works: the largest need of the measured frameworks
// (JAX's included) plus 1 GiB, rounded up to a whole GiB.
uint64_t working_address_space_limit(const AddressSpaceNeed& need);

}  // namespace gd
