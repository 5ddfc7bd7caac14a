#include "diag/tests.h"

namespace gd {

const std::vector<DiagTestInfo>& diag_tests() {
  static const std::vector<DiagTestInfo> kTests = {
      {"helper",
       1,
       "the CUDA helper started and ran every test it was given to the end",
       {"diag.incomplete"}},
      {"memory-test",
       2,
       "no failing address in most of the free memory (address-in-address, walking ones and "
       "zeros, random with seed)",
       {"memory.test-failed"}},
      {"verified-results",
       1,
       "kernels, copies and GEMMs give the expected results, the same bit for bit on every repeat",
       {"compute.mismatch"}},
      {"gemm",
       2,
       "sustained GEMM throughput per data type reaches the model's healthy share and the "
       "node's other GPUs",
       {"perf.compute-slow"}},
      {"memory-bandwidth",
       2,
       "device-to-device copy bandwidth reaches a healthy GPU's and its peers'",
       {"perf.memory-bandwidth-slow"}},
      {"pcie-bandwidth",
       2,
       "host<->device copies carry what the GPU's PCIe link allows",
       {"perf.pcie-slow"}},
      {"p2p",
       3,
       "every GPU pair copies peer to peer, directly and at a healthy bandwidth",
       {"p2p.slow"}},
      {"nccl",
       3,
       "NCCL all-reduce bus bandwidth and the scaling of all GPUs against one",
       {"nccl.slow"}},
      {"clocks-under-load",
       2,
       "no thermal or hardware slowdown while the GPUs are under load",
       {"clocks.throttled"}},
  };
  return kTests;
}

}  // namespace gd
