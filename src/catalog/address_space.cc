#include "catalog/address_space.h"

namespace gd {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// Measured 2026-12-04 on 1 x H200 (141 GB), driver 580.159.04 (open module),
// CUDA 13.0, 125.8 GiB host memory, Firecracker VM: VmSize of a bare C
// process and of each framework, medians in MiB, and `ulimit -v` values tried
// (14/16/18/20/24/32/48 GiB). tests/device/recorded/h200-vm-580.159.04/README.md,
// table "What the real machine showed".
constexpr const char* kSource = "tests/device/recorded/h200-vm-580.159.04/README.md";

const CudaReservation kReference = {22 * kMiB, 12562 * kMiB, 13281 * kMiB,
                                    "1 x H200, driver 580.159.04", kSource};

}  // namespace

const CudaReservation& reference_cuda_reservation() { return kReference; }

uint64_t FrameworkAllowance::beyond_context_bytes() const {
  return after_first_op_bytes > kReference.after_context_bytes
             ? after_first_op_bytes - kReference.after_context_bytes
             : 0;
}

const std::vector<FrameworkAllowance>& framework_allowances() {
  // PyTorch: import 3,750 MiB, 16,212 after CUDA init, 17,469 after the
  // first GPU operation; fails under ulimit -v 16 GiB, works from 18 GiB.
  // CuPy: import 1,570, 14,898 after the first operation; works from 16 GiB.
  // JAX without preallocation: import 1,021, 20,461 after the first
  // operation; works on the GPU from 20 GiB.
  static const std::vector<FrameworkAllowance> kTable = {
      {"PyTorch 2.11.0+cu130", 3750 * kMiB, 17469 * kMiB, 18 * kGiB},
      {"JAX (no preallocation)", 1021 * kMiB, 20461 * kMiB, 20 * kGiB},
      {"CuPy", 1570 * kMiB, 14898 * kMiB, 16 * kGiB},
  };
  return kTable;
}

}  // namespace gd
