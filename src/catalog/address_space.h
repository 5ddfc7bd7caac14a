// Address space measured on real machines (VmSize in /proc/self/status): what
// CUDA takes at cuInit and at the first context in a bare process, and what a
// framework takes on top of that. memory.address-space-limit compares
// RLIMIT_AS against this machine's own measurement (the CUDA probe child's
// VmUsage) plus a framework's measured allowance; the numbers and their
// source are in address_space.cc.
#pragma once

#include <cstdint>
#include <vector>

namespace gd {

// A bare process on the reference machine: start, after cuInit, after the
// first primary context.
struct CudaReservation {
  uint64_t start_bytes;
  uint64_t after_init_bytes;
  uint64_t after_context_bytes;
  const char* machine;  // "1 x H200, driver 580.159.04"
  const char* source;   // the record it came from
};
const CudaReservation& reference_cuda_reservation();

// What a framework adds beyond the CUDA context it makes: VmSize after its
// first GPU operation minus the reference's after_context_bytes, so that
// this machine's own CUDA measurement plus the allowance predicts the
// framework's need here.
struct FrameworkAllowance {
  const char* name;                            // "PyTorch 2.11.0+cu130", as measured
  uint64_t import_bytes;                       // VmSize after import, before CUDA
  uint64_t after_first_op_bytes;               // VmSize after the first GPU operation
  uint64_t smallest_ulimit_that_worked_bytes;  // of those tried, 0 unknown
  uint64_t beyond_context_bytes() const;
};
// PyTorch first: the framework the verdict is judged against (most jobs).
const std::vector<FrameworkAllowance>& framework_allowances();

}  // namespace gd
