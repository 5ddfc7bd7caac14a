// gpudoctor-diag: the tests, as main.cc calls them (see README.md for the
// command line and the answer's lines). Each test writes its own "start" and
// "result" lines through emit.h. A test returns false when the GPU is no
// longer usable (a sticky CUDA error: the context is lost), so main.cc skips
// the GPU's remaining tests with an error line instead of piling up errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gdgpu {

struct HelperOptions {
  int level = 1;
  double duration_s = 20;  // each sustained test, levels 2 and 3
  uint64_t seed = 1;
  std::string plant_fault;  // "", "gemm", "memory"
};

// One GPU to test, opened by its PCI bus id.
struct Gpu {
  std::string bus_id;   // normalized "0000:17:00.0"
  std::string cpus;     // its NUMA-local CPUs ("0-15,32-47"); "" = any
  int cuda_index = -1;  // cudaDeviceGetByPCIBusId
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  size_t free_bytes = 0;  // at start
  size_t total_bytes = 0;
};

// Pins the calling thread to gpu.cpus (no-op when empty) for allocations
// of host memory near the GPU; restores the old mask on destruction.
class CpuPin {
 public:
  explicit CpuPin(const std::string& cpus);
  ~CpuPin();
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;

 private:
  bool pinned_ = false;
  std::vector<unsigned char> old_;  // cpu_set_t bytes
};

// copy.cu: level 1 and the bandwidth tests.
bool run_context_test(const Gpu& gpu, const HelperOptions& opt);
bool run_kernel_test(const Gpu& gpu, const HelperOptions& opt);
// Level 1: 64 MiB each way, verified. Level 2+: sustained for duration_s,
// large pinned copies, bandwidth of the best steady window, verified.
bool run_copy_tests(const Gpu& gpu, const HelperOptions& opt);
// memtest.cu: level 2+.
bool run_memtest(const Gpu& gpu, const HelperOptions& opt);
// gemm.cu: level 2+, every dtype the GPU supports.
bool run_gemm_tests(const Gpu& gpu, const HelperOptions& opt);
// p2p.cu: level 3, every ordered pair of usable GPUs.
void run_p2p_tests(const std::vector<Gpu>& gpus, const HelperOptions& opt);
// nccl.cu: level 3, all-reduce over sizes and the scaling step.
void run_nccl_tests(const std::vector<Gpu>& gpus, const HelperOptions& opt);

}  // namespace gdgpu
